package oidc2fa_test

import (
	"context"
	"fmt"
	"slices"
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

// spyKeys is a store.SigningKeys that records the tenant of each List and each call of Tenants.
type spyKeys struct {
	store.SigningKeys
	mu      sync.Mutex
	lists   []string
	tenants int
}

func (s *spyKeys) List(ctx context.Context, tenant string) ([]store.SigningKey, error) {
	s.mu.Lock()
	s.lists = append(s.lists, tenant)
	s.mu.Unlock()
	return s.SigningKeys.List(ctx, tenant)
}

func (s *spyKeys) Tenants(ctx context.Context, after string, limit int) ([]string, error) {
	s.mu.Lock()
	s.tenants++
	s.mu.Unlock()
	return s.SigningKeys.Tenants(ctx, after, limit)
}

// reads returns the tenants whose keys were read since the last call, and whether Tenants was
// called.
func (s *spyKeys) reads() (lists []string, tenants bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lists, tenants = s.lists, s.tenants > 0
	s.lists, s.tenants = nil, 0
	return lists, tenants
}

// A stored ring reads no tenant's keys to start, and serves one tenant (its JWKS, a token, a
// tenant's first key) by reading that tenant's keys alone, however many tenants have keys.
func TestKeyRingReadsOneTenant(t *testing.T) {
	ctx := context.Background()
	c := testclock.At(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	keys := memstore.New().SigningKeys()
	maker, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now}, keys)
	require.NoError(t, err)
	for i := range 200 {
		_, err := maker.Sign(ctx, fmt.Sprintf("tenant-%03d", i), []byte(`{}`))
		require.NoError(t, err)
	}

	spy := &spyKeys{SigningKeys: keys}
	ring, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now}, spy)
	require.NoError(t, err)
	lists, tenants := spy.reads()
	assert.Equal(t, []string{""}, lists, "the start reads the shared keys of earlier versions only")
	assert.False(t, tenants)

	pub, err := ring.Keys(ctx, "tenant-042")
	require.NoError(t, err)
	require.Len(t, pub, 1)
	lists, tenants = spy.reads()
	assert.Equal(t, []string{"tenant-042"}, lists, "a tenant's JWKS reads that tenant's keys")
	assert.False(t, tenants)

	tok, err := ring.Sign(ctx, "tenant-042", []byte(`{}`))
	require.NoError(t, err)
	assert.True(t, verifies(t, pub, tok))
	lists, _ = spy.reads()
	assert.Empty(t, lists, "signing with a key in memory reads nothing")

	_, err = ring.SignWith(ctx, "new-tenant", oidc2fa.AlgRS256, []byte(`{}`))
	require.NoError(t, err)
	lists, tenants = spy.reads()
	assert.NotEmpty(t, lists)
	assert.Equal(t, []string{"new-tenant"}, slices.Compact(lists), "a tenant's first key reads that tenant's keys alone")
	assert.False(t, tenants)

	c.Advance(time.Second)
	_, err = ring.Keys(ctx, "tenant-042")
	require.NoError(t, err)
	lists, _ = spy.reads()
	assert.Equal(t, []string{"tenant-042"}, lists, "the JWKS reads the tenant's keys again a second later")
}

// A stored ring keeps at most CacheTenants tenants' keys in memory; a tenant that left is read
// again when needed and signs with the same key.
func TestKeyRingCacheBound(t *testing.T) {
	ctx := context.Background()
	c := testclock.At(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	spy := &spyKeys{SigningKeys: memstore.New().SigningKeys()}
	ring, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now, CacheTenants: 10}, spy)
	require.NoError(t, err)
	first, err := ring.Keys(ctx, "tenant-000")
	require.NoError(t, err)
	for i := 1; i < 100; i++ {
		c.Advance(time.Millisecond)
		_, err := ring.Sign(ctx, fmt.Sprintf("tenant-%03d", i), []byte(`{}`))
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, oidc2fa.KeyRingTenantsInMemory(ring), 10)
	spy.reads()
	tok, err := ring.Sign(ctx, "tenant-000", []byte(`{}`))
	require.NoError(t, err)
	lists, _ := spy.reads()
	assert.Equal(t, []string{"tenant-000"}, lists, "an evicted tenant is read again")
	assert.True(t, verifies(t, first, tok), "with the same key")
	assert.LessOrEqual(t, oidc2fa.KeyRingTenantsInMemory(ring), 10)

	_, err = oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{CacheTenants: -1}, spy)
	assert.Error(t, err)
	_, err = oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Refresh: -1}, spy)
	assert.Error(t, err)
}

