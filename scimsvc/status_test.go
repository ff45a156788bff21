package scimsvc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

const (
	errorSchema  = "urn:ietf:params:scim:api:messages:2.0:Error"
	patchSchema  = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
	listSchema   = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	userSchema   = "urn:ietf:params:scim:schemas:core:2.0:User"
	groupSchema  = "urn:ietf:params:scim:schemas:core:2.0:Group"
	enterpriseNS = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"

	// internalSecret is what a broken store puts in its errors and panics; no response may
	// carry it.
	internalSecret = "postgres://scim:hunter2@10.1.2.3/visid"
)

// seeded is the data every status test starts with: in acme, users ann (with a primary work
// email) and bob, and group Staff whose member is ann.
type seeded struct {
	ann, bob, staff string
}

func (e *env) seed() seeded {
	e.t.Helper()
	ann := e.seedUser("acme", store.User{
		UserName: "ann@example.com", Active: true, DisplayName: "Ann Lee",
		Name:   store.Name{GivenName: "Ann", FamilyName: "Lee"},
		Emails: []store.MultiValue{{Value: "ann@example.com", Type: "work", Primary: true}},
	})
	bob := e.seedUser("acme", store.User{UserName: "bob@example.com", Active: true})
	staff := e.seedGroup("acme", store.Group{DisplayName: "Staff", Members: []store.Member{{Value: ann.ID}}})
	return seeded{ann: ann.ID, bob: bob.ID, staff: staff.ID}
}

// seedUser stores u in tenant directly, created at the env's clock.
func (e *env) seedUser(tenant string, u store.User) *store.User {
	e.t.Helper()
	u.Meta = store.Meta{Created: e.clock.Now(), LastModified: e.clock.Now()}
	stored, err := e.mem.Users().Create(context.Background(), tenant, u)
	require.NoError(e.t, err)
	return stored
}

// seedGroup stores g in tenant directly, created at the env's clock.
func (e *env) seedGroup(tenant string, g store.Group) *store.Group {
	e.t.Helper()
	g.Meta = store.Meta{Created: e.clock.Now(), LastModified: e.clock.Now()}
	stored, err := e.mem.Groups().Create(context.Background(), tenant, g)
	require.NoError(e.t, err)
	return stored
}

// storeState is everything the SCIM API can change, read straight from the store.
type storeState struct {
	Users  map[string][]store.User
	Groups map[string][]store.Group
	Errs   map[string]string
}

// snapshot reads the users and groups of acme and globex (and "ghost", which tests may create).
func (e *env) snapshot() storeState {
	e.t.Helper()
	ctx := context.Background()
	s := storeState{Users: map[string][]store.User{}, Groups: map[string][]store.Group{}, Errs: map[string]string{}}
	for _, tenant := range []string{"acme", "globex", "ghost"} {
		up, err := e.mem.Users().List(ctx, tenant, store.Query{StartIndex: 1, Count: -1})
		if err != nil {
			s.Errs[tenant+"/users"] = err.Error()
		}
		gp, err := e.mem.Groups().List(ctx, tenant, store.Query{StartIndex: 1, Count: -1})
		if err != nil {
			s.Errs[tenant+"/groups"] = err.Error()
		}
		s.Users[tenant], s.Groups[tenant] = up.Resources, gp.Resources
	}
	return s
}

