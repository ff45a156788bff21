package scimsvc

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/visid/visid/store"
)

// keyCache keeps the valid API keys that requests presented, by the SHA-256 of their secret, so
// a request of a known key costs a hash and a map lookup instead of a store read. A key is
// trusted from the cache only while that is as safe as reading it:
//
//   - over a store that implements store.APIKeyVersions, while the store's KeyVersion is the one
//     read before the key was (a revocation changes it before it returns, so the next request
//     reads the store again);
//   - over any other store, for at most Config.APIKeyCacheTTL after the read, and not at all
//     when that is 0.
//
// Only keys that were valid when read are kept, so refused requests always reach the store, and
// the cache holds no more entries than the store has keys.
type keyCache struct {
	keys    store.APIKeys
	version store.APIKeyVersions // nil: the store has no versions
	ttl     time.Duration        // for a store without versions; 0: no cache
	now     func() time.Time

	mu      sync.RWMutex
	at      uint64 // the KeyVersion that entries were read at
	entries map[[32]byte]*cachedKey
}

// cachedKey is a key as the store returned it, shared by the requests that present it, which
// must not change it.
type cachedKey struct {
	key  *store.APIKey
	read time.Time // when the key was read from the store
	// lastUsed is the key's LastUsed as this handler last recorded it, in Unix nanoseconds.
	lastUsed atomic.Int64
}

func newKeyCache(keys store.APIKeys, ttl time.Duration, now func() time.Time) *keyCache {
	c := &keyCache{keys: keys, ttl: ttl, now: now, entries: map[[32]byte]*cachedKey{}}
	c.version, _ = keys.(store.APIKeyVersions)
	return c
}

// enabled reports whether the cache keeps anything.
func (c *keyCache) enabled() bool { return c.version != nil || c.ttl > 0 }

// byHash returns the key whose secret hashes to sum, from the cache when it may be trusted and
// from the store otherwise, as APIKeys.ByHash does. The key returned is shared: the caller must
// not change it.
func (c *keyCache) byHash(ctx context.Context, sum [32]byte) (*cachedKey, error) {
	if !c.enabled() {
		k, err := c.keys.ByHash(ctx, sum)
		if err != nil {
			return nil, err
		}
		e := &cachedKey{key: k}
		e.lastUsed.Store(unixNano(k.LastUsed))
		return e, nil
	}
	var version uint64
	if c.version != nil {
		version = c.version.KeyVersion() // before the read: a change after it is seen next time
	}
	c.mu.RLock()
	e, ok := c.entries[sum]
	fresh := c.at == version
	c.mu.RUnlock()
	if ok && fresh && (c.version != nil || c.now().Sub(e.read) < c.ttl) {
		return e, nil
	}
	k, err := c.keys.ByHash(ctx, sum)
	if err != nil {
		return nil, err
	}
	e = &cachedKey{key: k, read: c.now()}
	e.lastUsed.Store(unixNano(k.LastUsed))
	if k.Revoked {
		return e, nil // refused, and never kept
	}
	c.mu.Lock()
	if c.at != version {
		// Whichever version is newer, entries are trusted only while the store reports the
		// one they were read at.
		clear(c.entries)
		c.at = version
	}
	if c.version == nil && len(c.entries) >= maxCachedKeys {
		c.dropExpired()
	}
	if len(c.entries) < maxCachedKeys {
		c.entries[sum] = e
	}
	c.mu.Unlock()
	return e, nil
}

// maxCachedKeys bounds the cache of a store without versions, whose entries leave it only as
// they expire.
const maxCachedKeys = 10_000

// dropExpired removes the entries older than the TTL; the caller holds c.mu.
func (c *keyCache) dropExpired() {
	now := c.now()
	for sum, e := range c.entries {
		if now.Sub(e.read) >= c.ttl {
			delete(c.entries, sum)
		}
	}
}

// unixNano is t in Unix nanoseconds, 0 for the zero time (a key never used).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
