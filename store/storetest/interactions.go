package storetest

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func interactionTests() []test {
	return []test{
		{"CreateGet", testInteractionCreateGet},
		{"CreateInvalid", testInteractionCreateInvalid},
		{"CreateIDConflict", testInteractionCreateIDConflict},
		{"IDsUniqueOverTenants", testInteractionIDsUniqueOverTenants},
		{"GetNotFound", testInteractionGetNotFound},
		{"GetPastExpires", testInteractionGetPastExpires},
		{"ReturnsCopies", testInteractionReturnsCopies},
		{"UpdateStoresWhatFnLeaves", testInteractionUpdateStores},
		{"UpdateFnErrorStoresNothing", testInteractionUpdateFnError},
		{"UpdateFnGetsCopy", testInteractionUpdateFnGetsCopy},
		{"UpdateNotFound", testInteractionUpdateNotFound},
		{"UpdateChangedID", testInteractionUpdateChangedID},
		{"TakeRemoves", testInteractionTakeRemoves},
		{"TakeNotFound", testInteractionTakeNotFound},
		{"DeleteExpired", testInteractionDeleteExpired},
		{"ReplaceFactorKept", testInteractionReplaceFactor},
	}
}

// interactionID returns an id shaped like the provider's (256 bits, base64url) derived from
// name.
func interactionID(name string) string {
	h := sha256.Sum256([]byte(name))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// interactionExpires is when the interactions of newInteraction expire.
func interactionExpires() time.Time { return day(5, 3, 9*time.Hour+10*time.Minute) }

// newInteraction returns an interaction of tenant named by name, expiring at
// interactionExpires().
func newInteraction(tenant, name string) store.Interaction {
	return store.Interaction{
		ID:          interactionID(name),
		Purpose:     store.PurposeLogin,
		Tenant:      tenant,
		ClientID:    "client_shop",
		RedirectURI: "https://shop.example.com/callback",
		State:       "af0ifjsldkj",
		Nonce:       "n-0S6_WzA2Mj",
		Challenge:   "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		LoginHint:   "Ann@Example.com",
		Subject:     "user_" + name,
		Created:     day(5, 3, 9*time.Hour),
		Expires:     interactionExpires(),
		AuthState:   []byte(`{"challenge":"` + name + `"}`),
	}
}

// normInteraction compares interactions whatever a backend's choice of time zone and
// empty-slice form. Its result shares no memory with i.
func normInteraction(i store.Interaction) store.Interaction {
	i.AuthState = nilIfEmpty(slices.Clone(i.AuthState))
	i.Created = normTime(i.Created)
	i.Expires = normTime(i.Expires)
	return i
}

func mustInteraction(t *testing.T, b store.Backend, i store.Interaction) {
	t.Helper()
	require.NoError(t, b.Interactions.Create(ctx(), i), "Interactions.Create(%q)", i.Subject)
}

func mustGetInteraction(t *testing.T, b store.Backend, id string) *store.Interaction {
	t.Helper()
	i, err := b.Interactions.Get(ctx(), id)
	require.NoError(t, err, "Interactions.Get")
	require.NotNil(t, i)
	return i
}

// Create stores i; Get returns it, every field kept.
func testInteractionCreateGet(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newInteraction(acme, "one")
	in.Created = time.Date(2024, 5, 3, 11, 0, 0, 0, time.FixedZone("UTC+2", 2*3600))
	in.AuthState = []byte{0, 1, 2, 0xff, '"'}
	bare := store.Interaction{ID: interactionID("bare"), Tenant: acme, Expires: interactionExpires()}
	enroll := newInteraction(acme, "enroll")
	enroll.Purpose, enroll.ClientID, enroll.RedirectURI, enroll.Nonce, enroll.Challenge = store.PurposeEnroll, "", "", "", ""
	enroll.ReplaceFactor = true
	mustInteraction(t, b, in)
	mustInteraction(t, b, bare)
	mustInteraction(t, b, enroll)
	assert.Equal(t, normInteraction(in), normInteraction(*mustGetInteraction(t, b, in.ID)))
	assert.Equal(t, normInteraction(enroll), normInteraction(*mustGetInteraction(t, b, enroll.ID)), "an enrollment")
	assert.Equal(t, normInteraction(bare), normInteraction(*mustGetInteraction(t, b, bare.ID)), "only the required fields")
}

// Create: ErrInvalid if i.ID is empty or i.Expires is zero; nothing is stored.
func testInteractionCreateInvalid(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	noID := newInteraction(acme, "no id")
	noID.ID = ""
	require.ErrorIs(t, b.Interactions.Create(ctx(), noID), store.ErrInvalid, "empty id")
	_, err := b.Interactions.Get(ctx(), "")
	require.ErrorIs(t, err, store.ErrNotFound, "the interaction without id was stored")
	noExpiry := newInteraction(acme, "no expiry")
	noExpiry.Expires = time.Time{}
	require.ErrorIs(t, b.Interactions.Create(ctx(), noExpiry), store.ErrInvalid, "zero Expires")
	_, err = b.Interactions.Get(ctx(), noExpiry.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "the interaction without expiry was stored")
	n, err := b.Interactions.DeleteExpired(ctx(), day(12, 31, 0))
	require.NoError(t, err)
	assert.Zero(t, n)
}

// Create: ErrConflict if the id is taken; the first interaction is kept.
func testInteractionCreateIDConflict(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	first := newInteraction(acme, "one")
	mustInteraction(t, b, first)
	second := newInteraction(acme, "two")
	second.ID = first.ID
	require.ErrorIs(t, b.Interactions.Create(ctx(), second), store.ErrConflict)
	assert.Equal(t, normInteraction(first), normInteraction(*mustGetInteraction(t, b, first.ID)))
}

// Ids are unique over all tenants: an id taken in one tenant is a conflict in another.
func testInteractionIDsUniqueOverTenants(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	first := newInteraction(acme, "one")
	mustInteraction(t, b, first)
	other := newInteraction(globex, "one")
	require.ErrorIs(t, b.Interactions.Create(ctx(), other), store.ErrConflict)
	got := mustGetInteraction(t, b, first.ID)
	assert.Equal(t, acme, got.Tenant)
	assert.Equal(t, normInteraction(first), normInteraction(*got))
}

// Get: ErrNotFound if there is none: never created, finished (taken), or removed by
// DeleteExpired.
func testInteractionGetNotFound(t *testing.T, b store.Backend) {
	_, err := b.Interactions.Get(ctx(), interactionID("missing"))
	require.ErrorIs(t, err, store.ErrNotFound, "empty store")
	mustTenant(t, b, acme)
	taken := newInteraction(acme, "taken")
	expired := newInteraction(acme, "expired")
	kept := newInteraction(acme, "kept")
	expired.Expires = kept.Expires.Add(-time.Minute)
	for _, i := range []store.Interaction{taken, expired, kept} {
		mustInteraction(t, b, i)
	}
	for _, id := range []string{interactionID("missing"), "", strings.ToUpper(kept.ID), kept.ID[1:]} {
		_, err = b.Interactions.Get(ctx(), id)
		require.ErrorIs(t, err, store.ErrNotFound, "Get(%q)", id)
	}
	_, err = b.Interactions.Take(ctx(), taken.ID)
	require.NoError(t, err)
	_, err = b.Interactions.Get(ctx(), taken.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "a taken interaction")
	n, err := b.Interactions.DeleteExpired(ctx(), kept.Expires)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = b.Interactions.Get(ctx(), expired.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "an interaction removed by DeleteExpired")
	assert.Equal(t, normInteraction(kept), normInteraction(*mustGetInteraction(t, b, kept.ID)))
}

// Get: an interaction past Expires may still be returned (the caller compares Expires with its
// clock): Get returns it as stored or reports ErrNotFound, nothing else.
func testInteractionGetPastExpires(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	past := newInteraction(acme, "past")
	past.Created = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	past.Expires = past.Created.Add(10 * time.Minute)
	mustInteraction(t, b, past)
	got, err := b.Interactions.Get(ctx(), past.ID)
	if err != nil {
		require.ErrorIs(t, err, store.ErrNotFound)
		return
	}
	require.NotNil(t, got)
	assert.Equal(t, normInteraction(past), normInteraction(*got))
}

// The store keeps its own copy of an interaction: changing the AuthState passed to Create, or
// of what Get or Update returned, changes nothing stored.
func testInteractionReturnsCopies(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	want := newInteraction(acme, "one")
	in := newInteraction(acme, "one")
	mustInteraction(t, b, in)
	in.AuthState[0] = 'X'
	assert.Equal(t, normInteraction(want), normInteraction(*mustGetInteraction(t, b, want.ID)), "after changing Create's argument")
	mutate := func(i *store.Interaction) {
		require.NotEmpty(t, i.AuthState)
		i.AuthState[0] = 'X'
		i.AuthState = append(i.AuthState[:1], "appended"...)
		i.State = "changed"
	}
	mutate(mustGetInteraction(t, b, want.ID))
	assert.Equal(t, normInteraction(want), normInteraction(*mustGetInteraction(t, b, want.ID)), "after changing Get's result")
	updated, err := b.Interactions.Update(ctx(), want.ID, func(*store.Interaction) error { return nil })
	require.NoError(t, err)
	require.NotNil(t, updated)
	mutate(updated)
	assert.Equal(t, normInteraction(want), normInteraction(*mustGetInteraction(t, b, want.ID)), "after changing Update's result")
}

// Update reads the interaction, calls fn with it, stores what fn leaves and returns the
// interaction as stored.
func testInteractionUpdateStores(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	other := newInteraction(acme, "other")
	mustInteraction(t, b, other)
	in := newInteraction(acme, "one")
	mustInteraction(t, b, in)
	var seen store.Interaction
	got, err := b.Interactions.Update(ctx(), in.ID, func(i *store.Interaction) error {
		seen = *i
		seen.AuthState = append([]byte(nil), i.AuthState...)
		i.AuthState = []byte(`{"challenge":"next","attempts":1}`)
		i.Subject = "user_ann"
		i.Expires = i.Expires.Add(5 * time.Minute)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, normInteraction(in), normInteraction(seen), "fn is called with the stored interaction")
	want := in
	want.AuthState = []byte(`{"challenge":"next","attempts":1}`)
	want.Subject = "user_ann"
	want.Expires = in.Expires.Add(5 * time.Minute)
	require.NotNil(t, got)
	assert.Equal(t, normInteraction(want), normInteraction(*got), "Update's result")
	assert.Equal(t, normInteraction(want), normInteraction(*mustGetInteraction(t, b, in.ID)), "Get after Update")
	assert.Equal(t, normInteraction(other), normInteraction(*mustGetInteraction(t, b, other.ID)), "the other interaction")
}

// Update: if fn returns an error nothing is stored and Update returns it as it is.
func testInteractionUpdateFnError(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newInteraction(acme, "one")
	mustInteraction(t, b, in)
	errStop := errors.New("stop")
	_, err := b.Interactions.Update(ctx(), in.ID, func(i *store.Interaction) error {
		i.AuthState = []byte("changed")
		i.Subject = "user_changed"
		return errStop
	})
	require.True(t, err == errStop, "Update returned %v (%T), want fn's error itself", err, err)
	assert.Equal(t, normInteraction(in), normInteraction(*mustGetInteraction(t, b, in.ID)))
}

// Update calls fn with a copy: changing AuthState in place and then failing leaves the stored
// interaction unchanged; fn's interaction is not the stored value after a successful Update.
func testInteractionUpdateFnGetsCopy(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newInteraction(acme, "one")
	mustInteraction(t, b, in)
	want := normInteraction(in)
	errStop := errors.New("stop")
	_, err := b.Interactions.Update(ctx(), in.ID, func(i *store.Interaction) error {
		i.AuthState[0] = 'X'
		return errStop
	})
	require.True(t, err == errStop, "Update returned %v, want fn's error", err)
	assert.Equal(t, want, normInteraction(*mustGetInteraction(t, b, in.ID)), "after a failed fn")

	var kept *store.Interaction
	_, err = b.Interactions.Update(ctx(), in.ID, func(i *store.Interaction) error {
		kept = i
		i.State = "x"
		return nil
	})
	require.NoError(t, err)
	want.State = "x"
	kept.AuthState[0] = 'X'
	kept.Subject = "changed"
	assert.Equal(t, want, normInteraction(*mustGetInteraction(t, b, in.ID)), "after changing fn's interaction")
}

// Update: ErrNotFound if there is no such interaction (never created, taken, or removed by
// DeleteExpired); fn is not called and nothing is created.
func testInteractionUpdateNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	called := false
	fn := func(i *store.Interaction) error { called = true; i.State = "x"; return nil }
	_, err := b.Interactions.Update(ctx(), interactionID("missing"), fn)
	require.ErrorIs(t, err, store.ErrNotFound, "never created")
	taken := newInteraction(acme, "taken")
	mustInteraction(t, b, taken)
	_, err = b.Interactions.Take(ctx(), taken.ID)
	require.NoError(t, err)
	_, err = b.Interactions.Update(ctx(), taken.ID, fn)
	require.ErrorIs(t, err, store.ErrNotFound, "taken")
	expired := newInteraction(acme, "expired")
	mustInteraction(t, b, expired)
	_, err = b.Interactions.DeleteExpired(ctx(), expired.Expires.Add(time.Second))
	require.NoError(t, err)
	_, err = b.Interactions.Update(ctx(), expired.ID, fn)
	require.ErrorIs(t, err, store.ErrNotFound, "removed by DeleteExpired")
	assert.False(t, called, "fn was called")
	for _, id := range []string{interactionID("missing"), taken.ID, expired.ID} {
		_, err = b.Interactions.Get(ctx(), id)
		require.ErrorIs(t, err, store.ErrNotFound, "Update created an interaction")
	}
}

// Update: ErrInvalid if fn changed the id; nothing is stored.
func testInteractionUpdateChangedID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newInteraction(acme, "one")
	mustInteraction(t, b, in)
	for _, id := range []string{interactionID("other"), "", strings.ToUpper(in.ID)} {
		_, err := b.Interactions.Update(ctx(), in.ID, func(i *store.Interaction) error {
			i.ID = id
			i.State = "changed"
			return nil
		})
		require.ErrorIs(t, err, store.ErrInvalid, "id changed to %q", id)
		if id != "" {
			_, err = b.Interactions.Get(ctx(), id)
			require.ErrorIs(t, err, store.ErrNotFound, "an interaction under the new id %q", id)
		}
	}
	assert.Equal(t, normInteraction(in), normInteraction(*mustGetInteraction(t, b, in.ID)))
}

