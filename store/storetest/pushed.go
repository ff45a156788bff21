package storetest

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func pushedTests() []test {
	return []test{
		{"CreateConsume", testPushedCreateConsume},
		{"ConsumeOnce", testPushedConsumeOnce},
		{"ConsumeNotFound", testPushedConsumeNotFound},
		{"OtherClientLeavesIt", testPushedOtherClient},
		{"OtherTenantLeavesIt", testPushedOtherTenant},
		{"ConsumeExpired", testPushedConsumeExpired},
		{"CreateInvalid", testPushedCreateInvalid},
		{"CreateConflict", testPushedCreateConflict},
		{"CreateUnknownTenant", testPushedCreateUnknownTenant},
		{"DeleteExpired", testPushedDeleteExpired},
		{"GoesWithTenant", testPushedGoesWithTenant},
	}
}

// pushedExpires is when the requests of newPushed expire, and pushedNow a time before that.
func pushedExpires() time.Time { return day(5, 4, 9*time.Hour+90*time.Second) }
func pushedNow() time.Time     { return day(5, 4, 9*time.Hour+30*time.Second) }

// newPushed returns a request pushed by clientID of tenant, whose request_uri is derived from
// name, expiring at pushedExpires().
func newPushed(tenant, clientID, name string) store.PushedRequest {
	return store.PushedRequest{
		Hash:        sha256.Sum256([]byte("request_uri " + name)),
		Tenant:      tenant,
		ClientID:    clientID,
		RedirectURI: "https://shop.example.com/callback",
		State:       "af0ifjsldkj " + name,
		Nonce:       "n-0S6_WzA2Mj",
		Challenge:   "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		LoginHint:   "Ann@Example.com",
		Created:     day(5, 4, 9*time.Hour),
		Expires:     pushedExpires(),
	}
}

// normPushed compares requests whatever a backend's choice of time zone.
func normPushed(r store.PushedRequest) store.PushedRequest {
	r.Created, r.Expires = normTime(r.Created), normTime(r.Expires)
	return r
}

func mustPushed(t *testing.T, b store.Backend, r store.PushedRequest) {
	t.Helper()
	require.NoError(t, b.Pushed.Create(ctx(), r), "PushedRequests.Create(%q)", r.State)
}

// Create stores r; Consume returns it, every field kept.
func testPushedCreateConsume(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	r := newPushed(acme, "client_shop", "one")
	r.LoginHint = "ﬀ ünïcode \"quoted\""
	mustPushed(t, b, r)
	mustPushed(t, b, newPushed(acme, "client_shop", "two"))
	got, err := b.Pushed.Consume(ctx(), acme, "client_shop", r.Hash, pushedNow())
	require.NoError(t, err)
	assert.Equal(t, normPushed(r), normPushed(*got))
}

// Consume removes the request: a second Consume is ErrNotFound.
func testPushedConsumeOnce(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	r := newPushed(acme, "client_shop", "one")
	mustPushed(t, b, r)
	_, err := b.Pushed.Consume(ctx(), acme, "client_shop", r.Hash, pushedNow())
	require.NoError(t, err)
	_, err = b.Pushed.Consume(ctx(), acme, "client_shop", r.Hash, pushedNow())
	require.ErrorIs(t, err, store.ErrNotFound)
}

// Consume of a hash never stored is ErrNotFound.
func testPushedConsumeNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	_, err := b.Pushed.Consume(ctx(), acme, "client_shop", sha256.Sum256([]byte("never")), pushedNow())
	require.ErrorIs(t, err, store.ErrNotFound)
}

// Another client's Consume is ErrNotFound and leaves the request for its own client.
func testPushedOtherClient(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	r := newPushed(acme, "client_shop", "one")
	mustPushed(t, b, r)
	_, err := b.Pushed.Consume(ctx(), acme, "client_other", r.Hash, pushedNow())
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = b.Pushed.Consume(ctx(), acme, "client_shop", r.Hash, pushedNow())
	require.NoError(t, err, "still there for the client that pushed it")
}

// A Consume in another tenant is ErrNotFound and leaves the request in place.
func testPushedOtherTenant(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	r := newPushed(acme, "client_shop", "one")
	mustPushed(t, b, r)
	_, err := b.Pushed.Consume(ctx(), globex, "client_shop", r.Hash, pushedNow())
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = b.Pushed.Consume(ctx(), acme, "client_shop", r.Hash, pushedNow())
	require.NoError(t, err)
}

