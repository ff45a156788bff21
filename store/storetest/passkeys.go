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

func passkeyTests() []test {
	return []test{
		{"CreateGet", testPasskeyCreateGet},
		{"ListInCreationOrder", testPasskeyListOrder},
		{"ListEmpty", testPasskeyListEmpty},
		{"ListNotFound", testPasskeyListNotFound},
		{"GetAnyUserOfTheTenant", testPasskeyGetAnyUser},
		{"GetNotFound", testPasskeyGetNotFound},
		{"SameIDInTwoTenants", testPasskeySameIDTwoTenants},
		{"CreateDuplicateID", testPasskeyCreateDuplicate},
		{"CreateMaxPerUser", testPasskeyCreateMax},
		{"CreateInvalid", testPasskeyCreateInvalid},
		{"CreateLongestID", testPasskeyCreateLongestID},
		{"CreateUnknownUserOrTenant", testPasskeyCreateUnknown},
		{"ReturnsCopies", testPasskeyReturnsCopies},
		{"Use", testPasskeyUse},
		{"UseTwice", testPasskeyUseTwice},
		{"UseConflictChangesNothing", testPasskeyUseConflict},
		{"UseNotFound", testPasskeyUseNotFound},
		{"Delete", testPasskeyDelete},
		{"DeleteNotFound", testPasskeyDeleteNotFound},
		{"SurvivesUserUpdate", testPasskeySurvivesUserUpdate},
		{"GoesWithUser", testPasskeyGoesWithUser},
		{"GoesWithTenant", testPasskeyGoesWithTenant},
		{"KeysNotTextAreNotFound", testPasskeyKeysNotText},
	}
}

// passkeyCreated is when the tests' passkeys are created: a time with nanoseconds, which every
// backend keeps.
var passkeyCreated = day(9, 1, 10*time.Hour+123456789*time.Nanosecond)

// newPasskey returns a passkey of user in tenant whose credential ID and public key are derived
// from seed, with every field set.
func newPasskey(tenant, userID, seed string) store.Passkey {
	return store.Passkey{
		Tenant:          tenant,
		UserID:          userID,
		ID:              []byte("cred-" + seed),
		Name:            "Passkey " + seed,
		PublicKey:       append([]byte{0xa5, 0x01, 0x02, 0x03, 0x26}, []byte("public key of "+seed)...),
		AttestationType: "none",
		AAGUID:          bytes.Repeat([]byte{0xad}, 16),
		Transports:      []string{"internal", "hybrid"},
		SignCount:       7,
		BackupEligible:  true,
		BackupState:     false,
		Created:         passkeyCreated,
	}
}

// normPasskey makes p comparable with assert.Equal: times in UTC, empty slices nil.
func normPasskey(p store.Passkey) store.Passkey {
	p.Created, p.LastUsed = normTime(p.Created), normTime(p.LastUsed)
	for _, b := range []*[]byte{&p.ID, &p.PublicKey, &p.AAGUID} {
		if len(*b) == 0 {
			*b = nil
		}
	}
	p.Transports = nilIfEmpty(p.Transports)
	return p
}

func normPasskeys(ps []store.Passkey) []store.Passkey {
	out := []store.Passkey{}
	for _, p := range ps {
		out = append(out, normPasskey(p))
	}
	return out
}

func mustPasskey(t *testing.T, b store.Backend, p store.Passkey) {
	t.Helper()
	require.NoError(t, b.Passkeys.Create(ctx(), p), "Passkeys.Create(%s, %s, %q)", p.Tenant, p.UserID, p.ID)
}

func mustGetPasskey(t *testing.T, b store.Backend, tenant string, id []byte) *store.Passkey {
	t.Helper()
	p, err := b.Passkeys.Get(ctx(), tenant, id)
	require.NoError(t, err, "Passkeys.Get(%s, %q)", tenant, id)
	require.NotNil(t, p)
	return p
}

