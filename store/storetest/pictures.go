package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func pictureTests() []test {
	return []test{
		{"PutGet", testPicturePutGet},
		{"PutInvalid", testPicturePutInvalid},
		{"PutUnknownUserOrTenant", testPicturePutUnknownUser},
		{"PutReplacesAndResetsFailures", testPicturePutReplaces},
		{"GetNotFound", testPictureGetNotFound},
		{"OtherTenantNotFound", testPictureOtherTenant},
		{"ReturnsCopies", testPictureReturnsCopies},
		{"AddFailureCounts", testPictureAddFailure},
		{"AddFailureSetsLastFailure", testPictureAddFailureLastFailure},
		{"CreateFirst", testPictureCreate},
		{"CreateConflictKeepsTheCredential", testPictureCreateConflict},
		{"CreateInvalidOrUnknownUser", testPictureCreateInvalid},
		{"AddFailureNotFound", testPictureAddFailureNotFound},
		{"ResetFailures", testPictureResetFailures},
		{"ResetFailuresNotFound", testPictureResetFailuresNotFound},
		{"AddFailurePerNetwork", testPictureAddFailurePerNetwork},
		{"AddFailureWithoutNetwork", testPictureAddFailureWithoutNetwork},
		{"NetworkFailures", testPictureNetworkFailures},
		{"NetworkFailuresNotFound", testPictureNetworkFailuresNotFound},
		{"SucceededResetsTheNetworkAndTheUser", testPictureSucceeded},
		{"SucceededNotFound", testPictureSucceededNotFound},
		{"DeleteForgetsNetworks", testPictureDeleteForgetsNetworks},
		{"SucceededRecordsAFamiliarNetwork", testPictureSucceededFamiliar},
		{"SucceededKeepsTheMostRecentlyPassed", testPictureFamiliarKeep},
		{"SucceededWithoutNetwork", testPictureSucceededWithoutNetwork},
		{"SucceededKeepUserCount", testPictureSucceededKeepUserCount},
		{"FamiliarNetworksNotFound", testPictureFamiliarNotFound},
		{"PutForgetsFamiliarNetworks", testPicturePutForgetsFamiliar},
		{"ResetAndRehashKeepFamiliarNetworks", testPictureResetKeepsFamiliar},
		{"FamiliarNetworksGoWithTheCredential", testPictureFamiliarGoes},
		{"RehashReplacesHashOnly", testPictureRehash},
		{"RehashConflict", testPictureRehashConflict},
		{"RehashNotFound", testPictureRehashNotFound},
		{"Delete", testPictureDelete},
		{"DeleteNotFound", testPictureDeleteNotFound},
		{"SurvivesUserUpdate", testPictureSurvivesUserUpdate},
		{"GoesWithUser", testPictureGoesWithUser},
		{"GoesWithTenant", testPictureGoesWithTenant},
	}
}

// failedAt is when the tests' failed attempts happen.
var failedAt = day(6, 2, 8*time.Hour)

// The source networks of the tests' failed attempts, as an authenticator names them.
const (
	netA = "192.0.2.0/24"
	netB = "198.51.100.0/24"
	netC = "2001:db8:12::/48"
)

// mustNetworkFailures returns ListNetworkFailures with times in UTC.
func mustNetworkFailures(t *testing.T, b store.Backend, tenant, userID string) []store.NetworkFailures {
	t.Helper()
	list, err := b.Pictures.ListNetworkFailures(ctx(), tenant, userID)
	require.NoError(t, err)
	for i := range list {
		list[i].LastFailure = list[i].LastFailure.UTC()
	}
	return list
}

// mustAddFailures adds n failures of the user from network at at and returns the last counts.
func mustAddFailures(t *testing.T, b store.Backend, userID, network string, n int, at time.Time) store.FailureCounts {
	t.Helper()
	var c store.FailureCounts
	for range n {
		var err error
		c, err = b.Pictures.AddFailure(ctx(), acme, userID, network, at)
		require.NoError(t, err)
	}
	return c
}

