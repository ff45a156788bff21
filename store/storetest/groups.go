package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func groupTests() []test {
	return []test{
		{"CreateGet", testGroupCreateGet},
		{"CreateGeneratesID", testGroupCreateGeneratesID},
		{"CreateIDConflict", testGroupCreateIDConflict},
		{"CreateUnknownTenant", testGroupCreateUnknownTenant},
		{"CreateEmptyDisplayName", testGroupCreateEmptyDisplayName},
		{"CreateUnknownMember", testGroupCreateUnknownMember},
		{"CreateOtherTenantMember", testGroupCreateOtherTenantMember},
		{"CreateDuplicateMembersKeptOnce", testGroupCreateDuplicateMembers},
		{"DisplayNameNotUnique", testGroupDisplayNameNotUnique},
		{"OtherTenantNotFound", testGroupOtherTenantNotFound},
		{"GetNotFound", testGroupGetNotFound},
		{"GetReturnsCopy", testGroupGetReturnsCopy},
		{"GetMemberDisplayIsUserName", testGroupMemberDisplayIsUserName},
		{"UpdateStoresWhatFnLeaves", testGroupUpdateStores},
		{"UpdateFnErrorStoresNothing", testGroupUpdateFnError},
		{"UpdateFnGetsCopy", testGroupUpdateFnGetsCopy},
		{"UpdateNotFound", testGroupUpdateNotFound},
		{"UpdateUnknownMember", testGroupUpdateUnknownMember},
		{"UpdateDuplicateMembersKeptOnce", testGroupUpdateDuplicateMembers},
		{"UpdateChangedID", testGroupUpdateChangedID},
		{"UpdateEmptyDisplayName", testGroupUpdateEmptyDisplayName},
		{"DeleteGet", testGroupDeleteGet},
		{"DeleteNotFound", testGroupDeleteNotFound},
		{"ListCreationOrder", testGroupListCreationOrder},
		{"ListUnknownTenant", testGroupListUnknownTenant},
	}
}

// Create stores g and returns it as stored; Get returns it with each member's Display (the
// userName) and Type ("User") filled, whatever the caller put there.
func testGroupCreateGet(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "Ann")
	bob := mustUser(t, b, acme, "bob")
	in := store.Group{
		ExternalID:  "Ext-Staff",
		DisplayName: "Staff – Zürich",
		Members:     []store.Member{{Value: ann.ID, Display: "wrong", Type: "Group"}, {Value: bob.ID}},
		Meta:        store.Meta{Created: day(2, 3, 4*time.Hour), LastModified: day(5, 6, 7*time.Minute)},
	}
	created, err := b.Groups.Create(ctx(), acme, in)
	require.NoError(t, err)
	require.NotNil(t, created)
	require.NotEmpty(t, created.ID)
	in.ID = created.ID
	assert.Equal(t, withoutMemberDetails(in), withoutMemberDetails(*created), "Create's result")

	want := in
	want.Members = []store.Member{{Value: ann.ID, Display: "Ann", Type: "User"}, {Value: bob.ID, Display: "bob", Type: "User"}}
	assert.Equal(t, normGroup(want), normGroup(*mustGetGroup(t, b, acme, created.ID)), "Get after Create")

	empty, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Empty"})
	require.NoError(t, err)
	assert.Empty(t, mustGetGroup(t, b, acme, empty.ID).Members)
}

// Create: an empty g.ID gets a new id (NewID("group")).
func testGroupCreateGeneratesID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	seen := map[string]bool{}
	for i := range 3 {
		g := mustGroup(t, b, acme, "Group "+string(rune('A'+i)))
		assert.True(t, strings.HasPrefix(g.ID, "group_"), "generated id %q has no prefix group_", g.ID)
		assert.Len(t, g.ID, len("group_")+26, "generated id %q", g.ID)
		assert.False(t, seen[g.ID], "generated id %q twice", g.ID)
		seen[g.ID] = true
	}
	g, err := b.Groups.Create(ctx(), acme, store.Group{ID: "group_fromcaller", DisplayName: "Mine"})
	require.NoError(t, err)
	assert.Equal(t, "group_fromcaller", g.ID)
	assert.Equal(t, "Mine", mustGetGroup(t, b, acme, "group_fromcaller").DisplayName)
}