func mustListPasskeys(t *testing.T, b store.Backend, tenant, userID string) []store.Passkey {
	t.Helper()
	ps, err := b.Passkeys.List(ctx(), tenant, userID)
	require.NoError(t, err, "Passkeys.List(%s, %s)", tenant, userID)
	return normPasskeys(ps)
}

// passkeyIDs returns the credential IDs of ps, as strings.
func passkeyIDs(ps []store.Passkey) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, string(p.ID))
	}
	return out
}

// withPasskey makes tenant acme with user alice and gives her the passkey of seed "a".
func withPasskey(t *testing.T, b store.Backend) (store.Passkey, *store.User) {
	t.Helper()
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	p := newPasskey(acme, u.ID, "a")
	mustPasskey(t, b, p)
	return p, u
}

// Create stores every field; Get and List return them.
func testPasskeyCreateGet(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	p := newPasskey(acme, u.ID, "a")
	p.Transports = []string{"usb", "nfc", "ble", "smart-card", "hybrid", "internal"}
	p.SignCount = 1<<32 - 2
	p.BackupEligible, p.BackupState = true, true
	p.AttestationType = "packed"
	p.AAGUID = []byte{0xea, 0x9b, 0x8d, 0x66, 0x4d, 0x01, 0x1d, 0x21, 0x3c, 0xe4, 0xb6, 0xb4, 0x8c, 0xb5, 0x75, 0xd4}
	p.LastUsed = passkeyCreated.Add(time.Minute + time.Nanosecond)
	p.ID = []byte{0x00, 0xff, 0x10, 0x80, 0x00} // bytes, not text
	mustPasskey(t, b, p)
	assert.Equal(t, normPasskey(p), normPasskey(*mustGetPasskey(t, b, acme, p.ID)), "Get")
	assert.Equal(t, []store.Passkey{normPasskey(p)}, mustListPasskeys(t, b, acme, u.ID), "List")

	bare := store.Passkey{Tenant: acme, UserID: u.ID, ID: []byte("bare"), PublicKey: []byte{1}, Created: passkeyCreated}
	mustPasskey(t, b, bare)
	got := mustGetPasskey(t, b, acme, bare.ID)
	assert.Equal(t, normPasskey(bare), normPasskey(*got), "a passkey with only the required fields")
	assert.True(t, got.LastUsed.IsZero(), "LastUsed is zero until first used")
}

// List: the user's passkeys in the order they were created, none of another user's.
func testPasskeyListOrder(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	alice := mustUser(t, b, acme, "alice")
	bob := mustUser(t, b, acme, "bob")
	// Seeds out of byte order, so that an order by credential ID fails.
	for i, seed := range []string{"m", "c", "x", "a", "q"} {
		for _, u := range []*store.User{alice, bob} {
			p := newPasskey(acme, u.ID, u.UserName+"-"+seed)
			p.Created = passkeyCreated.Add(time.Duration(i) * time.Second)
			mustPasskey(t, b, p)
		}
	}
	assert.Equal(t, []string{"cred-alice-m", "cred-alice-c", "cred-alice-x", "cred-alice-a", "cred-alice-q"},
		passkeyIDs(mustListPasskeys(t, b, acme, alice.ID)))
	assert.Equal(t, []string{"cred-bob-m", "cred-bob-c", "cred-bob-x", "cred-bob-a", "cred-bob-q"},
		passkeyIDs(mustListPasskeys(t, b, acme, bob.ID)))
	require.NoError(t, b.Passkeys.Delete(ctx(), acme, alice.ID, []byte("cred-alice-c")))
	p := newPasskey(acme, alice.ID, "alice-b")
	p.Created = passkeyCreated.Add(time.Minute)
	mustPasskey(t, b, p)
	assert.Equal(t, []string{"cred-alice-m", "cred-alice-x", "cred-alice-a", "cred-alice-q", "cred-alice-b"},
		passkeyIDs(mustListPasskeys(t, b, acme, alice.ID)), "a deleted passkey leaves the list, a new one goes last")
}

// List: an empty list, not an error, for a user without passkeys.
func testPasskeyListEmpty(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	ps, err := b.Passkeys.List(ctx(), acme, u.ID)
	require.NoError(t, err)
	assert.Empty(t, ps)
}

