package scimsvc_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const searchURN = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"

// seedSearch creates users u0…u(n-1) (each in department "eng" when even) and groups g0…g(m-1)
// over the API, and returns their ids.
func seedSearch(t *testing.T, e *env, users, groups int) (userIDs, groupIDs []string) {
	t.Helper()
	for i := range users {
		dept := "ops"
		if i%2 == 0 {
			dept = "eng"
		}
		r := e.do("POST", "/acme/Users", fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User",
			"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"userName":"u%d@example.com",
			"displayName":"User %d","title":"t%d",
			"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":%q}}`, (users-i)%users, i, i, dept))
		require.Equal(t, 201, r.Status, "%s", r.Body)
		userIDs = append(userIDs, r.JSON(t)["id"].(string))
	}
	for i := range groups {
		members := ""
		if len(userIDs) > 0 {
			members = fmt.Sprintf(`,"members":[{"value":%q}]`, userIDs[i%len(userIDs)])
		}
		r := e.do("POST", "/acme/Groups", fmt.Sprintf(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"displayName":"Group %d"%s}`, i, members))
		require.Equal(t, 201, r.Status, "%s", r.Body)
		groupIDs = append(groupIDs, r.JSON(t)["id"].(string))
	}
	return userIDs, groupIDs
}

// searchBody is a SearchRequest with the given members.
func searchBody(members map[string]any) map[string]any {
	b := map[string]any{"schemas": []string{searchURN}}
	for k, v := range members {
		b[k] = v
	}
	return b
}

// TestSearchEqualsGet proves that POST /Users/.search and /Groups/.search answer exactly as the
// GET of the list with the same parameters: filter, sort, projection, index paging and a cursor
// walk, on every backend.
func TestSearchEqualsGet(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		seedSearch(t, e.env, 7, 4)
		cases := []struct {
			path   string
			query  url.Values
			search map[string]any
		}{
			{"/acme/Users", url.Values{}, map[string]any{}},
			{"/acme/Users", url.Values{
				"filter":     {`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "eng"`},
				"sortBy":     {"userName"},
				"sortOrder":  {"descending"},
				"attributes": {"userName,title"},
				"startIndex": {"2"},
				"count":      {"2"},
			}, map[string]any{
				"filter":     `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "eng"`,
				"sortBy":     "userName",
				"sortOrder":  "descending",
				"attributes": []string{"userName", "title"},
				"startIndex": 2,
				"count":      2,
			}},
			{"/acme/Users", url.Values{
				"excludedAttributes": {"emails,name"},
				"filter":             {`userName sw "u"`},
				"count":              {"0"},
			}, map[string]any{
				"excludedAttributes": []string{"emails", "name"},
				"filter":             `userName sw "u"`,
				"count":              0,
			}},
			{"/acme/Groups", url.Values{
				"filter":     {`displayName co "Group"`},
				"sortBy":     {"displayName"},
				"attributes": {"displayName"},
				"count":      {"3"},
			}, map[string]any{
				"FILTER":     `displayName co "Group"`, // member names are case-insensitive
				"sortBy":     "displayName",
				"attributes": []string{"displayName"},
				"count":      3,
			}},
			{"/acme/Groups", url.Values{"excludedAttributes": {"members"}, "startIndex": {"3"}},
				map[string]any{"excludedAttributes": []string{"members"}, "startIndex": 3}},
		}
		for i, c := range cases {
			get := e.do("GET", c.path+"?"+c.query.Encode(), nil)
			require.Equal(t, 200, get.Status, "case %d: %s", i, get.Body)
			post := e.do("POST", c.path+"/.search", searchBody(c.search))
			require.Equal(t, 200, post.Status, "case %d: %s", i, post.Body)
			assert.JSONEq(t, string(get.Body), string(post.Body), "case %d", i)
		}

		// A cursor walk by POST visits the same pages as by GET.
		q := url.Values{"sortBy": {"userName"}, "count": {"3"}, "cursor": {""}}
		body := map[string]any{"sortBy": "userName", "count": 3, "cursor": ""}
		pages := 0
		for {
			get := e.do("GET", "/acme/Users?"+q.Encode(), nil)
			require.Equal(t, 200, get.Status, "%s", get.Body)
			post := e.do("POST", "/acme/Users/.search", searchBody(body))
			require.Equal(t, 200, post.Status, "%s", post.Body)
			gm, pm := get.JSON(t), post.JSON(t)
			assert.Equal(t, gm["Resources"], pm["Resources"])
			assert.Equal(t, gm["totalResults"], pm["totalResults"])
			pages++
			next, ok := pm["nextCursor"].(string)
			if !ok {
				assert.NotContains(t, gm, "nextCursor")
				break
			}
			require.Less(t, pages, 10)
			// Cursors are opaque and may differ by issue; each method follows its own.
			q.Set("cursor", gm["nextCursor"].(string))
			body["cursor"] = next
		}
		assert.Equal(t, 3, pages) // 7 users by 3
	})
}

