package scimsvc_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// walkCursor lists path (a list URL with its query, without cursor) page by page following
// nextCursor from an empty cursor, and returns the userNames in order and the pages' bodies.
func walkCursor(t *testing.T, e *env, path string) ([]string, []map[string]any) {
	t.Helper()
	var names []string
	var pages []map[string]any
	cursor := ""
	for i := 0; ; i++ {
		require.Less(t, i, 1000, "the walk does not end")
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		r := e.do("GET", path+sep+"cursor="+url.QueryEscape(cursor), nil)
		require.Equal(t, 200, r.Status, "page %d: %s", i, r.Body)
		body := r.JSON(t)
		pages = append(pages, body)
		names = append(names, userNamesOf(t, body)...)
		next, ok := body["nextCursor"].(string)
		if !ok {
			return names, pages
		}
		require.NotEmpty(t, next)
		cursor = next
	}
}

// A client that sends cursor= walks the list by nextCursor: every user once, in order, each page
// with totalResults and itemsPerPage, no startIndex, the last without nextCursor, the first
// without previousCursor; the cursors use only unreserved characters. On every backend.
func TestCursorWalk(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		var names []string
		for i := range 23 {
			n := fmt.Sprintf("user%02d@example.com", i*7%23)
			names = append(names, n)
			_, err := e.backend.Users.Create(context.Background(), "acme", store.User{UserName: n, Active: i%2 == 0})
			require.NoError(t, err)
		}
		got, pages := walkCursor(t, e.env, "/acme/Users?count=5")
		assert.Equal(t, names, got)
		require.Len(t, pages, 5)
		for i, p := range pages {
			assert.Equal(t, float64(23), p["totalResults"], "page %d", i)
			assert.Equal(t, float64(len(p["Resources"].([]any))), p["itemsPerPage"])
			assert.NotContains(t, p, "startIndex", "cursor pages have no startIndex")
			_, hasPrev := p["previousCursor"]
			assert.Equal(t, i > 0, hasPrev, "previousCursor of page %d", i)
			for _, k := range []string{"nextCursor", "previousCursor"} {
				if c, ok := p[k].(string); ok {
					assert.Regexp(t, `^[A-Za-z0-9_-]+$`, c)
				}
			}
		}
		// Sorted and filtered.
		var active []string
		for i, n := range names {
			if i%2 == 0 {
				active = append(active, n)
			}
		}
		slices.Sort(active)
		slices.Reverse(active)
		got, _ = walkCursor(t, e.env, "/acme/Users?count=4&filter="+url.QueryEscape("active eq true")+"&sortBy=userName&sortOrder=descending")
		assert.Equal(t, active, got)
		// And back by previousCursor from the last page.
		_, pages = walkCursor(t, e.env, "/acme/Users?count=4&sortBy=userName")
		sorted := slices.Sorted(slices.Values(names))
		back := userNamesOf(t, pages[len(pages)-1])
		prev := pages[len(pages)-1]["previousCursor"].(string)
		for i := 0; prev != ""; i++ {
			require.Less(t, i, 100)
			r := e.do("GET", "/acme/Users?count=4&sortBy=userName&cursor="+prev, nil)
			require.Equal(t, 200, r.Status, "%s", r.Body)
			body := r.JSON(t)
			back = append(userNamesOf(t, body), back...)
			prev, _ = body["previousCursor"].(string)
		}
		assert.Equal(t, sorted, back)
	})
}

