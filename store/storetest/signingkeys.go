package storetest

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func signingKeyTests() []test {
	return []test{
		{"AddList", testSigningKeyAddList},
		{"AddInvalid", testSigningKeyAddInvalid},
		{"AddConflict", testSigningKeyAddConflict},
		{"ListEmpty", testSigningKeyListEmpty},
		{"ListOrder", testSigningKeyListOrder},
		{"ReturnsCopies", testSigningKeyReturnsCopies},
		{"RetireKeepsFirst", testSigningKeyRetire},
		{"RetireNotFound", testSigningKeyRetireNotFound},
		{"Delete", testSigningKeyDelete},
		{"DeleteNotFound", testSigningKeyDeleteNotFound},
		{"TenantKept", testSigningKeyTenant},
		{"ListByTenant", testSigningKeyListByTenant},
		{"ActivatesKept", testSigningKeyActivates},
		{"TenantsPages", testSigningKeyTenantsPages},
		{"TenantsAfterDelete", testSigningKeyTenantsAfterDelete},
		{"TenantsLimit", testSigningKeyTenantsLimit},
	}
}

// newSigningKey returns a key named id, created at day d of June.
func newSigningKey(id string, d int) store.SigningKey {
	return store.SigningKey{
		ID:         id,
		Algorithm:  "EdDSA",
		PrivateKey: bytes.Repeat([]byte(id[:1]), 48),
		Created:    day(6, d, 10*time.Hour),
	}
}

func normSigningKey(k store.SigningKey) store.SigningKey {
	k.Created, k.Retired, k.Activates = k.Created.UTC(), k.Retired.UTC(), k.Activates.UTC()
	if k.Retired.Equal(time.Time{}.UTC()) {
		k.Retired = time.Time{}
	}
	if k.Activates.Equal(time.Time{}.UTC()) {
		k.Activates = time.Time{}
	}
	return k
}

func normSigningKeys(ks []store.SigningKey) []store.SigningKey {
	out := make([]store.SigningKey, len(ks))
	for i, k := range ks {
		out[i] = normSigningKey(k)
	}
	return out
}

func mustSigningKey(t *testing.T, b store.Backend, k store.SigningKey) {
	t.Helper()
	require.NoError(t, b.SigningKeys.Add(ctx(), k))
}

// allSigningKeys returns the shared keys (those without a tenant), which most tests use.
func allSigningKeys(t *testing.T, b store.Backend) []store.SigningKey {
	t.Helper()
	return tenantSigningKeys(t, b, "")
}

func tenantSigningKeys(t *testing.T, b store.Backend, tenant string) []store.SigningKey {
	t.Helper()
	ks, err := b.SigningKeys.List(ctx(), tenant)
	require.NoError(t, err)
	require.NotNil(t, ks, "none is an empty list")
	return normSigningKeys(ks)
}

func signingKeyTenants(t *testing.T, b store.Backend, after string, limit int) []string {
	t.Helper()
	ts, err := b.SigningKeys.Tenants(ctx(), after, limit)
	require.NoError(t, err)
	return ts
}

func testSigningKeyAddList(t *testing.T, b store.Backend) {
	k := newSigningKey("k1", 1)
	k.Created = time.Date(2026, 6, 1, 12, 0, 0, 123456000, time.FixedZone("UTC+2", 2*3600))
	mustSigningKey(t, b, k)
	assert.Equal(t, []store.SigningKey{normSigningKey(k)}, allSigningKeys(t, b))
}

func testSigningKeyAddInvalid(t *testing.T, b store.Backend) {
	for name, edit := range map[string]func(*store.SigningKey){
		"no id":        func(k *store.SigningKey) { k.ID = "" },
		"no algorithm": func(k *store.SigningKey) { k.Algorithm = "" },
		"no key":       func(k *store.SigningKey) { k.PrivateKey = nil },
		"no time":      func(k *store.SigningKey) { k.Created = time.Time{} },
	} {
		k := newSigningKey("k1", 1)
		edit(&k)
		require.ErrorIs(t, b.SigningKeys.Add(ctx(), k), store.ErrInvalid, name)
	}
	assert.Empty(t, allSigningKeys(t, b), "nothing stored")
}

