package rp

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// How long a fetched JWKS is trusted without a fetch: the max-age of its Cache-Control, within
// these bounds, or defaultJWKSMaxAge without one.
const (
	defaultJWKSMaxAge = 5 * time.Minute
	maxJWKSMaxAge     = 24 * time.Hour
)

// keyCache holds the provider's Ed25519 verification keys by kid. It fetches the JWKS on first
// use, again when the set is older than its max-age, and when a token names an unknown kid — but
// never twice within JWKSRefreshInterval. When a refresh fails it keeps the keys it has.
type keyCache struct {
	rp  *RP
	uri string

	fetch sync.Mutex // held during a fetch, so concurrent misses fetch once

	mu      sync.Mutex
	keys    map[string]ed25519.PublicKey
	expires time.Time // when keys are due for a refresh
	tried   time.Time // the last fetch attempt; zero before the first
	failed  error     // why the last fetch failed; nil when it succeeded
}

// get returns the key whose kid is kid, fetching the JWKS when needed. An unknown kid is
// ErrSignature; a JWKS that cannot be fetched and no cached key is another error.
func (c *keyCache) get(ctx context.Context, kid string) (ed25519.PublicKey, error) {
	if k, ok, fresh := c.lookup(kid); ok && fresh {
		return k, nil
	}
	c.fetch.Lock()
	defer c.fetch.Unlock()
	k, ok, fresh := c.lookup(kid) // another caller may have fetched meanwhile
	if ok && fresh {
		return k, nil
	}
	now := c.rp.now()
	c.mu.Lock()
	mayFetch := c.tried.IsZero() || now.Sub(c.tried) >= JWKSRefreshInterval || now.Before(c.tried)
	failed := c.failed
	c.mu.Unlock()
	switch {
	case mayFetch:
	case ok:
		return k, nil // due for a refresh, but one was tried moments ago
	case failed != nil:
		return nil, fmt.Errorf("rp: fetching the JWKS (retried after %s): %w", JWKSRefreshInterval, failed)
	default:
		return nil, fmt.Errorf("rp: ID token: no key with kid %q in the provider's JWKS (fetched less than %s ago): %w", kid, JWKSRefreshInterval, ErrSignature)
	}
	keys, maxAge, err := c.load(ctx)
	c.mu.Lock()
	c.tried, c.failed = now, err
	if err == nil {
		c.keys, c.expires = keys, now.Add(maxAge)
	}
	k, ok = c.keys[kid]
	c.mu.Unlock()
	switch {
	case err != nil && ok:
		c.rp.log.WarnContext(ctx, "rp: refreshing the JWKS failed; using the cached keys", "jwks_uri", c.uri, "err", err)
		return k, nil
	case err != nil:
		return nil, fmt.Errorf("rp: fetching the JWKS: %w", err)
	case !ok:
		return nil, fmt.Errorf("rp: ID token: no key with kid %q in the provider's JWKS: %w", kid, ErrSignature)
	}
	return k, nil
}

// lookup returns the cached key of kid and whether the cache is still fresh.
func (c *keyCache) lookup(kid string) (k ed25519.PublicKey, ok, fresh bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok = c.keys[kid]
	return k, ok, ok && c.rp.now().Before(c.expires)
}

// load fetches the JWKS and returns its Ed25519 signing keys by kid and how long to trust them.
// Keys of other types or curves, keys for other algorithms or uses, keys without kid and kids
// that appear twice are left out: no token can verify with them.
func (c *keyCache) load(ctx context.Context) (map[string]ed25519.PublicKey, time.Duration, error) {
	var raw jsonRaw
	header, err := c.rp.getJSON(ctx, c.uri, &raw)
	if err != nil {
		return nil, 0, err
	}
	set, err := jwk.Parse(raw, jwk.WithIgnoreParseError(true))
	if err != nil {
		return nil, 0, fmt.Errorf("JWKS %s: %w", c.uri, err)
	}
	keys := make(map[string]ed25519.PublicKey, set.Len())
	dup := map[string]bool{}
	for i := range set.Len() {
		key, _ := set.Key(i)
		okp, isOKP := key.(jwk.OKPPublicKey)
		kid := key.KeyID()
		switch {
		case !isOKP || okp.Crv() != jwa.Ed25519 || len(okp.X()) != ed25519.PublicKeySize || kid == "":
			continue
		case key.Algorithm().String() != "" && key.Algorithm().String() != jwa.EdDSA.String():
			continue
		case key.KeyUsage() != "" && key.KeyUsage() != "sig":
			continue
		}
		if _, seen := keys[kid]; seen {
			dup[kid] = true
		}
		keys[kid] = ed25519.PublicKey(append([]byte(nil), okp.X()...))
	}
	for kid := range dup {
		delete(keys, kid)
	}
	c.rp.log.DebugContext(ctx, "rp: fetched the JWKS", "jwks_uri", c.uri, "keys", len(keys))
	return keys, maxAge(header), nil
}

// jsonRaw keeps a JSON document as it came, for jwk.Parse.
type jsonRaw []byte

func (j *jsonRaw) UnmarshalJSON(b []byte) error { *j = append((*j)[:0], b...); return nil }

// maxAge reads the max-age of a Cache-Control header, bounded to [JWKSRefreshInterval,
// maxJWKSMaxAge]; defaultJWKSMaxAge without one.
func maxAge(h http.Header) time.Duration {
	for _, d := range strings.Split(h.Get("Cache-Control"), ",") {
		d = strings.TrimSpace(strings.ToLower(d))
		switch {
		case d == "no-cache" || d == "no-store":
			return JWKSRefreshInterval
		case strings.HasPrefix(d, "max-age="):
			n, err := strconv.Atoi(strings.Trim(strings.TrimPrefix(d, "max-age="), `"`))
			if err != nil || n < 0 {
				continue
			}
			age := time.Duration(min(n, int(maxJWKSMaxAge/time.Second))) * time.Second
			return max(age, JWKSRefreshInterval)
		}
	}
	return defaultJWKSMaxAge
}