// Consume at or after Expires is ErrNotFound; just before, it succeeds.
func testPushedConsumeExpired(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	r := newPushed(acme, "client_shop", "one")
	mustPushed(t, b, r)
	for _, at := range []time.Time{r.Expires.Add(time.Hour), r.Expires.Add(time.Nanosecond), r.Expires} {
		_, err := b.Pushed.Consume(ctx(), acme, "client_shop", r.Hash, at)
		require.ErrorIs(t, err, store.ErrNotFound, "at %s", at)
	}
	got, err := b.Pushed.Consume(ctx(), acme, "client_shop", r.Hash, r.Expires.Add(-time.Nanosecond))
	require.NoError(t, err, "an expired Consume left it in place")
	assert.Equal(t, normPushed(r), normPushed(*got))
}

// Create: ErrInvalid without tenant, client, hash or expiry; nothing is stored.
func testPushedCreateInvalid(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for name, edit := range map[string]func(*store.PushedRequest){
		"no tenant":  func(r *store.PushedRequest) { r.Tenant = "" },
		"no client":  func(r *store.PushedRequest) { r.ClientID = "" },
		"no hash":    func(r *store.PushedRequest) { r.Hash = [32]byte{} },
		"no expires": func(r *store.PushedRequest) { r.Expires = time.Time{} },
	} {
		r := newPushed(acme, "client_shop", name)
		edit(&r)
		require.ErrorIs(t, b.Pushed.Create(ctx(), r), store.ErrInvalid, name)
		if r.Tenant != "" && r.ClientID != "" {
			_, err := b.Pushed.Consume(ctx(), acme, "client_shop", r.Hash, pushedNow())
			require.ErrorIs(t, err, store.ErrNotFound, "%s: nothing stored", name)
		}
	}
}

// Create of a hash already stored is ErrConflict, and the first request stays.
func testPushedCreateConflict(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	r := newPushed(acme, "client_shop", "one")
	mustPushed(t, b, r)
	again := newPushed(acme, "client_shop", "one")
	again.State = "another"
	require.ErrorIs(t, b.Pushed.Create(ctx(), again), store.ErrConflict)
	got, err := b.Pushed.Consume(ctx(), acme, "client_shop", r.Hash, pushedNow())
	require.NoError(t, err)
	assert.Equal(t, r.State, got.State)
}

// Create in a tenant that does not exist is ErrNotFound.
func testPushedCreateUnknownTenant(t *testing.T, b store.Backend) {
	require.ErrorIs(t, b.Pushed.Create(ctx(), newPushed("nowhere", "client_shop", "one")), store.ErrNotFound)
}

// DeleteExpired removes the requests whose Expires is before now, and counts them.
func testPushedDeleteExpired(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	early := newPushed(acme, "client_shop", "early")
	early.Expires = pushedExpires().Add(-time.Minute)
	other := newPushed(globex, "client_shop", "other tenant")
	other.Expires = early.Expires
	onTime := newPushed(acme, "client_shop", "on time") // expires at pushedExpires()
	for _, r := range []store.PushedRequest{early, other, onTime} {
		mustPushed(t, b, r)
	}
	n, err := b.Pushed.DeleteExpired(ctx(), pushedExpires())
	require.NoError(t, err)
	assert.Equal(t, 2, n, "both tenants' expired requests")
	n, err = b.Pushed.DeleteExpired(ctx(), pushedExpires())
	require.NoError(t, err)
	assert.Zero(t, n, "nothing left to remove")
	_, err = b.Pushed.Consume(ctx(), acme, "client_shop", early.Hash, early.Expires.Add(-time.Second))
	require.ErrorIs(t, err, store.ErrNotFound, "removed")
	_, err = b.Pushed.Consume(ctx(), acme, "client_shop", onTime.Hash, pushedExpires().Add(-time.Second))
	require.NoError(t, err, "a request expiring at now is kept")
}

// A tenant's deletion leaves none of its requests to consume.
func testPushedGoesWithTenant(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	r := newPushed(acme, "client_shop", "one")
	mustPushed(t, b, r)
	require.NoError(t, b.Tenants.Delete(ctx(), acme))
	mustTenant(t, b, acme)
	_, err := b.Pushed.Consume(ctx(), acme, "client_shop", r.Hash, pushedNow())
	require.ErrorIs(t, err, store.ErrNotFound)
}