func testSigningKeyAddConflict(t *testing.T, b store.Backend) {
	k := newSigningKey("k1", 1)
	mustSigningKey(t, b, k)
	other := newSigningKey("k1", 2)
	other.PrivateKey = []byte("another key")
	require.ErrorIs(t, b.SigningKeys.Add(ctx(), other), store.ErrConflict)
	assert.Equal(t, []store.SigningKey{normSigningKey(k)}, allSigningKeys(t, b), "the first stays")
}

func testSigningKeyListEmpty(t *testing.T, b store.Backend) {
	assert.Empty(t, allSigningKeys(t, b))
}

func testSigningKeyListOrder(t *testing.T, b store.Backend) {
	c, a2, a1 := newSigningKey("c", 3), newSigningKey("b", 1), newSigningKey("a", 1)
	for _, k := range []store.SigningKey{c, a2, a1} {
		mustSigningKey(t, b, k)
	}
	got := allSigningKeys(t, b)
	require.Len(t, got, 3)
	assert.Equal(t, []string{"a", "b", "c"}, []string{got[0].ID, got[1].ID, got[2].ID})
}

func testSigningKeyReturnsCopies(t *testing.T, b store.Backend) {
	k := newSigningKey("k1", 1)
	mustSigningKey(t, b, k)
	k.PrivateKey[0] ^= 0xff
	got, err := b.SigningKeys.List(ctx(), "")
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, byte('k'), got[0].PrivateKey[0], "Add stored a copy")
	got[0].PrivateKey[0] ^= 0xff
	assert.Equal(t, byte('k'), allSigningKeys(t, b)[0].PrivateKey[0], "List returned a copy")
}

func testSigningKeyRetire(t *testing.T, b store.Backend) {
	mustSigningKey(t, b, newSigningKey("k1", 1))
	first := day(6, 2, 0)
	require.NoError(t, b.SigningKeys.Retire(ctx(), "k1", first))
	require.NoError(t, b.SigningKeys.Retire(ctx(), "k1", day(6, 3, 0)))
	got := allSigningKeys(t, b)
	require.Len(t, got, 1)
	assert.True(t, got[0].Retired.Equal(first), "the first retirement stays: %v", got[0].Retired)
}

func testSigningKeyRetireNotFound(t *testing.T, b store.Backend) {
	require.ErrorIs(t, b.SigningKeys.Retire(ctx(), "nope", day(6, 2, 0)), store.ErrNotFound)
}

func testSigningKeyDelete(t *testing.T, b store.Backend) {
	mustSigningKey(t, b, newSigningKey("k1", 1))
	mustSigningKey(t, b, newSigningKey("k2", 2))
	require.NoError(t, b.SigningKeys.Delete(ctx(), "k1"))
	got := allSigningKeys(t, b)
	require.Len(t, got, 1)
	assert.Equal(t, "k2", got[0].ID)
}

func testSigningKeyDeleteNotFound(t *testing.T, b store.Backend) {
	require.ErrorIs(t, b.SigningKeys.Delete(ctx(), "nope"), store.ErrNotFound)
}

// Tenant is kept by Add and List; a key without one is a shared key.
func testSigningKeyTenant(t *testing.T, b store.Backend) {
	shared := newSigningKey("shared", 1)
	a := newSigningKey("acme-key", 2)
	a.Tenant = acme
	g := newSigningKey("globex-key", 3)
	g.Tenant, g.Algorithm = globex, "RS256"
	for _, k := range []store.SigningKey{shared, a, g} {
		mustSigningKey(t, b, k)
	}
	assert.Equal(t, normSigningKeys([]store.SigningKey{shared}), allSigningKeys(t, b))
	assert.Equal(t, normSigningKeys([]store.SigningKey{a}), tenantSigningKeys(t, b, acme))
	assert.Equal(t, normSigningKeys([]store.SigningKey{g}), tenantSigningKeys(t, b, globex))
}

