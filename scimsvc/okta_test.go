package scimsvc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// The URNs an Okta conversation uses.
const (
	oktaUserURN  = "urn:ietf:params:scim:schemas:core:2.0:User"
	oktaGroupURN = "urn:ietf:params:scim:schemas:core:2.0:Group"
	oktaListURN  = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	oktaErrorURN = "urn:ietf:params:scim:api:messages:2.0:Error"
)

// oktaDo sends a request as Okta's SCIM client does, with its User-Agent, a JSON body labelled
// application/scim+json; charset=utf-8, and key as the bearer token.
func oktaDo(t *testing.T, e *env, key, method, target, body string) *response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	req.Header.Set("User-Agent", "Okta SCIM Client 1.0.0")
	req.Header.Set("Accept", "application/scim+json")
	if body != "" {
		req.Header.Set("Content-Type", "application/scim+json; charset=utf-8")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// oktaJSON marshals v for a request body.
func oktaJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// oktaFilter is a filtered list of tenant acme with Okta's paging parameters.
func oktaFilter(endpoint, filter string) string {
	return "/acme/" + endpoint + "?filter=" + url.QueryEscape(filter) + "&startIndex=1&count=100"
}

// oktaList checks a ListResponse and returns its body and the ids of its Resources.
func oktaList(t *testing.T, r *response) (body map[string]any, ids []string) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	body = r.JSON(t)
	require.Equal(t, []any{oktaListURN}, body["schemas"])
	res, ok := body["Resources"].([]any)
	require.True(t, ok, "Resources must be an array: %s", r.Body)
	ids = []string{}
	for _, x := range res {
		id, _ := jsonAt(x, "id").(string)
		ids = append(ids, id)
	}
	return body, ids
}

// oktaNow is the clock's time as meta shows it.
func oktaNow(e *env) string { return e.clock.Now().UTC().Format(time.RFC3339Nano) }

// oktaNoPassword fails when the password, or any password attribute, shows in a response body.
func oktaNoPassword(t *testing.T, body []byte, password string) {
	t.Helper()
	assert.NotContains(t, string(body), password)
	assert.NotContains(t, strings.ToLower(string(body)), `"password"`)
}

// oktaCreateBody is a user as Okta's create sends it.
func oktaCreateBody(userName, given, family, externalID, password string) string {
	return `{
		"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
		"userName": "` + userName + `",
		"name": {"givenName": "` + given + `", "familyName": "` + family + `"},
		"emails": [{"primary": true, "value": "` + userName + `", "type": "work"}],
		"displayName": "` + given + ` ` + family + `",
		"locale": "en-US",
		"externalId": "` + externalID + `",
		"groups": [],
		"password": "` + password + `",
		"active": true
	}`
}

// oktaStoredMembers returns the member ids of a group as the store holds them, sorted.
func oktaStoredMembers(t *testing.T, e *env, id string) []string {
	t.Helper()
	g, err := e.mem.Groups().Get(context.Background(), "acme", id)
	require.NoError(t, err)
	ids := []string{}
	for _, m := range g.Members {
		ids = append(ids, m.Value)
	}
	slices.Sort(ids)
	return ids
}

