package storetest

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func apiKeyTests() []test {
	return []test{
		{"CreateGet", testAPIKeyCreateGet},
		{"CreateGeneratesID", testAPIKeyCreateGeneratesID},
		{"CreateIDConflict", testAPIKeyCreateIDConflict},
		{"CreateHashConflict", testAPIKeyCreateHashConflict},
		{"GetNotFound", testAPIKeyGetNotFound},
		{"ByHash", testAPIKeyByHash},
		{"ByHashRevoked", testAPIKeyByHashRevoked},
		{"ByHashNotFound", testAPIKeyByHashNotFound},
		{"ListCreationOrder", testAPIKeyListCreationOrder},
		{"ListEmpty", testAPIKeyListEmpty},
		{"TouchSetsLastUsed", testAPIKeyTouchSetsLastUsed},
		{"TouchNeverMovesBack", testAPIKeyTouchNeverMovesBack},
		{"TouchNotFound", testAPIKeyTouchNotFound},
		{"RevokeMarksRevoked", testAPIKeyRevokeMarksRevoked},
		{"RevokeKeepsFirstTime", testAPIKeyRevokeKeepsFirstTime},
		{"RevokeNotFound", testAPIKeyRevokeNotFound},
		{"VersionChangesOnCreateAndRevoke", testAPIKeyVersion},
	}
}

func secretHash(secret string) [32]byte { return sha256.Sum256([]byte(secret)) }

func newKey(id, secret string) store.APIKey {
	return store.APIKey{
		ID:         id,
		Name:       "key " + secret,
		Tenants:    []string{acme, globex},
		Scopes:     []string{"scim"},
		SecretHash: secretHash(secret),
		Created:    day(4, 1, 9*time.Hour),
	}
}

// normKey compares keys whatever a backend's choice of time zone and empty-slice form.
func normKey(k store.APIKey) store.APIKey {
	k.Tenants = nilIfEmpty(k.Tenants)
	k.Scopes = nilIfEmpty(k.Scopes)
	k.Created = normTime(k.Created)
	k.LastUsed = normTime(k.LastUsed)
	k.RevokedAt = normTime(k.RevokedAt)
	return k
}

func mustKey(t *testing.T, b store.Backend, k store.APIKey) *store.APIKey {
	t.Helper()
	got, err := b.APIKeys.Create(ctx(), k)
	require.NoError(t, err, "APIKeys.Create(%q)", k.ID)
	require.NotNil(t, got)
	return got
}

func mustGetKey(t *testing.T, b store.Backend, id string) *store.APIKey {
	t.Helper()
	got, err := b.APIKeys.Get(ctx(), id)
	require.NoError(t, err, "APIKeys.Get(%q)", id)
	require.NotNil(t, got)
	return got
}

// Create stores k and returns it as stored; Get returns it.
func testAPIKeyCreateGet(t *testing.T, b store.Backend) {
	in := newKey("key_1", "scimkey_secret1")
	created := mustKey(t, b, in)
	assert.Equal(t, normKey(in), normKey(*created), "Create's result")
	assert.Equal(t, normKey(in), normKey(*mustGetKey(t, b, "key_1")), "Get")
	got := mustGetKey(t, b, "key_1")
	assert.False(t, got.Revoked)
	assert.True(t, got.LastUsed.IsZero(), "LastUsed is zero until first used")
	assert.True(t, got.RevokedAt.IsZero())
}

// Create: an empty k.ID gets a new id (NewID("key")).
func testAPIKeyCreateGeneratesID(t *testing.T, b store.Backend) {
	seen := map[string]bool{}
	for _, secret := range []string{"a", "b", "c"} {
		k := mustKey(t, b, newKey("", secret))
		assert.True(t, strings.HasPrefix(k.ID, "key_"), "generated id %q has no prefix key_", k.ID)
		assert.Len(t, k.ID, len("key_")+26, "generated id %q", k.ID)
		assert.False(t, seen[k.ID], "generated id %q twice", k.ID)
		seen[k.ID] = true
		assert.Equal(t, "key "+secret, mustGetKey(t, b, k.ID).Name)
	}
}

