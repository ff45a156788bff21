package scimsvc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// bulkOps wraps operations (a JSON array) in a BulkRequest body; failOnErrors is omitted when 0.
func bulkOps(failOnErrors int, ops string) string {
	f := ""
	if failOnErrors != 0 {
		f = fmt.Sprintf(`"failOnErrors":%d,`, failOnErrors)
	}
	return `{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],` + f + `"Operations":` + ops + `}`
}

// bulkResult is one operation of a BulkResponse as a client reads it.
type bulkResult struct {
	Location string         `json:"location"`
	Method   string         `json:"method"`
	BulkID   string         `json:"bulkId"`
	Version  string         `json:"version"`
	Status   string         `json:"status"`
	Response map[string]any `json:"response"`
}

// bulkResponse checks r is a 200 BulkResponse and returns its operations.
func bulkResponse(t *testing.T, r *response) []bulkResult {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	assert.Equal(t, "application/scim+json", r.Header.Get("Content-Type"))
	var out struct {
		Schemas    []string
		Operations []bulkResult
	}
	require.NoError(t, json.Unmarshal(r.Body, &out), "%s", r.Body)
	assert.Equal(t, []string{"urn:ietf:params:scim:api:messages:2.0:BulkResponse"}, out.Schemas)
	return out.Operations
}

// idOf is the id at the end of a location URL.
func idOf(location string) string {
	return location[strings.LastIndexByte(location, '/')+1:]
}

// TestBulk: bulkId references resolve forward (a group naming users created by later
// operations) and backward (a manager, however escaped, and paths), each operation reports its own status,
// location, bulkId and method, and each is its own write with its own events, on every store.
func TestBulk(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		ctx := context.Background()
		r := e.do("POST", "/acme/Bulk", bulkOps(0, `[
			{"method":"POST","path":"/Groups","bulkId":"staff","data":{"displayName":"Staff",
				"members":[{"value":"bulkId:ann"},{"value":"bulkId:bob"}]}},
			{"method":"POST","path":"/Users","bulkId":"ann","data":{"userName":"ann@example.com"}},
			{"method":"POST","path":"/Users","bulkId":"bob","data":{"userName":"bob@example.com",
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":{"value":"\u0062ulkId:ann"}}}},
			{"method":"PUT","path":"/Users/bulkId:ann","data":{"userName":"ann@example.com","title":"Boss"}},
			{"method":"post","path":"/users","bulkId":"cid","data":{"userName":"cid@example.com"}},
			{"method":"PATCH","path":"/Groups/bulkId:staff","data":{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
				"Operations":[{"op":"add","path":"members","value":[{"value":"bulkId:cid"}]},
				{"op":"remove","path":"members","value":[{"value":"bulkId:bob"}]}]}},
			{"method":"DELETE","path":"/Users/bulkId:bob"}
		]`))
		ops := bulkResponse(t, r)
		require.Len(t, ops, 7)
		users := map[string]string{}
		for _, u := range e.users("acme") {
			users[strings.TrimSuffix(u.UserName, "@example.com")] = u.ID
		}
		require.Len(t, users, 2, "ann and cid; bob was deleted")
		bob := idOf(ops[2].Location)
		staff := idOf(ops[0].Location)
		loc := func(kind, id string) string { return testBase + "/acme/" + kind + "/" + id }
		assert.Equal(t, []bulkResult{
			{Location: loc("Groups", staff), Method: "POST", BulkID: "staff", Version: `W/"1"`, Status: "201"},
			{Location: loc("Users", users["ann"]), Method: "POST", BulkID: "ann", Version: `W/"1"`, Status: "201"},
			{Location: loc("Users", bob), Method: "POST", BulkID: "bob", Version: `W/"1"`, Status: "201"},
			{Location: loc("Users", users["ann"]), Method: "PUT", Version: `W/"2"`, Status: "200"},
			{Location: loc("Users", users["cid"]), Method: "POST", BulkID: "cid", Version: `W/"1"`, Status: "201"},
			{Location: loc("Groups", staff), Method: "PATCH", Version: `W/"2"`, Status: "200"},
			{Location: loc("Users", bob), Method: "DELETE", Status: "204"},
		}, ops)

		g, err := e.backend.Groups.Get(ctx, "acme", staff)
		require.NoError(t, err)
		var members []string
		for _, m := range g.Members {
			members = append(members, m.Value)
		}
		assert.ElementsMatch(t, []string{users["ann"], users["cid"]}, members)
		ann, err := e.backend.Users.Get(ctx, "acme", users["ann"])
		require.NoError(t, err)
		assert.Equal(t, "Boss", ann.Title)

		// The manager reference resolved too: bob's events carry it.
		events, err := e.backend.Events.List(ctx, "acme", "", 100)
		require.NoError(t, err)
		type seen struct {
			typ     store.EventType
			subject string
		}
		var got []seen
		for _, ev := range events {
			got = append(got, seen{ev.Type, ev.SubjectID})
		}
		// The users the group names are created before it, as its operation needs them.
		assert.Equal(t, []seen{
			{store.EventUserCreated, users["ann"]}, {store.EventUserCreated, bob},
			{store.EventGroupCreated, staff},
			{store.EventUserUpdated, users["ann"]},
			{store.EventUserCreated, users["cid"]},
			{store.EventGroupMemberAdded, staff}, {store.EventGroupMemberRemoved, staff},
			{store.EventUserDeleted, bob},
		}, got)
		var bobCreated map[string]any
		require.NoError(t, json.Unmarshal(events[1].Data, &bobCreated))
		assert.Equal(t, users["ann"], jsonAt(bobCreated, "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", "manager", "value"))
	})
}