// TestSearchAllTypes proves that POST /.search returns users then groups, each with its own
// schemas and resourceType, pages across both, and applies a filter to each type it parses for.
func TestSearchAllTypes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		users, groups := seedSearch(t, e.env, 3, 2)

		r := e.do("POST", "/acme/.search", searchBody(nil))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		m := r.JSON(t)
		assert.Equal(t, float64(5), m["totalResults"])
		assert.Equal(t, float64(5), m["itemsPerPage"])
		assert.Equal(t, float64(1), m["startIndex"])
		res := m["Resources"].([]any)
		require.Len(t, res, 5)
		var ids []string
		for i, v := range res {
			ids = append(ids, jsonAt(v, "id").(string))
			want := "User"
			if i >= 3 {
				want = "Group"
			}
			assert.Equal(t, want, jsonAt(v, "meta", "resourceType"), "resource %d", i)
			schemas := fmt.Sprint(jsonAt(v, "schemas"))
			if want == "User" {
				assert.Contains(t, schemas, "urn:ietf:params:scim:schemas:core:2.0:User")
			} else {
				assert.Equal(t, "[urn:ietf:params:scim:schemas:core:2.0:Group]", schemas)
			}
		}
		assert.ElementsMatch(t, append(append([]string{}, users...), groups...), ids)

		// Paging across the concatenation: page 2 of size 2 is the third user and first group.
		r = e.do("POST", "/acme/.search", searchBody(map[string]any{"startIndex": 3, "count": 2}))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		m = r.JSON(t)
		assert.Equal(t, float64(5), m["totalResults"])
		assert.Equal(t, float64(3), m["startIndex"])
		assert.Equal(t, float64(2), m["itemsPerPage"])
		assert.Equal(t, ids[2:4], []string{jsonAt(m, "Resources", 0, "id").(string), jsonAt(m, "Resources", 1, "id").(string)})
		r = e.do("POST", "/acme/.search", searchBody(map[string]any{"startIndex": 5, "count": 10}))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		m = r.JSON(t)
		assert.Equal(t, float64(1), m["itemsPerPage"])
		assert.Equal(t, ids[4], jsonAt(m, "Resources", 0, "id"))
		r = e.do("POST", "/acme/.search", searchBody(map[string]any{"count": 0}))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		assert.Equal(t, float64(5), r.JSON(t)["totalResults"])
		assert.Empty(t, r.JSON(t)["Resources"])

		// A filter on an attribute both types have matches in both.
		r = e.do("POST", "/acme/.search", searchBody(map[string]any{
			"filter": `displayName eq "User 1" or displayName eq "Group 1"`, "attributes": []string{"displayName"}}))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		m = r.JSON(t)
		assert.Equal(t, float64(2), m["totalResults"])
		assert.Equal(t, "User 1", jsonAt(m, "Resources", 0, "displayName"))
		assert.Nil(t, jsonAt(m, "Resources", 0, "userName")) // projected away
		assert.Equal(t, "Group 1", jsonAt(m, "Resources", 1, "displayName"))
		assert.Equal(t, "Group", jsonAt(m, "Resources", 1, "meta", "resourceType"))

		// A filter on a User attribute matches no group.
		r = e.do("POST", "/acme/.search", searchBody(map[string]any{"filter": `userName eq "u1@example.com"`}))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		m = r.JSON(t)
		assert.Equal(t, float64(1), m["totalResults"])
		assert.Equal(t, "u1@example.com", jsonAt(m, "Resources", 0, "userName"))
		// And one on a Group attribute matches no user.
		r = e.do("POST", "/acme/.search", searchBody(map[string]any{"filter": fmt.Sprintf(`members.value eq %q`, users[0])}))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		m = r.JSON(t)
		assert.Equal(t, float64(1), m["totalResults"])
		assert.Equal(t, groups[0], jsonAt(m, "Resources", 0, "id"))
		// schemas, which both types have, picks one type out of the mixed list.
		r = e.do("POST", "/acme/.search", searchBody(map[string]any{
			"filter": `schemas eq "urn:ietf:params:scim:schemas:core:2.0:Group"`}))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		m = r.JSON(t)
		assert.Equal(t, float64(2), m["totalResults"])
		assert.Equal(t, "Group", jsonAt(m, "Resources", 0, "meta", "resourceType"))
		assert.Equal(t, "Group", jsonAt(m, "Resources", 1, "meta", "resourceType"))
	})
}