// Create: ErrConflict if the id is taken; nothing changes.
func testGroupCreateIDConflict(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	_, err := b.Groups.Create(ctx(), acme, store.Group{ID: "group_1", DisplayName: "First"})
	require.NoError(t, err)
	_, err = b.Groups.Create(ctx(), acme, store.Group{ID: "group_1", DisplayName: "Second", Members: memberList(ann.ID)})
	require.ErrorIs(t, err, store.ErrConflict)
	got := mustGetGroup(t, b, acme, "group_1")
	assert.Equal(t, "First", got.DisplayName)
	assert.Empty(t, got.Members)
	assert.Empty(t, mustGetUser(t, b, acme, ann.ID).Groups)
	assert.Equal(t, []string{"First"}, groupNames(allGroups(t, b, acme)))
}

// Create: ErrNotFound if the tenant does not exist.
func testGroupCreateUnknownTenant(t *testing.T, b store.Backend) {
	_, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Staff"})
	require.ErrorIs(t, err, store.ErrNotFound)
	mustTenant(t, b, globex)
	_, err = b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Staff"})
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Empty(t, allGroups(t, b, globex))
}

// Create: ErrInvalid if g.DisplayName is empty.
func testGroupCreateEmptyDisplayName(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	_, err := b.Groups.Create(ctx(), acme, store.Group{ExternalID: "x"})
	require.ErrorIs(t, err, store.ErrInvalid)
	assert.Empty(t, allGroups(t, b, acme))
}

// Create: ErrMemberNotFound if a member is not a user of the tenant; nothing is stored.
func testGroupCreateUnknownMember(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	gone := mustUser(t, b, acme, "gone")
	require.NoError(t, b.Users.Delete(ctx(), acme, gone.ID))
	for _, missing := range []string{"user_missing", gone.ID, strings.ToUpper(ann.ID), ""} {
		_, err := b.Groups.Create(ctx(), acme, store.Group{ID: "group_1", DisplayName: "Staff", Members: memberList(ann.ID, missing)})
		require.ErrorIs(t, err, store.ErrMemberNotFound, "member %q", missing)
	}
	assert.Empty(t, allGroups(t, b, acme))
	assert.Empty(t, mustGetUser(t, b, acme, ann.ID).Groups)
	_, err := b.Groups.Get(ctx(), acme, "group_1")
	require.ErrorIs(t, err, store.ErrNotFound)
}

// Create: a user of another tenant is not a member candidate: ErrMemberNotFound, nothing stored.
func testGroupCreateOtherTenantMember(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, globex, "bob")
	_, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Staff", Members: memberList(ann.ID, bob.ID)})
	require.ErrorIs(t, err, store.ErrMemberNotFound)
	assert.Empty(t, allGroups(t, b, acme))
	assert.Empty(t, allGroups(t, b, globex))
	assert.Empty(t, mustGetUser(t, b, acme, ann.ID).Groups)
	assert.Empty(t, mustGetUser(t, b, globex, bob.ID).Groups)
}

// Create: repeated member values are kept once.
func testGroupCreateDuplicateMembers(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, acme, "bob")
	g := mustGroup(t, b, acme, "Staff", ann.ID, bob.ID, ann.ID, ann.ID)
	assert.Equal(t, sorted(ann.ID, bob.ID), memberValues(g), "Create's result")
	assert.Equal(t, sorted(ann.ID, bob.ID), memberValues(mustGetGroup(t, b, acme, g.ID)), "Get")
	assert.Len(t, mustGetUser(t, b, acme, ann.ID).Groups, 1, "the user's groups")
}

// displayName is not unique: two groups may share it, in any case.
func testGroupDisplayNameNotUnique(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	a := mustGroup(t, b, acme, "Staff")
	c := mustGroup(t, b, acme, "Staff")
	d := mustGroup(t, b, acme, "STAFF")
	assert.NotEqual(t, a.ID, c.ID)
	assert.NotEqual(t, c.ID, d.ID)
	assert.Equal(t, []string{"Staff", "Staff", "STAFF"}, groupNames(allGroups(t, b, acme)))
	_, err := b.Groups.Update(ctx(), acme, d.ID, func(g *store.Group) error { g.DisplayName = "Staff"; return nil })
	require.NoError(t, err, "renaming to a taken displayName")
}