// Create: ErrConflict if the id is already stored; nothing changes.
func testAPIKeyCreateIDConflict(t *testing.T, b store.Backend) {
	mustKey(t, b, newKey("key_1", "first"))
	_, err := b.APIKeys.Create(ctx(), newKey("key_1", "second"))
	require.ErrorIs(t, err, store.ErrConflict)
	assert.Equal(t, "key first", mustGetKey(t, b, "key_1").Name)
	_, err = b.APIKeys.ByHash(ctx(), secretHash("second"))
	require.ErrorIs(t, err, store.ErrNotFound, "the conflicting key's hash was stored")
	keys, err := b.APIKeys.List(ctx())
	require.NoError(t, err)
	assert.Len(t, keys, 1)
}

// Create: ErrConflict if the secret hash is already stored; nothing changes.
func testAPIKeyCreateHashConflict(t *testing.T, b store.Backend) {
	mustKey(t, b, newKey("key_1", "same"))
	_, err := b.APIKeys.Create(ctx(), newKey("key_2", "same"))
	require.ErrorIs(t, err, store.ErrConflict)
	_, err = b.APIKeys.Create(ctx(), newKey("", "same"))
	require.ErrorIs(t, err, store.ErrConflict, "with a generated id")
	_, err = b.APIKeys.Get(ctx(), "key_2")
	require.ErrorIs(t, err, store.ErrNotFound)
	k, err := b.APIKeys.ByHash(ctx(), secretHash("same"))
	require.NoError(t, err)
	assert.Equal(t, "key_1", k.ID)
	keys, err := b.APIKeys.List(ctx())
	require.NoError(t, err)
	assert.Len(t, keys, 1)
}

// Get: ErrNotFound if the key does not exist.
func testAPIKeyGetNotFound(t *testing.T, b store.Backend) {
	_, err := b.APIKeys.Get(ctx(), "key_missing")
	require.ErrorIs(t, err, store.ErrNotFound)
	mustKey(t, b, newKey("key_1", "s"))
	_, err = b.APIKeys.Get(ctx(), "key_missing")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = b.APIKeys.Get(ctx(), "KEY_1")
	require.ErrorIs(t, err, store.ErrNotFound, "ids are case-sensitive")
}

// ByHash returns the key whose secret hashes to h.
func testAPIKeyByHash(t *testing.T, b store.Backend) {
	mustKey(t, b, newKey("key_1", "one"))
	in := newKey("key_2", "two")
	mustKey(t, b, in)
	got, err := b.APIKeys.ByHash(ctx(), secretHash("two"))
	require.NoError(t, err)
	assert.Equal(t, normKey(in), normKey(*got))
	got, err = b.APIKeys.ByHash(ctx(), secretHash("one"))
	require.NoError(t, err)
	assert.Equal(t, "key_1", got.ID)
}

// ByHash returns a revoked key too, with Revoked set (the caller decides).
func testAPIKeyByHashRevoked(t *testing.T, b store.Backend) {
	mustKey(t, b, newKey("key_1", "one"))
	at := day(5, 1, 0)
	require.NoError(t, b.APIKeys.Revoke(ctx(), "key_1", at))
	got, err := b.APIKeys.ByHash(ctx(), secretHash("one"))
	require.NoError(t, err)
	assert.Equal(t, "key_1", got.ID)
	assert.True(t, got.Revoked)
	assert.True(t, at.Equal(got.RevokedAt), "RevokedAt: want %v, got %v", at, got.RevokedAt)
}

// ByHash: ErrNotFound if there is none.
func testAPIKeyByHashNotFound(t *testing.T, b store.Backend) {
	_, err := b.APIKeys.ByHash(ctx(), secretHash("nothing"))
	require.ErrorIs(t, err, store.ErrNotFound)
	mustKey(t, b, newKey("key_1", "one"))
	_, err = b.APIKeys.ByHash(ctx(), secretHash("two"))
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = b.APIKeys.ByHash(ctx(), [32]byte{})
	require.ErrorIs(t, err, store.ErrNotFound, "the zero hash")
}