// Bad cursors are 400 invalidCursor; a cursor past the timeout is 400 expiredCursor; nothing
// else is listed.
func TestCursorErrors(t *testing.T) {
	e := newEnv(t)
	for i := range 6 {
		e.seedUser("acme", store.User{UserName: fmt.Sprintf("u%d", i)})
	}
	r := e.do("GET", "/acme/Users?count=2&cursor=", nil)
	require.Equal(t, 200, r.Status)
	next := r.JSON(t)["nextCursor"].(string)
	raw, err := base64.RawURLEncoding.DecodeString(next)
	require.NoError(t, err)
	flip := func(i int) string {
		b := slices.Clone(raw)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	tests := []struct {
		name, query, wantType string
	}{
		{"garbage", "count=2&cursor=not-a-cursor", "invalidCursor"},
		{"not base64", "count=2&cursor=" + url.QueryEscape("a+b/c="), "invalidCursor"},
		{"truncated", "count=2&cursor=" + next[:len(next)-3], "invalidCursor"},
		{"position edited", "count=2&cursor=" + flip(12), "invalidCursor"},
		{"mac edited", "count=2&cursor=" + flip(len(raw)-1), "invalidCursor"},
		{"other filter", "count=2&filter=" + url.QueryEscape(`userName pr`) + "&cursor=" + next, "invalidCursor"},
		{"other sort", "count=2&sortBy=userName&cursor=" + next, "invalidCursor"},
		{"other order", "count=2&sortBy=userName&sortOrder=descending&cursor=" + next, "invalidCursor"},
		{"with startIndex", "count=2&startIndex=3&cursor=" + next, "invalidValue"},
		{"bad sortBy", "sortBy=nope", "invalidValue"},
		{"complex sortBy", "sortBy=emails", "invalidValue"},
		{"bad sortOrder", "sortBy=userName&sortOrder=up", "invalidValue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do("GET", "/acme/Users?"+tt.query, nil)
			require.Equal(t, 400, r.Status, "%s", r.Body)
			body := r.JSON(t)
			assert.Equal(t, tt.wantType, body["scimType"])
			assert.Equal(t, "400", body["status"])
			assert.NotContains(t, body, "Resources")
		})
	}
	// The same cursor still works with the same query, with another count, and until the timeout.
	r = e.do("GET", "/acme/Users?count=3&cursor="+next, nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	assert.Equal(t, []string{"u2", "u3", "u4"}, userNamesOf(t, r.JSON(t)))
	e.clock.Advance(scimsvc.DefaultCursorTimeout)
	require.Equal(t, 200, e.do("GET", "/acme/Users?count=2&cursor="+next, nil).Status)
	e.clock.Advance(time.Second)
	r = e.do("GET", "/acme/Users?count=2&cursor="+next, nil)
	require.Equal(t, 400, r.Status)
	assert.Equal(t, "expiredCursor", r.JSON(t)["scimType"])
}

// A cursor of one tenant is invalidCursor in another, even for a key of both; a cursor of one
// resource type is invalidCursor for the other.
func TestCursorBoundToTenantAndResourceType(t *testing.T) {
	e := newEnv(t)
	both, _, err := scimsvc.IssueAPIKey(context.Background(), e.mem.APIKeys(),
		scimsvc.KeySpec{Name: "both", Tenants: []string{"acme", "globex"}, Now: e.clock.Now()})
	require.NoError(t, err)
	for i := range 4 {
		e.seedUser("acme", store.User{UserName: fmt.Sprintf("a%d", i)})
		e.seedUser("globex", store.User{UserName: fmt.Sprintf("g%d", i)})
		e.seedGroup("acme", store.Group{DisplayName: fmt.Sprintf("grp%d", i)})
	}
	r := e.doKey(both, "GET", "/acme/Users?count=2&cursor=", nil)
	require.Equal(t, 200, r.Status)
	next := r.JSON(t)["nextCursor"].(string)
	r = e.doKey(both, "GET", "/globex/Users?count=2&cursor="+next, nil)
	require.Equal(t, 400, r.Status)
	assert.Equal(t, "invalidCursor", r.JSON(t)["scimType"])
	r = e.doKey(both, "GET", "/acme/Groups?count=2&cursor="+next, nil)
	require.Equal(t, 400, r.Status)
	assert.Equal(t, "invalidCursor", r.JSON(t)["scimType"])
}

// Instances with the same CursorKey take each other's cursors; with another key they refuse
// them. A CursorKey shorter than 32 bytes is refused by New.
func TestCursorKey(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	a := newEnv(t, func(c *scimsvc.Config) { c.CursorKey = key })
	for i := range 5 {
		a.seedUser("acme", store.User{UserName: fmt.Sprintf("u%d", i)})
	}
	r := a.do("GET", "/acme/Users?count=2&cursor=", nil)
	require.Equal(t, 200, r.Status)
	next := r.JSON(t)["nextCursor"].(string)

	cfg := func(k []byte) scimsvc.Config {
		return scimsvc.Config{Tenants: a.mem.Tenants(), Users: a.mem.Users(), Groups: a.mem.Groups(),
			APIKeys: a.mem.APIKeys(), BaseURL: testBase, Now: a.clock.Now, CursorKey: k}
	}
	for _, tt := range []struct {
		name       string
		key        []byte
		wantStatus int
	}{{"same key", key, 200}, {"other key", []byte(strings.Repeat("x", 32)), 400}, {"random key", nil, 400}} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := scimsvc.New(cfg(tt.key))
			require.NoError(t, err)
			b := &env{t: t, mem: a.mem, clock: a.clock, handler: h, key: a.key}
			r := b.do("GET", "/acme/Users?count=2&cursor="+next, nil)
			require.Equal(t, tt.wantStatus, r.Status, "%s", r.Body)
			if tt.wantStatus == 200 {
				assert.Equal(t, []string{"u2", "u3"}, userNamesOf(t, r.JSON(t)))
			}
		})
	}
	_, err := scimsvc.New(cfg([]byte("short")))
	assert.Error(t, err)
	c := cfg(nil)
	c.CursorTimeout = -time.Second
	_, err = scimsvc.New(c)
	assert.Error(t, err)
}