// send serves req and records the answer.
func (e *env) send(req *http.Request) *response {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// requestFrom builds a request from the client address remote (host:port) with the bearer key
// ("" for no Authorization header).
func requestFrom(remote, key, method, path, body string) *http.Request {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.RemoteAddr = remote
	if body != "" {
		req.Header.Set("Content-Type", "application/scim+json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return req
}

// requireSCIMError checks that r is the SCIM error of RFC 7644 §3.12 with this status and
// scimType ("" for none), and returns its detail.
func requireSCIMError(t *testing.T, r *response, status int, scimType string) string {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	assert.Equal(t, "application/scim+json", r.Header.Get("Content-Type"))
	body := r.JSON(t)
	assert.Equal(t, []any{errorSchema}, body["schemas"], "schemas")
	assert.Equal(t, fmt.Sprint(status), body["status"], "status must be the code as a string")
	if scimType == "" {
		assert.NotContains(t, body, "scimType")
	} else {
		assert.Equal(t, scimType, body["scimType"], "scimType; detail: %v", body["detail"])
	}
	detail, _ := body["detail"].(string)
	assert.NotEmpty(t, detail, "detail")
	return detail
}

// issueKey issues another API key and returns its secret.
func (e *env) issueKey(spec scimsvc.KeySpec) (string, *store.APIKey) {
	e.t.Helper()
	spec.Now = e.clock.Now()
	secret, k, err := scimsvc.IssueAPIKey(context.Background(), e.mem.APIKeys(), spec)
	require.NoError(e.t, err)
	return secret, k
}

// perMinuteLimiter is a Memory limiter on the env's clock allowing n requests a minute, all at
// once.
func perMinuteLimiter(t *testing.T, cfg *scimsvc.Config, n int) ratelimit.Limiter {
	lim, err := ratelimit.NewMemory(ratelimit.MemoryConfig{
		Rate: ratelimit.Rate{Limit: n, Period: time.Minute},
		Now:  cfg.Now,
	})
	require.NoError(t, err)
	return lim
}

// brokenUsers is a user store whose every read and write fails with an error, or panics with a
// message, that holds internalSecret.
type brokenUsers struct {
	store.Users
	panics bool
}

func (b brokenUsers) fail() error {
	if b.panics {
		panic("store exploded: " + internalSecret)
	}
	return fmt.Errorf("dial %s: connection refused", internalSecret)
}

func (b brokenUsers) Create(context.Context, string, store.User) (*store.User, error) {
	return nil, b.fail()
}
func (b brokenUsers) Get(context.Context, string, string) (*store.User, error) { return nil, b.fail() }
func (b brokenUsers) Update(context.Context, string, string, func(*store.User) error) (*store.User, error) {
	return nil, b.fail()
}
func (b brokenUsers) Delete(context.Context, string, string) error { return b.fail() }
func (b brokenUsers) List(context.Context, string, store.Query) (store.Page[store.User], error) {
	return store.Page[store.User]{}, b.fail()
}

// brokenKeys is an API key store whose lookups fail with an internal error.
type brokenKeys struct{ store.APIKeys }

func (brokenKeys) ByHash(context.Context, [32]byte) (*store.APIKey, error) {
	return nil, errors.New("redis: " + internalSecret)
}

// brokenTenants is a tenant store whose lookups fail with an internal error.
type brokenTenants struct{ store.Tenants }

func (brokenTenants) Get(context.Context, string) (*store.Tenant, error) {
	return nil, errors.New("tenant lookup: " + internalSecret)
}

func quietLogger(cfg *scimsvc.Config) { cfg.Logger = slog.New(slog.DiscardHandler) }

func patchBody(ops ...string) string {
	return `{"schemas":["` + patchSchema + `"],"Operations":[` + strings.Join(ops, ",") + `]}`
}

// TestStatus proves every status code and scimType the handler answers with. Every row starts
// from a fresh seeded store; every error row also proves the store unchanged.
func TestStatus(t *testing.T) {
	longFilter := url.QueryEscape(`userName eq "` + strings.Repeat("a", 4100) + `"`)
	bigName := strings.Repeat("x", 300)

	tests := []struct {
		name      string
		configure func(*scimsvc.Config)
		// prepare runs after seeding, before the request; it may replace e.key, change the
		// store or spend a rate limit.
		prepare func(t *testing.T, e *env, s seeded)
		// method, path and body may use {ann}, {bob}, {staff} for the seeded ids; header
		// values may use {key}. A header with value "" is removed.
		method, path, body string
		header             map[string]string
		want               int
		scimType           string
		wantHeader         map[string]string
		check              func(t *testing.T, e *env, s seeded, r *response)
	}{
		// 2xx
		{name: "200 get user", method: "GET", path: "/acme/Users/{ann}", want: 200,
			check: func(t *testing.T, _ *env, s seeded, r *response) {
				u := r.JSON(t)
				assert.Equal(t, s.ann, u["id"])
				assert.Equal(t, "ann@example.com", u["userName"])
				assert.Equal(t, "application/scim+json", r.Header.Get("Content-Type"))
			}},
		{name: "200 list users", method: "GET", path: "/acme/Users", want: 200,
			check: func(t *testing.T, _ *env, _ seeded, r *response) {
				assert.EqualValues(t, 2, r.JSON(t)["totalResults"])
			}},
		{name: "200 put user", method: "PUT", path: "/acme/Users/{bob}",
			body: `{"schemas":["` + userSchema + `"],"userName":"bob@example.com","displayName":"Bob"}`, want: 200,
			check: func(t *testing.T, e *env, s seeded, r *response) {
				assert.Equal(t, "Bob", r.JSON(t)["displayName"])
				u, err := e.mem.Users().Get(context.Background(), "acme", s.bob)
				require.NoError(t, err)
				assert.Equal(t, "Bob", u.DisplayName)
			}},
		{name: "200 patch group", method: "PATCH", path: "/acme/Groups/{staff}",
			body: patchBody(`{"op":"add","path":"members","value":[{"value":"{bob}"}]}`), want: 200,
			check: func(t *testing.T, e *env, s seeded, r *response) {
				g, err := e.mem.Groups().Get(context.Background(), "acme", s.staff)
				require.NoError(t, err)
				assert.Len(t, g.Members, 2)
			}},
		{name: "200 patch with a valid key after the address's failure budget is spent", method: "PATCH", path: "/acme/Users/{ann}",
			body:      patchBody(`{"op":"replace","path":"active","value":false}`),
			configure: func(c *scimsvc.Config) { c.AddressLimiter = perMinuteLimiter(t, c, 2) },
			prepare: func(t *testing.T, e *env, _ seeded) {
				for range 3 {
					e.doKey(wrongSecret(e.key), "GET", "/acme/Users", nil)
				}
				require.Equal(t, 429, e.doKey(wrongSecret(e.key), "GET", "/acme/Users", nil).Status)
			}, want: 200,
			check: func(t *testing.T, e *env, s seeded, r *response) {
				u, err := e.mem.Users().Get(context.Background(), "acme", s.ann)
				require.NoError(t, err)
				assert.False(t, u.Active)
			}},
		{name: "201 post user, Location is meta.location", method: "POST", path: "/acme/Users",
			body: `{"schemas":["` + userSchema + `"],"userName":"cy@example.com"}`, want: 201,
			check: func(t *testing.T, e *env, _ seeded, r *response) {
				u := r.JSON(t)
				id, _ := u["id"].(string)
				require.NotEmpty(t, id)
				meta, _ := u["meta"].(map[string]any)
				assert.Equal(t, testBase+"/acme/Users/"+id, r.Header.Get("Location"))
				assert.Equal(t, r.Header.Get("Location"), meta["location"])
				stored, err := e.mem.Users().Get(context.Background(), "acme", id)
				require.NoError(t, err)
				assert.Equal(t, "cy@example.com", stored.UserName)
			}},
		{name: "201 post group, Location is meta.location", method: "POST", path: "/acme/Groups",
			body: `{"schemas":["` + groupSchema + `"],"displayName":"Ops","members":[{"value":"{bob}"}]}`, want: 201,
			check: func(t *testing.T, _ *env, _ seeded, r *response) {
				g := r.JSON(t)
				meta, _ := g["meta"].(map[string]any)
				assert.Equal(t, testBase+"/acme/Groups/"+g["id"].(string), r.Header.Get("Location"))
				assert.Equal(t, r.Header.Get("Location"), meta["location"])
			}},
		{name: "204 delete user", method: "DELETE", path: "/acme/Users/{bob}", want: 204,
			check: func(t *testing.T, e *env, s seeded, r *response) {
				assert.Empty(t, r.Body)
				_, err := e.mem.Users().Get(context.Background(), "acme", s.bob)
				assert.ErrorIs(t, err, store.ErrNotFound)
			}},
		{name: "204 delete group", method: "DELETE", path: "/acme/Groups/{staff}", want: 204},

		// 400 invalidSyntax
		{name: "400 bad JSON", method: "POST", path: "/acme/Users", body: `{"userName":`, want: 400, scimType: "invalidSyntax"},
		{name: "400 JSON with a syntax error", method: "POST", path: "/acme/Users", body: `{"userName" "x"}`, want: 400, scimType: "invalidSyntax"},
		{name: "400 trailing value", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com"} {}`, want: 400, scimType: "invalidSyntax"},
		{name: "400 trailing garbage", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com"}x`, want: 400, scimType: "invalidSyntax"},
		{name: "400 trailing garbage on PATCH", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"displayName","value":"X"}`) + `]`, want: 400, scimType: "invalidSyntax"},
		{name: "400 array body", method: "POST", path: "/acme/Users", body: `[{"userName":"cy@example.com"}]`, want: 400, scimType: "invalidSyntax"},
		{name: "400 string body", method: "PUT", path: "/acme/Users/{bob}", body: `"bob"`, want: 400, scimType: "invalidSyntax"},
		{name: "400 null body", method: "POST", path: "/acme/Groups", body: `null`, want: 400, scimType: "invalidSyntax"},
		{name: "400 empty body", method: "POST", path: "/acme/Users", body: ``, header: map[string]string{"Content-Type": "application/scim+json"},
			want: 400, scimType: "invalidSyntax"},
		{name: "400 unknown PATCH op", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"move","path":"displayName","value":"X"}`), want: 400, scimType: "invalidSyntax"},
		{name: "400 PATCH op missing", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"path":"displayName","value":"X"}`), want: 400, scimType: "invalidSyntax"},
		{name: "400 PATCH without Operations", method: "PATCH", path: "/acme/Users/{ann}",
			body: `{"schemas":["` + patchSchema + `"]}`, want: 400, scimType: "invalidSyntax"},
		{name: "400 PATCH operation not an object", method: "PATCH", path: "/acme/Groups/{staff}",
			body: patchBody(`"remove"`), want: 400, scimType: "invalidSyntax"},

		// 400 invalidValue
		{name: "400 userName a number", method: "POST", path: "/acme/Users", body: `{"userName":42}`, want: 400, scimType: "invalidValue"},
		{name: "400 active maybe", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com","active":"maybe"}`, want: 400, scimType: "invalidValue"},
		{name: "400 emails not objects", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com","emails":[42]}`, want: 400, scimType: "invalidValue"},
		{name: "400 emails value not a string", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com","emails":[{"value":true}]}`, want: 400, scimType: "invalidValue"},
		{name: "400 name not an object", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com","name":["Cy"]}`, want: 400, scimType: "invalidValue"},
		{name: "400 enterprise extension not an object", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com","` + enterpriseNS + `":"x"}`, want: 400, scimType: "invalidValue"},
		{name: "400 missing userName", method: "POST", path: "/acme/Users", body: `{"displayName":"Cy"}`, want: 400, scimType: "invalidValue"},
		{name: "400 empty userName", method: "POST", path: "/acme/Users", body: `{"userName":""}`, want: 400, scimType: "invalidValue"},
		{name: "400 PUT without userName", method: "PUT", path: "/acme/Users/{bob}", body: `{"displayName":"Bob"}`, want: 400, scimType: "invalidValue"},
		{name: "400 PUT userName a number", method: "PUT", path: "/acme/Users/{bob}", body: `{"userName":7}`, want: 400, scimType: "invalidValue"},
		{name: "400 missing displayName", method: "POST", path: "/acme/Groups", body: `{"members":[{"value":"{ann}"}]}`, want: 400, scimType: "invalidValue"},
		{name: "400 unknown member on POST", method: "POST", path: "/acme/Groups", body: `{"displayName":"Ops","members":[{"value":"user_nosuch"}]}`, want: 400, scimType: "invalidValue"},
		{name: "400 member of another tenant", method: "POST", path: "/acme/Groups", body: `{"displayName":"Ops","members":[{"value":"{globexUser}"}]}`, want: 400, scimType: "invalidValue"},
		{name: "400 unknown member on PATCH", method: "PATCH", path: "/acme/Groups/{staff}",
			body: patchBody(`{"op":"add","path":"members","value":[{"value":"user_nosuch"}]}`), want: 400, scimType: "invalidValue"},
		{name: "400 PATCH active maybe", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"active","value":"maybe"}`), want: 400, scimType: "invalidValue"},
		{name: "400 PATCH removes the required userName", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"remove","path":"userName"}`), want: 400, scimType: "invalidValue"},
		{name: "400 pathless PATCH value not an object", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","value":"x"}`), want: 400, scimType: "invalidValue"},
		{name: "400 count not a number", method: "GET", path: "/acme/Users?count=ten", want: 400, scimType: "invalidValue"},
		{name: "400 startIndex not a number", method: "GET", path: "/acme/Users?startIndex=x", want: 400, scimType: "invalidValue"},

		// 400 invalidFilter
		{name: "400 bad filter", method: "GET", path: "/acme/Users?filter=" + url.QueryEscape(`userName eq`), want: 400, scimType: "invalidFilter"},
		{name: "400 filter on unknown attribute", method: "GET", path: "/acme/Users?filter=" + url.QueryEscape(`shoeSize gt 3`), want: 400, scimType: "invalidFilter"},
		{name: "400 filter over the length limit", method: "GET", path: "/acme/Users?filter=" + longFilter, want: 400, scimType: "invalidFilter"},
		{name: "400 filter over a configured length limit", method: "GET", path: "/acme/Groups?filter=" + url.QueryEscape(`displayName eq "Staff"`),
			configure: func(c *scimsvc.Config) { c.FilterLimits.MaxLength = 10 }, want: 400, scimType: "invalidFilter"},

		// 400 invalidPath
		{name: "400 unknown path attribute", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"shoeSize","value":"42"}`), want: 400, scimType: "invalidPath"},
		{name: "400 unknown sub-attribute", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"name.nickname","value":"x"}`), want: 400, scimType: "invalidPath"},
		{name: "400 unknown extension URN", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"urn:example:ext:1.0:User:badge","value":"x"}`), want: 400, scimType: "invalidPath"},
		{name: "400 malformed value filter", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"emails[type eq ].value","value":"x"}`), want: 400, scimType: "invalidPath"},
		{name: "400 value filter not closed", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"emails[type eq \"work\".value","value":"x"}`), want: 400, scimType: "invalidPath"},
		{name: "400 text after value filter", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"emails[type eq \"work\"]value","value":"x"}`), want: 400, scimType: "invalidPath"},
		{name: "400 unknown sub-attribute after value filter", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"emails[type eq \"work\"].shoe","value":"x"}`), want: 400, scimType: "invalidPath"},
		{name: "400 path not a string", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":7,"value":"x"}`), want: 400, scimType: "invalidPath"},

		// 400 noTarget
		{name: "400 remove without path", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"remove"}`), want: 400, scimType: "noTarget"},
		{name: "400 remove without path on group", method: "PATCH", path: "/acme/Groups/{staff}",
			body: patchBody(`{"op":"Remove","value":{"members":[{"value":"{ann}"}]}}`), want: 400, scimType: "noTarget"},
		{name: "400 replace with a non-equality filter matching nothing", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"emails[value co \"zzz\"].value","value":"z@example.com"}`), want: 400, scimType: "noTarget"},

		// 400 mutability
		{name: "400 PATCH id", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"id","value":"user_mine"}`), want: 400, scimType: "mutability"},
		{name: "400 PATCH meta.created", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"replace","path":"meta.created","value":"2001-01-01T00:00:00Z"}`), want: 400, scimType: "mutability"},
		{name: "400 PATCH groups on User", method: "PATCH", path: "/acme/Users/{ann}",
			body: patchBody(`{"op":"add","path":"groups","value":[{"value":"{staff}"}]}`), want: 400, scimType: "mutability"},
		{name: "400 PATCH member value", method: "PATCH", path: "/acme/Groups/{staff}",
			body: patchBody(`{"op":"replace","path":"members[value eq \"x\"].value","value":"{bob}"}`), want: 400, scimType: "mutability"},
		{name: "400 PATCH group id", method: "PATCH", path: "/acme/Groups/{staff}",
			body: patchBody(`{"op":"replace","path":"id","value":"group_mine"}`), want: 400, scimType: "mutability"},

		// 401
		{name: "401 no Authorization header", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com"}`,
			header: map[string]string{"Authorization": ""}, want: 401, wantHeader: map[string]string{"WWW-Authenticate": "Bearer"}},
		{name: "401 Basic scheme", method: "GET", path: "/acme/Users",
			header: map[string]string{"Authorization": "Basic {key}"}, want: 401, wantHeader: map[string]string{"WWW-Authenticate": "Bearer"}},
		{name: "401 bare key", method: "GET", path: "/acme/Users",
			header: map[string]string{"Authorization": "{key}"}, want: 401, wantHeader: map[string]string{"WWW-Authenticate": "Bearer"}},
		{name: "401 unknown key", method: "DELETE", path: "/acme/Users/{ann}",
			header: map[string]string{"Authorization": "Bearer scimkey_01abc_notarealsecret"}, want: 401, wantHeader: map[string]string{"WWW-Authenticate": "Bearer"}},
		{name: "401 key tampered", method: "GET", path: "/acme/Users",
			header: map[string]string{"Authorization": "Bearer {key}x"}, want: 401, wantHeader: map[string]string{"WWW-Authenticate": "Bearer"}},
		{name: "401 revoked key", method: "PATCH", path: "/acme/Users/{ann}", body: patchBody(`{"op":"replace","path":"active","value":false}`),
			prepare: func(t *testing.T, e *env, _ seeded) {
				keys, err := e.mem.APIKeys().List(context.Background())
				require.NoError(t, err)
				require.Len(t, keys, 1)
				require.NoError(t, scimsvc.RevokeAPIKey(context.Background(), e.mem.APIKeys(), keys[0].ID, e.clock.Now()))
			}, want: 401, wantHeader: map[string]string{"WWW-Authenticate": "Bearer"}},
		{name: "401 on discovery", method: "GET", path: "/acme/ServiceProviderConfig",
			header: map[string]string{"Authorization": ""}, want: 401, wantHeader: map[string]string{"WWW-Authenticate": "Bearer"}},

		// 403
		{name: "403 acme key on globex", method: "POST", path: "/globex/Users", body: `{"userName":"cy@example.com"}`, want: 403},
		{name: "403 acme key reading globex", method: "GET", path: "/globex/Users/{globexUser}", want: 403},
		{name: "403 key without the scim scope", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com"}`,
			prepare: func(t *testing.T, e *env, _ seeded) {
				e.key, _ = e.issueKey(scimsvc.KeySpec{Name: "audit", Tenants: []string{"acme"}, Scopes: []string{"audit"}})
			}, want: 403},
		{name: "403 unknown tenant", method: "GET", path: "/nosuch/Users", want: 403},
		{name: "403 tenant on the key that does not exist", method: "POST", path: "/ghost/Users", body: `{"userName":"cy@example.com"}`,
			prepare: func(t *testing.T, e *env, _ seeded) {
				e.key, _ = e.issueKey(scimsvc.KeySpec{Name: "both", Tenants: []string{"acme", "ghost"}})
			}, want: 403},
		{name: "403 deleted tenant", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com"}`,
			prepare: func(t *testing.T, e *env, _ seeded) {
				require.NoError(t, e.mem.Tenants().Delete(context.Background(), "acme"))
			}, want: 403},

		// 404
		{name: "404 unknown user", method: "GET", path: "/acme/Users/user_nosuch", want: 404},
		{name: "404 user of another tenant", method: "GET", path: "/acme/Users/{globexUser}", want: 404},
		{name: "404 PATCH unknown user", method: "PATCH", path: "/acme/Users/user_nosuch",
			body: patchBody(`{"op":"replace","path":"active","value":false}`), want: 404},
		{name: "404 PUT unknown group", method: "PUT", path: "/acme/Groups/group_nosuch", body: `{"displayName":"X"}`, want: 404},
		{name: "404 DELETE unknown group", method: "DELETE", path: "/acme/Groups/group_nosuch", want: 404},
		{name: "404 unknown endpoint", method: "GET", path: "/acme/Devices", want: 404},
		{name: "404 path below a resource", method: "GET", path: "/acme/Users/{ann}/photos", want: 404},
		{name: "404 unknown resource type", method: "GET", path: "/acme/ResourceTypes/Device", want: 404},
		{name: "404 unknown schema", method: "GET", path: "/acme/Schemas/urn:example:nosuch", want: 404},

		// 405
		{name: "405 DELETE on a collection", method: "DELETE", path: "/acme/Users", want: 405,
			wantHeader: map[string]string{"Allow": "GET, POST"}},
		{name: "405 POST on a resource", method: "POST", path: "/acme/Groups/{staff}", body: `{"displayName":"X"}`, want: 405,
			wantHeader: map[string]string{"Allow": "GET, PUT, PATCH, DELETE"}},
		{name: "405 PUT on discovery", method: "PUT", path: "/acme/ServiceProviderConfig", body: `{}`, want: 405,
			wantHeader: map[string]string{"Allow": "GET"}},

		// 409
		{name: "409 POST duplicate userName in another case", method: "POST", path: "/acme/Users",
			body: `{"userName":"ANN@Example.COM"}`, want: 409, scimType: "uniqueness"},
		{name: "409 PUT renames onto a taken userName", method: "PUT", path: "/acme/Users/{bob}",
			body: `{"userName":"Ann@Example.com"}`, want: 409, scimType: "uniqueness"},
		{name: "409 PATCH renames onto a taken userName", method: "PATCH", path: "/acme/Users/{bob}",
			body: patchBody(`{"op":"replace","path":"userName","value":"ann@EXAMPLE.com"}`), want: 409, scimType: "uniqueness"},
		{name: "409 pathless PATCH renames onto a taken userName", method: "PATCH", path: "/acme/Users/{bob}",
			body: patchBody(`{"op":"replace","value":{"userName":"aNN@example.com","displayName":"Bob"}}`), want: 409, scimType: "uniqueness"},

		// 413
		{name: "413 POST over MaxBodyBytes", method: "POST", path: "/acme/Users",
			configure: func(c *scimsvc.Config) { c.MaxBodyBytes = 256 },
			body:      `{"userName":"cy@example.com","displayName":"` + bigName + `"}`, want: 413},
		{name: "413 PATCH over MaxBodyBytes", method: "PATCH", path: "/acme/Users/{ann}",
			configure: func(c *scimsvc.Config) { c.MaxBodyBytes = 256 },
			body:      patchBody(`{"op":"replace","path":"displayName","value":"` + bigName + `"}`), want: 413},
		{name: "413 padding after a valid body", method: "PUT", path: "/acme/Users/{bob}",
			configure: func(c *scimsvc.Config) { c.MaxBodyBytes = 256 },
			body:      `{"userName":"bob@example.com"}` + strings.Repeat(" ", 400), want: 413},

		// 415
		{name: "415 text/plain POST", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com"}`,
			header: map[string]string{"Content-Type": "text/plain"}, want: 415},
		{name: "415 form PATCH", method: "PATCH", path: "/acme/Users/{ann}", body: patchBody(`{"op":"replace","path":"active","value":false}`),
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, want: 415},

		// 429
		{name: "429 key over its rate limit", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com"}`,
			configure: func(c *scimsvc.Config) { c.RateLimiter = perMinuteLimiter(t, c, 2) },
			prepare: func(t *testing.T, e *env, _ seeded) {
				for range 2 {
					require.Equal(t, 200, e.do("GET", "/acme/Users", nil).Status)
				}
			}, want: 429,
			wantHeader: map[string]string{"Retry-After": "30", "RateLimit-Limit": "2", "RateLimit-Remaining": "0", "RateLimit-Reset": "60"}},
		{name: "429 wrong secret once the address's failure budget is spent", method: "PATCH", path: "/acme/Users/{ann}",
			body:      patchBody(`{"op":"replace","path":"active","value":false}`),
			configure: func(c *scimsvc.Config) { c.AddressLimiter = perMinuteLimiter(t, c, 2) },
			prepare: func(t *testing.T, e *env, _ seeded) {
				for range 2 {
					require.Equal(t, 401, e.doKey(wrongSecret(e.key), "GET", "/acme/Users", nil).Status)
				}
				e.key = wrongSecret(e.key)
			}, want: 429,
			wantHeader: map[string]string{"Retry-After": "30", "RateLimit-Limit": "2", "RateLimit-Remaining": "0"}},

		// 500
		{name: "500 store error", method: "GET", path: "/acme/Users/{ann}",
			configure: func(c *scimsvc.Config) { quietLogger(c); c.Users = brokenUsers{Users: c.Users} }, want: 500},
		{name: "500 store error on POST", method: "POST", path: "/acme/Users", body: `{"userName":"cy@example.com"}`,
			configure: func(c *scimsvc.Config) { quietLogger(c); c.Users = brokenUsers{Users: c.Users} }, want: 500},
		{name: "500 store error on list", method: "GET", path: "/acme/Users?filter=" + url.QueryEscape(`userName sw "a"`),
			configure: func(c *scimsvc.Config) { quietLogger(c); c.Users = brokenUsers{Users: c.Users} }, want: 500},
		{name: "500 store panic", method: "GET", path: "/acme/Users/{ann}",
			configure: func(c *scimsvc.Config) { quietLogger(c); c.Users = brokenUsers{Users: c.Users, panics: true} }, want: 500},
		{name: "500 store panic on PATCH", method: "PATCH", path: "/acme/Users/{ann}", body: patchBody(`{"op":"replace","path":"active","value":false}`),
			configure: func(c *scimsvc.Config) { quietLogger(c); c.Users = brokenUsers{Users: c.Users, panics: true} }, want: 500},
		{name: "500 key store error", method: "GET", path: "/acme/Users",
			configure: func(c *scimsvc.Config) { quietLogger(c); c.APIKeys = brokenKeys{APIKeys: c.APIKeys} }, want: 500},
		{name: "500 tenant store error", method: "GET", path: "/acme/Groups",
			configure: func(c *scimsvc.Config) { quietLogger(c); c.Tenants = brokenTenants{Tenants: c.Tenants} }, want: 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var configure []func(*scimsvc.Config)
			if tt.configure != nil {
				configure = append(configure, tt.configure)
			}
			e := newEnv(t, configure...)
			s := e.seed()
			globexUser := e.seedUser("globex", store.User{UserName: "gus@globex.example", Active: true})
			if tt.prepare != nil {
				tt.prepare(t, e, s)
			}
			ids := strings.NewReplacer("{ann}", s.ann, "{bob}", s.bob, "{staff}", s.staff, "{globexUser}", globexUser.ID, "{key}", e.key)
			req := requestFrom("192.0.2.1:1234", e.key, tt.method, ids.Replace(tt.path), ids.Replace(tt.body))
			for k, v := range tt.header {
				if v == "" {
					req.Header.Del(k)
				} else {
					req.Header.Set(k, ids.Replace(v))
				}
			}
			before := e.snapshot()
			r := e.send(req)

			if tt.want < 300 {
				require.Equal(t, tt.want, r.Status, "body: %s", r.Body)
			} else {
				detail := requireSCIMError(t, r, tt.want, tt.scimType)
				assert.Equal(t, before, e.snapshot(), "a refused request must change nothing")
				assert.NotContains(t, string(r.Body), internalSecret)
				for k, v := range r.Header {
					assert.NotContains(t, strings.Join(v, " "), internalSecret, "header %s", k)
				}
				if tt.want == 500 {
					assert.Equal(t, "internal server error", detail)
				}
			}
			for k, v := range tt.wantHeader {
				if k == "WWW-Authenticate" {
					assert.True(t, strings.HasPrefix(r.Header.Get(k), v), "%s: %q", k, r.Header.Get(k))
					continue
				}
				assert.Equal(t, v, r.Header.Get(k), "header %s", k)
			}
			if tt.check != nil {
				tt.check(t, e, s, r)
			}
		})
	}
}

