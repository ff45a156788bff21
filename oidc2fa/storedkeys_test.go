package oidc2fa_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/testclock"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// verifies reports whether token's signature verifies with the key of keys its kid names,
// under the algorithm its header names, which must be the key's.
func verifies(t *testing.T, keys []oidc2fa.PublicKey, token string) bool {
	t.Helper()
	parts := strings.Split(token, ".")
	require.Len(t, parts, 3)
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	require.NoError(t, err)
	var h struct{ Alg, Kid string }
	require.NoError(t, json.Unmarshal(raw, &h))
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	require.NoError(t, err)
	input := []byte(parts[0] + "." + parts[1])
	sum := sha256.Sum256(input)
	for _, k := range keys {
		alg := k.Algorithm
		if alg == "" {
			alg = "EdDSA"
		}
		if k.KID != h.Kid || alg != h.Alg {
			continue
		}
		switch pub := k.Key.(type) {
		case ed25519.PublicKey:
			return ed25519.Verify(pub, input, sig)
		case *rsa.PublicKey:
			return rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil
		case *ecdsa.PublicKey:
			return len(sig) == 64 && ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
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

// storedKeys returns every key of keys: the shared ones, then each tenant's.
func storedKeys(t *testing.T, keys store.SigningKeys) []store.SigningKey {
	t.Helper()
	ctx := context.Background()
	all, err := keys.List(ctx, "")
	require.NoError(t, err)
	tenants, err := keys.Tenants(ctx, "", 1000)
	require.NoError(t, err)
	for _, tenant := range tenants {
		ks, err := keys.List(ctx, tenant)
		require.NoError(t, err)
		all = append(all, ks...)
	}
	return all
}

func TestLoadKeyRingPersists(t *testing.T) {
	ctx := context.Background()
	keys := memstore.New().SigningKeys()
	c := testclock.At(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	first, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now}, keys)
	require.NoError(t, err)
	require.Empty(t, storedKeys(t, keys), "a tenant's key is made when it is first needed")
	token, err := first.Sign(ctx, "acme", []byte(`{"sub":"user_1"}`))
	require.NoError(t, err)
	stored := storedKeys(t, keys)
	require.Len(t, stored, 1)
	assert.Equal(t, "EdDSA", stored[0].Algorithm)
	assert.Equal(t, "acme", stored[0].Tenant)

	// A restart, or another instance: the same key signs, and the old token verifies.
	again, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now}, keys)
	require.NoError(t, err)
	pub, err := again.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{stored[0].ID}, kids(pub))
	assert.True(t, verifies(t, pub, token))
}

// Each tenant has keys of its own, one per algorithm it signs with, in the store; a tenant's
// JWKS lists its keys alone, and a token of one tenant does not verify with another's. A key
// another instance makes is in this instance's JWKS at once.
func TestLoadKeyRingPerTenantAndAlgorithm(t *testing.T) {
	ctx := context.Background()
	keys := memstore.New().SigningKeys()
	a, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, keys)
	require.NoError(t, err)
	b, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, keys)
	require.NoError(t, err)
	tokens := map[string]string{}
	for _, alg := range oidc2fa.SigningAlgorithms() {
		tok, err := a.SignWith(ctx, "acme", alg, []byte(`{"sub":"user_1"}`))
		require.NoError(t, err, alg)
		tokens[alg] = tok
	}
	_, err = a.SignWith(ctx, "acme", "HS256", []byte(`{}`))
	require.ErrorIs(t, err, oidc2fa.ErrUnsupportedAlgorithm)
	globexTok, err := b.Sign(ctx, "globex", []byte(`{}`))
	require.NoError(t, err)

	acmeKeys, err := b.Keys(ctx, "acme") // b never signed for acme
	require.NoError(t, err)
	assert.Len(t, acmeKeys, len(oidc2fa.SigningAlgorithms()), "one key per algorithm used")
	for alg, tok := range tokens {
		assert.True(t, verifies(t, acmeKeys, tok), "%s token verifies with acme's JWKS", alg)
	}
	globexKeys, err := a.Keys(ctx, "globex")
	require.NoError(t, err)
	assert.Equal(t, 1, len(globexKeys))
	assert.True(t, verifies(t, globexKeys, globexTok))
	assert.False(t, verifies(t, acmeKeys, globexTok), "a globex token does not verify with acme's JWKS")
	for alg, tok := range tokens {
		assert.False(t, verifies(t, globexKeys, tok), "an acme %s token does not verify with globex's JWKS", alg)
	}
}