// List: ErrNotFound if the user does not exist (nor its tenant).
func testPasskeyListNotFound(t *testing.T, b store.Backend) {
	_, u := withPasskey(t, b)
	mustTenant(t, b, globex)
	for _, c := range []struct{ tenant, user string }{{acme, "user_nobody"}, {"nowhere", u.ID}, {globex, u.ID}} {
		_, err := b.Passkeys.List(ctx(), c.tenant, c.user)
		require.ErrorIs(t, err, store.ErrNotFound, "%s/%s", c.tenant, c.user)
	}
}

// Get: the tenant's passkey, whichever user holds it.
func testPasskeyGetAnyUser(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	alice := mustUser(t, b, acme, "alice")
	bob := mustUser(t, b, acme, "bob")
	pa, pb := newPasskey(acme, alice.ID, "a"), newPasskey(acme, bob.ID, "b")
	mustPasskey(t, b, pa)
	mustPasskey(t, b, pb)
	got := mustGetPasskey(t, b, acme, pb.ID)
	assert.Equal(t, bob.ID, got.UserID)
	assert.Equal(t, normPasskey(pb), normPasskey(*got))
	assert.Equal(t, alice.ID, mustGetPasskey(t, b, acme, pa.ID).UserID)
}

// Get: ErrNotFound if the tenant has no passkey of that ID.
func testPasskeyGetNotFound(t *testing.T, b store.Backend) {
	p, _ := withPasskey(t, b)
	mustTenant(t, b, globex)
	for _, c := range []struct {
		tenant string
		id     []byte
	}{{acme, []byte("cred-b")}, {acme, nil}, {acme, p.ID[:len(p.ID)-1]}, {globex, p.ID}, {"nowhere", p.ID}} {
		_, err := b.Passkeys.Get(ctx(), c.tenant, c.id)
		require.ErrorIs(t, err, store.ErrNotFound, "%s/%q", c.tenant, c.id)
	}
}

// A credential ID is unique in its tenant only: two tenants may each have one.
func testPasskeySameIDTwoTenants(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	ua, ug := mustUser(t, b, acme, "alice"), mustUser(t, b, globex, "alice")
	pa, pg := newPasskey(acme, ua.ID, "same"), newPasskey(globex, ug.ID, "same")
	pg.Name, pg.PublicKey = "Globex's", []byte("another key")
	mustPasskey(t, b, pa)
	mustPasskey(t, b, pg)
	assert.Equal(t, normPasskey(pa), normPasskey(*mustGetPasskey(t, b, acme, pa.ID)))
	assert.Equal(t, normPasskey(pg), normPasskey(*mustGetPasskey(t, b, globex, pg.ID)))
	require.NoError(t, b.Passkeys.Delete(ctx(), acme, ua.ID, pa.ID))
	assert.Equal(t, normPasskey(pg), normPasskey(*mustGetPasskey(t, b, globex, pg.ID)), "the other tenant's stays")
}

// Create: ErrConflict if the tenant has a passkey with the ID, whatever its user; nothing changes.
func testPasskeyCreateDuplicate(t *testing.T, b store.Backend) {
	p, alice := withPasskey(t, b)
	bob := mustUser(t, b, acme, "bob")
	same := newPasskey(acme, alice.ID, "a")
	same.Name, same.PublicKey = "again", []byte("other key")
	require.ErrorIs(t, b.Passkeys.Create(ctx(), same), store.ErrConflict, "the same user")
	other := same
	other.UserID = bob.ID
	require.ErrorIs(t, b.Passkeys.Create(ctx(), other), store.ErrConflict, "another user")
	assert.Equal(t, normPasskey(p), normPasskey(*mustGetPasskey(t, b, acme, p.ID)), "nothing changed")
	assert.Equal(t, []store.Passkey{normPasskey(p)}, mustListPasskeys(t, b, acme, alice.ID))
	assert.Empty(t, mustListPasskeys(t, b, acme, bob.ID))
}