// sortBy and sortOrder order /Users and /Groups, with filters and startIndex, by the
// attribute's type: folded strings for userName, primary email, dateTimes.
func TestListSort(t *testing.T) {
	e := newEnv(t)
	for i, u := range []store.User{
		{UserName: "carol", Emails: []store.MultiValue{{Value: "z@x"}, {Value: "a@x", Primary: true}}},
		{UserName: "Bob", Emails: []store.MultiValue{{Value: "b@x"}}},
		{UserName: "alice"},
		{UserName: "dave", Emails: []store.MultiValue{{Value: "c@x"}}},
	} {
		e.seedUser("acme", u)
		e.clock.Advance(time.Duration(4-i) * time.Hour)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"sortBy=userName", []string{"alice", "Bob", "carol", "dave"}},
		{"sortBy=userName&sortOrder=descending", []string{"dave", "carol", "Bob", "alice"}},
		{"sortBy=USERNAME&sortOrder=Descending", []string{"dave", "carol", "Bob", "alice"}},
		{"sortBy=emails.value", []string{"carol", "Bob", "dave", "alice"}},
		{"sortBy=emails", []string(nil)},
		{"sortBy=meta.created&sortOrder=descending", []string{"dave", "alice", "Bob", "carol"}},
		{"sortBy=userName&startIndex=2&count=2", []string{"Bob", "carol"}},
		{"sortBy=userName&filter=" + url.QueryEscape(`emails pr`), []string{"Bob", "carol", "dave"}},
		{"sortOrder=descending", []string{"carol", "Bob", "alice", "dave"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := e.do("GET", "/acme/Users?"+tt.query, nil)
			if tt.want == nil {
				require.Equal(t, 400, r.Status)
				return
			}
			require.Equal(t, 200, r.Status, "%s", r.Body)
			assert.Equal(t, tt.want, userNamesOf(t, r.JSON(t)))
		})
	}
	for _, n := range []string{"b", "C", "a"} {
		e.seedGroup("acme", store.Group{DisplayName: n})
	}
	r := e.do("GET", "/acme/Groups?sortBy=displayName&sortOrder=descending&excludedAttributes=members", nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	var got []string
	for _, g := range r.JSON(t)["Resources"].([]any) {
		got = append(got, g.(map[string]any)["displayName"].(string))
	}
	assert.Equal(t, []string{"C", "b", "a"}, got)
}

