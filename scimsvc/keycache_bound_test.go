package scimsvc

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// keysWithoutVersions hides memstore's store.APIKeyVersions, as a store that cannot promise it.
type keysWithoutVersions struct{ store.APIKeys }

// The key cache holds at most maxCachedKeys keys, over a store with key versions (whose
// entries never expire) and over one without (whose expired entries make room for new keys):
// a host whose every tenant's key makes a request keeps a bounded cache, and the keys past the
// bound are read from the store.
func TestAPIKeyCacheBounded(t *testing.T) {
	const n = maxCachedKeys + 100
	mem := memstore.New()
	sums := make([][32]byte, n)
	for i := range n {
		secret := fmt.Sprintf("scimkey_bound%06d", i)
		sums[i] = sha256.Sum256([]byte(secret))
		_, err := mem.APIKeys().Create(t.Context(), store.APIKey{Tenants: []string{fmt.Sprintf("t%06d", i)}, SecretHash: sums[i], Created: time.Unix(1, 0)})
		require.NoError(t, err)
	}
	clock := time.Unix(1000, 0)
	now := func() time.Time { return clock }
	for _, c := range []struct {
		name string
		keys store.APIKeys
	}{
		{"versions", mem.APIKeys()},
		{"ttl", keysWithoutVersions{mem.APIKeys()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			kc := newKeyCache(c.keys, time.Minute, now)
			for _, sum := range sums {
				e, err := kc.byHash(t.Context(), sum)
				require.NoError(t, err)
				require.Equal(t, sum, e.key.SecretHash)
			}
			assert.Equal(t, maxCachedKeys, len(kc.entries), "the cache at its bound")
			if c.name == "ttl" {
				clock = clock.Add(time.Minute)
				for _, sum := range sums[maxCachedKeys:] {
					_, err := kc.byHash(t.Context(), sum)
					require.NoError(t, err)
				}
				assert.Equal(t, 100, len(kc.entries), "expired entries make room for the keys now used")
			}
		})
	}
}
