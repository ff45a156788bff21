package storetest

import (
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func accessTokenTests() []test {
	return []test{
		{"CreateGet", testAccessTokenCreateGet},
		{"GetNotFound", testAccessTokenGetNotFound},
		{"GetIgnoresExpires", testAccessTokenGetIgnoresExpires},
		{"CreateInvalid", testAccessTokenCreateInvalid},
		{"CreateConflict", testAccessTokenCreateConflict},
		{"CreateUnknownTenant", testAccessTokenCreateUnknownTenant},
		{"RevokeCode", testAccessTokenRevokeCode},
		{"RevokeCodeConcurrent", testAccessTokenRevokeCodeConcurrent},
		{"DeleteExpired", testAccessTokenDeleteExpired},
		{"GoesWithTenant", testAccessTokenGoesWithTenant},
	}
}

// accessExpires is when the tokens of newAccessToken expire.
func accessExpires() time.Time { return day(5, 6, 9*time.Hour+5*time.Minute) }

// newAccessToken returns a token of tenant, derived from name, issued by the code codeName.
func newAccessToken(tenant, name, codeName string) store.AccessToken {
	return store.AccessToken{
		Hash:     sha256.Sum256([]byte("access token " + name)),
		Tenant:   tenant,
		ClientID: "client_shop",
		Subject:  "user_ann",
		CodeHash: sha256.Sum256([]byte("code " + codeName)),
		Created:  day(5, 6, 9*time.Hour),
		Expires:  accessExpires(),
	}
}

func normAccessToken(a store.AccessToken) store.AccessToken {
	a.Created, a.Expires = normTime(a.Created), normTime(a.Expires)
	return a
}

func mustAccessToken(t *testing.T, b store.Backend, a store.AccessToken) {
	t.Helper()
	require.NoError(t, b.AccessTokens.Create(ctx(), a), "AccessTokens.Create")
}

// accessTokenGone fails unless Get of a's hash is ErrNotFound.
func accessTokenGone(t *testing.T, b store.Backend, a store.AccessToken, msg string) {
	t.Helper()
	_, err := b.AccessTokens.Get(ctx(), a.Hash)
	require.ErrorIs(t, err, store.ErrNotFound, msg)
}

// Create stores the token; Get returns it, every field kept, as a copy.
func testAccessTokenCreateGet(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	a := newAccessToken(acme, "one", "c1")
	mustAccessToken(t, b, a)
	mustAccessToken(t, b, newAccessToken(acme, "two", "c2"))
	got, err := b.AccessTokens.Get(ctx(), a.Hash)
	require.NoError(t, err)
	assert.Equal(t, normAccessToken(a), normAccessToken(*got))
	got.Subject = "changed"
	again, err := b.AccessTokens.Get(ctx(), a.Hash)
	require.NoError(t, err)
	assert.Equal(t, "user_ann", again.Subject, "Get returns a copy")
}

// Get of a hash never stored is ErrNotFound.
func testAccessTokenGetNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	accessTokenGone(t, b, newAccessToken(acme, "never", "c"), "never stored")
}

// Get returns a token past its Expires until DeleteExpired removes it.
func testAccessTokenGetIgnoresExpires(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	a := newAccessToken(acme, "old", "c")
	a.Expires = day(1, 2, 0)
	mustAccessToken(t, b, a)
	got, err := b.AccessTokens.Get(ctx(), a.Hash)
	require.NoError(t, err)
	assert.Equal(t, normTime(a.Expires), normTime(got.Expires))
}

// Create: ErrInvalid without tenant, client, subject, hash or expiry; nothing is stored.
func testAccessTokenCreateInvalid(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for name, edit := range map[string]func(*store.AccessToken){
		"no tenant":  func(a *store.AccessToken) { a.Tenant = "" },
		"no client":  func(a *store.AccessToken) { a.ClientID = "" },
		"no subject": func(a *store.AccessToken) { a.Subject = "" },
		"no hash":    func(a *store.AccessToken) { a.Hash = [32]byte{} },
		"no expires": func(a *store.AccessToken) { a.Expires = time.Time{} },
	} {
		a := newAccessToken(acme, name, "c")
		edit(&a)
		require.ErrorIs(t, b.AccessTokens.Create(ctx(), a), store.ErrInvalid, name)
		accessTokenGone(t, b, a, name+": nothing stored")
	}
}