// Take removes the interaction and returns it: Get, Update and a second Take then report
// ErrNotFound; other interactions stay.
func testInteractionTakeRemoves(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newInteraction(acme, "one")
	other := newInteraction(acme, "other")
	mustInteraction(t, b, in)
	mustInteraction(t, b, other)
	_, err := b.Interactions.Update(ctx(), in.ID, func(i *store.Interaction) error {
		i.Subject = "user_ann"
		return nil
	})
	require.NoError(t, err)
	in.Subject = "user_ann"
	got, err := b.Interactions.Take(ctx(), in.ID)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, normInteraction(in), normInteraction(*got), "Take returns the interaction as stored")
	_, err = b.Interactions.Get(ctx(), in.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Get after Take")
	_, err = b.Interactions.Update(ctx(), in.ID, func(*store.Interaction) error { return nil })
	require.ErrorIs(t, err, store.ErrNotFound, "Update after Take")
	_, err = b.Interactions.Take(ctx(), in.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "a second Take")
	assert.Equal(t, normInteraction(other), normInteraction(*mustGetInteraction(t, b, other.ID)), "the other interaction")
	n, err := b.Interactions.DeleteExpired(ctx(), in.Expires.Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "DeleteExpired counts only the interaction left")
}

// Take: ErrNotFound if there is no such interaction.
func testInteractionTakeNotFound(t *testing.T, b store.Backend) {
	_, err := b.Interactions.Take(ctx(), interactionID("missing"))
	require.ErrorIs(t, err, store.ErrNotFound, "empty store")
	mustTenant(t, b, acme)
	in := newInteraction(acme, "one")
	mustInteraction(t, b, in)
	for _, id := range []string{interactionID("missing"), "", strings.ToUpper(in.ID)} {
		_, err = b.Interactions.Take(ctx(), id)
		require.ErrorIs(t, err, store.ErrNotFound, "Take(%q)", id)
	}
	assert.Equal(t, normInteraction(in), normInteraction(*mustGetInteraction(t, b, in.ID)))
}