// newPicture returns a credential of user in tenant whose hash is derived from seed.
func newPicture(tenant, userID, seed string) store.PictureCredential {
	return store.PictureCredential{
		Tenant:       tenant,
		UserID:       userID,
		Scheme:       1,
		Image:        "harbour",
		ImageDigest:  bytes.Repeat([]byte{0xab}, 32),
		Points:       5,
		Tolerance:    20,
		Offsets:      []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 40},
		PepperID:     "p1",
		Salt:         bytes.Repeat([]byte(seed[:1]), 16),
		Hash:         []byte("hash of " + seed + "................")[:32],
		ArgonTime:    2,
		ArgonMemory:  19 * 1024,
		ArgonThreads: 1,
		Created:      day(6, 1, 9*time.Hour),
		Updated:      day(6, 1, 9*time.Hour),
	}
}

// normPicture makes p comparable with assert.Equal: times in UTC, empty slices nil.
func normPicture(p store.PictureCredential) store.PictureCredential {
	p.Created, p.Updated, p.LastFailure = p.Created.UTC(), p.Updated.UTC(), p.LastFailure.UTC()
	for _, b := range []*[]byte{&p.ImageDigest, &p.Salt, &p.Hash} {
		if len(*b) == 0 {
			*b = nil
		}
	}
	if len(p.Offsets) == 0 {
		p.Offsets = nil
	}
	return p
}

func mustPicture(t *testing.T, b store.Backend, p store.PictureCredential) {
	t.Helper()
	require.NoError(t, b.Pictures.Put(ctx(), p))
}

func mustGetPicture(t *testing.T, b store.Backend, tenant, userID string) *store.PictureCredential {
	t.Helper()
	p, err := b.Pictures.Get(ctx(), tenant, userID)
	require.NoError(t, err)
	return p
}

// enrolled makes tenant acme with one user and gives the user the credential of seed "a".
func enrolled(t *testing.T, b store.Backend) (store.PictureCredential, *store.User) {
	t.Helper()
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	p := newPicture(acme, u.ID, "a")
	mustPicture(t, b, p)
	return p, u
}

func testPicturePutGet(t *testing.T, b store.Backend) {
	p, u := enrolled(t, b)
	got := mustGetPicture(t, b, acme, u.ID)
	assert.Equal(t, normPicture(p), normPicture(*got))
}

func testPicturePutInvalid(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	for name, edit := range map[string]func(*store.PictureCredential){
		"no user": func(p *store.PictureCredential) { p.UserID = "" },
		"no hash": func(p *store.PictureCredential) { p.Hash = nil },
		"no salt": func(p *store.PictureCredential) { p.Salt = nil },
	} {
		p := newPicture(acme, u.ID, "a")
		edit(&p)
		require.ErrorIs(t, b.Pictures.Put(ctx(), p), store.ErrInvalid, name)
	}
	_, err := b.Pictures.Get(ctx(), acme, u.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "nothing stored")
}

func testPicturePutUnknownUser(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	require.ErrorIs(t, b.Pictures.Put(ctx(), newPicture(acme, "user_nobody", "a")), store.ErrNotFound, "unknown user")
	require.ErrorIs(t, b.Pictures.Put(ctx(), newPicture("nowhere", u.ID, "a")), store.ErrNotFound, "unknown tenant")
}

func testPicturePutReplaces(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	for range 3 {
		_, err := b.Pictures.AddFailure(ctx(), acme, u.ID, netA, failedAt)
		require.NoError(t, err)
	}
	again := newPicture(acme, u.ID, "b")
	again.Image, again.Points, again.Offsets = "garden", 4, []int{9, 9, 9, 9, 9, 9, 9, 9}
	again.Failures, again.Networks = 7, 2 // ignored: Put starts the count at 0
	mustPicture(t, b, again)
	got := mustGetPicture(t, b, acme, u.ID)
	again.Failures, again.Networks = 0, 0
	assert.Equal(t, normPicture(again), normPicture(*got))
	assert.Empty(t, mustNetworkFailures(t, b, acme, u.ID), "enrolling again forgets every network's failures")
}

func testPictureGetNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	for _, c := range []struct{ tenant, user string }{{acme, u.ID}, {acme, "user_nobody"}, {"nowhere", u.ID}} {
		_, err := b.Pictures.Get(ctx(), c.tenant, c.user)
		require.ErrorIs(t, err, store.ErrNotFound, "%s/%s", c.tenant, c.user)
	}
}

func testPictureOtherTenant(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	mustTenant(t, b, "globex")
	_, err := b.Pictures.Get(ctx(), "globex", u.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Get")
	_, err = b.Pictures.AddFailure(ctx(), "globex", u.ID, netA, failedAt)
	require.ErrorIs(t, err, store.ErrNotFound, "AddFailure")
	require.ErrorIs(t, b.Pictures.Delete(ctx(), "globex", u.ID), store.ErrNotFound, "Delete")
	require.Zero(t, mustGetPicture(t, b, acme, u.ID).Failures)
}

func testPictureReturnsCopies(t *testing.T, b store.Backend) {
	p, u := enrolled(t, b)
	got := mustGetPicture(t, b, acme, u.ID)
	got.Hash[0] ^= 0xff
	got.Salt[0] ^= 0xff
	got.Offsets[0] = 999
	got.ImageDigest[0] = 0
	assert.Equal(t, normPicture(p), normPicture(*mustGetPicture(t, b, acme, u.ID)), "Get returned a copy")
	in := newPicture(acme, u.ID, "c")
	mustPicture(t, b, in)
	want := normPicture(in)
	want.Hash, want.Offsets = slices.Clone(in.Hash), slices.Clone(in.Offsets)
	in.Hash[0] ^= 0xff
	in.Offsets[1] = 999
	assert.Equal(t, want, normPicture(*mustGetPicture(t, b, acme, u.ID)), "Put stored a copy")
}

func testPictureAddFailure(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	for want := 1; want <= 6; want++ {
		n, err := b.Pictures.AddFailure(ctx(), acme, u.ID, netA, failedAt)
		require.NoError(t, err)
		require.Equal(t, store.FailureCounts{Network: want, User: want, Networks: 1}, n)
	}
	assert.Equal(t, 6, mustGetPicture(t, b, acme, u.ID).Failures)
}

func testPictureAddFailureNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	_, err := b.Pictures.AddFailure(ctx(), acme, u.ID, netA, failedAt)
	require.ErrorIs(t, err, store.ErrNotFound, "a user without a credential")
	_, err = b.Pictures.AddFailure(ctx(), acme, "user_nobody", netA, failedAt)
	require.ErrorIs(t, err, store.ErrNotFound, "an unknown user")
}

func testPictureResetFailures(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	for range 5 {
		_, err := b.Pictures.AddFailure(ctx(), acme, u.ID, netA, failedAt)
		require.NoError(t, err)
	}
	_, err := b.Pictures.AddFailure(ctx(), acme, u.ID, netB, failedAt)
	require.NoError(t, err)
	require.NoError(t, b.Pictures.ResetFailures(ctx(), acme, u.ID))
	assert.Zero(t, mustGetPicture(t, b, acme, u.ID).Failures)
	assert.Zero(t, mustGetPicture(t, b, acme, u.ID).Networks)
	assert.Empty(t, mustNetworkFailures(t, b, acme, u.ID), "an unlock forgets every network's failures")
	assert.True(t, mustGetPicture(t, b, acme, u.ID).LastFailure.IsZero(), "an unlock clears LastFailure")
	n, err := b.Pictures.AddFailure(ctx(), acme, u.ID, netA, failedAt)
	require.NoError(t, err)
	assert.Equal(t, store.FailureCounts{Network: 1, User: 1, Networks: 1}, n, "counting starts again")
}

func testPictureResetFailuresNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	require.ErrorIs(t, b.Pictures.ResetFailures(ctx(), acme, u.ID), store.ErrNotFound)
}

func testPictureRehash(t *testing.T, b store.Backend) {
	p, u := enrolled(t, b)
	_, err := b.Pictures.AddFailure(ctx(), acme, u.ID, netA, failedAt)
	require.NoError(t, err)
	re := newPicture(acme, u.ID, "z")
	re.Scheme, re.PepperID = 2, "p2"
	re.ArgonTime, re.ArgonMemory, re.ArgonThreads = 3, 64*1024, 2
	re.Updated = day(7, 1, 0)
	// Fields Rehash must not touch:
	re.Image, re.Points, re.Offsets, re.Created, re.Failures = "other", 8, []int{1}, day(7, 2, 0), 0
	require.NoError(t, b.Pictures.Rehash(ctx(), re, p.Hash))

	want := p
	want.Scheme, want.PepperID, want.Salt, want.Hash = 2, "p2", re.Salt, re.Hash
	want.ArgonTime, want.ArgonMemory, want.ArgonThreads, want.Updated = 3, 64*1024, 2, re.Updated
	want.Failures, want.Networks, want.LastFailure = 1, 1, failedAt
	assert.Equal(t, normPicture(want), normPicture(*mustGetPicture(t, b, acme, u.ID)))
}

func testPictureRehashConflict(t *testing.T, b store.Backend) {
	p, u := enrolled(t, b)
	again := newPicture(acme, u.ID, "b") // enrolled again after p was read
	mustPicture(t, b, again)
	err := b.Pictures.Rehash(ctx(), newPicture(acme, u.ID, "z"), p.Hash)
	require.ErrorIs(t, err, store.ErrConflict)
	assert.Equal(t, normPicture(again), normPicture(*mustGetPicture(t, b, acme, u.ID)), "nothing changed")
}

func testPictureRehashNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	p := newPicture(acme, u.ID, "a")
	require.ErrorIs(t, b.Pictures.Rehash(ctx(), p, p.Hash), store.ErrNotFound)
}

func testPictureDelete(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	require.NoError(t, b.Pictures.Delete(ctx(), acme, u.ID))
	_, err := b.Pictures.Get(ctx(), acme, u.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	mustGetUser(t, b, acme, u.ID) // the user stays
}

func testPictureDeleteNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	require.ErrorIs(t, b.Pictures.Delete(ctx(), acme, u.ID), store.ErrNotFound)
}

