package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func codeTests() []test {
	return []test{
		{"CreateConsume", testCodeCreateConsume},
		{"CreateZeroExpires", testCodeCreateZeroExpires},
		{"CreateConflict", testCodeCreateConflict},
		{"ConsumeAgainUsed", testCodeConsumeAgainUsed},
		{"ConsumeNotFound", testCodeConsumeNotFound},
		{"ConsumeIgnoresExpires", testCodeConsumeIgnoresExpires},
		{"ReturnsCopies", testCodeReturnsCopies},
		{"DeleteExpired", testCodeDeleteExpired},
		{"UsedUntilDeleteExpired", testCodeUsedUntilDeleteExpired},
	}
}

// codeExpires is when the codes of newCode expire.
func codeExpires() time.Time { return day(5, 2, 10*time.Hour+time.Minute) }

// newCode returns the grant behind code, issued to clientID of tenant and expiring at
// codeExpires().
func newCode(tenant, clientID, code string) store.Code {
	return store.Code{
		Hash:        secretHash(code),
		Tenant:      tenant,
		ClientID:    clientID,
		RedirectURI: "https://shop.example.com/callback",
		Challenge:   "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		Nonce:       "n-0S6_WzA2Mj",
		Subject:     "user_" + code,
		AuthTime:    day(5, 2, 10*time.Hour),
		AMR:         []string{"pop", "user"},
		Expires:     codeExpires(),
	}
}

// normCode compares codes whatever a backend's choice of time zone and empty-slice form. Its
// result shares no memory with c.
func normCode(c store.Code) store.Code {
	c.AMR = nilIfEmpty(slices.Clone(c.AMR))
	c.AuthTime = normTime(c.AuthTime)
	c.Expires = normTime(c.Expires)
	return c
}

func mustCode(t *testing.T, b store.Backend, c store.Code) {
	t.Helper()
	require.NoError(t, b.Codes.Create(ctx(), c), "Codes.Create(%q)", c.Subject)
}

// consumeUsed checks that Consume of c's hash reports ErrUsed with c's grant.
func consumeUsed(t *testing.T, b store.Backend, c store.Code, msgAndArgs ...any) {
	t.Helper()
	got, err := b.Codes.Consume(ctx(), c.Hash)
	require.ErrorIs(t, err, store.ErrUsed, msgAndArgs...)
	require.NotNil(t, got, "Consume with ErrUsed returns the grant")
	assert.Equal(t, normCode(c), normCode(*got), msgAndArgs...)
}

// consumeNotFound checks that Consume of h reports ErrNotFound.
func consumeNotFound(t *testing.T, b store.Backend, h [32]byte, msgAndArgs ...any) {
	t.Helper()
	_, err := b.Codes.Consume(ctx(), h)
	require.ErrorIs(t, err, store.ErrNotFound, msgAndArgs...)
}

// Create stores c; Consume marks the code used and returns its grant with a nil error, every
// field kept.
func testCodeCreateConsume(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newCode(acme, "client_1", "code_1")
	in.AuthTime = time.Date(2024, 5, 2, 12, 0, 0, 0, time.FixedZone("UTC+2", 2*3600))
	other := newCode(acme, "client_1", "code_2")
	other.AMR = nil
	mustCode(t, b, in)
	mustCode(t, b, other)
	got, err := b.Codes.Consume(ctx(), in.Hash)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, normCode(in), normCode(*got))
	got, err = b.Codes.Consume(ctx(), other.Hash)
	require.NoError(t, err, "the other code is not used")
	assert.Equal(t, normCode(other), normCode(*got))
}

// Create: ErrInvalid if c.Expires is zero; nothing is stored.
func testCodeCreateZeroExpires(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := newCode(acme, "client_1", "code_1")
	c.Expires = time.Time{}
	require.ErrorIs(t, b.Codes.Create(ctx(), c), store.ErrInvalid)
	consumeNotFound(t, b, c.Hash, "the invalid code was stored")
	n, err := b.Codes.DeleteExpired(ctx(), day(12, 31, 0))
	require.NoError(t, err)
	assert.Zero(t, n)
}

// Create: ErrConflict if a code with c.Hash is stored, used or not; the first grant is kept.
func testCodeCreateConflict(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	first := newCode(acme, "client_1", "code_1")
	mustCode(t, b, first)
	second := first
	second.ClientID, second.Subject, second.AMR = "client_2", "user_other", []string{"other"}
	require.ErrorIs(t, b.Codes.Create(ctx(), second), store.ErrConflict, "unused code")
	got, err := b.Codes.Consume(ctx(), first.Hash)
	require.NoError(t, err)
	assert.Equal(t, normCode(first), normCode(*got), "the first grant")
	require.ErrorIs(t, b.Codes.Create(ctx(), second), store.ErrConflict, "used code")
	consumeUsed(t, b, first, "the first grant, still used")
}

// Every later Consume of a consumed code returns the grant with ErrUsed; other codes are not
// affected.
func testCodeConsumeAgainUsed(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := newCode(acme, "client_1", "code_1")
	other := newCode(acme, "client_2", "code_2")
	mustCode(t, b, c)
	mustCode(t, b, other)
	_, err := b.Codes.Consume(ctx(), c.Hash)
	require.NoError(t, err)
	for i := range 3 {
		consumeUsed(t, b, c, "Consume %d after the first", i+2)
	}
	got, err := b.Codes.Consume(ctx(), other.Hash)
	require.NoError(t, err, "the other code")
	assert.Equal(t, normCode(other), normCode(*got))
	consumeUsed(t, b, other)
}