// TestKeyRateLimit follows one key through its quota: every answer carries the RateLimit
// headers, the one over the quota is a SCIM 429 with Retry-After, and the quota returns with time.
func TestKeyRateLimit(t *testing.T) {
	e := newEnv(t, func(c *scimsvc.Config) { c.RateLimiter = perMinuteLimiter(t, c, 3) })
	other, _ := e.issueKey(scimsvc.KeySpec{Name: "other", Tenants: []string{"acme"}})

	steps := []struct {
		name          string
		advance       time.Duration
		key           string
		want          int
		wantRemaining string
	}{
		{name: "first", key: e.key, want: 200, wantRemaining: "2"},
		{name: "second", key: e.key, want: 200, wantRemaining: "1"},
		{name: "third", key: e.key, want: 200, wantRemaining: "0"},
		{name: "fourth is refused", key: e.key, want: 429, wantRemaining: "0"},
		{name: "another key has its own quota", key: other, want: 200, wantRemaining: "2"},
		{name: "still refused 19s later", advance: 19 * time.Second, key: e.key, want: 429, wantRemaining: "0"},
		{name: "one request back after 20s", advance: time.Second, key: e.key, want: 200, wantRemaining: "0"},
		{name: "whole quota back after a minute", advance: time.Minute, key: e.key, want: 200, wantRemaining: "2"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			e.t = t
			e.clock.Advance(st.advance)
			r := e.doKey(st.key, "GET", "/acme/Users", nil)
			assert.Equal(t, "3", r.Header.Get("RateLimit-Limit"))
			assert.Equal(t, st.wantRemaining, r.Header.Get("RateLimit-Remaining"))
			assert.NotEmpty(t, r.Header.Get("RateLimit-Reset"))
			if st.want == 429 {
				requireSCIMError(t, r, 429, "")
				assert.NotEmpty(t, r.Header.Get("Retry-After"))
			} else {
				require.Equal(t, st.want, r.Status, "body: %s", r.Body)
				assert.Empty(t, r.Header.Get("Retry-After"))
			}
		})
	}
	t.Run("refused write changes nothing", func(t *testing.T) {
		e.t = t
		for range 3 { // spend what is left of the quota
			e.do("GET", "/acme/Users", nil)
		}
		before := e.snapshot()
		r := e.do("POST", "/acme/Users", `{"userName":"cy@example.com"}`)
		requireSCIMError(t, r, 429, "")
		assert.Equal(t, before, e.snapshot())
	})
}