func testPictureSurvivesUserUpdate(t *testing.T, b store.Backend) {
	p, u := enrolled(t, b)
	_, err := b.Users.Update(ctx(), acme, u.ID, func(u *store.User) error {
		u.DisplayName = "Alice L."
		u.Active = false
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, normPicture(p), normPicture(*mustGetPicture(t, b, acme, u.ID)))
}

func testPictureGoesWithUser(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	require.NoError(t, b.Users.Delete(ctx(), acme, u.ID))
	_, err := b.Pictures.Get(ctx(), acme, u.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
}

func testPictureGoesWithTenant(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	require.NoError(t, b.Tenants.Delete(ctx(), acme))
	mustTenant(t, b, acme)
	_, err := b.Pictures.Get(ctx(), acme, u.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
}

func testPictureAddFailureLastFailure(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	assert.True(t, mustGetPicture(t, b, acme, u.ID).LastFailure.IsZero(), "no failure yet")
	for i, at := range []time.Time{failedAt, failedAt.Add(90 * time.Second), failedAt.Add(time.Hour + time.Nanosecond)} {
		n, err := b.Pictures.AddFailure(ctx(), acme, u.ID, netA, at)
		require.NoError(t, err)
		require.Equal(t, i+1, n.User)
		got := mustGetPicture(t, b, acme, u.ID)
		assert.True(t, got.LastFailure.Equal(at), "LastFailure %s, want %s", got.LastFailure, at)
	}
	mustPicture(t, b, newPicture(acme, u.ID, "b"))
	assert.True(t, mustGetPicture(t, b, acme, u.ID).LastFailure.IsZero(), "enrolling again clears LastFailure")
}

func testPictureCreate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	p := newPicture(acme, u.ID, "a")
	p.Failures, p.Networks, p.LastFailure = 3, 1, failedAt // ignored: a new credential has no failures
	require.NoError(t, b.Pictures.Create(ctx(), p))
	p.Failures, p.Networks, p.LastFailure = 0, 0, time.Time{}
	assert.Equal(t, normPicture(p), normPicture(*mustGetPicture(t, b, acme, u.ID)))
}

func testPictureCreateConflict(t *testing.T, b store.Backend) {
	p, u := enrolled(t, b)
	_, err := b.Pictures.AddFailure(ctx(), acme, u.ID, netA, failedAt)
	require.NoError(t, err)
	err = b.Pictures.Create(ctx(), newPicture(acme, u.ID, "b"))
	require.ErrorIs(t, err, store.ErrConflict)
	want := p
	want.Failures, want.Networks, want.LastFailure = 1, 1, failedAt
	assert.Equal(t, normPicture(want), normPicture(*mustGetPicture(t, b, acme, u.ID)), "nothing changed")
}

func testPictureCreateInvalid(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	for name, edit := range map[string]func(*store.PictureCredential){
		"no user": func(p *store.PictureCredential) { p.UserID = "" },
		"no hash": func(p *store.PictureCredential) { p.Hash = nil },
		"no salt": func(p *store.PictureCredential) { p.Salt = nil },
	} {
		p := newPicture(acme, u.ID, "a")
		edit(&p)
		require.ErrorIs(t, b.Pictures.Create(ctx(), p), store.ErrInvalid, name)
	}
	require.ErrorIs(t, b.Pictures.Create(ctx(), newPicture(acme, "user_nobody", "a")), store.ErrNotFound, "unknown user")
	require.ErrorIs(t, b.Pictures.Create(ctx(), newPicture("nowhere", u.ID, "a")), store.ErrNotFound, "unknown tenant")
	_, err := b.Pictures.Get(ctx(), acme, u.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "nothing stored")
}

func testPictureAddFailurePerNetwork(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	assert.Equal(t, store.FailureCounts{Network: 3, User: 3, Networks: 1}, mustAddFailures(t, b, u.ID, netA, 3, failedAt))
	later := failedAt.Add(time.Minute)
	assert.Equal(t, store.FailureCounts{Network: 1, User: 4, Networks: 2}, mustAddFailures(t, b, u.ID, netC, 1, later))
	assert.Equal(t, store.FailureCounts{Network: 4, User: 5, Networks: 2}, mustAddFailures(t, b, u.ID, netA, 1, later),
		"a network counts once")
	assert.Equal(t, store.FailureCounts{Network: 2, User: 7, Networks: 3}, mustAddFailures(t, b, u.ID, netB, 2, failedAt))
	p := mustGetPicture(t, b, acme, u.ID)
	assert.Equal(t, 7, p.Failures)
	assert.Equal(t, 3, p.Networks)
	assert.True(t, p.LastFailure.Equal(failedAt), "LastFailure is the latest failure counted")
	assert.Equal(t, []store.NetworkFailures{
		{Network: netA, Failures: 4, LastFailure: later.UTC()},
		{Network: netB, Failures: 2, LastFailure: failedAt.UTC()},
		{Network: netC, Failures: 1, LastFailure: later.UTC()},
	}, mustNetworkFailures(t, b, acme, u.ID), "ordered by network")
}

func testPictureAddFailureWithoutNetwork(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	_, err := b.Pictures.AddFailure(ctx(), acme, u.ID, "", failedAt)
	require.ErrorIs(t, err, store.ErrInvalid)
	assert.Zero(t, mustGetPicture(t, b, acme, u.ID).Failures, "nothing counted")
	assert.Empty(t, mustNetworkFailures(t, b, acme, u.ID))
}

func testPictureNetworkFailures(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	got, err := b.Pictures.NetworkFailures(ctx(), acme, u.ID, netA)
	require.NoError(t, err)
	assert.Equal(t, store.NetworkFailures{Network: netA}, got, "no failures yet")
	assert.Empty(t, mustNetworkFailures(t, b, acme, u.ID))
	mustAddFailures(t, b, u.ID, netA, 2, failedAt)
	got, err = b.Pictures.NetworkFailures(ctx(), acme, u.ID, netA)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Failures)
	assert.True(t, got.LastFailure.Equal(failedAt))
	got, err = b.Pictures.NetworkFailures(ctx(), acme, u.ID, netB)
	require.NoError(t, err)
	assert.Equal(t, store.NetworkFailures{Network: netB}, got, "another network has none")
}

func testPictureNetworkFailuresNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	for _, c := range []struct{ tenant, user string }{{acme, u.ID}, {acme, "user_nobody"}, {"nowhere", u.ID}} {
		_, err := b.Pictures.NetworkFailures(ctx(), c.tenant, c.user, netA)
		require.ErrorIs(t, err, store.ErrNotFound, "NetworkFailures %s/%s", c.tenant, c.user)
		_, err = b.Pictures.ListNetworkFailures(ctx(), c.tenant, c.user)
		require.ErrorIs(t, err, store.ErrNotFound, "ListNetworkFailures %s/%s", c.tenant, c.user)
	}
}