// List returns the keys of the tenant it names only, in order; the shared keys for an empty
// tenant; none for a tenant without keys.
func testSigningKeyListByTenant(t *testing.T, b store.Backend) {
	var acmeKeys, globexKeys, shared []store.SigningKey
	for i := range 6 {
		k := newSigningKey(fmt.Sprintf("k%d", i), 6-i) // created in the reverse of id order
		switch i % 3 {
		case 0:
			k.Tenant = acme
			acmeKeys = append([]store.SigningKey{k}, acmeKeys...)
		case 1:
			k.Tenant = globex
			globexKeys = append([]store.SigningKey{k}, globexKeys...)
		default:
			shared = append([]store.SigningKey{k}, shared...)
		}
		mustSigningKey(t, b, k)
	}
	assert.Equal(t, normSigningKeys(acmeKeys), tenantSigningKeys(t, b, acme))
	assert.Equal(t, normSigningKeys(globexKeys), tenantSigningKeys(t, b, globex))
	assert.Equal(t, normSigningKeys(shared), tenantSigningKeys(t, b, ""))
	assert.Empty(t, tenantSigningKeys(t, b, "initech"))
	assert.Empty(t, tenantSigningKeys(t, b, "ACME"), "a tenant is named exactly")
}

// Activates is kept by Add and List; zero stays zero.
func testSigningKeyActivates(t *testing.T, b store.Backend) {
	later := newSigningKey("later", 1)
	later.Tenant, later.Activates = acme, day(6, 1, 10*time.Hour+6*time.Minute+123456*time.Microsecond)
	now := newSigningKey("now", 2)
	now.Tenant = acme
	mustSigningKey(t, b, later)
	mustSigningKey(t, b, now)
	got := tenantSigningKeys(t, b, acme)
	require.Len(t, got, 2)
	assert.True(t, got[0].Activates.Equal(later.Activates), "%v", got[0].Activates)
	assert.True(t, got[1].Activates.IsZero(), "%v", got[1].Activates)
}

// Tenants pages through the tenants with keys in id order, each once however many keys it
// has, without the shared keys' empty tenant.
func testSigningKeyTenantsPages(t *testing.T, b store.Backend) {
	assert.Empty(t, signingKeyTenants(t, b, "", 10), "an empty store")
	mustSigningKey(t, b, newSigningKey("shared", 1))
	assert.Empty(t, signingKeyTenants(t, b, "", 10), "shared keys have no tenant")
	names := []string{"t05", "t01", "t03", "t02", "t04"}
	for i, name := range names {
		for j := range 2 {
			k := newSigningKey(fmt.Sprintf("%s-%d", name, j), 1+i)
			k.Tenant = name
			mustSigningKey(t, b, k)
		}
	}
	assert.Equal(t, []string{"t01", "t02"}, signingKeyTenants(t, b, "", 2))
	assert.Equal(t, []string{"t03", "t04"}, signingKeyTenants(t, b, "t02", 2))
	assert.Equal(t, []string{"t05"}, signingKeyTenants(t, b, "t04", 2))
	assert.Empty(t, signingKeyTenants(t, b, "t05", 2))
	assert.Equal(t, []string{"t03", "t04", "t05"}, signingKeyTenants(t, b, "t025", 10), "after need not be a tenant")
	assert.Equal(t, []string{"t01", "t02", "t03", "t04", "t05"}, signingKeyTenants(t, b, "", 100))
}

// A tenant whose keys were all deleted is no longer listed; one with a key left is.
func testSigningKeyTenantsAfterDelete(t *testing.T, b store.Backend) {
	for i, name := range []string{"t1", "t2", "t2", "t3"} {
		k := newSigningKey(fmt.Sprintf("%s-%d", name, i), 1+i)
		k.Tenant = name
		mustSigningKey(t, b, k)
	}
	require.NoError(t, b.SigningKeys.Delete(ctx(), "t1-0"))
	require.NoError(t, b.SigningKeys.Delete(ctx(), "t2-1"))
	assert.Equal(t, []string{"t2", "t3"}, signingKeyTenants(t, b, "", 10))
	assert.Empty(t, tenantSigningKeys(t, b, "t1"))
}

// A limit below 1 is ErrInvalid.
func testSigningKeyTenantsLimit(t *testing.T, b store.Backend) {
	for _, limit := range []int{0, -1} {
		_, err := b.SigningKeys.Tenants(ctx(), "", limit)
		require.ErrorIs(t, err, store.ErrInvalid, "limit %d", limit)
	}
}