// A group id of another tenant is not found: Get, Update, Delete and List.
func testGroupOtherTenantNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	g := mustGroup(t, b, acme, "Staff")
	bob := mustUser(t, b, globex, "bob")
	_, err := b.Groups.Get(ctx(), globex, g.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Get")
	_, err = b.Groups.Update(ctx(), globex, g.ID, func(g *store.Group) error {
		g.Members = memberList(bob.ID)
		return nil
	})
	require.ErrorIs(t, err, store.ErrNotFound, "Update")
	require.ErrorIs(t, b.Groups.Delete(ctx(), globex, g.ID), store.ErrNotFound, "Delete")
	p, err := b.Groups.List(ctx(), globex, store.Query{Filter: parseGroups(t, `id eq "`+g.ID+`"`), Count: -1})
	require.NoError(t, err)
	assert.Empty(t, p.Resources, "List by id in the other tenant")
	assert.Zero(t, p.TotalResults)
	assert.Empty(t, mustGetGroup(t, b, acme, g.ID).Members)
	assert.Empty(t, mustGetUser(t, b, globex, bob.ID).Groups)
}

// Get: ErrNotFound if the tenant or the group does not exist.
func testGroupGetNotFound(t *testing.T, b store.Backend) {
	_, err := b.Groups.Get(ctx(), acme, "group_missing")
	require.ErrorIs(t, err, store.ErrNotFound, "unknown tenant")
	mustTenant(t, b, acme)
	g := mustGroup(t, b, acme, "Staff")
	_, err = b.Groups.Get(ctx(), acme, "group_missing")
	require.ErrorIs(t, err, store.ErrNotFound, "unknown group")
	_, err = b.Groups.Get(ctx(), acme, strings.ToUpper(g.ID))
	require.ErrorIs(t, err, store.ErrNotFound, "ids are case-sensitive")
	ann := mustUser(t, b, acme, "ann")
	_, err = b.Groups.Get(ctx(), acme, ann.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "a user's id")
}

// Get returns a copy: changing the returned group does not change the store.
func testGroupGetReturnsCopy(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, acme, "bob")
	g := mustGroup(t, b, acme, "Staff", ann.ID, bob.ID)
	want := normGroup(*mustGetGroup(t, b, acme, g.ID))
	got := mustGetGroup(t, b, acme, g.ID)
	require.Len(t, got.Members, 2)
	require.Len(t, g.Members, 2, "Create's result")
	got.Members[0].Value = "user_changed"
	got.Members[1].Display = "changed"
	got.Members = append(got.Members, store.Member{Value: "user_appended"})
	got.DisplayName = "changed"
	g.Members[0].Value = "user_changed" // Create's result too
	assert.Equal(t, want, normGroup(*mustGetGroup(t, b, acme, g.ID)))
}

// Update stores what fn leaves and returns the group as stored.
func testGroupUpdateStores(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, acme, "bob")
	carol := mustUser(t, b, acme, "carol")
	g := mustGroup(t, b, acme, "Staff", ann.ID, bob.ID)
	var seen []string
	got, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
		seen = memberValues(g)
		g.DisplayName = "Staff 2"
		g.ExternalID = "ext-2"
		g.Members = memberList(bob.ID, carol.ID)
		g.Meta.LastModified = day(9, 9, 0)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, sorted(ann.ID, bob.ID), seen, "fn is called with the stored group")
	want := store.Group{ID: g.ID, ExternalID: "ext-2", DisplayName: "Staff 2", Members: memberList(bob.ID, carol.ID),
		Meta: store.Meta{Created: g.Meta.Created, LastModified: day(9, 9, 0)}}
	assert.Equal(t, withoutMemberDetails(want), withoutMemberDetails(*got), "Update's result")
	assert.Equal(t, withoutMemberDetails(want), withoutMemberDetails(*mustGetGroup(t, b, acme, g.ID)), "Get after Update")
	assert.Empty(t, mustGetUser(t, b, acme, ann.ID).Groups, "the removed member's groups")
	assert.Equal(t, []string{g.ID}, groupRefValues(mustGetUser(t, b, acme, carol.ID)), "the added member's groups")
}

// Update: if fn returns an error, nothing is stored and Update returns that error as it is.
func testGroupUpdateFnError(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, acme, "bob")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	want := normGroup(*mustGetGroup(t, b, acme, g.ID))
	errStop := errors.New("stop")
	_, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
		g.DisplayName = "changed"
		g.Members = memberList(bob.ID)
		return errStop
	})
	require.True(t, err == errStop, "Update returned %v (%T), want fn's error itself", err, err)
	assert.Equal(t, want, normGroup(*mustGetGroup(t, b, acme, g.ID)))
	assert.Empty(t, mustGetUser(t, b, acme, bob.ID).Groups)
	assert.Len(t, mustGetUser(t, b, acme, ann.ID).Groups, 1)
}