func testPictureSucceeded(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	mustAddFailures(t, b, u.ID, netA, 5, failedAt)
	mustAddFailures(t, b, u.ID, netB, 2, failedAt)
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: netB, At: failedAt, KeepFamiliar: 8}))
	p := mustGetPicture(t, b, acme, u.ID)
	assert.Zero(t, p.Failures)
	assert.Zero(t, p.Networks)
	assert.True(t, p.LastFailure.IsZero())
	assert.Equal(t, []store.NetworkFailures{{Network: netA, Failures: 5, LastFailure: failedAt.UTC()}},
		mustNetworkFailures(t, b, acme, u.ID), "the other network keeps its count")
	later := failedAt.Add(time.Hour)
	assert.Equal(t, store.FailureCounts{Network: 6, User: 1, Networks: 1}, mustAddFailures(t, b, u.ID, netA, 1, later),
		"the other network counts towards Networks again from its next failure")
	assert.Equal(t, store.FailureCounts{Network: 1, User: 2, Networks: 2}, mustAddFailures(t, b, u.ID, netB, 1, later))
	assert.Equal(t, store.FailureCounts{Network: 7, User: 3, Networks: 2}, mustAddFailures(t, b, u.ID, netA, 1, later))
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: netC, At: later, KeepFamiliar: 8}), "a success from a network without failures")
	assert.Len(t, mustNetworkFailures(t, b, acme, u.ID), 2)
	assert.Zero(t, mustGetPicture(t, b, acme, u.ID).Networks)
}

func testPictureSucceededNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	require.ErrorIs(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: netA, At: failedAt, KeepFamiliar: 8}), store.ErrNotFound)
	require.ErrorIs(t, b.Pictures.Succeeded(ctx(), "nowhere", u.ID, store.PictureSuccess{Network: netA, At: failedAt, KeepFamiliar: 8}), store.ErrNotFound)
}

func testPictureDeleteForgetsNetworks(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	mustAddFailures(t, b, u.ID, netA, 3, failedAt)
	require.NoError(t, b.Pictures.Delete(ctx(), acme, u.ID))
	mustPicture(t, b, newPicture(acme, u.ID, "b"))
	assert.Empty(t, mustNetworkFailures(t, b, acme, u.ID))
	assert.Equal(t, store.FailureCounts{Network: 1, User: 1, Networks: 1}, mustAddFailures(t, b, u.ID, netA, 1, failedAt))
}