// A key another instance made (a client's new algorithm) is signed with by an instance whose
// copy of the tenant's keys lacks it: no second key of the algorithm is made.
func TestKeyRingFindsAnotherInstancesKey(t *testing.T) {
	ctx := context.Background()
	keys := memstore.New().SigningKeys()
	a, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, keys)
	require.NoError(t, err)
	b, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, keys)
	require.NoError(t, err)
	_, err = a.Keys(ctx, "acme") // a holds acme's keys: EdDSA only
	require.NoError(t, err)
	require.NoError(t, b.PublishKey(ctx, "acme", oidc2fa.AlgRS256))
	pub, err := b.Keys(ctx, "acme")
	require.NoError(t, err)
	tok, err := a.SignWith(ctx, "acme", oidc2fa.AlgRS256, []byte(`{}`))
	require.NoError(t, err)
	assert.True(t, verifies(t, pub, tok), "a signs with the key b published")
	stored, err := keys.List(ctx, "acme")
	require.NoError(t, err)
	rsa := slices.DeleteFunc(stored, func(k store.SigningKey) bool { return k.Algorithm != oidc2fa.AlgRS256 })
	assert.Len(t, rsa, 1)
}

// RotateBatch goes through the tenants with keys in id order, a batch at a time, and resumes
// after the last tenant it names; Rotate does every tenant in batches.
func TestKeyRingRotateBatch(t *testing.T) {
	ctx := context.Background()
	c := testclock.At(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	keys := memstore.New().SigningKeys()
	ring, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now}, keys)
	require.NoError(t, err)
	var names []string
	for i := range 7 {
		name := fmt.Sprintf("t%d", i)
		names = append(names, name)
		_, err := ring.Sign(ctx, name, []byte(`{}`))
		require.NoError(t, err)
	}
	var done []string
	after := ""
	for range 10 {
		kids, next, err := ring.RotateBatch(ctx, after, 3)
		require.NoError(t, err)
		for _, kid := range kids {
			done = append(done, tenantOfKey(t, keys, names, kid))
		}
		if next == "" {
			break
		}
		after = next
	}
	assert.Equal(t, names, done, "each tenant once, in order")
	_, _, err = ring.RotateBatch(ctx, "", 0)
	assert.Error(t, err)

	all, err := ring.Rotate(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 7)
}

// tenantOfKey returns the tenant of names that holds kid.
func tenantOfKey(t *testing.T, keys store.SigningKeys, names []string, kid string) string {
	t.Helper()
	for _, name := range names {
		ks, err := keys.List(context.Background(), name)
		require.NoError(t, err)
		if slices.ContainsFunc(ks, func(k store.SigningKey) bool { return k.ID == kid }) {
			return name
		}
	}
	t.Fatalf("no tenant holds %s", kid)
	return ""
}

// A client registered with an algorithm, or moved to one, has the tenant's key of it in the
// JWKS before its first token; a client of an unknown tenant, or an unknown client, makes none.
func TestClientKeyPublishedBeforeFirstToken(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	require.NoError(t, st.Tenants().Create(ctx, store.Tenant{ID: "acme"}))
	c := testclock.At(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	ring, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now}, st.SigningKeys())
	require.NoError(t, err)
	other, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{Now: c.Now}, st.SigningKeys()) // another instance
	require.NoError(t, err)
	before, err := other.Keys(ctx, "acme")
	require.NoError(t, err)

	_, client, err := oidc2fa.RegisterClient(ctx, st.Clients(), oidc2fa.ClientSpec{Tenant: "acme", Name: "App",
		RedirectURIs: []string{"https://app.example.com/cb"}, IDTokenAlg: oidc2fa.AlgRS256, Signer: ring})
	require.NoError(t, err)
	c.Advance(time.Second) // the other instance's copy of acme's keys is a second old
	published, err := other.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.Len(t, published, len(before)+1)
	tok, err := other.SignWith(ctx, "acme", oidc2fa.AlgRS256, []byte(`{}`))
	require.NoError(t, err)
	assert.True(t, verifies(t, published, tok), "the client's first token has a kid the JWKS listed before it")

	_, err = oidc2fa.SetClientIDTokenAlg(ctx, st.Clients(), ring, "acme", client.ID, oidc2fa.AlgES256)
	require.NoError(t, err)
	pub, err := ring.Keys(ctx, "acme")
	require.NoError(t, err)
	assert.True(t, slices.ContainsFunc(pub, func(k oidc2fa.PublicKey) bool { return k.Algorithm == oidc2fa.AlgES256 }))

	_, _, err = oidc2fa.RegisterClient(ctx, st.Clients(), oidc2fa.ClientSpec{Tenant: "initech", Name: "App",
		RedirectURIs: []string{"https://app.example.com/cb"}, IDTokenAlg: oidc2fa.AlgRS256, Signer: ring})
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = oidc2fa.SetClientIDTokenAlg(ctx, st.Clients(), ring, "acme", "client_nope", oidc2fa.AlgEd25519)
	require.ErrorIs(t, err, store.ErrNotFound)
	tenants, err := st.SigningKeys().Tenants(ctx, "", 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"acme"}, tenants, "no key for a tenant that does not exist")
	stored, err := st.SigningKeys().List(ctx, "acme")
	require.NoError(t, err)
	for _, k := range stored {
		assert.NotEqual(t, oidc2fa.AlgEd25519, k.Algorithm, "no key for a client that does not exist")
	}
	_, err = oidc2fa.SetClientIDTokenAlg(ctx, st.Clients(), ring, "acme", client.ID, "HS256")
	require.ErrorIs(t, err, store.ErrInvalid)
	assert.False(t, strings.Contains(fmt.Sprint(stored), "HS256"))
}