// DeleteExpired removes every interaction whose Expires is before now and returns how many it
// removed: one expiring at now stays, and so do later ones.
func testInteractionDeleteExpired(t *testing.T, b store.Backend) {
	now := interactionExpires()
	n, err := b.Interactions.DeleteExpired(ctx(), now)
	require.NoError(t, err)
	assert.Zero(t, n, "an empty store")

	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	expiring := func(tenant, name string, expires time.Time) store.Interaction {
		i := newInteraction(tenant, name)
		i.Expires = expires
		mustInteraction(t, b, i)
		return i
	}
	old := expiring(acme, "old", now.Add(-time.Hour))
	oldOther := expiring(globex, "old other tenant", now.Add(-time.Nanosecond))
	atNow := expiring(acme, "at now", now.In(time.FixedZone("UTC+9", 9*3600)))
	later := expiring(globex, "later", now.Add(time.Second))

	n, err = b.Interactions.DeleteExpired(ctx(), now)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "removed")
	for _, i := range []store.Interaction{old, oldOther} {
		_, err = b.Interactions.Get(ctx(), i.ID)
		require.ErrorIs(t, err, store.ErrNotFound, "expired %v", i.Expires)
	}
	for _, i := range []store.Interaction{atNow, later} {
		assert.Equal(t, normInteraction(i), normInteraction(*mustGetInteraction(t, b, i.ID)), "expiring %v", i.Expires)
	}
	n, err = b.Interactions.DeleteExpired(ctx(), now)
	require.NoError(t, err)
	assert.Zero(t, n, "a second DeleteExpired at the same time")
	n, err = b.Interactions.DeleteExpired(ctx(), now.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, 2, n, "an hour later")
}