// mustFamiliar returns FamiliarNetworks with times in UTC.
func mustFamiliar(t *testing.T, b store.Backend, tenant, userID string) []store.FamiliarNetwork {
	t.Helper()
	list, err := b.Pictures.FamiliarNetworks(ctx(), tenant, userID)
	require.NoError(t, err)
	for i := range list {
		list[i].Passed = list[i].Passed.UTC()
	}
	return list
}

func testPictureSucceededFamiliar(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	assert.Empty(t, mustFamiliar(t, b, acme, u.ID), "none before the first success")
	t1, t2, t3 := failedAt, failedAt.Add(time.Hour), failedAt.Add(2*time.Hour)
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: netB, At: t1, KeepFamiliar: 8}))
	assert.Equal(t, []store.FamiliarNetwork{{Network: netB, Passed: t1}}, mustFamiliar(t, b, acme, u.ID))
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: netA, At: t2, KeepFamiliar: 8}))
	assert.Equal(t, []store.FamiliarNetwork{{Network: netA, Passed: t2}, {Network: netB, Passed: t1}},
		mustFamiliar(t, b, acme, u.ID), "the most recently passed first")
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: netB, At: t3, KeepFamiliar: 8}))
	assert.Equal(t, []store.FamiliarNetwork{{Network: netB, Passed: t3}, {Network: netA, Passed: t2}},
		mustFamiliar(t, b, acme, u.ID), "a network is kept once, with its latest success")
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: netC, At: t3, KeepFamiliar: 8}))
	assert.Equal(t, []store.FamiliarNetwork{{Network: netB, Passed: t3}, {Network: netC, Passed: t3}, {Network: netA, Passed: t2}},
		mustFamiliar(t, b, acme, u.ID), "equal times ordered by network")
}

func testPictureFamiliarKeep(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	network := func(i int) string { return fmt.Sprintf("10.%d.0.0/24", i) }
	for i := range 5 {
		at := failedAt.Add(time.Duration(i) * time.Minute)
		require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: network(i), At: at, KeepFamiliar: 3}))
	}
	want := []store.FamiliarNetwork{
		{Network: network(4), Passed: failedAt.Add(4 * time.Minute)},
		{Network: network(3), Passed: failedAt.Add(3 * time.Minute)},
		{Network: network(2), Passed: failedAt.Add(2 * time.Minute)},
	}
	assert.Equal(t, want, mustFamiliar(t, b, acme, u.ID), "the three most recently passed")
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: network(9), At: failedAt, KeepFamiliar: 3}), "a success older than the kept ones")
	assert.Equal(t, want, mustFamiliar(t, b, acme, u.ID), "is not among the most recently passed")
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: network(2), At: failedAt.Add(time.Hour), KeepFamiliar: 0}))
	assert.Equal(t, []store.FamiliarNetwork{{Network: network(2), Passed: failedAt.Add(time.Hour)}},
		mustFamiliar(t, b, acme, u.ID), "keep below 1 keeps only the network")
}

func testPictureSucceededWithoutNetwork(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	mustAddFailures(t, b, u.ID, netA, 2, failedAt)
	require.ErrorIs(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: "", At: failedAt, KeepFamiliar: 8}), store.ErrInvalid)
	assert.Equal(t, 2, mustGetPicture(t, b, acme, u.ID).Failures, "nothing reset")
	assert.Empty(t, mustFamiliar(t, b, acme, u.ID))
}

func testPictureFamiliarNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	for _, c := range []struct{ tenant, user string }{{acme, u.ID}, {acme, "user_nobody"}, {"nowhere", u.ID}} {
		_, err := b.Pictures.FamiliarNetworks(ctx(), c.tenant, c.user)
		require.ErrorIs(t, err, store.ErrNotFound, "FamiliarNetworks %s/%s", c.tenant, c.user)
	}
}