// Create: ErrConflict if the user holds MaxPasskeysPerUser; another user may still create, and
// the user may again after a Delete.
func testPasskeyCreateMax(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	alice := mustUser(t, b, acme, "alice")
	bob := mustUser(t, b, acme, "bob")
	for i := range store.MaxPasskeysPerUser {
		mustPasskey(t, b, newPasskey(acme, alice.ID, fmt.Sprint(i)))
	}
	extra := newPasskey(acme, alice.ID, "extra")
	require.ErrorIs(t, b.Passkeys.Create(ctx(), extra), store.ErrConflict, "passkey %d", store.MaxPasskeysPerUser+1)
	_, err := b.Passkeys.Get(ctx(), acme, extra.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "nothing stored")
	require.Len(t, mustListPasskeys(t, b, acme, alice.ID), store.MaxPasskeysPerUser)

	mustPasskey(t, b, newPasskey(acme, bob.ID, "bob")) // the limit is per user
	require.NoError(t, b.Passkeys.Delete(ctx(), acme, alice.ID, []byte("cred-3")))
	mustPasskey(t, b, extra)
	require.Len(t, mustListPasskeys(t, b, acme, alice.ID), store.MaxPasskeysPerUser)
}

// Create: ErrInvalid if UserID, ID or PublicKey is empty or the ID is above 1023 bytes; nothing
// is stored.
func testPasskeyCreateInvalid(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	for name, edit := range map[string]func(*store.Passkey){
		"no user":          func(p *store.Passkey) { p.UserID = "" },
		"no id":            func(p *store.Passkey) { p.ID = nil },
		"empty id":         func(p *store.Passkey) { p.ID = []byte{} },
		"id of 1024 bytes": func(p *store.Passkey) { p.ID = bytes.Repeat([]byte{7}, 1024) },
		"no public key":    func(p *store.Passkey) { p.PublicKey = nil },
	} {
		p := newPasskey(acme, u.ID, "a")
		edit(&p)
		require.ErrorIs(t, b.Passkeys.Create(ctx(), p), store.ErrInvalid, name)
	}
	assert.Empty(t, mustListPasskeys(t, b, acme, u.ID), "nothing stored")
}

// Create: an ID of 1023 bytes is stored.
func testPasskeyCreateLongestID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	p := newPasskey(acme, u.ID, "a")
	p.ID = bytes.Repeat([]byte{0xfe}, 1023)
	mustPasskey(t, b, p)
	assert.Equal(t, normPasskey(p), normPasskey(*mustGetPasskey(t, b, acme, p.ID)))
}

// Create: ErrNotFound if the tenant or the user does not exist.
func testPasskeyCreateUnknown(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	u := mustUser(t, b, acme, "alice")
	require.ErrorIs(t, b.Passkeys.Create(ctx(), newPasskey(acme, "user_nobody", "a")), store.ErrNotFound, "unknown user")
	require.ErrorIs(t, b.Passkeys.Create(ctx(), newPasskey("nowhere", u.ID, "a")), store.ErrNotFound, "unknown tenant")
	require.ErrorIs(t, b.Passkeys.Create(ctx(), newPasskey(globex, u.ID, "a")), store.ErrNotFound, "a user of another tenant")
	_, err := b.Passkeys.Get(ctx(), acme, []byte("cred-a"))
	require.ErrorIs(t, err, store.ErrNotFound, "nothing stored")
}

// The store keeps copies: changing what Create was given, or what Get and List returned, changes
// nothing stored.
func testPasskeyReturnsCopies(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	in := newPasskey(acme, u.ID, "a")
	want := normPasskey(newPasskey(acme, u.ID, "a"))
	mustPasskey(t, b, in)
	in.ID[0], in.PublicKey[0], in.AAGUID[0], in.Transports[0] = 'x', 'x', 'x', "x"

	got := mustGetPasskey(t, b, acme, want.ID)
	got.ID[0], got.PublicKey[0], got.AAGUID[0], got.Transports[0] = 'y', 'y', 'y', "y"
	list, err := b.Passkeys.List(ctx(), acme, u.ID)
	require.NoError(t, err)
	require.Len(t, list, 1)
	list[0].ID[0], list[0].PublicKey[0], list[0].AAGUID[0], list[0].Transports[0] = 'z', 'z', 'z', "z"
	list[0].SignCount = 99

	assert.Equal(t, want, normPasskey(*mustGetPasskey(t, b, acme, want.ID)))
	assert.Equal(t, []store.Passkey{want}, mustListPasskeys(t, b, acme, u.ID))
}

