package scimsvc_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doIf sends a request with the env's key and one extra header (name: value); safe to call from
// any goroutine (it asserts nothing).
func (e *env) doIf(method, path, body, name, value string) *response {
	var req *http.Request
	if body == "" {
		req = httptest.NewRequest(method, path, nil)
	} else {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/scim+json")
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	if name != "" {
		req.Header.Set(name, value)
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// etagOf asserts that r carries an ETag header equal to its body's meta.version and returns it.
func etagOf(t *testing.T, r *response) string {
	t.Helper()
	tag := r.Header.Get("ETag")
	assert.Equal(t, tag, jsonAt(r.JSON(t), "meta", "version"), "ETag header and meta.version")
	return tag
}

// preconditionFailed asserts that r is the SCIM error of a failed If-Match.
func preconditionFailed(t *testing.T, r *response) {
	t.Helper()
	require.Equal(t, http.StatusPreconditionFailed, r.Status, "%s", r.Body)
	body := r.JSON(t)
	assert.Equal(t, []any{errorSchema}, body["schemas"])
	assert.Equal(t, "412", body["status"])
	assert.NotContains(t, body, "scimType")
	assert.Contains(t, body["detail"], "precondition failed")
}

// TestETags proves meta.version and the ETag header of every kind of response, and If-Match and
// If-None-Match on users and groups, on every backend.
func TestETags(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		const ann = `{"schemas":["` + userSchema + `"],"userName":"ann@example.com","title":"Engineer"}`
		r := e.do("POST", "/acme/Users", ann)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		assert.Equal(t, `W/"1"`, etagOf(t, r))
		id := r.JSON(t)["id"].(string)
		user := "/acme/Users/" + id
		title := func() string { return e.do("GET", user, nil).JSON(t)["title"].(string) }

		r = e.do("GET", user, nil)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Equal(t, `W/"1"`, etagOf(t, r))

		// If-None-Match: 304 without a body when the version matches (weakly, in a list, or *).
		for _, inm := range []string{`W/"1"`, `"1"`, `W/"7", W/"1"`, `*`} {
			r = e.doIf("GET", user, "", "If-None-Match", inm)
			assert.Equal(t, http.StatusNotModified, r.Status, inm)
			assert.Empty(t, r.Body, inm)
			assert.Equal(t, `W/"1"`, r.Header.Get("ETag"), inm)
		}
		r = e.doIf("GET", user, "", "If-None-Match", `W/"2"`)
		assert.Equal(t, http.StatusOK, r.Status)
		assert.Equal(t, `W/"1"`, etagOf(t, r))

		// PATCH with the current version: 200 and the next version.
		r = e.doIf("PATCH", user, patchBody(`{"op":"replace","path":"title","value":"Lead"}`), "If-Match", `W/"1"`)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, `W/"2"`, etagOf(t, r))
		// A PATCH that changes nothing keeps the version.
		r = e.doIf("PATCH", user, patchBody(`{"op":"replace","path":"title","value":"Lead"}`), "If-Match", `W/"2"`)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, `W/"2"`, etagOf(t, r))

		// A stale or foreign version: 412 and nothing changes.
		for _, im := range []string{`W/"1"`, `"abc"`, `W/"3", W/"1"`, `W/"-2"`} {
			preconditionFailed(t, e.doIf("PATCH", user, patchBody(`{"op":"replace","path":"title","value":"Stale"}`), "If-Match", im))
			// PATCHes that set one simple attribute take a typed path; it honours If-Match too.
			preconditionFailed(t, e.doIf("PATCH", user, patchBody(`{"op":"replace","path":"active","value":false}`), "If-Match", im))
			preconditionFailed(t, e.doIf("PATCH", user, patchBody(`{"op":"replace","path":"displayName","value":"Stale"}`), "If-Match", im))
			preconditionFailed(t, e.doIf("PUT", user, `{"schemas":["`+userSchema+`"],"userName":"ann@example.com","title":"Stale"}`, "If-Match", im))
			preconditionFailed(t, e.doIf("DELETE", user, "", "If-Match", im))
		}
		assert.Equal(t, "Lead", title())
		assert.Equal(t, true, e.do("GET", user, nil).JSON(t)["active"])
		assert.Equal(t, `W/"2"`, e.do("GET", user, nil).Header.Get("ETag"))

		// PUT with * (any existing version), then with the strong form of the current tag.
		r = e.doIf("PUT", user, `{"schemas":["`+userSchema+`"],"userName":"ann@example.com","title":"Chief"}`, "If-Match", "*")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, `W/"3"`, etagOf(t, r))
		r = e.doIf("PUT", user, `{"schemas":["`+userSchema+`"],"userName":"ann@example.com","title":"CEO"}`, "If-Match", `"3"`)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, `W/"4"`, etagOf(t, r))
		// Without If-Match a write is unconditional.
		r = e.do("PATCH", user, patchBody(`{"op":"replace","path":"title","value":"Founder"}`))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, `W/"5"`, etagOf(t, r))

		// Lists show each resource's version.
		list := e.do("GET", "/acme/Users", nil).JSON(t)
		assert.Equal(t, `W/"5"`, jsonAt(list, "Resources", 0, "meta", "version"))

		// Groups: a membership change is a change of the group.
		r = e.do("POST", "/acme/Groups", `{"schemas":["`+groupSchema+`"],"displayName":"Staff"}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		assert.Equal(t, `W/"1"`, etagOf(t, r))
		group := "/acme/Groups/" + r.JSON(t)["id"].(string)
		r = e.doIf("PATCH", group, patchBody(`{"op":"add","path":"members","value":[{"value":"`+id+`"}]}`), "If-Match", `W/"1"`)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, `W/"2"`, etagOf(t, r))
		assert.Equal(t, http.StatusOK, e.doIf("GET", group, "", "If-None-Match", `W/"1"`).Status)
		// A member change by value (one Groups.Patch, no read of the members) honours If-Match too.
		other := e.do("POST", "/acme/Users", `{"schemas":["`+userSchema+`"],"userName":"bo@example.com"}`).JSON(t)["id"].(string)
		preconditionFailed(t, e.doIf("PATCH", group, patchBody(`{"op":"add","path":"members","value":[{"value":"`+other+`"}]}`), "If-Match", `W/"1"`))
		preconditionFailed(t, e.doIf("PATCH", group, patchBody(`{"op":"remove","path":"members[value eq \"`+id+`\"]"}`), "If-Match", `W/"1"`))
		assert.Len(t, e.do("GET", group, nil).JSON(t)["members"], 1)
		assert.Equal(t, `W/"2"`, e.do("GET", group, nil).Header.Get("ETag"))
		require.Equal(t, http.StatusNoContent, e.do("DELETE", "/acme/Users/"+other, "").Status)
		r = e.doIf("PATCH", group, patchBody(`{"op":"remove","path":"members"}`), "If-Match", `W/"1"`)
		preconditionFailed(t, r)
		assert.Len(t, e.do("GET", group, nil).JSON(t)["members"], 1)
		r = e.doIf("PATCH", group, patchBody(`{"op":"remove","path":"members"}`), "If-Match", `W/"2"`)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, `W/"3"`, etagOf(t, r))
		assert.Equal(t, `W/"3"`, jsonAt(e.do("GET", "/acme/Groups", nil).JSON(t), "Resources", 0, "meta", "version"))

		// DELETE: a list naming the current version removes the resource; a missing resource
		// is 404 whatever If-Match says.
		r = e.doIf("DELETE", group, "", "If-Match", `W/"1", W/"3"`)
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		assert.Equal(t, http.StatusNotFound, e.do("GET", group, nil).Status)
		for _, im := range []string{`W/"3"`, "*"} {
			assert.Equal(t, http.StatusNotFound, e.doIf("DELETE", group, "", "If-Match", im).Status, im)
			assert.Equal(t, http.StatusNotFound, e.doIf("PATCH", group, patchBody(`{"op":"remove","path":"members"}`), "If-Match", im).Status, im)
		}
		assert.Equal(t, http.StatusNotFound, e.doIf("GET", group, "", "If-None-Match", "*").Status)
		r = e.doIf("DELETE", user, "", "If-Match", `W/"5"`)
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		assert.Empty(t, e.users("acme"))
	})
}

// TestETagRace: 20 clients that read the same version of a user each PATCH it with If-Match;
// exactly one wins, every other gets 412, and the user holds the winner's change, on every
// backend.
func TestETagRace(t *testing.T) {
	const writers = 20
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := e.do("POST", "/acme/Users", `{"schemas":["`+userSchema+`"],"userName":"ann@example.com"}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		user := "/acme/Users/" + r.JSON(t)["id"].(string)
		tag := r.Header.Get("ETag")

		statuses := make([]int, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				<-start
				body := patchBody(fmt.Sprintf(`{"op":"replace","path":"title","value":"writer %d"}`, i))
				statuses[i] = e.doIf("PATCH", user, body, "If-Match", tag).Status
			})
		}
		close(start)
		wg.Wait()

		winner := -1
		for i, s := range statuses {
			switch s {
			case http.StatusOK:
				assert.Equal(t, -1, winner, "writers %d and %d both won", winner, i)
				winner = i
			case http.StatusPreconditionFailed:
			default:
				t.Errorf("writer %d: status %d", i, s)
			}
		}
		require.NotEqual(t, -1, winner, "no writer won")
		r = e.do("GET", user, nil)
		assert.Equal(t, fmt.Sprintf("writer %d", winner), r.JSON(t)["title"])
		assert.Equal(t, `W/"2"`, etagOf(t, r))
	})
}