// Update calls fn with a copy: changing the members in place and then failing leaves the stored
// group unchanged; neither fn's group nor Update's result is the stored value.
func testGroupUpdateFnGetsCopy(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, acme, "bob")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	want := normGroup(*mustGetGroup(t, b, acme, g.ID))
	errStop := errors.New("stop")
	_, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
		g.Members[0].Value = bob.ID
		return errStop
	})
	require.True(t, err == errStop, "Update returned %v, want fn's error", err)
	assert.Equal(t, want, normGroup(*mustGetGroup(t, b, acme, g.ID)), "after a failed fn")

	var kept *store.Group
	got, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
		kept = g
		g.ExternalID = "x"
		return nil
	})
	require.NoError(t, err)
	want.ExternalID = "x"
	require.False(t, got.Meta.LastModified.Before(want.Meta.LastModified), "lastModified %v", got.Meta.LastModified)
	want.Meta.LastModified = got.Meta.LastModified
	require.Len(t, got.Members, 1, "Update's result")
	kept.Members[0].Value = bob.ID
	got.Members[0].Value = bob.ID
	assert.Equal(t, want, normGroup(*mustGetGroup(t, b, acme, g.ID)), "after changing fn's group and the result")
}

// Update: ErrNotFound if the group (or the tenant) does not exist.
func testGroupUpdateNotFound(t *testing.T, b store.Backend) {
	fn := func(g *store.Group) error { g.DisplayName = "x"; return nil }
	_, err := b.Groups.Update(ctx(), acme, "group_missing", fn)
	require.ErrorIs(t, err, store.ErrNotFound, "unknown tenant")
	mustTenant(t, b, acme)
	_, err = b.Groups.Update(ctx(), acme, "group_missing", fn)
	require.ErrorIs(t, err, store.ErrNotFound, "unknown group")
	g := mustGroup(t, b, acme, "Staff")
	require.NoError(t, b.Groups.Delete(ctx(), acme, g.ID))
	_, err = b.Groups.Update(ctx(), acme, g.ID, fn)
	require.ErrorIs(t, err, store.ErrNotFound, "deleted group")
	assert.Empty(t, allGroups(t, b, acme))
}

// Update: ErrMemberNotFound if fn added a member that is not a user of the tenant (unknown,
// deleted, or of another tenant); nothing is stored.
func testGroupUpdateUnknownMember(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, acme, "bob")
	gone := mustUser(t, b, acme, "gone")
	require.NoError(t, b.Users.Delete(ctx(), acme, gone.ID))
	other := mustUser(t, b, globex, "other")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	want := normGroup(*mustGetGroup(t, b, acme, g.ID))
	for _, missing := range []string{"user_missing", gone.ID, other.ID} {
		_, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
			g.DisplayName = "changed"
			g.Members = append(g.Members, store.Member{Value: bob.ID}, store.Member{Value: missing})
			return nil
		})
		require.ErrorIs(t, err, store.ErrMemberNotFound, "member %q", missing)
	}
	assert.Equal(t, want, normGroup(*mustGetGroup(t, b, acme, g.ID)))
	assert.Empty(t, mustGetUser(t, b, acme, bob.ID).Groups)
	assert.Empty(t, mustGetUser(t, b, globex, other.ID).Groups)
}

// Update: a group lists a user at most once, so repeated members fn leaves are kept once.
func testGroupUpdateDuplicateMembers(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, acme, "bob")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	got, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
		g.Members = append(g.Members, store.Member{Value: ann.ID}, store.Member{Value: bob.ID}, store.Member{Value: bob.ID})
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, sorted(ann.ID, bob.ID), memberValues(got), "Update's result")
	assert.Equal(t, sorted(ann.ID, bob.ID), memberValues(mustGetGroup(t, b, acme, g.ID)), "Get")
	assert.Len(t, mustGetUser(t, b, acme, ann.ID).Groups, 1)
	assert.Len(t, mustGetUser(t, b, acme, bob.ID).Groups, 1)
}