// TestBulkErrors: an operation that fails reports its status and the SCIM error as its
// response, and the others go on; failOnErrors stops after that many errors, leaving the rest
// out of the response and undone.
func TestBulkErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := e.do("POST", "/acme/Users", `{"userName":"taken@example.com"}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		taken := r.JSON(t)["id"].(string)

		ops := bulkResponse(t, e.do("POST", "/acme/Bulk", bulkOps(0, `[
			{"method":"POST","path":"/Users","bulkId":"a","data":{"userName":"TAKEN@example.com"}},
			{"method":"POST","path":"/Users","bulkId":"b","data":{"displayName":"no userName"}},
			{"method":"PUT","path":"/Users/user_missing","data":{"userName":"x@example.com"}},
			{"method":"PATCH","path":"/Users/`+taken+`","data":{"Operations":[{"op":"frobnicate","path":"title"}]}},
			{"method":"GET","path":"/Users/`+taken+`"},
			{"method":"POST","path":"/Users/`+taken+`","bulkId":"d","data":{"userName":"y@example.com"}},
			{"method":"DELETE","path":"/Schemas/x"},
			{"method":"POST","path":"/Users","bulkId":"e","data":{"userName":"ok@example.com","active":"maybe"}},
			{"method":"POST","path":"/Groups","bulkId":"g","data":{"displayName":"G","members":[{"value":"bulkId:b"}]}},
			{"method":"POST","path":"/Users","bulkId":"c","data":{"userName":"ok@example.com"}},
			"not an operation"
		]`)))
		require.Len(t, ops, 11)
		type short struct{ status, scimType, location string }
		var got []short
		for _, op := range ops {
			st, _ := op.Response["scimType"].(string)
			got = append(got, short{op.Status, st, op.Location})
			if op.Status >= "400" {
				assert.Equal(t, op.Status, op.Response["status"], "the response is the SCIM error")
				assert.Equal(t, []any{"urn:ietf:params:scim:api:messages:2.0:Error"}, op.Response["schemas"])
			} else {
				assert.Nil(t, op.Response)
			}
		}
		assert.Equal(t, []short{
			{"409", "uniqueness", ""},
			{"400", "invalidValue", ""},
			{"404", "", testBase + "/acme/Users/user_missing"},
			{"400", "invalidSyntax", testBase + "/acme/Users/" + taken},
			{"400", "invalidValue", ""},
			{"400", "invalidValue", ""},
			{"400", "invalidValue", ""},
			{"400", "invalidValue", ""},
			{"409", "", ""}, // names the user of a POST that failed
			{"201", "", ops[9].Location},
			{"400", "invalidSyntax", ""},
		}, got)
		assert.Equal(t, "GET", ops[4].Method)
		assert.Equal(t, "g", ops[8].BulkID)
		assert.Len(t, e.users("acme"), 2, "taken and ok")

		// failOnErrors 2: the second error ends the request.
		ops = bulkResponse(t, e.do("POST", "/acme/Bulk", bulkOps(2, `[
			{"method":"POST","path":"/Users","bulkId":"d","data":{"userName":"d@example.com"}},
			{"method":"POST","path":"/Users","bulkId":"e","data":{"userName":"taken@example.com"}},
			{"method":"POST","path":"/Users","bulkId":"f","data":{"userName":"f@example.com"}},
			{"method":"DELETE","path":"/Users/user_missing"},
			{"method":"POST","path":"/Users","bulkId":"h","data":{"userName":"h@example.com"}}
		]`)))
		var statuses []string
		for _, op := range ops {
			statuses = append(statuses, op.BulkID+":"+op.Status)
		}
		assert.Equal(t, []string{"d:201", "e:409", "f:201", ":404"}, statuses)
		var names []string
		for _, u := range e.users("acme") {
			names = append(names, u.UserName)
		}
		assert.ElementsMatch(t, []string{"taken@example.com", "ok@example.com", "d@example.com", "f@example.com"}, names)

		// failOnErrors 1 with a forward reference: the referenced POST runs first, fails, and
		// nothing else runs.
		ops = bulkResponse(t, e.do("POST", "/acme/Bulk", bulkOps(1, `[
			{"method":"POST","path":"/Groups","data":{"displayName":"G2","members":[{"value":"bulkId:i"}]}},
			{"method":"POST","path":"/Users","bulkId":"i","data":{"userName":"taken@example.com"}}
		]`)))
		require.Len(t, ops, 1)
		assert.Equal(t, bulkResult{Method: "POST", BulkID: "i", Status: "409", Response: ops[0].Response}, ops[0])
	})
}

// TestBulkCircular: operations whose bulkId references form a circle are refused with 409
// (RFC 7644 §3.7.1), and so is one that needs them; the rest of the request runs.
func TestBulkCircular(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		const manager = `"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":{"value":"bulkId:%s"}}`
		ops := bulkResponse(t, e.do("POST", "/acme/Bulk", bulkOps(0, `[
			{"method":"POST","path":"/Users","bulkId":"a","data":{"userName":"a@example.com",`+fmt.Sprintf(manager, "b")+`}},
			{"method":"POST","path":"/Users","bulkId":"b","data":{"userName":"b@example.com",`+fmt.Sprintf(manager, "c")+`}},
			{"method":"POST","path":"/Users","bulkId":"c","data":{"userName":"c@example.com",`+fmt.Sprintf(manager, "a")+`}},
			{"method":"POST","path":"/Users","bulkId":"self","data":{"userName":"self@example.com",`+fmt.Sprintf(manager, "self")+`}},
			{"method":"POST","path":"/Groups","data":{"displayName":"G","members":[{"value":"bulkId:a"},{"value":"bulkId:d"}]}},
			{"method":"POST","path":"/Users","bulkId":"d","data":{"userName":"d@example.com"}}
		]`)))
		var statuses []string
		for _, op := range ops {
			statuses = append(statuses, op.BulkID+":"+op.Status)
			if op.Status == "409" {
				assert.Contains(t, op.Response["detail"], "bulkId")
			}
		}
		assert.Equal(t, []string{"a:409", "b:409", "c:409", "self:409", ":409", "d:201"}, statuses)
		require.Len(t, e.users("acme"), 1)
		assert.Equal(t, "d@example.com", e.users("acme")[0].UserName)
		groups, err := e.backend.Groups.List(context.Background(), "acme", store.Query{StartIndex: 1, Count: -1})
		require.NoError(t, err)
		assert.Empty(t, groups.Resources)
	})
}

// TestBulkRefused: a bulk request that is too large, malformed or not allowed is refused as a
// whole, with the right status and SCIM error, and changes nothing.
func TestBulkRefused(t *testing.T) {
	e := newEnv(t, func(c *scimsvc.Config) {
		c.BulkMaxOperations = 3
		c.BulkMaxPayloadBytes = 2000
		c.MaxBodyBytes = 200
	})
	user := func(n int) string {
		return fmt.Sprintf(`{"method":"POST","path":"/Users","bulkId":"u%d","data":{"userName":"u%d@example.com"}}`, n, n)
	}
	for _, tc := range []struct {
		name        string
		contentType string
		body        string
		status      int
		scimType    string
		detail      string
	}{
		{"too many operations", "", bulkOps(0, "["+user(1)+","+user(2)+","+user(3)+","+user(4)+"]"),
			http.StatusRequestEntityTooLarge, "", "maxOperations is 3"},
		{"too large", "", bulkOps(0, `[{"method":"POST","path":"/Users","data":{"userName":"`+strings.Repeat("x", 2000)+`"}}]`),
			http.StatusRequestEntityTooLarge, "", "maxPayloadSize (2000 bytes)"},
		{"duplicate member", "", `{"Operations":[` + user(1) + `],"operations":[]}`, http.StatusBadRequest, "invalidSyntax", "differ only in case"},
		{"duplicate member in data", "", bulkOps(0, `[{"method":"POST","path":"/Users","data":{"userName":"a","userName":"b"}}]`),
			http.StatusBadRequest, "invalidSyntax", "appears twice"},
		{"NUL", "", bulkOps(0, `[{"method":"POST","path":"/Users","data":{"userName":"a\u0000b"}}]`), http.StatusBadRequest, "invalidValue", "NUL"},
		{"not JSON", "", `{"Operations":[`, http.StatusBadRequest, "invalidSyntax", ""},
		{"no operations", "", `{"schemas":["urn:ietf:params:scim:api:messages:2.0:BulkRequest"]}`, http.StatusBadRequest, "invalidSyntax", "Operations"},
		{"operations not an array", "", `{"Operations":{}}`, http.StatusBadRequest, "invalidSyntax", "Operations"},
		{"failOnErrors zero", "", `{"failOnErrors":0,"Operations":[` + user(1) + `]}`, http.StatusBadRequest, "invalidValue", "failOnErrors"},
		{"failOnErrors fraction", "", `{"failOnErrors":1.5,"Operations":[` + user(1) + `]}`, http.StatusBadRequest, "invalidValue", "failOnErrors"},
		{"bulkId twice", "", bulkOps(0, "["+user(1)+","+user(1)+"]"), http.StatusBadRequest, "invalidValue", "bulkId"},
		{"content type", "text/plain", bulkOps(0, "["+user(1)+"]"), http.StatusUnsupportedMediaType, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.doContentType("POST", "/acme/Bulk", tc.body, tc.contentType)
			require.Equal(t, tc.status, r.Status, "%s", r.Body)
			m := r.JSON(t)
			assert.Equal(t, []any{"urn:ietf:params:scim:api:messages:2.0:Error"}, m["schemas"])
			assert.Equal(t, fmt.Sprint(tc.status), m["status"])
			if tc.scimType == "" {
				assert.Nil(t, m["scimType"])
			} else {
				assert.Equal(t, tc.scimType, m["scimType"])
			}
			assert.Contains(t, m["detail"], tc.detail)
			page, err := e.mem.Users().List(context.Background(), "acme", store.Query{StartIndex: 1, Count: -1})
			require.NoError(t, err)
			assert.Empty(t, page.Resources)
		})
	}

	// An operation's data is held to MaxBodyBytes, as the request it stands for: that
	// operation fails with 413, the others run.
	ops := bulkResponse(t, e.do("POST", "/acme/Bulk", bulkOps(0, `[
		{"method":"POST","path":"/Users","bulkId":"big","data":{"userName":"big@example.com","title":"`+strings.Repeat("x", 200)+`"}},
		`+user(1)+`]`)))
	require.Len(t, ops, 2)
	assert.Equal(t, "413", ops[0].Status)
	assert.Equal(t, "413", ops[0].Response["status"])
	assert.Equal(t, "201", ops[1].Status)

	// Only POST; the endpoint answers in any case, like the others; another tenant is 403.
	r := e.do("GET", "/acme/Bulk", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, r.Status)
	assert.Equal(t, "POST", r.Header.Get("Allow"))
	assert.Equal(t, http.StatusOK, e.do("POST", "/acme/bulk", bulkOps(0, `[]`)).Status)
	assert.Equal(t, http.StatusForbidden, e.do("POST", "/globex/Bulk", bulkOps(0, "["+user(5)+"]")).Status)
	assert.Equal(t, http.StatusUnauthorized, e.doKey("", "POST", "/acme/Bulk", bulkOps(0, "["+user(5)+"]")).Status)
}

// doContentType sends body with the given Content-Type ("" for application/scim+json).
func (e *env) doContentType(method, path, body, contentType string) *response {
	e.t.Helper()
	if contentType == "" {
		return e.do(method, path, body)
	}
	req, err := http.NewRequest(method, "http://example.com"+path, strings.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+e.key)
	rec := &recorderResponse{header: http.Header{}}
	e.handler.ServeHTTP(rec, req)
	return &response{Status: rec.status, Header: rec.header, Body: rec.body}
}

type recorderResponse struct {
	header http.Header
	status int
	body   []byte
}

func (r *recorderResponse) Header() http.Header { return r.header }
func (r *recorderResponse) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorderResponse) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, b...)
	return len(b), nil
}

// TestBulkServiceProviderConfig: bulk is advertised with its limits, the defaults or Config's.
func TestBulkServiceProviderConfig(t *testing.T) {
	for _, tc := range []struct {
		ops     int
		payload int64
		wantOps int
		wantPay int
	}{
		{0, 0, scimsvc.DefaultBulkMaxOperations, scimsvc.DefaultBulkMaxPayloadBytes},
		{1000, 5 << 20, 1000, 5 << 20},
	} {
		e := newEnv(t, func(c *scimsvc.Config) { c.BulkMaxOperations, c.BulkMaxPayloadBytes = tc.ops, tc.payload })
		r := e.do("GET", "/acme/ServiceProviderConfig", nil)
		require.Equal(t, http.StatusOK, r.Status)
		assert.Equal(t, map[string]any{"supported": true, "maxOperations": float64(tc.wantOps), "maxPayloadSize": float64(tc.wantPay)},
			r.JSON(t)["bulk"])
	}
	_, err := scimsvc.New(scimsvc.Config{Tenants: nil})
	require.Error(t, err)
	mem := newEnv(t).mem
	_, err = scimsvc.New(scimsvc.Config{Tenants: mem.Tenants(), Users: mem.Users(), Groups: mem.Groups(), APIKeys: mem.APIKeys(),
		BaseURL: testBase, BulkMaxOperations: -1})
	require.Error(t, err)
}

// TestBulkRateLimit: each operation counts as a request. A bulk request of more operations
// than the key has requests left is refused with 429 and Retry-After before anything is done,
// and takes nothing from the quota but the one request it is. It runs with the default request
// deadline and with none: the key id the bulk operations are limited by rides in the
// deadline's context, or in a context of its own.
func TestBulkRateLimit(t *testing.T) {
	for _, timeout := range []time.Duration{0, -1} {
		t.Run(fmt.Sprintf("timeout=%v", timeout), func(t *testing.T) { testBulkRateLimit(t, timeout) })
	}
}

func testBulkRateLimit(t *testing.T, timeout time.Duration) {
	var c *clock
	e := newEnv(t, func(cfg *scimsvc.Config) {
		lim, err := ratelimit.NewMemory(ratelimit.MemoryConfig{
			Rate: ratelimit.Rate{Limit: 10, Period: time.Minute},
			Now:  cfg.Now,
		})
		require.NoError(t, err)
		cfg.RateLimiter = lim
		cfg.RequestTimeout = timeout
	})
	c = e.clock
	users := func(from, n int) string {
		var ops []string
		for i := from; i < from+n; i++ {
			ops = append(ops, fmt.Sprintf(`{"method":"POST","path":"/Users","bulkId":"u%d","data":{"userName":"u%d@example.com"}}`, i, i))
		}
		return bulkOps(0, "["+strings.Join(ops, ",")+"]")
	}
	r := e.do("POST", "/acme/Bulk", users(0, 11))
	require.Equal(t, http.StatusTooManyRequests, r.Status, "%s", r.Body)
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
	assert.Empty(t, e.usersOf("acme"))

	r = e.do("POST", "/acme/Bulk", users(0, 6)) // the refused request took one: 9 left
	ops := bulkResponse(t, r)
	require.Len(t, ops, 6)
	assert.Equal(t, "3", r.Header.Get("RateLimit-Remaining"))
	assert.Len(t, e.usersOf("acme"), 6)
	for range 3 {
		require.Equal(t, http.StatusOK, e.do("GET", "/acme/Users/"+idOf(ops[0].Location), nil).Status)
	}
	r = e.do("GET", "/acme/Users/"+idOf(ops[0].Location), nil)
	require.Equal(t, http.StatusTooManyRequests, r.Status)

	// A whole minute later the quota is whole again.
	c.Advance(time.Minute)
	r = e.do("POST", "/acme/Bulk", users(10, 10))
	require.Len(t, bulkResponse(t, r), 10)
	assert.Equal(t, "0", r.Header.Get("RateLimit-Remaining"))
}

// usersOf lists the users of tenant in the env's memstore.
func (e *env) usersOf(tenant string) []store.User {
	e.t.Helper()
	p, err := e.mem.Users().List(context.Background(), tenant, store.Query{StartIndex: 1, Count: -1})
	require.NoError(e.t, err)
	return p.Resources
}

// TestBulkThousandUsersAndTheirGroup: one bulk request creates 1,000 users and a group of all
// of them, which names them by bulkId, on every store.
func TestBulkThousandUsersAndTheirGroup(t *testing.T) {
	const n = 1000
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		ops := make([]string, 0, n+1)
		members := make([]string, 0, n)
		for i := range n {
			ops = append(ops, fmt.Sprintf(`{"method":"POST","path":"/Users","bulkId":"u%d","data":{"userName":"user%04d@example.com","active":true}}`, i, i))
			members = append(members, fmt.Sprintf(`{"value":"bulkId:u%d"}`, i))
		}
		ops = append(ops, `{"method":"POST","path":"/Groups","bulkId":"all","data":{"displayName":"Everyone","members":[`+strings.Join(members, ",")+`]}}`)
		results := bulkResponse(t, e.do("POST", "/acme/Bulk", bulkOps(1, "["+strings.Join(ops, ",")+"]")))
		require.Len(t, results, n+1)
		ids := map[string]bool{}
		for i, res := range results[:n] {
			require.Equal(t, "201", res.Status, "operation %d: %v", i, res.Response)
			require.Equal(t, fmt.Sprintf("u%d", i), res.BulkID)
			ids[idOf(res.Location)] = true
		}
		require.Equal(t, "201", results[n].Status, "%v", results[n].Response)
		require.Len(t, ids, n)

		g, err := e.backend.Groups.Get(context.Background(), "acme", idOf(results[n].Location))
		require.NoError(t, err)
		require.Len(t, g.Members, n)
		for _, m := range g.Members {
			require.True(t, ids[m.Value], "member %s is a user of the request", m.Value)
		}
		assert.Len(t, e.users("acme"), n)
	}, func(c *scimsvc.Config) {
		c.BulkMaxOperations = n + 1
		lim, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: n + 1, Period: time.Minute}, Now: c.Now})
		if err != nil {
			panic(err)
		}
		c.RateLimiter = lim
		c.RequestTimeout = 5 * time.Minute
	})
}

// failingLimiter is a rate limiter that cannot decide.
type failingLimiter struct{}

func (failingLimiter) Allow(context.Context, string) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("limiter down")
}

func (failingLimiter) Peek(context.Context, string) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("limiter down")
}

// TestBulkMountedAndLimiterDown: mounted under a prefix, a bulk request's locations come from
// BaseURL, and a rate limiter that cannot decide lets a bulk request through, as it lets any
// request through.
func TestBulkMountedAndLimiterDown(t *testing.T) {
	e := newEnv(t, func(c *scimsvc.Config) { c.RateLimiter = failingLimiter{} })
	mux := http.NewServeMux()
	mux.Handle("/scim/v2/", http.StripPrefix("/scim/v2", e.handler))
	e.handler = mux
	ops := bulkResponse(t, e.do("POST", "/scim/v2/acme/Bulk", bulkOps(0, `[
		{"method":"POST","path":"/Users","bulkId":"a","data":{"userName":"a@example.com"}},
		{"method":"PATCH","path":"/Users/bulkId:a","data":{"Operations":[{"op":"replace","path":"title","value":"x"}]}}]`)))
	require.Len(t, ops, 2)
	assert.Equal(t, "201", ops[0].Status)
	assert.True(t, strings.HasPrefix(ops[0].Location, testBase+"/acme/Users/user_"), ops[0].Location)
	assert.Equal(t, bulkResult{Location: ops[0].Location, Method: "PATCH", Version: `W/"2"`, Status: "200"}, ops[1])
	assert.Equal(t, "x", e.usersOf("acme")[0].Title)
}

// TestBulkPostNeedsBulkID: a bulk POST without a bulkId (RFC 7644 §3.7: REQUIRED) fails alone
// with 400 invalidValue and creates nothing; the operations beside it run.
func TestBulkPostNeedsBulkID(t *testing.T) {
	e := newEnv(t)
	ops := bulkResponse(t, e.do("POST", "/acme/Bulk", bulkOps(0, `[
		{"method":"POST","path":"/Users","data":{"userName":"nameless@example.com"}},
		{"method":"POST","path":"/Users","bulkId":"u","data":{"userName":"named@example.com"}}
	]`)))
	require.Len(t, ops, 2)
	assert.Equal(t, "400", ops[0].Status)
	assert.Equal(t, "invalidValue", ops[0].Response["scimType"])
	assert.Contains(t, ops[0].Response["detail"], "bulkId")
	assert.Empty(t, ops[0].Location)
	assert.Equal(t, "201", ops[1].Status)
	users := e.usersOf("acme")
	require.Len(t, users, 1, "only the POST with a bulkId created a user")
	assert.Equal(t, "named@example.com", users[0].UserName)
}