// The sorts whose order a column of the SQL stores serves (name.familyName, emails.value,
// meta.created, meta.lastModified) page by cursor as by startIndex, in both directions and with
// a filter, forward by nextCursor and back by previousCursor, on /Users, /Groups and .search;
// on every backend. The values tie (case-insensitively), and some users have none.
func TestCursorWalkSorted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		ctx := context.Background()
		base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range 17 {
			u := store.User{UserName: fmt.Sprintf("u%02d", i), Active: i%3 != 0,
				Meta: store.Meta{Created: base.Add(time.Duration(i%4) * time.Hour), LastModified: base.Add(time.Duration(i*7%5) * time.Minute)}}
			if i%5 != 0 {
				u.Name.FamilyName = []string{"Smith", "smith", "Jones", "ADAMS"}[i%4]
			}
			if i%6 != 0 {
				u.Emails = []store.MultiValue{{Value: fmt.Sprintf("%c@x", 'a'+i%3)}, {Value: fmt.Sprintf("%c@X", 'A'+i%4), Primary: i%2 == 0}}
			}
			_, err := e.backend.Users.Create(ctx, "acme", u)
			require.NoError(t, err)
		}
		for i := range 5 {
			_, err := e.backend.Groups.Create(ctx, "acme", store.Group{DisplayName: fmt.Sprintf("g%d", i),
				Meta: store.Meta{Created: base, LastModified: base.Add(time.Duration(i%2) * time.Hour)}})
			require.NoError(t, err)
		}
		for _, sortBy := range []string{"name.familyName", "emails.value", "meta.created", "meta.lastModified"} {
			for _, order := range []string{"ascending", "descending"} {
				for _, f := range []string{"", "&filter=" + url.QueryEscape("active eq true")} {
					q := "sortBy=" + sortBy + "&sortOrder=" + order + f
					r := e.do("GET", "/acme/Users?"+q, nil)
					require.Equal(t, 200, r.Status, "%s", r.Body)
					all := userNamesOf(t, r.JSON(t))
					got, pages := walkCursor(t, e.env, "/acme/Users?count=3&"+q)
					assert.Equal(t, all, got, "%s by cursor", q)
					back := userNamesOf(t, pages[len(pages)-1])
					prev, _ := pages[len(pages)-1]["previousCursor"].(string)
					for i := 0; prev != ""; i++ {
						require.Less(t, i, 100)
						r := e.do("GET", "/acme/Users?count=3&"+q+"&cursor="+prev, nil)
						require.Equal(t, 200, r.Status, "%s", r.Body)
						body := r.JSON(t)
						back = append(userNamesOf(t, body), back...)
						prev, _ = body["previousCursor"].(string)
					}
					assert.Equal(t, all, back, "%s back by previousCursor", q)
					// .search pages alike.
					body := map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:SearchRequest"},
						"sortBy": sortBy, "sortOrder": order, "startIndex": 4, "count": 5}
					if f != "" {
						body["filter"] = "active eq true"
					}
					r = e.do("POST", "/acme/Users/.search", body)
					require.Equal(t, 200, r.Status, "%s", r.Body)
					assert.Equal(t, all[min(3, len(all)):min(8, len(all))], userNamesOf(t, r.JSON(t)), "%s by .search", q)
				}
			}
		}
		r := e.do("GET", "/acme/Groups?sortBy=meta.lastModified&sortOrder=descending&count=2&cursor=", nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		var got []string
		for _, g := range r.JSON(t)["Resources"].([]any) {
			got = append(got, g.(map[string]any)["displayName"].(string))
		}
		next, _ := r.JSON(t)["nextCursor"].(string)
		require.NotEmpty(t, next)
		r = e.do("GET", "/acme/Groups?sortBy=meta.lastModified&sortOrder=descending&count=3&cursor="+next, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		for _, g := range r.JSON(t)["Resources"].([]any) {
			got = append(got, g.(map[string]any)["displayName"].(string))
		}
		assert.Equal(t, []string{"g3", "g1", "g4", "g2", "g0"}, got, "lastModified descending, ties in reverse creation order")
	})
}

// /Schemas describes the attributes the sorts order by as the stores order them: userName,
// name.familyName, emails.value and a group's displayName are strings that are not caseExact
// (sorted case-insensitively), and emails has the primary that picks the element sorted by
// (meta.created and meta.lastModified are common attributes, dateTimes by RFC 7643 §3.1, which
// the schemas do not list); and ServiceProviderConfig says sort is supported.
func TestSchemasOfSortedAttributes(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/acme/ServiceProviderConfig", nil)
	require.Equal(t, 200, r.Status)
	assert.Equal(t, map[string]any{"supported": true}, r.JSON(t)["sort"])
	find := func(urn, path string) map[string]any {
		t.Helper()
		r := e.do("GET", "/acme/Schemas/"+urn, nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		attrs := r.JSON(t)["attributes"].([]any)
		name, sub, _ := strings.Cut(path, ".")
		for _, a := range attrs {
			a := a.(map[string]any)
			if a["name"] != name {
				continue
			}
			if sub == "" {
				return a
			}
			for _, s := range a["subAttributes"].([]any) {
				if s := s.(map[string]any); s["name"] == sub {
					return s
				}
			}
		}
		t.Fatalf("%s has no %s", urn, path)
		return nil
	}
	const userURN, groupURN = "urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:core:2.0:Group"
	for _, tt := range []struct{ urn, path, typ string }{
		{userURN, "userName", "string"}, {userURN, "name.familyName", "string"}, {userURN, "emails.value", "string"},
		{groupURN, "displayName", "string"},
	} {
		a := find(tt.urn, tt.path)
		assert.Equal(t, tt.typ, a["type"], tt.path)
		assert.Equal(t, false, a["caseExact"], tt.path)
		assert.Equal(t, false, a["multiValued"], tt.path)
	}
	assert.Equal(t, true, find(userURN, "emails")["multiValued"])
	assert.Equal(t, "boolean", find(userURN, "emails.primary")["type"], "the element sorted by is the primary one")
}
