package oidc2fa_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// verifies reports whether token's signature verifies with one of keys.
func verifies(t *testing.T, keys []oidc2fa.PublicKey, token string) bool {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	require.NoError(t, err)
	for _, k := range keys {
		if ed25519.Verify(ed25519.PublicKey(k.Key), []byte(parts[0]+"."+parts[1]), sig) {
			return true
		}
	}
	return false
}

func kids(keys []oidc2fa.PublicKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.KID
	}
	return out
}

func TestLoadKeyRingPersists(t *testing.T) {
	ctx := context.Background()
	keys := memstore.New().SigningKeys()
	c := &clock{now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	first, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now}, keys)
	require.NoError(t, err)
	stored, err := keys.List(ctx)
	require.NoError(t, err)
	require.Len(t, stored, 1, "an empty store gets one key")
	assert.Equal(t, "EdDSA", stored[0].Algorithm)
	token, err := first.Sign(ctx, "acme", []byte(`{"sub":"user_1"}`))
	require.NoError(t, err)

	// A restart, or another instance: the same key signs, and the old token verifies.
	again, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now}, keys)
	require.NoError(t, err)
	pub, err := again.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{stored[0].ID}, kids(pub))
	assert.True(t, verifies(t, pub, token))
}

func TestLoadKeyRingRotation(t *testing.T) {
	ctx := context.Background()
	keys := memstore.New().SigningKeys()
	c := &clock{now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	a, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now, Retain: time.Hour}, keys)
	require.NoError(t, err)
	b, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now, Retain: time.Hour}, keys)
	require.NoError(t, err)
	old, err := a.Sign(ctx, "acme", []byte(`{}`))
	require.NoError(t, err)

	c.Advance(time.Minute)
	kid, err := a.Rotate(ctx)
	require.NoError(t, err)
	stored, err := keys.List(ctx)
	require.NoError(t, err)
	require.Len(t, stored, 2)
	assert.False(t, stored[0].Retired.IsZero(), "the old key is retired in the store")
	assert.True(t, stored[1].Retired.IsZero())
	assert.Equal(t, kid, stored[1].ID)

	require.NoError(t, b.Reload(ctx))
	for _, r := range []*oidc2fa.KeyRing{a, b} {
		pub, err := r.Keys(ctx, "acme")
		require.NoError(t, err)
		assert.Equal(t, []string{kid, stored[0].ID}, kids(pub), "the new key signs, the old one is published")
		assert.True(t, verifies(t, pub, old))
		tok, err := r.Sign(ctx, "acme", []byte(`{}`))
		require.NoError(t, err)
		assert.True(t, verifies(t, []oidc2fa.PublicKey{pub[0]}, tok), "signed with the new key")
	}

	// Once the retention has passed, Reload drops the old key from the JWKS and the store.
	c.Advance(time.Hour)
	require.NoError(t, b.Reload(ctx))
	pub, err := b.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{kid}, kids(pub))
	stored, err = keys.List(ctx)
	require.NoError(t, err)
	assert.Len(t, stored, 1)
}

// TestLoadKeyRingConcurrentStart: instances that start at once on an empty store each store a
// key; after a Reload they all sign with the same one, and the others are retired.
func TestLoadKeyRingConcurrentStart(t *testing.T) {
	ctx := context.Background()
	keys := memstore.New().SigningKeys()
	c := &clock{now: time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)}
	rings := make([]*oidc2fa.KeyRing, 8)
	var wg sync.WaitGroup
	for i := range rings {
		wg.Go(func() {
			r, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now}, keys)
			if err == nil {
				rings[i] = r
			}
		})
	}
	wg.Wait()
	signing := map[string]bool{}
	for _, r := range rings {
		require.NotNil(t, r)
		require.NoError(t, r.Reload(ctx))
		pub, err := r.Keys(ctx, "acme")
		require.NoError(t, err)
		signing[pub[0].KID] = true
	}
	assert.Len(t, signing, 1, "one signing key everywhere")
	stored, err := keys.List(ctx)
	require.NoError(t, err)
	unretired := 0
	for _, k := range stored {
		if k.Retired.IsZero() {
			unretired++
		}
	}
	assert.Equal(t, 1, unretired)
}

func TestLoadKeyRingErrors(t *testing.T) {
	ctx := context.Background()
	_, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	_, err = oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Keys: []ed25519.PrivateKey{priv}}, memstore.New().SigningKeys())
	assert.Error(t, err, "keys come from the store")
	_, err = oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, nil)
	assert.Error(t, err)

	keys := memstore.New().SigningKeys()
	require.NoError(t, keys.Add(ctx, store.SigningKey{ID: "bogus", Algorithm: "EdDSA", PrivateKey: []byte("not DER"), Created: time.Now()}))
	_, err = oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, keys)
	assert.Error(t, err, "a damaged key is an error, not a silent new key")
}