// Consume: ErrNotFound if no code has hash h.
func testCodeConsumeNotFound(t *testing.T, b store.Backend) {
	consumeNotFound(t, b, secretHash("code_1"), "empty store")
	consumeNotFound(t, b, [32]byte{}, "zero hash, empty store")
	mustTenant(t, b, acme)
	mustCode(t, b, newCode(acme, "client_1", "code_1"))
	consumeNotFound(t, b, secretHash("code_2"), "another hash")
	consumeNotFound(t, b, [32]byte{}, "zero hash")
	_, err := b.Codes.Consume(ctx(), secretHash("code_1"))
	require.NoError(t, err, "the stored code is not used by Consumes of other hashes")
}

// Consume does not look at Expires: a code past it is consumed; the caller compares Expires
// with its clock.
func testCodeConsumeIgnoresExpires(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	past := newCode(acme, "client_1", "code_past")
	past.Expires = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	future := newCode(acme, "client_1", "code_future")
	future.Expires = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []store.Code{past, future} {
		mustCode(t, b, c)
		got, err := b.Codes.Consume(ctx(), c.Hash)
		require.NoError(t, err, "Consume of a code expiring %v", c.Expires)
		assert.Equal(t, normCode(c), normCode(*got))
		consumeUsed(t, b, c)
	}
}

// The store keeps its own copy of a code: changing the AMR passed to Create, or of a grant
// Consume returned, changes no later Consume's grant.
func testCodeReturnsCopies(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	want := newCode(acme, "client_1", "code_1")
	in := newCode(acme, "client_1", "code_1")
	mustCode(t, b, in)
	in.AMR[0] = "changed"
	got, err := b.Codes.Consume(ctx(), want.Hash)
	require.NoError(t, err)
	assert.Equal(t, normCode(want), normCode(*got), "after changing Create's argument")
	require.Len(t, got.AMR, 2)
	got.AMR[0] = "changed"
	got.AMR = append(got.AMR[:1], "appended")
	got.Subject = "changed"
	consumeUsed(t, b, want, "after changing Consume's result")
	again, err := b.Codes.Consume(ctx(), want.Hash)
	require.ErrorIs(t, err, store.ErrUsed)
	require.NotNil(t, again)
	require.Len(t, again.AMR, 2)
	again.AMR[1] = "changed"
	consumeUsed(t, b, want, "after changing a replay's result")
}

// DeleteExpired removes every code, used or not, whose Expires is before now, and returns how
// many it removed: a code expiring at now stays, and so do later ones.
func testCodeDeleteExpired(t *testing.T, b store.Backend) {
	n, err := b.Codes.DeleteExpired(ctx(), codeExpires())
	require.NoError(t, err)
	assert.Zero(t, n, "an empty store")

	mustTenant(t, b, acme)
	now := codeExpires()
	expiring := func(code string, expires time.Time) store.Code {
		c := newCode(acme, "client_1", code)
		c.Expires = expires
		mustCode(t, b, c)
		return c
	}
	oldUnused := expiring("old_unused", now.Add(-time.Minute))
	oldUsed := expiring("old_used", now.Add(-time.Nanosecond))
	atNow := expiring("at_now", now.In(time.FixedZone("UTC-5", -5*3600)))
	later := expiring("later", now.Add(time.Second))
	laterUsed := expiring("later_used", now.Add(time.Hour))
	for _, c := range []store.Code{oldUsed, laterUsed} {
		_, err := b.Codes.Consume(ctx(), c.Hash)
		require.NoError(t, err)
	}

	n, err = b.Codes.DeleteExpired(ctx(), now)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "removed")
	consumeNotFound(t, b, oldUnused.Hash, "an expired unused code")
	consumeNotFound(t, b, oldUsed.Hash, "an expired used code")
	consumeUsed(t, b, laterUsed, "a used code not yet expired")
	for _, c := range []store.Code{atNow, later} {
		got, err := b.Codes.Consume(ctx(), c.Hash)
		require.NoError(t, err, "a code expiring at %v", c.Expires)
		assert.Equal(t, normCode(c), normCode(*got))
	}

	n, err = b.Codes.DeleteExpired(ctx(), now)
	require.NoError(t, err)
	assert.Zero(t, n, "a second DeleteExpired at the same time")
	n, err = b.Codes.DeleteExpired(ctx(), now.Add(24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 3, n, "a day later")
	for _, c := range []store.Code{atNow, later, laterUsed} {
		consumeNotFound(t, b, c.Hash)
	}
}

// A consumed code reports ErrUsed until DeleteExpired removes it, then ErrNotFound.
func testCodeUsedUntilDeleteExpired(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := newCode(acme, "client_1", "code_1")
	mustCode(t, b, c)
	_, err := b.Codes.Consume(ctx(), c.Hash)
	require.NoError(t, err)
	for _, now := range []time.Time{c.Expires.Add(-time.Hour), c.Expires} {
		n, err := b.Codes.DeleteExpired(ctx(), now)
		require.NoError(t, err)
		assert.Zero(t, n, "DeleteExpired(%v)", now)
		consumeUsed(t, b, c, "after DeleteExpired(%v)", now)
	}
	n, err := b.Codes.DeleteExpired(ctx(), c.Expires.Add(time.Nanosecond))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	consumeNotFound(t, b, c.Hash, "after DeleteExpired past its expiry")
}