// TestSearchErrors proves that a bad SearchRequest is a SCIM 400 with the right scimType, and
// that the search endpoints take only POST and a valid key.
func TestSearchErrors(t *testing.T) {
	e := newEnv(t)
	e.seed()
	for _, path := range []string{"/acme/.search", "/acme/Users/.search", "/acme/Groups/.search"} {
		for _, c := range []struct {
			body     any
			scimType string
		}{
			{`not json`, "invalidSyntax"},
			{``, "invalidSyntax"},
			{`[]`, "invalidSyntax"},
			{`{"filter":"userName pr"}`, "invalidSyntax"}, // no schemas
			{`{"schemas":["urn:ietf:params:scim:api:messages:2.0:ListResponse"]}`, "invalidSyntax"},
			{`{"schemas":"` + searchURN + `"}`, "invalidSyntax"},
			{`{"schemas":["` + searchURN + `"],"filter":"a","Filter":"b"}`, "invalidSyntax"},
			{`{"schemas":["` + searchURN + `"],"query":"x"}`, "invalidSyntax"},
			{`{"schemas":["` + searchURN + `"]}{}`, "invalidSyntax"},
			{`{"schemas":["` + searchURN + `"],"filter":5}`, "invalidValue"},
			{`{"schemas":["` + searchURN + `"],"attributes":"userName"}`, "invalidValue"},
			{`{"schemas":["` + searchURN + `"],"attributes":[1]}`, "invalidValue"},
			{`{"schemas":["` + searchURN + `"],"count":"2"}`, "invalidValue"},
			{`{"schemas":["` + searchURN + `"],"startIndex":1.5}`, "invalidValue"},
			{`{"schemas":["` + searchURN + `"],"cursor":1}`, "invalidValue"},
			{`{"schemas":["` + searchURN + `"],"filter":"userName eq"}`, "invalidFilter"},
			{`{"schemas":["` + searchURN + `"],"filter":"nosuch eq \"x\""}`, "invalidFilter"},
			{`{"schemas":["` + searchURN + `"],"filter":"a\u0000"}`, "invalidValue"},
		} {
			r := e.do("POST", path, c.body)
			require.Equal(t, 400, r.Status, "%s %v: %s", path, c.body, r.Body)
			assert.Equal(t, c.scimType, r.JSON(t)["scimType"], "%s %v: %s", path, c.body, r.Body)
		}
		r := e.do("GET", path, nil)
		assert.Equal(t, 405, r.Status, "%s", r.Body)
		assert.Equal(t, "POST", r.Header.Get("Allow"))
		r = e.doKey("", "POST", path, searchBody(nil))
		assert.Equal(t, 401, r.Status)
		r = e.doContentType("POST", path, `{"schemas":["`+searchURN+`"]}`, "text/plain")
		assert.Equal(t, 415, r.Status)
	}
	for _, c := range []struct{ path, body string }{
		{"/acme/Users/.search", `{"schemas":["` + searchURN + `"],"sortBy":"nosuch"}`},
		{"/acme/Users/.search", `{"schemas":["` + searchURN + `"],"sortBy":"userName","sortOrder":"up"}`},
		{"/acme/Users/.search", `{"schemas":["` + searchURN + `"],"cursor":"","startIndex":1}`},
		{"/acme/.search", `{"schemas":["` + searchURN + `"],"sortBy":"displayName"}`},
		{"/acme/.search", `{"schemas":["` + searchURN + `"],"cursor":""}`},
	} {
		r := e.do("POST", c.path, c.body)
		require.Equal(t, 400, r.Status, "%s %s: %s", c.path, c.body, r.Body)
		assert.Equal(t, "invalidValue", r.JSON(t)["scimType"], "%s %s: %s", c.path, c.body, r.Body)
	}
	// A cursor that was not issued is refused as on GET.
	r := e.do("POST", "/acme/Users/.search", `{"schemas":["`+searchURN+`"],"cursor":"bogus"}`)
	require.Equal(t, 400, r.Status)
	assert.Equal(t, "invalidCursor", r.JSON(t)["scimType"])
	// Another tenant than the key's is forbidden, as for GET.
	r = e.do("POST", "/globex/Users/.search", searchBody(nil))
	assert.Equal(t, 403, r.Status)
	// The lower-case path Entra ID may send is routed too, and nulls are absent members.
	r = e.do("POST", "/acme/users/.search", `{"schemas":["`+searchURN+`"],"filter":null,"count":1}`)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &m))
	assert.Equal(t, float64(2), m["totalResults"])
	assert.Equal(t, float64(1), m["itemsPerPage"])
}