// Use: with the stored SignCount as OldSignCount it sets SignCount, BackupState and LastUsed,
// and nothing else.
func testPasskeyUse(t *testing.T, b store.Backend) {
	p, u := withPasskey(t, b)
	at := passkeyCreated.Add(48*time.Hour + time.Nanosecond)
	require.NoError(t, b.Passkeys.Use(ctx(), acme, u.ID, p.ID, store.PasskeyUse{SignCount: 9, BackupState: true, At: at, OldSignCount: 7}))
	want := p
	want.SignCount, want.BackupState, want.LastUsed = 9, true, at
	assert.Equal(t, normPasskey(want), normPasskey(*mustGetPasskey(t, b, acme, p.ID)))
	assert.Equal(t, []store.Passkey{normPasskey(want)}, mustListPasskeys(t, b, acme, u.ID))
}

// Use, one after another: each sees the count the one before stored; a counter of 0 stays 0.
func testPasskeyUseTwice(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	p := newPasskey(acme, u.ID, "a")
	p.SignCount = 0
	mustPasskey(t, b, p)
	for i := range 3 {
		at := passkeyCreated.Add(time.Duration(i+1) * time.Hour)
		require.NoError(t, b.Passkeys.Use(ctx(), acme, u.ID, p.ID, store.PasskeyUse{At: at}), "use %d", i)
		got := mustGetPasskey(t, b, acme, p.ID)
		assert.Zero(t, got.SignCount)
		assert.True(t, got.LastUsed.Equal(at), "LastUsed %s, want %s", got.LastUsed, at)
	}
	for _, c := range []uint32{5, 6, 1<<32 - 1} {
		old := mustGetPasskey(t, b, acme, p.ID).SignCount
		require.NoError(t, b.Passkeys.Use(ctx(), acme, u.ID, p.ID, store.PasskeyUse{SignCount: c, At: passkeyCreated, OldSignCount: old}))
		assert.Equal(t, c, mustGetPasskey(t, b, acme, p.ID).SignCount)
	}
}

// Use: ErrConflict if the stored counter is not OldSignCount; nothing is changed.
func testPasskeyUseConflict(t *testing.T, b store.Backend) {
	p, u := withPasskey(t, b)
	first := store.PasskeyUse{SignCount: 8, At: passkeyCreated.Add(time.Hour), OldSignCount: 7}
	require.NoError(t, b.Passkeys.Use(ctx(), acme, u.ID, p.ID, first))
	want := p
	want.SignCount, want.LastUsed = 8, first.At
	for _, old := range []uint32{7, 0, 9} {
		err := b.Passkeys.Use(ctx(), acme, u.ID, p.ID, store.PasskeyUse{SignCount: 10, BackupState: true, At: passkeyCreated.Add(2 * time.Hour), OldSignCount: old})
		require.ErrorIs(t, err, store.ErrConflict, "OldSignCount %d", old)
		assert.Equal(t, normPasskey(want), normPasskey(*mustGetPasskey(t, b, acme, p.ID)), "nothing changed")
	}
}