// wrongSecret is key with its secret part replaced: a guess that claims key's id.
func wrongSecret(key string) string {
	return key[:strings.LastIndexByte(key, '_')+1] + "guessedsecret"
}

// TestAddressLimit proves the budgets for requests without a valid key: per client address, and
// per address and claimed key id. Once an address has spent a budget, every request from it
// without a valid key is refused until time passes; a valid key — the one whose id the guesses
// named, or another — is never refused, and other addresses are untouched.
func TestAddressLimit(t *testing.T) {
	e := newEnv(t, func(c *scimsvc.Config) { c.AddressLimiter = perMinuteLimiter(t, c, 3) })
	other, _ := e.issueKey(scimsvc.KeySpec{Name: "other", Tenants: []string{"acme"}})
	const (
		attacker = "203.0.113.9:5555"
		neighbor = "198.51.100.7:4444"
	)
	guess := wrongSecret(e.key)
	steps := []struct {
		name    string
		advance time.Duration
		remote  string
		key     string
		want    int
	}{
		{name: "valid key is not counted", remote: attacker, key: e.key, want: 200},
		{name: "guess 1", remote: attacker, key: guess, want: 401},
		{name: "guess 2", remote: attacker, key: guess, want: 401},
		{name: "guess 3", remote: attacker, key: guess, want: 401},
		{name: "guess 4 is refused", remote: attacker, key: guess, want: 429},
		{name: "the valid key from the address still works", remote: attacker, key: e.key, want: 200},
		{name: "another valid key from the address works", remote: attacker, key: other, want: 200},
		{name: "no key from the address is refused: the address's budget is spent", remote: attacker, key: "", want: 429},
		{name: "another address still gets 401", remote: neighbor, key: guess, want: 401},
		{name: "another address with the valid key", remote: neighbor, key: e.key, want: 200},
		{name: "a guess is still refused 19s later", advance: 19 * time.Second, remote: attacker, key: guess, want: 429},
		{name: "the valid key meanwhile", remote: attacker, key: e.key, want: 200},
		{name: "a guess gets 401 again once time has passed", advance: 2 * time.Second, remote: attacker, key: guess, want: 401},
		{name: "the budget is spent again", remote: attacker, key: guess, want: 429},
		{name: "no key: 401 (the neighbour's budget has refilled since its guess)", remote: neighbor, key: "", want: 401},
		{name: "Basic: 401", remote: neighbor, key: "Basic dXNlcjpwYXNz", want: 401},
		{name: "garbage: 401, the last of the budget", remote: neighbor, key: "not-a-key", want: 401},
		{name: "no key: refused", remote: neighbor, key: "", want: 429},
		{name: "a valid key from the refused neighbour still works", remote: neighbor, key: other, want: 200},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			e.t = t
			e.clock.Advance(st.advance)
			req := requestFrom(st.remote, st.key, "GET", "/acme/Users", "")
			if strings.HasPrefix(st.key, "Basic ") {
				req.Header.Set("Authorization", st.key)
			}
			r := e.send(req)
			switch st.want {
			case 429:
				requireSCIMError(t, r, 429, "")
				assert.NotEmpty(t, r.Header.Get("Retry-After"))
				assert.Equal(t, "3", r.Header.Get("RateLimit-Limit"))
				assert.Equal(t, "0", r.Header.Get("RateLimit-Remaining"))
			case 401:
				requireSCIMError(t, r, 401, "")
				assert.True(t, strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer"))
			default:
				require.Equal(t, st.want, r.Status, "body: %s", r.Body)
			}
		})
	}
}

