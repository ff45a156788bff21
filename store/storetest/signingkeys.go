package storetest

import (
	"bytes"
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
	k.Created, k.Retired = k.Created.UTC(), k.Retired.UTC()
	if k.Retired.Equal(time.Time{}.UTC()) {
		k.Retired = time.Time{}
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

func allSigningKeys(t *testing.T, b store.Backend) []store.SigningKey {
	t.Helper()
	ks, err := b.SigningKeys.List(ctx())
	require.NoError(t, err)
	return normSigningKeys(ks)
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
	got, err := b.SigningKeys.List(ctx())
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

// Tenant is kept by Add and List; a key without one is a shared key, listed with the others.
func testSigningKeyTenant(t *testing.T, b store.Backend) {
	shared := newSigningKey("shared", 1)
	a := newSigningKey("acme-key", 2)
	a.Tenant = acme
	g := newSigningKey("globex-key", 3)
	g.Tenant, g.Algorithm = globex, "RS256"
	for _, k := range []store.SigningKey{shared, a, g} {
		mustSigningKey(t, b, k)
	}
	assert.Equal(t, normSigningKeys([]store.SigningKey{shared, a, g}), allSigningKeys(t, b))
}