// Use: ErrNotFound if the user holds no passkey of the ID (another user's, an unknown one, in
// an unknown tenant); nothing is changed.
func testPasskeyUseNotFound(t *testing.T, b store.Backend) {
	p, alice := withPasskey(t, b)
	bob := mustUser(t, b, acme, "bob")
	mustTenant(t, b, globex)
	use := store.PasskeyUse{SignCount: 8, At: passkeyCreated.Add(time.Hour), OldSignCount: 7}
	for _, c := range []struct {
		tenant, user string
		id           []byte
	}{{acme, bob.ID, p.ID}, {acme, "user_nobody", p.ID}, {acme, alice.ID, []byte("cred-b")}, {globex, alice.ID, p.ID}, {"nowhere", alice.ID, p.ID}} {
		err := b.Passkeys.Use(ctx(), c.tenant, c.user, c.id, use)
		require.ErrorIs(t, err, store.ErrNotFound, "%s/%s/%q", c.tenant, c.user, c.id)
	}
	assert.Equal(t, normPasskey(p), normPasskey(*mustGetPasskey(t, b, acme, p.ID)), "nothing changed")
}

// Delete removes the passkey, and its ID is free again; the user and its other passkeys stay.
func testPasskeyDelete(t *testing.T, b store.Backend) {
	p, u := withPasskey(t, b)
	other := newPasskey(acme, u.ID, "b")
	mustPasskey(t, b, other)
	require.NoError(t, b.Passkeys.Delete(ctx(), acme, u.ID, p.ID))
	_, err := b.Passkeys.Get(ctx(), acme, p.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, []store.Passkey{normPasskey(other)}, mustListPasskeys(t, b, acme, u.ID))
	mustGetUser(t, b, acme, u.ID)
	bob := mustUser(t, b, acme, "bob")
	mustPasskey(t, b, newPasskey(acme, bob.ID, "a")) // the ID is free
	assert.Equal(t, bob.ID, mustGetPasskey(t, b, acme, p.ID).UserID)
}

// Delete: ErrNotFound if the user holds no such passkey (another user's, one deleted already).
func testPasskeyDeleteNotFound(t *testing.T, b store.Backend) {
	p, alice := withPasskey(t, b)
	bob := mustUser(t, b, acme, "bob")
	mustTenant(t, b, globex)
	require.ErrorIs(t, b.Passkeys.Delete(ctx(), acme, bob.ID, p.ID), store.ErrNotFound, "another user's")
	require.ErrorIs(t, b.Passkeys.Delete(ctx(), globex, alice.ID, p.ID), store.ErrNotFound, "another tenant")
	require.ErrorIs(t, b.Passkeys.Delete(ctx(), "nowhere", alice.ID, p.ID), store.ErrNotFound, "an unknown tenant")
	assert.Equal(t, normPasskey(p), normPasskey(*mustGetPasskey(t, b, acme, p.ID)), "still there")
	require.NoError(t, b.Passkeys.Delete(ctx(), acme, alice.ID, p.ID))
	require.ErrorIs(t, b.Passkeys.Delete(ctx(), acme, alice.ID, p.ID), store.ErrNotFound, "a second Delete")
}