// TestValidKeyAfterOthersFailures: with the default budget, 25 wrong secrets naming a key's id
// from one address spend both the address's and that key id's budgets, and the real key from the
// same address still gets its answer; the next wrong secret is still refused.
func TestValidKeyAfterOthersFailures(t *testing.T) {
	e := newEnv(t)
	const shared = "203.0.113.9:5555"
	guess := wrongSecret(e.key)
	refused := 0
	for range scimsvc.DefaultFailuresPerMinute + 5 {
		r := e.send(requestFrom(shared, guess, "GET", "/acme/Users", ""))
		if r.Status == http.StatusTooManyRequests {
			refused++
			continue
		}
		requireSCIMError(t, r, http.StatusUnauthorized, "")
	}
	require.Equal(t, 5, refused, "the wrong secrets beyond the budget are refused")

	tests := []struct {
		name string
		key  string
		want int
	}{
		{name: "the real key", key: e.key, want: http.StatusOK},
		{name: "the real key again", key: e.key, want: http.StatusOK},
		{name: "another wrong secret", key: guess, want: http.StatusTooManyRequests},
		{name: "no key", key: "", want: http.StatusTooManyRequests},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			r := e.send(requestFrom(shared, tt.key, "GET", "/acme/Users", ""))
			if tt.want != http.StatusOK {
				requireSCIMError(t, r, tt.want, "")
				assert.NotEmpty(t, r.Header.Get("Retry-After"))
				return
			}
			require.Equal(t, tt.want, r.Status, "body: %s", r.Body)
			assert.Equal(t, entraListURN, jsonAt(r.JSON(t), "schemas", 0))
		})
	}
}