// List returns every key, in creation order (not id order), revoked ones included.
func testAPIKeyListCreationOrder(t *testing.T, b store.Backend) {
	for _, id := range []string{"key_c", "key_a", "key_b"} {
		mustKey(t, b, newKey(id, "secret "+id))
	}
	generated := mustKey(t, b, newKey("", "generated"))
	mustKey(t, b, newKey("key_0", "last"))
	require.NoError(t, b.APIKeys.Revoke(ctx(), "key_a", day(5, 1, 0)))
	keys, err := b.APIKeys.List(ctx())
	require.NoError(t, err)
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.ID)
	}
	assert.Equal(t, []string{"key_c", "key_a", "key_b", generated.ID, "key_0"}, ids)
	require.Len(t, keys, 5)
	assert.True(t, keys[1].Revoked, "the revoked key is listed with Revoked set")
	assert.Equal(t, normKey(newKey("key_c", "secret key_c")), normKey(keys[0]))
}

// List of an empty store is empty, not an error.
func testAPIKeyListEmpty(t *testing.T, b store.Backend) {
	keys, err := b.APIKeys.List(ctx())
	require.NoError(t, err)
	assert.Empty(t, keys)
}

// Touch records that the key was used at t.
func testAPIKeyTouchSetsLastUsed(t *testing.T, b store.Backend) {
	mustKey(t, b, newKey("key_1", "one"))
	mustKey(t, b, newKey("key_2", "two"))
	at := day(6, 1, 10*time.Hour)
	require.NoError(t, b.APIKeys.Touch(ctx(), "key_1", at))
	got := mustGetKey(t, b, "key_1")
	assert.True(t, at.Equal(got.LastUsed), "LastUsed: want %v, got %v", at, got.LastUsed)
	assert.True(t, mustGetKey(t, b, "key_2").LastUsed.IsZero(), "the other key was touched")
	later := at.Add(time.Minute)
	require.NoError(t, b.APIKeys.Touch(ctx(), "key_1", later))
	got = mustGetKey(t, b, "key_1")
	assert.True(t, later.Equal(got.LastUsed), "LastUsed: want %v, got %v", later, got.LastUsed)
	got, err := b.APIKeys.ByHash(ctx(), secretHash("one"))
	require.NoError(t, err)
	assert.True(t, later.Equal(got.LastUsed), "ByHash's LastUsed: want %v, got %v", later, got.LastUsed)
}

// Touch: LastUsed never moves back; an earlier t than the stored one is ignored.
func testAPIKeyTouchNeverMovesBack(t *testing.T, b store.Backend) {
	mustKey(t, b, newKey("key_1", "one"))
	at := day(6, 1, 10*time.Hour)
	require.NoError(t, b.APIKeys.Touch(ctx(), "key_1", at))
	for _, earlier := range []time.Time{at.Add(-time.Second), day(1, 1, 0), at.In(time.FixedZone("UTC+5", 5*3600)).Add(-time.Hour)} {
		require.NoError(t, b.APIKeys.Touch(ctx(), "key_1", earlier), "an earlier Touch is no error")
		got := mustGetKey(t, b, "key_1")
		assert.True(t, at.Equal(got.LastUsed), "after Touch(%v): LastUsed %v, want %v", earlier, got.LastUsed, at)
	}
	// A later time in another zone is later.
	later := at.Add(time.Hour).In(time.FixedZone("UTC-8", -8*3600))
	require.NoError(t, b.APIKeys.Touch(ctx(), "key_1", later))
	got := mustGetKey(t, b, "key_1")
	assert.True(t, later.Equal(got.LastUsed), "LastUsed: want %v, got %v", later, got.LastUsed)
}

