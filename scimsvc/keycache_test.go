package scimsvc_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// countingKeys is an APIKeys store without store.APIKeyVersions that counts its ByHash reads.
type countingKeys struct {
	store.APIKeys
	reads atomic.Int64
}

func (k *countingKeys) ByHash(ctx context.Context, h [32]byte) (*store.APIKey, error) {
	k.reads.Add(1)
	return k.APIKeys.ByHash(ctx, h)
}

// A key revoked in the store is refused by the very next request, though earlier requests of
// the key were answered from the handler's cache: memstore changes its key version on Revoke.
func TestAPIKeyCacheRevokedKeyRefusedAtOnce(t *testing.T) {
	e := newEnv(t)
	for range 3 {
		require.Equal(t, http.StatusOK, e.do("GET", "/acme/Users", nil).Status)
	}
	keys, err := e.mem.APIKeys().List(context.Background())
	require.NoError(t, err)
	require.NoError(t, scimsvc.RevokeAPIKey(context.Background(), e.mem.APIKeys(), keys[0].ID, e.clock.Now()))
	r := e.do("GET", "/acme/Users", nil)
	assert.Equal(t, http.StatusUnauthorized, r.Status)
	assert.Equal(t, `Bearer realm="scim"`, r.Header.Get("WWW-Authenticate"))

	// Another key issued afterwards works, and the revoked one stays refused.
	other, _, err := scimsvc.IssueAPIKey(context.Background(), e.mem.APIKeys(), scimsvc.KeySpec{Tenants: []string{"acme"}})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, e.doKey(other, "GET", "/acme/Users", nil).Status)
	assert.Equal(t, http.StatusUnauthorized, e.do("GET", "/acme/Users", nil).Status)
}

// Over a store without key versions, a key is read from the store on every request when
// APIKeyCacheTTL is 0, so a revocation takes effect at once.
func TestAPIKeyCacheNoTTLReadsEveryRequest(t *testing.T) {
	var keys *countingKeys
	e := newEnv(t, func(c *scimsvc.Config) {
		keys = &countingKeys{APIKeys: c.APIKeys}
		c.APIKeys = keys
	})
	for range 3 {
		require.Equal(t, http.StatusOK, e.do("GET", "/acme/Users", nil).Status)
	}
	assert.EqualValues(t, 3, keys.reads.Load())
	ks, err := e.mem.APIKeys().List(context.Background())
	require.NoError(t, err)
	require.NoError(t, scimsvc.RevokeAPIKey(context.Background(), e.mem.APIKeys(), ks[0].ID, e.clock.Now()))
	assert.Equal(t, http.StatusUnauthorized, e.do("GET", "/acme/Users", nil).Status)
}

// Over a store without key versions, APIKeyCacheTTL trusts a key for that long after it was
// read: a revocation is seen once the TTL has passed, and a refused key is never kept.
func TestAPIKeyCacheTTL(t *testing.T) {
	var keys *countingKeys
	e := newEnv(t, func(c *scimsvc.Config) {
		keys = &countingKeys{APIKeys: c.APIKeys}
		c.APIKeys = keys
		c.APIKeyCacheTTL = 2 * time.Second
	})
	for range 3 {
		require.Equal(t, http.StatusOK, e.do("GET", "/acme/Users", nil).Status)
	}
	assert.EqualValues(t, 1, keys.reads.Load(), "one read for three requests")

	ks, err := e.mem.APIKeys().List(context.Background())
	require.NoError(t, err)
	require.NoError(t, scimsvc.RevokeAPIKey(context.Background(), e.mem.APIKeys(), ks[0].ID, e.clock.Now()))
	e.clock.Advance(time.Second)
	assert.Equal(t, http.StatusOK, e.do("GET", "/acme/Users", nil).Status, "within the TTL of the read")
	e.clock.Advance(time.Second)
	assert.Equal(t, http.StatusUnauthorized, e.do("GET", "/acme/Users", nil).Status, "once the TTL has passed")
	assert.Equal(t, http.StatusUnauthorized, e.do("GET", "/acme/Users", nil).Status)
	assert.EqualValues(t, 3, keys.reads.Load(), "a revoked key is read every time")

	// A wrong secret is never answered from the cache.
	assert.Equal(t, http.StatusUnauthorized, e.doKey(e.key+"x", "GET", "/acme/Users", nil).Status)
}

// A cached key still records its use once a minute, as the store's LastUsed shows.
func TestAPIKeyCacheRecordsUse(t *testing.T) {
	e := newEnv(t)
	lastUsed := func() time.Time {
		ks, err := e.mem.APIKeys().List(context.Background())
		require.NoError(t, err)
		return ks[0].LastUsed
	}
	start := e.clock.Now()
	require.Equal(t, http.StatusOK, e.do("GET", "/acme/Users", nil).Status)
	assert.True(t, lastUsed().Equal(start), "first use recorded")
	e.clock.Advance(30 * time.Second)
	require.Equal(t, http.StatusOK, e.do("GET", "/acme/Users", nil).Status)
	assert.True(t, lastUsed().Equal(start), "not again within the minute")
	e.clock.Advance(31 * time.Second)
	require.Equal(t, http.StatusOK, e.do("GET", "/acme/Users", nil).Status)
	assert.True(t, lastUsed().Equal(start.Add(61*time.Second)), "recorded again after a minute")
}

// A negative APIKeyCacheTTL is refused by New.
func TestAPIKeyCacheTTLNegative(t *testing.T) {
	e := newEnv(t)
	_, err := scimsvc.New(scimsvc.Config{
		Tenants: e.mem.Tenants(), Users: e.mem.Users(), Groups: e.mem.Groups(), APIKeys: e.mem.APIKeys(),
		BaseURL: testBase, APIKeyCacheTTL: -time.Second,
	})
	assert.ErrorContains(t, err, "APIKeyCacheTTL")
}
