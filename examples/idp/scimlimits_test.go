package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// slowUsers is a user store whose Update waits, inside the store's write, until the request's
// context is done before it lets the handler's function run.
type slowUsers struct{ store.Users }

func (s slowUsers) Update(ctx context.Context, tenant, id string, fn func(*store.User) error) (*store.User, error) {
	return s.Users.Update(context.WithoutCancel(ctx), tenant, id, func(u *store.User) error {
		<-ctx.Done()
		return fn(u)
	})
}

// scimAnswer is the status and decoded body of a SCIM answer.
type scimAnswer struct {
	status int
	header http.Header
	body   map[string]any
}

// TestSCIMLimitsOnEveryStore proves on every store of the service that values a PATCH adds are
// kept once however they are cased, that a request leaving more values than
// scimsvc.Config.MaxMultiValued is 400 invalidValue and stores nothing, and that a request whose
// deadline passes while the store writes is 503 with Retry-After and stores nothing.
func TestSCIMLimitsOnEveryStore(t *testing.T) {
	for _, tt := range []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"memory", func(*testing.T) string { return "memory" }},
		{"sqlite", func(*testing.T) string { return "sqlite::memory:" }},
		{"postgres", func(t *testing.T) string {
			t.Setenv(kekEnv, base64.StdEncoding.EncodeToString(randomKEK()))
			return postgresSchema(t, serviceEnv(t, "VISID_TEST_POSTGRES_DSN"))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			d, err := openDB(ctx, tt.db(t))
			require.NoError(t, err)
			t.Cleanup(func() { d.close() })
			require.NoError(t, d.Tenants.Create(ctx, store.Tenant{ID: "acme", Created: time.Now()}))
			key, _, err := scimsvc.IssueAPIKey(ctx, d.APIKeys, scimsvc.KeySpec{Name: "test", Tenants: []string{"acme"}})
			require.NoError(t, err)
			// The fast handler's deadline is long, so that a busy machine does not time out its
			// writes; the slow one's store waits for its deadline, which may be short.
			handler := func(users store.Users, timeout time.Duration) http.Handler {
				h, err := scimsvc.New(scimsvc.Config{
					Tenants: d.Tenants, Users: users, Groups: d.Groups, APIKeys: d.APIKeys,
					BaseURL: "https://id.example.com/scim/v2", MaxMultiValued: 3, RequestTimeout: timeout,
				})
				require.NoError(t, err)
				return h
			}
			fast, slow := handler(d.Users, time.Minute), handler(slowUsers{d.Users}, 100*time.Millisecond)
			do := func(h http.Handler, method, path, body string) scimAnswer {
				t.Helper()
				req := httptest.NewRequest(method, path, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/scim+json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				var m map[string]any
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m), "body: %s", rec.Body)
				return scimAnswer{status: rec.Code, header: rec.Header(), body: m}
			}
			emails := func(values ...string) string {
				var parts []string
				for _, v := range values {
					parts = append(parts, fmt.Sprintf(`{"value":%q,"type":"work"}`, v))
				}
				return "[" + strings.Join(parts, ",") + "]"
			}
			patch := func(op string) string {
				return `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[` + op + `]}`
			}
			stored := func(id string) *store.User {
				t.Helper()
				u, err := d.Users.Get(ctx, "acme", id)
				require.NoError(t, err)
				return u
			}

			r := do(fast, "POST", "/acme/Users", `{"userName":"big","emails":`+emails("1@x", "2@x", "3@x", "4@x")+`}`)
			require.Equal(t, 400, r.status, "%v", r.body)
			assert.Equal(t, "invalidValue", r.body["scimType"])
			assert.Contains(t, r.body["detail"], "at most 3")
			page, err := d.Users.List(ctx, "acme", store.Query{StartIndex: 1, Count: 10})
			require.NoError(t, err)
			assert.Zero(t, page.TotalResults, "a refused POST stores nothing")

			r = do(fast, "POST", "/acme/Users", `{"userName":"ann","displayName":"Ann","emails":`+emails("a@x", "b@x")+`}`)
			require.Equal(t, 201, r.status, "%v", r.body)
			ann, _ := r.body["id"].(string)

			r = do(fast, "PATCH", "/acme/Users/"+ann, patch(`{"op":"add","path":"emails","value":`+emails("A@X", "c@x")+`}`))
			require.Equal(t, 200, r.status, "%v", r.body)
			want := []store.MultiValue{{Value: "A@X", Type: "work"}, {Value: "b@x", Type: "work"}, {Value: "c@x", Type: "work"}}
			assert.Equal(t, want, stored(ann).Emails, "a value already there is updated, not added")

			r = do(fast, "PATCH", "/acme/Users/"+ann, patch(`{"op":"add","path":"emails","value":`+emails("d@x")+`}`))
			require.Equal(t, 400, r.status, "%v", r.body)
			assert.Equal(t, "invalidValue", r.body["scimType"])
			assert.Equal(t, want, stored(ann).Emails, "a refused PATCH stores nothing")

			r = do(slow, "PATCH", "/acme/Users/"+ann, patch(`{"op":"replace","path":"displayName","value":"Late"}`))
			require.Equal(t, 503, r.status, "%v", r.body)
			assert.Equal(t, "1", r.header.Get("Retry-After"))
			assert.Equal(t, "Ann", stored(ann).DisplayName, "a PATCH that timed out stores nothing")
		})
	}
}

// TestGroupNoContentFlag: -scim-group-no-content answers a PATCH of a group with 204 and no
// body, and the change is made; without the flag the answer is 200 with the group.
func TestGroupNoContentFlag(t *testing.T) {
	for _, tt := range []struct {
		flags []string
		want  int
	}{{nil, http.StatusOK}, {[]string{"-scim-group-no-content"}, http.StatusNoContent}} {
		t.Run(fmt.Sprint(tt.flags), func(t *testing.T) {
			s := startObserved(t, tt.flags...)
			base, key := s.vars["scim_base_url"], s.vars["scim_api_key"]
			resp, user := scimRequest(t, "POST", base+"/Users", key, `{"userName":"bob@example.com"}`)
			require.Equal(t, http.StatusCreated, resp.StatusCode)
			resp, group := scimRequest(t, "POST", base+"/Groups", key, `{"displayName":"Staff"}`)
			require.Equal(t, http.StatusCreated, resp.StatusCode, "POST answers 201 with the group either way")
			id := group["id"].(string)
			resp, body := scimRequest(t, "PATCH", base+"/Groups/"+id, key,
				`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"members","value":[{"value":"`+user["id"].(string)+`"}]}]}`)
			assert.Equal(t, tt.want, resp.StatusCode)
			if tt.want == http.StatusNoContent {
				assert.Nil(t, body)
			}
			resp, got := scimRequest(t, "GET", base+"/Groups/"+id, key, "")
			require.Equal(t, http.StatusOK, resp.StatusCode)
			members, _ := got["members"].([]any)
			require.Len(t, members, 1)
			assert.Equal(t, user["id"], members[0].(map[string]any)["value"])
		})
	}
}