// ReplaceFactor is kept by Create, Update and Take like every other field.
func testInteractionReplaceFactor(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newInteraction(acme, "replace")
	in.Purpose, in.ReplaceFactor = store.PurposeEnrollLink, true
	mustInteraction(t, b, in)
	assert.True(t, mustGetInteraction(t, b, in.ID).ReplaceFactor, "Create and Get")
	got, err := b.Interactions.Update(ctx(), in.ID, func(i *store.Interaction) error {
		assert.True(t, i.ReplaceFactor, "fn sees it")
		i.AuthState = []byte("x")
		return nil
	})
	require.NoError(t, err)
	assert.True(t, got.ReplaceFactor, "an Update that does not touch it keeps it")
	got, err = b.Interactions.Update(ctx(), in.ID, func(i *store.Interaction) error {
		i.ReplaceFactor = false
		return nil
	})
	require.NoError(t, err)
	assert.False(t, got.ReplaceFactor, "Update stores what fn leaves")
	assert.False(t, mustGetInteraction(t, b, in.ID).ReplaceFactor)
	other := newInteraction(acme, "replace too")
	other.ReplaceFactor = true
	mustInteraction(t, b, other)
	taken, err := b.Interactions.Take(ctx(), other.ID)
	require.NoError(t, err)
	assert.True(t, taken.ReplaceFactor, "Take returns it")
}