func testPicturePutForgetsFamiliar(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: netA, At: failedAt, KeepFamiliar: 8}))
	mustPicture(t, b, newPicture(acme, u.ID, "b"))
	assert.Empty(t, mustFamiliar(t, b, acme, u.ID), "enrolling again starts afresh")
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: netA, At: failedAt, KeepFamiliar: 8}))
	require.NoError(t, b.Pictures.Delete(ctx(), acme, u.ID))
	require.NoError(t, b.Pictures.Create(ctx(), newPicture(acme, u.ID, "c")))
	assert.Empty(t, mustFamiliar(t, b, acme, u.ID), "a credential created after a delete has none")
}

func testPictureResetKeepsFamiliar(t *testing.T, b store.Backend) {
	p, u := enrolled(t, b)
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: netA, At: failedAt, KeepFamiliar: 8}))
	mustAddFailures(t, b, u.ID, netB, 2, failedAt)
	require.NoError(t, b.Pictures.ResetFailures(ctx(), acme, u.ID))
	fresh := newPicture(acme, u.ID, "z")
	require.NoError(t, b.Pictures.Rehash(ctx(), fresh, p.Hash))
	assert.Equal(t, []store.FamiliarNetwork{{Network: netA, Passed: failedAt}}, mustFamiliar(t, b, acme, u.ID))
}

func testPictureFamiliarGoes(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{Network: netA, At: failedAt, KeepFamiliar: 8}))
	require.NoError(t, b.Users.Delete(ctx(), acme, u.ID))
	_, err := b.Pictures.FamiliarNetworks(ctx(), acme, u.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "with the user")

	mustTenant(t, b, "globex")
	v := mustUser(t, b, "globex", "victor")
	mustPicture(t, b, newPicture("globex", v.ID, "v"))
	require.NoError(t, b.Pictures.Succeeded(ctx(), "globex", v.ID, store.PictureSuccess{Network: netA, At: failedAt, KeepFamiliar: 8}))
	require.NoError(t, b.Tenants.Delete(ctx(), "globex"))
	_, err = b.Pictures.FamiliarNetworks(ctx(), "globex", v.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "with the tenant")
}

func testPictureSucceededKeepUserCount(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	mustAddFailures(t, b, u.ID, netA, 3, failedAt)
	mustAddFailures(t, b, u.ID, netB, 2, failedAt)
	later := failedAt.Add(time.Hour)
	require.NoError(t, b.Pictures.Succeeded(ctx(), acme, u.ID,
		store.PictureSuccess{Network: netB, At: later, KeepFamiliar: 8, KeepUserCount: true}))
	p := mustGetPicture(t, b, acme, u.ID)
	assert.Equal(t, 5, p.Failures, "the user's count stays")
	assert.Equal(t, 2, p.Networks)
	assert.True(t, p.LastFailure.Equal(failedAt))
	assert.Equal(t, []store.NetworkFailures{{Network: netA, Failures: 3, LastFailure: failedAt.UTC()}},
		mustNetworkFailures(t, b, acme, u.ID), "the network's count goes")
	assert.Equal(t, []store.FamiliarNetwork{{Network: netB, Passed: later}}, mustFamiliar(t, b, acme, u.ID))
	assert.Equal(t, store.FailureCounts{Network: 4, User: 6, Networks: 2}, mustAddFailures(t, b, u.ID, netA, 1, later),
		"another network is still counted")
	nf, err := b.Pictures.NetworkFailures(ctx(), acme, u.ID, netB)
	require.NoError(t, err)
	assert.Equal(t, store.NetworkFailures{Network: netB}, nf)
	assert.Equal(t, store.FailureCounts{Network: 1, User: 7, Networks: 2}, mustAddFailures(t, b, u.ID, netB, 1, later),
		"the network does not count twice towards Networks")
}
