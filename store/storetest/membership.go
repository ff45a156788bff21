package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// A user's Groups and a group's members' Display and Type are derived from group membership on
// every read. These tests check Users.Get, Users.Delete and Groups.Get.

// Get fills each member's Display with the user's current userName (after a rename too) and
// Type with "User".
func testGroupMemberDisplayIsUserName(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	got := mustGetGroup(t, b, acme, g.ID)
	require.Len(t, got.Members, 1)
	assert.Equal(t, store.Member{Value: ann.ID, Display: "ann", Type: "User"}, got.Members[0])

	_, err := b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error { u.UserName = "Ann.Renamed"; return nil })
	require.NoError(t, err)
	got = mustGetGroup(t, b, acme, g.ID)
	require.Len(t, got.Members, 1)
	assert.Equal(t, store.Member{Value: ann.ID, Display: "Ann.Renamed", Type: "User"}, got.Members[0])

	listed := allGroups(t, b, acme)
	require.Len(t, listed, 1)
	require.Len(t, listed[0].Members, 1)
	assert.Equal(t, store.Member{Value: ann.ID, Display: "Ann.Renamed", Type: "User"}, listed[0].Members[0], "List")
}

// A user's Groups are derived from memberships: each group it is a direct member of, with the
// group's current displayName and type "direct"; they follow adds, removals, renames and
// deletes of groups.
func testUserGroupsFromMemberships(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, acme, "bob")
	staff := mustGroup(t, b, acme, "Staff", ann.ID)
	admins := mustGroup(t, b, acme, "Admins")
	_, err := b.Groups.Update(ctx(), acme, admins.ID, func(g *store.Group) error {
		g.Members = append(g.Members, store.Member{Value: ann.ID})
		return nil
	})
	require.NoError(t, err)
	want := []store.GroupRef{{Value: staff.ID, Display: "Staff", Type: "direct"}, {Value: admins.ID, Display: "Admins", Type: "direct"}}
	assert.Equal(t, normUser(store.User{Groups: want}).Groups, normUser(*mustGetUser(t, b, acme, ann.ID)).Groups)
	assert.Empty(t, mustGetUser(t, b, acme, bob.ID).Groups)

	_, err = b.Groups.Update(ctx(), acme, staff.ID, func(g *store.Group) error { g.DisplayName = "Staff (renamed)"; return nil })
	require.NoError(t, err)
	want[0].Display = "Staff (renamed)"
	assert.Equal(t, normUser(store.User{Groups: want}).Groups, normUser(*mustGetUser(t, b, acme, ann.ID)).Groups, "after a group rename")
	listed := allUsers(t, b, acme)
	assert.Equal(t, normUser(store.User{Groups: want}).Groups, normUser(listed[0]).Groups, "List after a group rename")

	_, err = b.Groups.Update(ctx(), acme, admins.ID, func(g *store.Group) error { g.Members = nil; return nil })
	require.NoError(t, err)
	assert.Equal(t, []string{staff.ID}, groupRefValues(mustGetUser(t, b, acme, ann.ID)), "after removal from a group")

	require.NoError(t, b.Groups.Delete(ctx(), acme, staff.ID))
	assert.Empty(t, mustGetUser(t, b, acme, ann.ID).Groups, "after the group's Delete")
}

// Users.Delete removes the user's membership of every group: the groups no longer list it.
func testUserDeleteRemovesMemberships(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, acme, "bob")
	staff := mustGroup(t, b, acme, "Staff", ann.ID, bob.ID)
	admins := mustGroup(t, b, acme, "Admins", ann.ID)
	require.NoError(t, b.Users.Delete(ctx(), acme, ann.ID))
	assert.Equal(t, []string{bob.ID}, memberValues(mustGetGroup(t, b, acme, staff.ID)))
	assert.Empty(t, mustGetGroup(t, b, acme, admins.ID).Members)
	p, err := b.Groups.List(ctx(), acme, store.Query{Filter: parseGroups(t, `members.value eq "`+ann.ID+`"`), Count: -1})
	require.NoError(t, err)
	assert.Empty(t, groupNames(p.Resources), "groups filtered by the deleted member")

	// A user created later with the same userName does not inherit the memberships.
	again := mustUser(t, b, acme, "ann")
	assert.Empty(t, mustGetUser(t, b, acme, again.ID).Groups)
	assert.Equal(t, []string{bob.ID}, memberValues(mustGetGroup(t, b, acme, staff.ID)))
}