// TestAddressLimitIPv6: by default the addresses of one IPv6 /64, which one client commonly
// holds, share one budget.
func TestAddressLimitIPv6(t *testing.T) {
	e := newEnv(t, func(c *scimsvc.Config) { c.AddressLimiter = perMinuteLimiter(t, c, 3) })
	guess := wrongSecret(e.key)
	steps := []struct {
		remote string
		want   int
	}{
		{remote: "[2001:db8::1]:443", want: 401},
		{remote: "[2001:db8::2]:443", want: 401},
		{remote: "[2001:db8::ffff:3]:443", want: 401},
		{remote: "[2001:db8::4]:443", want: 429},
		{remote: "[2001:db8:0:1::1]:443", want: 401},
	}
	for _, st := range steps {
		t.Run(st.remote, func(t *testing.T) {
			e.t = t
			r := e.send(requestFrom(st.remote, guess, "GET", "/acme/Users", ""))
			requireSCIMError(t, r, st.want, "")
		})
	}
}

// TestAddressLimitFlood: a flood of bad keys from one address is limited even when every key
// claims a different key id (security.md: "an unauthenticated flood is limited per client
// address too").
func TestAddressLimitFlood(t *testing.T) {
	e := newEnv(t, func(c *scimsvc.Config) { c.AddressLimiter = perMinuteLimiter(t, c, 3) })
	refused := 0
	for i := range 100 {
		key := fmt.Sprintf("scimkey_01flood%03d_guessedsecret", i)
		r := e.send(requestFrom("203.0.113.9:5555", key, "GET", "/acme/Users", ""))
		if r.Status == 429 {
			refused++
		} else {
			require.Equal(t, 401, r.Status, "body: %s", r.Body)
		}
	}
	assert.Greater(t, refused, 0, "100 bad keys from one address, each claiming another key id, were all answered 401")
}