// TestOktaProvisioning plays Okta's provisioning of tenant acme with the requests Okta sends
// (see interop.md): existence checks, create with a password and groups, import paging, the
// conformance checks, update by GET then PUT, deactivation by PUT and by PATCH, password sync,
// and groups with rename and membership changes. Every write is retried and must give the same
// answer without moving lastModified. Okta never deletes users.
func TestOktaProvisioning(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	const (
		isabelName     = "isabel.garcia@example.com"
		isabelPassword = "t1me-Ma$heen-42"
	)

	t.Run("existence check", func(t *testing.T) {
		for _, userName := range []string{isabelName, "b1d4c5e6-3f0a-4d7e-8c21-5a9e0f7d6b34@example.com"} {
			body, ids := oktaList(t, oktaDo(t, e, e.key, "GET", oktaFilter("Users", `userName eq "`+userName+`"`), ""))
			assert.EqualValues(t, 0, body["totalResults"], userName)
			assert.Empty(t, ids, userName)
			assert.EqualValues(t, 1, body["startIndex"])
		}
	})

	var isabel string
	var created map[string]any
	require.True(t, t.Run("create returns the full object without the password", func(t *testing.T) {
		r := oktaDo(t, e, e.key, "POST", "/acme/Users", oktaCreateBody(isabelName, "Isabel", "Garcia", "00ujl29u0le5T6Aj10h7", isabelPassword))
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		oktaNoPassword(t, r.Body, isabelPassword)
		u := r.JSON(t)
		isabel, _ = u["id"].(string)
		require.NotEmpty(t, isabel)
		created = u
		assert.Equal(t, testBase+"/acme/Users/"+isabel, r.Header.Get("Location"))
		assert.Equal(t, "application/scim+json", r.Header.Get("Content-Type"))
		assert.Equal(t, map[string]any{
			"schemas":     []any{oktaUserURN},
			"id":          isabel,
			"externalId":  "00ujl29u0le5T6Aj10h7",
			"userName":    isabelName,
			"name":        map[string]any{"givenName": "Isabel", "familyName": "Garcia"},
			"displayName": "Isabel Garcia",
			"locale":      "en-US",
			"active":      true,
			"emails":      []any{map[string]any{"primary": true, "value": isabelName, "type": "work"}},
			"meta": map[string]any{
				"resourceType": "User",
				"created":      oktaNow(e),
				"lastModified": oktaNow(e),
				"location":     testBase + "/acme/Users/" + isabel,
				"version":      `W/"1"`,
			},
		}, u)

		stored, err := e.mem.Users().Get(ctx, "acme", isabel)
		require.NoError(t, err)
		assert.Equal(t, isabelName, stored.UserName)
		assert.Equal(t, "en-US", stored.Locale)
		assert.NotContains(t, fmt.Sprintf("%#v", stored), isabelPassword, "the password is never stored")
	}))

	t.Run("a repeated create is a 409 uniqueness error", func(t *testing.T) {
		for _, userName := range []string{isabelName, strings.ToUpper(isabelName)} {
			r := oktaDo(t, e, e.key, "POST", "/acme/Users", oktaCreateBody(userName, "Isabel", "Garcia", "00ujl29u0le5T6Aj10h7", isabelPassword))
			require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
			assert.Equal(t, "application/scim+json", r.Header.Get("Content-Type"))
			body := r.JSON(t)
			assert.Equal(t, []any{oktaErrorURN}, body["schemas"])
			assert.Equal(t, "uniqueness", body["scimType"])
			assert.Equal(t, "409", body["status"])
			assert.NotEmpty(t, body["detail"])
		}
		page, err := e.mem.Users().List(ctx, "acme", store.Query{Count: -1})
		require.NoError(t, err)
		assert.Equal(t, 1, page.TotalResults)
	})

	t.Run("a filter on the upper-cased userName finds the user", func(t *testing.T) {
		for _, userName := range []string{isabelName, strings.ToUpper(isabelName)} {
			body, ids := oktaList(t, oktaDo(t, e, e.key, "GET", oktaFilter("Users", `userName eq "`+userName+`"`), ""))
			assert.EqualValues(t, 1, body["totalResults"], userName)
			assert.Equal(t, []string{isabel}, ids, userName)
			oktaNoPassword(t, oktaDo(t, e, e.key, "GET", oktaFilter("Users", `userName eq "`+userName+`"`), "").Body, isabelPassword)
		}
	})

	t.Run("the password is never returned, even when asked for", func(t *testing.T) {
		for _, target := range []string{
			"/acme/Users/" + isabel,
			"/acme/Users/" + isabel + "?attributes=password",
			"/acme/Users?attributes=userName,password",
			"/acme/Users?filter=" + url.QueryEscape(`userName eq "`+isabelName+`"`) + "&attributes=password",
		} {
			r := oktaDo(t, e, e.key, "GET", target, "")
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", target, r.Body)
			oktaNoPassword(t, r.Body, isabelPassword)
		}
	})

	t.Run("conformance: count=1&startIndex=1 returns a complete user", func(t *testing.T) {
		body, ids := oktaList(t, oktaDo(t, e, e.key, "GET", "/acme/Users?count=1&startIndex=1", ""))
		assert.EqualValues(t, 1, body["totalResults"])
		assert.EqualValues(t, 1, body["itemsPerPage"])
		assert.EqualValues(t, 1, body["startIndex"])
		require.Equal(t, []string{isabel}, ids)
		u := jsonAt(body, "Resources", 0)
		assert.Equal(t, "Isabel", jsonAt(u, "name", "givenName"))
		assert.Equal(t, "Garcia", jsonAt(u, "name", "familyName"))
		assert.Equal(t, isabelName, jsonAt(u, "userName"))
		assert.Equal(t, true, jsonAt(u, "active"))
		assert.Equal(t, isabelName, jsonAt(u, "emails", 0, "value"))
	})

	t.Run("conformance: an unknown id is a 404 Error", func(t *testing.T) {
		for _, target := range []string{
			"/acme/Users/01010101-0101-0101-0101-010101010101",
			"/acme/Groups/01010101-0101-0101-0101-010101010101",
		} {
			r := oktaDo(t, e, e.key, "GET", target, "")
			require.Equal(t, http.StatusNotFound, r.Status, "%s: %s", target, r.Body)
			assert.Equal(t, "application/scim+json", r.Header.Get("Content-Type"))
			body := r.JSON(t)
			assert.Equal(t, []any{oktaErrorURN}, body["schemas"])
			assert.Equal(t, "404", body["status"])
			assert.NotEmpty(t, body["detail"])
		}
	})

	t.Run("conformance: a bad bearer is a 401 Error", func(t *testing.T) {
		tests := []struct {
			name string
			key  string
		}{
			{"a random token", "0f8fad5bd9cb469fa16570867728950e"},
			{"a key with a wrong secret", e.key[:len(e.key)-1] + "0"}, // base32 has no 0
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := oktaDo(t, e, tt.key, "GET", "/acme/Users?count=1&startIndex=1", "")
				require.Equal(t, http.StatusUnauthorized, r.Status, "%s", r.Body)
				assert.Contains(t, r.Header.Get("WWW-Authenticate"), "Bearer")
				body := r.JSON(t)
				assert.Equal(t, []any{oktaErrorURN}, body["schemas"])
				assert.Equal(t, "401", body["status"])
				assert.NotContains(t, string(r.Body), isabelName)
			})
		}
	})

	// Users already in the application, which Okta imports by paging.
	for i := range 150 {
		_, err := e.mem.Users().Create(ctx, "acme", store.User{
			UserName: fmt.Sprintf("imported%03d@example.com", i),
			Active:   i%7 != 0,
			Name:     store.Name{GivenName: "Imported", FamilyName: fmt.Sprintf("User %03d", i)},
			Emails:   []store.MultiValue{{Value: fmt.Sprintf("imported%03d@example.com", i), Type: "work", Primary: true}},
			Meta:     store.Meta{Created: e.clock.Now(), LastModified: e.clock.Now()},
		})
		require.NoError(t, err)
	}

	t.Run("import pages through every user once, in a stable order", func(t *testing.T) {
		all, err := e.mem.Users().List(ctx, "acme", store.Query{Count: -1})
		require.NoError(t, err)
		want := []string{}
		for _, u := range all.Resources {
			want = append(want, u.ID)
		}
		require.Len(t, want, 151)

		pages := []struct {
			startIndex int
			want       []string
		}{
			{1, want[:100]},
			{101, want[100:]},
			{201, []string{}},
		}
		got := []string{}
		for _, p := range pages {
			target := "/acme/Users?startIndex=" + strconv.Itoa(p.startIndex) + "&count=100"
			body, ids := oktaList(t, oktaDo(t, e, e.key, "GET", target, ""))
			assert.EqualValues(t, 151, body["totalResults"], target)
			assert.EqualValues(t, p.startIndex, body["startIndex"], target)
			assert.EqualValues(t, len(p.want), body["itemsPerPage"], target)
			assert.Equal(t, p.want, ids, target)
			got = append(got, ids...)

			_, again := oktaList(t, oktaDo(t, e, e.key, "GET", target, ""))
			assert.Equal(t, ids, again, "the same page twice: %s", target)
		}
		assert.Equal(t, want, got, "no user skipped or repeated")
	})

	// Two more users, each deactivated the way one kind of Okta integration does it.
	liam := ""
	noor := ""
	require.True(t, t.Run("create the users to deactivate", func(t *testing.T) {
		for _, u := range []struct {
			id                      *string
			userName, given, family string
			externalID              string
		}{
			{&liam, "liam.chen@example.com", "Liam", "Chen", "00ujl29u0le5T6Aj10h8"},
			{&noor, "noor.haddad@example.com", "Noor", "Haddad", "00ujl29u0le5T6Aj10h9"},
		} {
			r := oktaDo(t, e, e.key, "POST", "/acme/Users", oktaCreateBody(u.userName, u.given, u.family, u.externalID, "Secr3t-"+u.given))
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			*u.id, _ = r.JSON(t)["id"].(string)
			require.NotEmpty(t, *u.id)
		}
	}))

	t.Run("update by GET then PUT of the whole object", func(t *testing.T) {
		e.clock.Advance(time.Minute)
		r := oktaDo(t, e, e.key, "GET", "/acme/Users/"+isabel, "")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		u := r.JSON(t)
		// Okta sends back what it read, changed, with its own read-only and write-only fields.
		u["name"] = map[string]any{"givenName": "Isabel", "middleName": "", "familyName": "Garcia Lopez"}
		u["emails"] = []any{map[string]any{"primary": true, "value": isabelName, "type": "work", "display": isabelName}}
		u["title"] = "Staff Engineer"
		u["groups"] = []any{}
		u["password"] = isabelPassword
		put := oktaJSON(t, u)

		e.clock.Advance(time.Minute)
		first := oktaDo(t, e, e.key, "PUT", "/acme/Users/"+isabel, put)
		require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
		oktaNoPassword(t, first.Body, isabelPassword)
		got := first.JSON(t)
		assert.Equal(t, isabel, got["id"])
		assert.Equal(t, map[string]any{"givenName": "Isabel", "familyName": "Garcia Lopez"}, got["name"])
		assert.Equal(t, []any{map[string]any{"primary": true, "value": isabelName, "type": "work", "display": isabelName}}, got["emails"])
		assert.Equal(t, "Staff Engineer", got["title"])
		assert.Equal(t, "Isabel Garcia", got["displayName"])
		assert.Equal(t, "en-US", got["locale"])
		assert.Equal(t, "00ujl29u0le5T6Aj10h7", got["externalId"])
		assert.Equal(t, true, got["active"])
		assert.NotContains(t, got, "groups")
		assert.Equal(t, jsonAt(created, "meta", "created"), jsonAt(got, "meta", "created"))
		assert.Equal(t, oktaNow(e), jsonAt(got, "meta", "lastModified"))

		e.clock.Advance(time.Minute)
		retry := oktaDo(t, e, e.key, "PUT", "/acme/Users/"+isabel, put)
		require.Equal(t, http.StatusOK, retry.Status, "%s", retry.Body)
		assert.Equal(t, jsonAt(got, "meta", "lastModified"), jsonAt(retry.JSON(t), "meta", "lastModified"),
			"a retried PUT that changes nothing keeps lastModified")
		assert.JSONEq(t, string(first.Body), string(retry.Body))

		stored, err := e.mem.Users().Get(ctx, "acme", isabel)
		require.NoError(t, err)
		assert.Equal(t, store.Name{GivenName: "Isabel", FamilyName: "Garcia Lopez"}, stored.Name)
		assert.Equal(t, "Staff Engineer", stored.Title)
		assert.NotContains(t, fmt.Sprintf("%#v", stored), isabelPassword)
	})

	t.Run("deactivate", func(t *testing.T) {
		tests := []struct {
			name   string
			id     string
			method string
			body   func(t *testing.T) string
		}{
			{
				name: "by PUT active false", id: liam, method: "PUT",
				body: func(t *testing.T) string {
					r := oktaDo(t, e, e.key, "GET", "/acme/Users/"+liam, "")
					require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
					u := r.JSON(t)
					u["active"] = false
					u["groups"] = []any{}
					return oktaJSON(t, u)
				},
			},
			{
				name: "by PATCH replace without a path", id: noor, method: "PATCH",
				body: func(*testing.T) string {
					return patchOps(`[{"op":"replace","value":{"active":false}}]`)
				},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				body := tt.body(t)
				e.clock.Advance(time.Minute)
				first := oktaDo(t, e, e.key, tt.method, "/acme/Users/"+tt.id, body)
				require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
				u := first.JSON(t)
				assert.Equal(t, false, u["active"])
				assert.Equal(t, oktaNow(e), jsonAt(u, "meta", "lastModified"))

				e.clock.Advance(time.Minute)
				retry := oktaDo(t, e, e.key, tt.method, "/acme/Users/"+tt.id, body)
				require.Equal(t, http.StatusOK, retry.Status, "%s", retry.Body)
				assert.Equal(t, jsonAt(u, "meta", "lastModified"), jsonAt(retry.JSON(t), "meta", "lastModified"),
					"a retried deactivation keeps lastModified")
				assert.JSONEq(t, string(first.Body), string(retry.Body))

				stored, err := e.mem.Users().Get(ctx, "acme", tt.id)
				require.NoError(t, err)
				assert.False(t, stored.Active)

				// Okta never deletes: the user is still there, and still found.
				userName, _ := u["userName"].(string)
				body2, ids := oktaList(t, oktaDo(t, e, e.key, "GET", oktaFilter("Users", `userName eq "`+userName+`"`), ""))
				assert.EqualValues(t, 1, body2["totalResults"])
				assert.Equal(t, []string{tt.id}, ids)
				assert.Equal(t, false, jsonAt(body2, "Resources", 0, "active"))
			})
		}
	})

	t.Run("password sync is accepted and discarded", func(t *testing.T) {
		before := oktaDo(t, e, e.key, "GET", "/acme/Users/"+isabel, "")
		require.Equal(t, http.StatusOK, before.Status, "%s", before.Body)
		e.clock.Advance(time.Minute)
		r := oktaDo(t, e, e.key, "PATCH", "/acme/Users/"+isabel, patchOps(`[{"op":"replace","value":{"password":"N3w-pa55word!"}}]`))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		oktaNoPassword(t, r.Body, "N3w-pa55word!")
		assert.JSONEq(t, string(before.Body), string(r.Body), "nothing stored changed")
	})

	// Groups.
	var group string
	var groupCreated map[string]any
	require.True(t, t.Run("create a group with no members", func(t *testing.T) {
		body, ids := oktaList(t, oktaDo(t, e, e.key, "GET", oktaFilter("Groups", `displayName eq "Engineering"`), ""))
		assert.EqualValues(t, 0, body["totalResults"])
		assert.Empty(t, ids)

		e.clock.Advance(time.Minute)
		r := oktaDo(t, e, e.key, "POST", "/acme/Groups", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"Engineering","members":[]}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		g := r.JSON(t)
		group, _ = g["id"].(string)
		require.NotEmpty(t, group)
		groupCreated = g
		assert.Equal(t, testBase+"/acme/Groups/"+group, r.Header.Get("Location"))
		assert.Equal(t, map[string]any{
			"schemas":     []any{oktaGroupURN},
			"id":          group,
			"displayName": "Engineering",
			"meta": map[string]any{
				"resourceType": "Group",
				"created":      oktaNow(e),
				"lastModified": oktaNow(e),
				"location":     testBase + "/acme/Groups/" + group,
				"version":      `W/"1"`,
			},
		}, g)
		assert.Empty(t, oktaStoredMembers(t, e, group))

		body, ids = oktaList(t, oktaDo(t, e, e.key, "GET", oktaFilter("Groups", `displayName eq "Engineering"`), ""))
		assert.EqualValues(t, 1, body["totalResults"])
		assert.Equal(t, []string{group}, ids)
	}))

	groupPatches := []struct {
		name        string
		ops         string
		displayName string
		members     []string
	}{
		{
			name:        "add a member",
			ops:         `[{"op":"add","path":"members","value":[{"value":"` + isabel + `","display":"` + isabelName + `"}]}]`,
			displayName: "Engineering",
			members:     []string{isabel},
		},
		{
			name:        "rename with the id inside the value",
			ops:         `[{"op":"replace","value":{"id":"` + group + `","displayName":"Engineering Team"}}]`,
			displayName: "Engineering Team",
			members:     []string{isabel},
		},
		{
			name: "remove one member by filter and add another",
			ops: `[{"op":"remove","path":"members[value eq \"` + isabel + `\"]"},` +
				`{"op":"add","path":"members","value":[{"value":"` + liam + `","display":"liam.chen@example.com"}]}]`,
			displayName: "Engineering Team",
			members:     []string{liam},
		},
		{
			name: "replace all members",
			ops: `[{"op":"replace","path":"members","value":[` +
				`{"value":"` + isabel + `","display":"` + isabelName + `"},` +
				`{"value":"` + noor + `","display":"noor.haddad@example.com"}]}]`,
			displayName: "Engineering Team",
			members:     []string{isabel, noor},
		},
	}
	for _, p := range groupPatches {
		t.Run(p.name, func(t *testing.T) {
			slices.Sort(p.members)
			e.clock.Advance(time.Minute)
			first := oktaDo(t, e, e.key, "PATCH", "/acme/Groups/"+group, patchOps(p.ops))
			require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
			g := first.JSON(t)
			assert.Equal(t, group, g["id"])
			assert.Equal(t, p.displayName, g["displayName"])
			members := []string{}
			for i := range p.members {
				id, _ := jsonAt(g, "members", i, "value").(string)
				members = append(members, id)
			}
			slices.Sort(members)
			assert.Equal(t, p.members, members)
			assert.Len(t, g["members"], len(p.members))
			assert.Equal(t, oktaNow(e), jsonAt(g, "meta", "lastModified"))
			assert.Equal(t, jsonAt(groupCreated, "meta", "created"), jsonAt(g, "meta", "created"))
			assert.Equal(t, p.members, oktaStoredMembers(t, e, group))

			e.clock.Advance(time.Minute)
			retry := oktaDo(t, e, e.key, "PATCH", "/acme/Groups/"+group, patchOps(p.ops))
			require.Equal(t, http.StatusOK, retry.Status, "%s", retry.Body)
			assert.Equal(t, jsonAt(g, "meta", "lastModified"), jsonAt(retry.JSON(t), "meta", "lastModified"),
				"a retried PATCH that changes nothing keeps lastModified")
			assert.JSONEq(t, string(first.Body), string(retry.Body))
			assert.Equal(t, p.members, oktaStoredMembers(t, e, group))
		})
	}

	t.Run("members show their groups, and a PUT with groups [] keeps them", func(t *testing.T) {
		r := oktaDo(t, e, e.key, "GET", "/acme/Users/"+isabel, "")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		u := r.JSON(t)
		assert.Equal(t, []any{map[string]any{
			"value":   group,
			"display": "Engineering Team",
			"type":    "direct",
			"$ref":    testBase + "/acme/Groups/" + group,
		}}, u["groups"])

		u["groups"] = []any{}
		u["title"] = "Principal Engineer"
		put := oktaDo(t, e, e.key, "PUT", "/acme/Users/"+isabel, oktaJSON(t, u))
		require.Equal(t, http.StatusOK, put.Status, "%s", put.Body)
		assert.Equal(t, group, jsonAt(put.JSON(t), "groups", 0, "value"))
		assert.Equal(t, "Principal Engineer", put.JSON(t)["title"])
		members := oktaStoredMembers(t, e, group)
		assert.Contains(t, members, isabel)
	})

	t.Run("delete the group", func(t *testing.T) {
		r := oktaDo(t, e, e.key, "DELETE", "/acme/Groups/"+group, "")
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		assert.Empty(t, r.Body)

		r = oktaDo(t, e, e.key, "GET", "/acme/Groups/"+group, "")
		require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
		assert.Equal(t, []any{oktaErrorURN}, r.JSON(t)["schemas"])

		for _, id := range []string{isabel, noor} {
			u, err := e.mem.Users().Get(ctx, "acme", id)
			require.NoError(t, err)
			assert.Empty(t, u.Groups)
			g := oktaDo(t, e, e.key, "GET", "/acme/Users/"+id, "")
			require.Equal(t, http.StatusOK, g.Status, "%s", g.Body)
			assert.NotContains(t, g.JSON(t), "groups")
		}
	})

	// Okta never deletes users: all of them are still stored.
	all, err := e.mem.Users().List(ctx, "acme", store.Query{Count: 0})
	require.NoError(t, err)
	assert.Equal(t, 153, all.TotalResults)
}