func TestLoadKeyRingRotation(t *testing.T) {
	ctx := context.Background()
	keys := memstore.New().SigningKeys()
	c := testclock.At(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	cfg := oidc2fa.KeyRingConfig{Now: c.Now, Retain: time.Hour, RotationDelay: 6 * time.Minute, Refresh: time.Minute}
	a, err := oidc2fa.LoadKeyRing(ctx, cfg, keys)
	require.NoError(t, err)
	b, err := oidc2fa.LoadKeyRing(ctx, cfg, keys)
	require.NoError(t, err)
	old, err := a.Sign(ctx, "acme", []byte(`{}`))
	require.NoError(t, err)
	globex, err := a.Sign(ctx, "globex", []byte(`{}`))
	require.NoError(t, err)
	globexKeys, err := a.Keys(ctx, "globex")
	require.NoError(t, err)
	c.Advance(time.Minute)
	bBefore, err := b.Keys(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, bBefore, 1)
	oldAcme := bBefore[0].KID
	rotatedAt := c.Now()
	newKIDs, err := a.RotateTenant(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, newKIDs, 1)
	kid := newKIDs[0]
	stored := storedKeys(t, keys)
	require.Len(t, stored, 3)
	for _, k := range stored {
		assert.True(t, k.Retired.IsZero(), "no key is retired before the new one signs")
		if k.ID == kid {
			assert.Equal(t, rotatedAt.Add(6*time.Minute), k.Activates, "the new key signs after the delay")
		}
	}

	// The new key is published at once by a, and by b within a second, while the old one signs.
	pub, err := a.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{oldAcme, kid}, kids(pub), "the old key signs, the new one is published")
	pub, err = b.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{oldAcme}, kids(pub), "b serves its copy of the same instant")
	c.Advance(time.Second)
	pub, err = b.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Equal(t, []string{oldAcme, kid}, kids(pub), "b reads acme's keys again a second later")
	for _, r := range []*oidc2fa.KeyRing{a, b} {
		tok, err := r.Sign(ctx, "acme", []byte(`{}`))
		require.NoError(t, err)
		assert.True(t, verifies(t, []oidc2fa.PublicKey{pub[0]}, tok), "the old key still signs")
	}

	// Once the delay has passed, the new key signs everywhere and the old one is retired.
	c.Advance(6*time.Minute - time.Second)
	for _, r := range []*oidc2fa.KeyRing{a, b} {
		pub, err := r.Keys(ctx, "acme")
		require.NoError(t, err)
		assert.Equal(t, []string{kid, oldAcme}, kids(pub), "the new key signs, the old one is published")
		assert.Equal(t, rotatedAt.Add(6*time.Minute), pub[1].Retired)
		assert.True(t, verifies(t, pub, old))
		tok, err := r.Sign(ctx, "acme", []byte(`{}`))
		require.NoError(t, err)
		assert.True(t, verifies(t, []oidc2fa.PublicKey{pub[0]}, tok), "signed with the new key")
		g, err := r.Keys(ctx, "globex")
		require.NoError(t, err)
		assert.Equal(t, kids(globexKeys), kids(g), "another tenant's keys do not change")
		assert.True(t, verifies(t, g, globex))
	}
	for _, k := range storedKeys(t, keys) {
		assert.Equal(t, k.ID == oldAcme, !k.Retired.IsZero(), "%s: the old key's retirement is stored", k.ID)
	}

	// Rotate rotates every tenant.
	all, err := b.Rotate(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 2)

	// Once the retention has passed, the old keys leave the JWKS and the store.
	// A tenant's keys are read, and their expired keys deleted, when the tenant is next served.
	c.Advance(time.Hour + 6*time.Minute)
	pub, err = b.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Len(t, pub, 1)
	assert.Len(t, storedKeys(t, keys), 3, "globex's old key until globex is served")
	_, err = b.Keys(ctx, "globex")
	require.NoError(t, err)
	assert.Len(t, storedKeys(t, keys), 2)
}