// Changing the user leaves its passkeys alone.
func testPasskeySurvivesUserUpdate(t *testing.T, b store.Backend) {
	p, u := withPasskey(t, b)
	_, err := b.Users.Update(ctx(), acme, u.ID, func(u *store.User) error {
		u.UserName, u.Active = "alice.l", false
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []store.Passkey{normPasskey(p)}, mustListPasskeys(t, b, acme, u.ID))
}

// Deleting the user deletes its passkeys, and their IDs are free again; other users' stay.
func testPasskeyGoesWithUser(t *testing.T, b store.Backend) {
	p, alice := withPasskey(t, b)
	second := newPasskey(acme, alice.ID, "b")
	mustPasskey(t, b, second)
	bob := mustUser(t, b, acme, "bob")
	kept := newPasskey(acme, bob.ID, "c")
	mustPasskey(t, b, kept)

	require.NoError(t, b.Users.Delete(ctx(), acme, alice.ID))
	for _, id := range [][]byte{p.ID, second.ID} {
		_, err := b.Passkeys.Get(ctx(), acme, id)
		require.ErrorIs(t, err, store.ErrNotFound, "Get(%q)", id)
	}
	_, err := b.Passkeys.List(ctx(), acme, alice.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "List of the deleted user")
	require.ErrorIs(t, b.Passkeys.Use(ctx(), acme, alice.ID, p.ID, store.PasskeyUse{SignCount: 8, OldSignCount: 7}), store.ErrNotFound)
	require.ErrorIs(t, b.Passkeys.Delete(ctx(), acme, alice.ID, p.ID), store.ErrNotFound)
	assert.Equal(t, []store.Passkey{normPasskey(kept)}, mustListPasskeys(t, b, acme, bob.ID), "another user's stay")

	mustPasskey(t, b, newPasskey(acme, bob.ID, "a")) // the ID is free
	assert.Equal(t, bob.ID, mustGetPasskey(t, b, acme, p.ID).UserID)
}

// Deleting the tenant deletes its passkeys: every method then reports ErrNotFound, and a tenant
// made again with the same id has none, so their IDs are free; another tenant's stay.
func testPasskeyGoesWithTenant(t *testing.T, b store.Backend) {
	p, alice := withPasskey(t, b)
	mustTenant(t, b, globex)
	ug := mustUser(t, b, globex, "alice")
	kept := newPasskey(globex, ug.ID, "a")
	mustPasskey(t, b, kept)
	require.NoError(t, b.Tenants.Delete(ctx(), acme))

	_, err := b.Passkeys.Get(ctx(), acme, p.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Get after the tenant's Delete")
	_, err = b.Passkeys.List(ctx(), acme, alice.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "List after the tenant's Delete")
	require.ErrorIs(t, b.Passkeys.Create(ctx(), newPasskey(acme, alice.ID, "b")), store.ErrNotFound, "Create after the tenant's Delete")
	require.ErrorIs(t, b.Passkeys.Use(ctx(), acme, alice.ID, p.ID, store.PasskeyUse{SignCount: 8, OldSignCount: 7}), store.ErrNotFound,
		"Use after the tenant's Delete")
	require.ErrorIs(t, b.Passkeys.Delete(ctx(), acme, alice.ID, p.ID), store.ErrNotFound, "Delete after the tenant's Delete")

	mustTenant(t, b, acme)
	_, err = b.Passkeys.Get(ctx(), acme, p.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Get in the tenant made again")
	again := mustUser(t, b, acme, "alice")
	assert.Empty(t, mustListPasskeys(t, b, acme, again.ID))
	mustPasskey(t, b, newPasskey(acme, again.ID, "a")) // the ID is free
	assert.Equal(t, normPasskey(kept), normPasskey(*mustGetPasskey(t, b, globex, kept.ID)), "the other tenant's passkey")
}

// A tenant or user id that is not text names no user: ErrNotFound, as for any unknown one.
func testPasskeyKeysNotText(t *testing.T, b store.Backend) {
	p, u := withPasskey(t, b)
	use := store.PasskeyUse{SignCount: 8, OldSignCount: 7}
	for _, k := range notText {
		for _, c := range []struct{ tenant, user string }{{k, u.ID}, {acme, "user_" + k}} {
			q := newPasskey(c.tenant, c.user, "b")
			require.ErrorIs(t, b.Passkeys.Create(ctx(), q), store.ErrNotFound, "Create(%q, %q)", c.tenant, c.user)
			_, err := b.Passkeys.List(ctx(), c.tenant, c.user)
			require.ErrorIs(t, err, store.ErrNotFound, "List(%q, %q)", c.tenant, c.user)
			require.ErrorIs(t, b.Passkeys.Use(ctx(), c.tenant, c.user, p.ID, use), store.ErrNotFound, "Use(%q, %q)", c.tenant, c.user)
			require.ErrorIs(t, b.Passkeys.Delete(ctx(), c.tenant, c.user, p.ID), store.ErrNotFound, "Delete(%q, %q)", c.tenant, c.user)
		}
		_, err := b.Passkeys.Get(ctx(), k, p.ID)
		require.ErrorIs(t, err, store.ErrNotFound, "Get(%q)", k)
	}
	assert.Equal(t, []store.Passkey{normPasskey(p)}, mustListPasskeys(t, b, acme, u.ID))
}