// Touch: ErrNotFound if the key does not exist.
func testAPIKeyTouchNotFound(t *testing.T, b store.Backend) {
	require.ErrorIs(t, b.APIKeys.Touch(ctx(), "key_missing", day(1, 1, 0)), store.ErrNotFound)
	mustKey(t, b, newKey("key_1", "one"))
	require.ErrorIs(t, b.APIKeys.Touch(ctx(), "key_missing", day(1, 1, 0)), store.ErrNotFound)
	assert.True(t, mustGetKey(t, b, "key_1").LastUsed.IsZero())
}

// Revoke marks the key revoked at t; the other keys stay as they are.
func testAPIKeyRevokeMarksRevoked(t *testing.T, b store.Backend) {
	mustKey(t, b, newKey("key_1", "one"))
	mustKey(t, b, newKey("key_2", "two"))
	at := day(7, 1, 0)
	require.NoError(t, b.APIKeys.Revoke(ctx(), "key_1", at))
	got := mustGetKey(t, b, "key_1")
	assert.True(t, got.Revoked)
	assert.True(t, at.Equal(got.RevokedAt), "RevokedAt: want %v, got %v", at, got.RevokedAt)
	want := newKey("key_1", "one")
	want.Revoked, want.RevokedAt = true, at
	assert.Equal(t, normKey(want), normKey(*got), "Revoke changes only Revoked and RevokedAt")
	other := mustGetKey(t, b, "key_2")
	assert.False(t, other.Revoked)
	assert.True(t, other.RevokedAt.IsZero())
}

// Revoke: revoking a revoked key keeps the first time, earlier or later.
func testAPIKeyRevokeKeepsFirstTime(t *testing.T, b store.Backend) {
	mustKey(t, b, newKey("key_1", "one"))
	first := day(7, 1, 0)
	require.NoError(t, b.APIKeys.Revoke(ctx(), "key_1", first))
	for _, again := range []time.Time{first.Add(time.Hour), first.Add(-time.Hour)} {
		require.NoError(t, b.APIKeys.Revoke(ctx(), "key_1", again), "revoking again is no error")
		got := mustGetKey(t, b, "key_1")
		assert.True(t, got.Revoked)
		assert.True(t, first.Equal(got.RevokedAt), "after Revoke(%v): RevokedAt %v, want %v", again, got.RevokedAt, first)
	}
}

// Revoke: ErrNotFound if the key does not exist.
func testAPIKeyRevokeNotFound(t *testing.T, b store.Backend) {
	require.ErrorIs(t, b.APIKeys.Revoke(ctx(), "key_missing", day(1, 1, 0)), store.ErrNotFound)
	mustKey(t, b, newKey("key_1", "one"))
	require.ErrorIs(t, b.APIKeys.Revoke(ctx(), "key_missing", day(1, 1, 0)), store.ErrNotFound)
	assert.False(t, mustGetKey(t, b, "key_1").Revoked)
}

// A store that implements store.APIKeyVersions changes KeyVersion when Create or Revoke returns,
// so a caller that caches a key never trusts it past its revocation.
func testAPIKeyVersion(t *testing.T, b store.Backend) {
	v, ok := b.APIKeys.(store.APIKeyVersions)
	if !ok {
		t.Skip("the store does not implement store.APIKeyVersions")
	}
	v0 := v.KeyVersion()
	mustKey(t, b, newKey("key_1", "scimkey_secret1"))
	v1 := v.KeyVersion()
	assert.NotEqual(t, v0, v1, "after Create")
	_, err := b.APIKeys.ByHash(ctx(), secretHash("scimkey_secret1"))
	require.NoError(t, err)
	assert.Equal(t, v1, v.KeyVersion(), "after ByHash, which changes nothing")
	require.NoError(t, b.APIKeys.Revoke(ctx(), "key_1", day(4, 2, 0)))
	v2 := v.KeyVersion()
	assert.NotEqual(t, v1, v2, "after Revoke")
}