// TestBulkVersions: a bulk operation's version is its If-Match, and each successful operation
// reports the version it leaves.
func TestBulkVersions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		ops := bulkResponse(t, e.do("POST", "/acme/Bulk", bulkOps(0, `[
			{"method":"POST","path":"/Users","bulkId":"a","data":{"userName":"a@example.com"}},
			{"method":"PATCH","path":"/Users/bulkId:a","version":"W/\"1\"","data":{"Operations":[{"op":"replace","path":"title","value":"x"}]}},
			{"method":"PATCH","path":"/Users/bulkId:a","version":"W/\"1\"","data":{"Operations":[{"op":"replace","path":"title","value":"stale"}]}},
			{"method":"DELETE","path":"/Users/bulkId:a","version":"W/\"1\""},
			{"method":"PUT","path":"/Users/bulkId:a","version":"W/\"2\"","data":{"userName":"a@example.com","title":"y"}}]`)))
		require.Len(t, ops, 5)
		assert.Equal(t, []string{"201", "200", "412", "412", "200"}, []string{ops[0].Status, ops[1].Status, ops[2].Status, ops[3].Status, ops[4].Status})
		assert.Equal(t, []string{`W/"1"`, `W/"2"`, "", "", `W/"3"`}, []string{ops[0].Version, ops[1].Version, ops[2].Version, ops[3].Version, ops[4].Version})
		assert.Equal(t, "412", jsonAt(ops[2].Response, "status"))
		users := e.users("acme")
		require.Len(t, users, 1)
		assert.Equal(t, "y", users[0].Title)
		assert.Equal(t, int64(3), users[0].Meta.Version)
	})
}