// A store from before keys were per tenant holds one shared key, unretired. Loading it retires
// it: it stays in every tenant's JWKS until Retain has passed, so the tokens it signed keep
// verifying, and each tenant signs with its own key from then on.
func TestLoadKeyRingMigratesSharedKey(t *testing.T) {
	ctx := context.Background()
	keys := memstore.New().SigningKeys()
	c := testclock.At(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	sharedKey := ringTestKey(t)
	legacy, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Keys: []ed25519.PrivateKey{sharedKey}})
	require.NoError(t, err)
	inFlight, err := legacy.Sign(ctx, "acme", []byte(`{"sub":"user_1"}`))
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(sharedKey)
	require.NoError(t, err)
	legacyKeys, err := legacy.Keys(ctx, "")
	require.NoError(t, err)
	sharedKID := legacyKeys[0].KID
	require.NoError(t, keys.Add(ctx, store.SigningKey{ID: sharedKID, Algorithm: "EdDSA", PrivateKey: der, Created: c.Now().Add(-time.Hour)}))

	c.Advance(time.Minute)
	r, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now, Retain: time.Hour}, keys)
	require.NoError(t, err)
	stored := storedKeys(t, keys)
	require.Len(t, stored, 1)
	assert.Equal(t, c.Now(), stored[0].Retired, "the shared key is retired at the first load")

	for _, tenant := range []string{"acme", "globex"} {
		pub, err := r.Keys(ctx, tenant)
		require.NoError(t, err)
		require.Len(t, pub, 2, "%s: its own key, then the shared one", tenant)
		assert.Equal(t, sharedKID, pub[1].KID)
		assert.True(t, verifies(t, pub, inFlight), "%s: a token signed before the upgrade still verifies", tenant)
		tok, err := r.Sign(ctx, tenant, []byte(`{}`))
		require.NoError(t, err)
		assert.True(t, verifies(t, pub[:1], tok), "%s signs with its own key", tenant)
	}

	c.Advance(time.Hour)
	require.NoError(t, r.Reload(ctx))
	pub, err := r.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Len(t, pub, 1, "the shared key is gone once its tokens have expired")
	assert.False(t, verifies(t, pub, inFlight))
}

// TestLoadKeyRingConcurrentStart: instances that need a tenant's first key at once may each
// store one; after a Reload they all sign with the same one, and the others are retired (and
// stay published).
func TestLoadKeyRingConcurrentStart(t *testing.T) {
	ctx := context.Background()
	keys := memstore.New().SigningKeys()
	c := testclock.At(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	rings := make([]*oidc2fa.KeyRing, 8)
	tokens := make([]string, len(rings))
	var wg sync.WaitGroup
	for i := range rings {
		wg.Go(func() {
			r, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now}, keys)
			if err != nil {
				return
			}
			if tokens[i], err = r.Sign(ctx, "acme", []byte(`{}`)); err == nil {
				rings[i] = r
			}
		})
	}
	wg.Wait()
	signing := map[string]bool{}
	for i, r := range rings {
		require.NotNil(t, r)
		require.NoError(t, r.Reload(ctx))
		pub, err := r.Keys(ctx, "acme")
		require.NoError(t, err)
		signing[pub[0].KID] = true
		for _, tok := range tokens {
			assert.True(t, verifies(t, pub, tok), "ring %d publishes every key that signed", i)
		}
	}
	assert.Len(t, signing, 1, "one signing key everywhere")
	unretired := 0
	for _, k := range storedKeys(t, keys) {
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
	require.NoError(t, keys.Add(ctx, store.SigningKey{ID: "bogus", Tenant: "acme", Algorithm: "EdDSA", PrivateKey: []byte("not DER"), Created: time.Now()}))
	damaged, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, keys)
	require.NoError(t, err, "a ring reads no tenant's keys to start")
	_, err = damaged.Sign(ctx, "acme", []byte(`{}`))
	assert.Error(t, err, "a damaged key is an error, not a silent new key")
	_, err = damaged.Keys(ctx, "acme")
	assert.Error(t, err)

	r, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, memstore.New().SigningKeys())
	require.NoError(t, err)
	_, err = r.Add(priv)
	assert.Error(t, err, "a stored ring has no shared key to add")
}