// Create of a hash already stored is ErrConflict, and the first token stays.
func testAccessTokenCreateConflict(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	a := newAccessToken(acme, "one", "c1")
	mustAccessToken(t, b, a)
	again := a
	again.Subject = "user_bob"
	require.ErrorIs(t, b.AccessTokens.Create(ctx(), again), store.ErrConflict)
	got, err := b.AccessTokens.Get(ctx(), a.Hash)
	require.NoError(t, err)
	assert.Equal(t, "user_ann", got.Subject)
}

// Create in a tenant that does not exist is ErrNotFound.
func testAccessTokenCreateUnknownTenant(t *testing.T, b store.Backend) {
	require.ErrorIs(t, b.AccessTokens.Create(ctx(), newAccessToken("nowhere", "one", "c")), store.ErrNotFound)
}

// RevokeCode removes every token of the code, in every tenant, and only those; it counts them,
// and a code without tokens is zero, not an error.
func testAccessTokenRevokeCode(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	first := newAccessToken(acme, "first", "replayed")
	second := newAccessToken(globex, "second", "replayed")
	other := newAccessToken(acme, "other", "fine")
	for _, a := range []store.AccessToken{first, second, other} {
		mustAccessToken(t, b, a)
	}
	n, err := b.AccessTokens.RevokeCode(ctx(), first.CodeHash)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	accessTokenGone(t, b, first, "revoked")
	accessTokenGone(t, b, second, "revoked")
	_, err = b.AccessTokens.Get(ctx(), other.Hash)
	require.NoError(t, err, "another code's token stays")
	n, err = b.AccessTokens.RevokeCode(ctx(), first.CodeHash)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing left to revoke")
}

// Concurrent RevokeCodes of one code remove its tokens once between them.
func testAccessTokenRevokeCodeConcurrent(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, name := range []string{"a", "b", "c"} {
		mustAccessToken(t, b, newAccessToken(acme, name, "replayed"))
	}
	const n = 8
	counts := make([]int, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			counts[i], errs[i] = b.AccessTokens.RevokeCode(ctx(), newAccessToken(acme, "", "replayed").CodeHash)
		})
	}
	wg.Wait()
	total := 0
	for i := range n {
		require.NoError(t, errs[i])
		total += counts[i]
	}
	assert.Equal(t, 3, total)
}

// DeleteExpired removes the tokens whose Expires is before now, and counts them.
func testAccessTokenDeleteExpired(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	early := newAccessToken(acme, "early", "c1")
	early.Expires = accessExpires().Add(-time.Minute)
	other := newAccessToken(globex, "other tenant", "c2")
	other.Expires = early.Expires
	onTime := newAccessToken(acme, "on time", "c3")
	for _, a := range []store.AccessToken{early, other, onTime} {
		mustAccessToken(t, b, a)
	}
	n, err := b.AccessTokens.DeleteExpired(ctx(), accessExpires())
	require.NoError(t, err)
	assert.Equal(t, 2, n, "both tenants' expired tokens")
	n, err = b.AccessTokens.DeleteExpired(ctx(), accessExpires())
	require.NoError(t, err)
	assert.Zero(t, n, "nothing left to remove")
	accessTokenGone(t, b, early, "removed")
	_, err = b.AccessTokens.Get(ctx(), onTime.Hash)
	require.NoError(t, err, "a token expiring at now is kept")
}

// A tenant's deletion deletes its tokens.
func testAccessTokenGoesWithTenant(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	a := newAccessToken(acme, "one", "c1")
	kept := newAccessToken(globex, "two", "c2")
	mustAccessToken(t, b, a)
	mustAccessToken(t, b, kept)
	require.NoError(t, b.Tenants.Delete(ctx(), acme))
	accessTokenGone(t, b, a, "deleted with its tenant")
	_, err := b.AccessTokens.Get(ctx(), kept.Hash)
	require.NoError(t, err, "another tenant's token stays")
}