// TestTenantIsolation: a key of acme can neither read nor change anything of globex, however
// the request names it.
func TestTenantIsolation(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		want                     int
	}{
		{name: "list globex", method: "GET", path: "/globex/Users", want: 403},
		{name: "tenant in another case", method: "GET", path: "/ACME/Users", want: 403},
		{name: "globex user under acme", method: "GET", path: "/acme/Users/{gus}", want: 404},
		{name: "patch globex user under acme", method: "PATCH", path: "/acme/Users/{gus}",
			body: patchBody(`{"op":"replace","path":"active","value":false}`), want: 404},
		{name: "put globex user under acme", method: "PUT", path: "/acme/Users/{gus}", body: `{"userName":"gus@globex.example"}`, want: 404},
		{name: "delete globex user under acme", method: "DELETE", path: "/acme/Users/{gus}", want: 404},
		{name: "delete globex group under acme", method: "DELETE", path: "/acme/Groups/{gusGroup}", want: 404},
		{name: "filter for a globex user", method: "GET", path: "/acme/Users?filter=" + url.QueryEscape(`userName eq "gus@globex.example"`), want: 200},
		{name: "filter for a globex group member", method: "GET", path: "/acme/Groups?filter=" + url.QueryEscape(`members.value eq "{gus}"`), want: 200},
		{name: "encoded slashes", method: "GET", path: "/acme%2F..%2Fglobex/Users", want: 404},
		{name: "encoded slashes in the id", method: "GET", path: "/acme/Users/..%2F..%2Fglobex%2FUsers%2F{gus}", want: 404},
		{name: "add globex user to an acme group", method: "PATCH", path: "/acme/Groups/{staff}",
			body: patchBody(`{"op":"add","path":"members","value":[{"value":"{gus}"}]}`), want: 400},
		{name: "put globex user into an acme group", method: "PUT", path: "/acme/Groups/{staff}",
			body: `{"displayName":"Staff","members":[{"value":"{gus}"}]}`, want: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.seed()
			gus := e.seedUser("globex", store.User{UserName: "gus@globex.example", Active: true})
			gusGroup := e.seedGroup("globex", store.Group{DisplayName: "Globex staff", Members: []store.Member{{Value: gus.ID}}})
			ids := strings.NewReplacer("{gus}", gus.ID, "{gusGroup}", gusGroup.ID, "{staff}", s.staff)
			before := e.snapshot()
			r := e.do(tt.method, ids.Replace(tt.path), ids.Replace(tt.body))
			if tt.want == 200 {
				require.Equal(t, 200, r.Status, "body: %s", r.Body)
				assert.EqualValues(t, 0, r.JSON(t)["totalResults"])
			} else {
				requireSCIMError(t, r, tt.want, map[int]string{400: "invalidValue"}[tt.want])
			}
			assert.NotContains(t, string(r.Body), "gus@globex.example")
			assert.NotContains(t, string(r.Body), "Globex staff")
			assert.Equal(t, before, e.snapshot())
		})
	}
}
