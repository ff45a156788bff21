package scimsvc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/sqlstore"
)

// awayUsers is a Users whose reads and writes fail with err, as a store whose database is away
// does.
type awayUsers struct {
	store.Users
	err error
}

func (u awayUsers) Get(context.Context, string, string) (*store.User, error) { return nil, u.err }

func (u awayUsers) Create(context.Context, string, store.User) (*store.User, error) {
	return nil, u.err
}

// A store that is unavailable (store.ErrUnavailable, wrapped) is a 503 with Retry-After and a
// SCIM error body that says nothing internal; any other store error stays a 500 without
// Retry-After.
func TestStoreUnavailable(t *testing.T) {
	unavailable := fmt.Errorf("query %s: %w: dial tcp: connection refused", internalSecret, store.ErrUnavailable)
	other := fmt.Errorf("query %s: %w", internalSecret, errors.New("syntax error"))
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		retryAfter string
	}{
		{"unavailable", unavailable, http.StatusServiceUnavailable, strconv.Itoa(int(store.UnavailableRetryAfter / time.Second))},
		{"other", other, http.StatusInternalServerError, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *scimsvc.Config) { c.Users = awayUsers{Users: c.Users, err: tc.err} })
			for _, r := range []struct{ method, path string }{
				{http.MethodGet, "/acme/Users/user_0123"},
				{http.MethodPost, "/acme/Users"},
			} {
				var body any
				if r.method == http.MethodPost {
					body = map[string]any{"schemas": []string{userSchema}, "userName": "ann"}
				}
				res := e.do(r.method, r.path, body)
				assert.Equal(t, tc.status, res.Status, r.method)
				assert.Equal(t, tc.retryAfter, res.Header.Get("Retry-After"), r.method)
				assert.Equal(t, "application/scim+json", res.Header.Get("Content-Type"))
				j := res.JSON(t)
				assert.Equal(t, []any{errorSchema}, j["schemas"])
				assert.Equal(t, strconv.Itoa(tc.status), j["status"])
				assert.NotContains(t, string(res.Body), "hunter2")
				assert.NotContains(t, string(res.Body), "refused")
			}
		})
	}
}

// A PostgreSQL pool of one connection, held elsewhere: a request waits for a connection until
// its deadline (Config.RequestTimeout) and is answered 503 with Retry-After then.
func TestPoolExhausted(t *testing.T) {
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, postgresSchema(t)+"&pool_max_conns=1")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Migrate(ctx))
	e := newBackendEnv(t, s.Backend(), func(c *scimsvc.Config) { c.RequestTimeout = 300 * time.Millisecond })
	require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/acme/Users", nil).Status)

	held, err := s.DB().Conn(ctx)
	require.NoError(t, err)
	defer held.Close()
	start := time.Now()
	res := e.do(http.MethodGet, "/acme/Users", nil)
	assert.Less(t, time.Since(start), 3*time.Second, "answered at the request's deadline")
	assert.Equal(t, http.StatusServiceUnavailable, res.Status, string(res.Body))
	assert.Equal(t, strconv.Itoa(int(store.UnavailableRetryAfter/time.Second)), res.Header.Get("Retry-After"))
	assert.Equal(t, []any{errorSchema}, res.JSON(t)["schemas"])
}