// Update: ErrInvalid if fn changed the id; nothing is stored.
func testGroupUpdateChangedID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	g := mustGroup(t, b, acme, "Staff")
	for _, id := range []string{"group_other", "", strings.ToUpper(g.ID)} {
		_, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
			g.ID = id
			g.DisplayName = "changed"
			return nil
		})
		require.ErrorIs(t, err, store.ErrInvalid, "id changed to %q", id)
	}
	assert.Equal(t, "Staff", mustGetGroup(t, b, acme, g.ID).DisplayName)
	_, err := b.Groups.Get(ctx(), acme, "group_other")
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, []string{"Staff"}, groupNames(allGroups(t, b, acme)))
}

// Update: ErrInvalid if fn emptied the displayName; nothing is stored.
func testGroupUpdateEmptyDisplayName(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	g := mustGroup(t, b, acme, "Staff")
	_, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
		g.DisplayName = ""
		g.Members = memberList(ann.ID)
		return nil
	})
	require.ErrorIs(t, err, store.ErrInvalid)
	got := mustGetGroup(t, b, acme, g.ID)
	assert.Equal(t, "Staff", got.DisplayName)
	assert.Empty(t, got.Members)
}

// Delete removes the group: Get reports ErrNotFound, List no longer has it, and its members'
// Groups no longer list it.
func testGroupDeleteGet(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	staff := mustGroup(t, b, acme, "Staff", ann.ID)
	admins := mustGroup(t, b, acme, "Admins", ann.ID)
	require.NoError(t, b.Groups.Delete(ctx(), acme, staff.ID))
	_, err := b.Groups.Get(ctx(), acme, staff.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, []string{"Admins"}, groupNames(allGroups(t, b, acme)))
	assert.Equal(t, []string{admins.ID}, groupRefValues(mustGetUser(t, b, acme, ann.ID)))
	assert.Equal(t, "ann", mustGetUser(t, b, acme, ann.ID).UserName, "the member is kept")
}

// Delete: ErrNotFound if it does not exist, so a repeated Delete reports ErrNotFound.
func testGroupDeleteNotFound(t *testing.T, b store.Backend) {
	require.ErrorIs(t, b.Groups.Delete(ctx(), acme, "group_missing"), store.ErrNotFound, "unknown tenant")
	mustTenant(t, b, acme)
	require.ErrorIs(t, b.Groups.Delete(ctx(), acme, "group_missing"), store.ErrNotFound, "unknown group")
	g := mustGroup(t, b, acme, "Staff")
	require.NoError(t, b.Groups.Delete(ctx(), acme, g.ID))
	require.ErrorIs(t, b.Groups.Delete(ctx(), acme, g.ID), store.ErrNotFound, "repeated Delete")
}

// List returns the tenant's groups in creation order, not in id or displayName order.
func testGroupListCreationOrder(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	for _, g := range []store.Group{
		{ID: "group_c", DisplayName: "b"}, {ID: "group_a", DisplayName: "c"}, {ID: "group_b", DisplayName: "a"},
	} {
		_, err := b.Groups.Create(ctx(), acme, g)
		require.NoError(t, err)
	}
	mustGroup(t, b, globex, "other tenant")
	mustGroup(t, b, acme, "0")
	assert.Equal(t, []string{"b", "c", "a", "0"}, groupNames(allGroups(t, b, acme)))
	_, err := b.Groups.Update(ctx(), acme, "group_c", func(g *store.Group) error { g.DisplayName = "z"; return nil })
	require.NoError(t, err)
	require.NoError(t, b.Groups.Delete(ctx(), acme, "group_a"))
	mustGroup(t, b, acme, "last")
	assert.Equal(t, []string{"z", "a", "0", "last"}, groupNames(allGroups(t, b, acme)), "after an update, a delete and a create")

	p, err := b.Groups.List(ctx(), acme, store.Query{StartIndex: 2, Count: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "0"}, groupNames(p.Resources))
	assert.Equal(t, 4, p.TotalResults)
}

// List: ErrNotFound if the tenant does not exist.
func testGroupListUnknownTenant(t *testing.T, b store.Backend) {
	_, err := b.Groups.List(ctx(), acme, store.Query{Count: -1})
	require.ErrorIs(t, err, store.ErrNotFound)
	mustTenant(t, b, acme)
	p, err := b.Groups.List(ctx(), acme, store.Query{Count: -1})
	require.NoError(t, err)
	assert.Empty(t, p.Resources)
	assert.Zero(t, p.TotalResults)
}
