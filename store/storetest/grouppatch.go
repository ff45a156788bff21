package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// Groups.Patch changes a group's membership by user id, and its other attributes, without the
// caller reading the member list; Groups.GetWithoutMembers and Query.WithoutMembers read a group
// without its members.
func groupPatchTests() []test {
	return []test{
		{"AddsAfterOthersRemovesInPlace", testPatchAddRemove},
		{"ExistingMemberKeptAbsentIgnored", testPatchNoOp},
		{"ReturnsMembersOnlyWhenAsked", testPatchWithMembers},
		{"UnknownMemberStoresNothing", testPatchUnknownMember},
		{"AddAndRemoveSameUser", testPatchAddAndRemoveSame},
		{"NotFound", testPatchNotFound},
		{"Attrs", testPatchAttrs},
		{"AttrsErrors", testPatchAttrsErrors},
		{"Modified", testPatchModified},
		{"MaxMembers", testPatchMaxMembers},
		{"MaxMembersAfterUserDelete", testPatchMaxMembersAfterUserDelete},
		{"FiltersFollow", testPatchFiltersFollow},
		{"ThenUpdate", testPatchThenUpdate},
		{"Events", testPatchEvents},
		{"ConcurrentAddsAllTakeEffect", testPatchConcurrentAdds},
		{"GetWithoutMembers", testGetWithoutMembers},
		{"ListWithoutMembers", testListWithoutMembers},
	}
}

// orderedMembers returns the member values of the group as Get lists them, in order.
func orderedMembers(t *testing.T, b store.Backend, id string) []string {
	t.Helper()
	out := []string{}
	for _, m := range mustGetGroup(t, b, acme, id).Members {
		out = append(out, m.Value)
	}
	return out
}

func mustPatch(t *testing.T, b store.Backend, id string, p store.GroupPatch) *store.Group {
	t.Helper()
	g, err := b.Groups.Patch(ctx(), acme, id, p)
	require.NoError(t, err, "Groups.Patch")
	require.NotNil(t, g)
	return g
}

// Members added go after the others, in Add's order; removed members go and the others keep
// their order. Users' groups follow.
func testPatchAddRemove(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann, bob, cy, dan := mustUser(t, b, acme, "ann"), mustUser(t, b, acme, "bob"), mustUser(t, b, acme, "cy"), mustUser(t, b, acme, "dan")
	g := mustGroup(t, b, acme, "Staff", ann.ID, bob.ID)
	mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{dan.ID, cy.ID}, Remove: []string{ann.ID}})
	assert.Equal(t, []string{bob.ID, dan.ID, cy.ID}, orderedMembers(t, b, g.ID))
	assert.Empty(t, mustGetUser(t, b, acme, ann.ID).Groups)
	assert.Equal(t, []string{g.ID}, groupRefValues(mustGetUser(t, b, acme, cy.ID)))

	mustPatch(t, b, g.ID, store.GroupPatch{Remove: []string{dan.ID}})
	mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{ann.ID}})
	got := mustGetGroup(t, b, acme, g.ID)
	assert.Equal(t, []store.Member{{Value: bob.ID, Display: "bob", Type: "User"}, {Value: cy.ID, Display: "cy", Type: "User"},
		{Value: ann.ID, Display: "ann", Type: "User"}}, got.Members)
	assert.Equal(t, "Staff", got.DisplayName)
}

// Adding a member keeps it where it is; removing a user who is not a member does nothing; a
// Patch that changes nothing keeps LastModified.
func testPatchNoOp(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann, bob, cy := mustUser(t, b, acme, "ann"), mustUser(t, b, acme, "bob"), mustUser(t, b, acme, "cy")
	g := mustGroup(t, b, acme, "Staff", ann.ID, bob.ID)
	got := mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{ann.ID, ann.ID}, Remove: []string{cy.ID}, Modified: day(6, 1, 0)})
	assert.Equal(t, []string{ann.ID, bob.ID}, orderedMembers(t, b, g.ID))
	assert.True(t, g.Meta.LastModified.Equal(got.Meta.LastModified), "LastModified of a Patch that changed nothing")
	assert.Empty(t, mustGetUser(t, b, acme, cy.ID).Groups)
}

// Patch returns the group with Members nil, or with its members when WithMembers is set.
func testPatchWithMembers(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann, bob := mustUser(t, b, acme, "ann"), mustUser(t, b, acme, "bob")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	got := mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{bob.ID}})
	assert.Nil(t, got.Members)
	assert.Equal(t, g.ID, got.ID)
	assert.Equal(t, "Staff", got.DisplayName)
	got = mustPatch(t, b, g.ID, store.GroupPatch{Remove: []string{ann.ID}, WithMembers: true})
	assert.Equal(t, []store.Member{{Value: bob.ID, Display: "bob", Type: "User"}}, got.Members)
}

// ErrMemberNotFound when Add names no user of the tenant (another tenant's user included); the
// whole Patch stores nothing.
func testPatchUnknownMember(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	ann, bob := mustUser(t, b, acme, "ann"), mustUser(t, b, acme, "bob")
	other := mustUser(t, b, globex, "zed")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	for _, missing := range []string{"user_missing", other.ID} {
		_, err := b.Groups.Patch(ctx(), acme, g.ID, store.GroupPatch{
			Attrs: func(g *store.Group) error { g.DisplayName = "Renamed"; return nil },
			Add:   []string{bob.ID, missing}, Remove: []string{ann.ID}})
		assert.ErrorIs(t, err, store.ErrMemberNotFound, missing)
	}
	got := mustGetGroup(t, b, acme, g.ID)
	assert.Equal(t, "Staff", got.DisplayName)
	assert.Equal(t, []string{ann.ID}, memberValues(got))
	assert.Empty(t, mustGetUser(t, b, acme, bob.ID).Groups)
}

// A user in both Add and Remove is ErrInvalid.
func testPatchAddAndRemoveSame(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	g := mustGroup(t, b, acme, "Staff")
	_, err := b.Groups.Patch(ctx(), acme, g.ID, store.GroupPatch{Add: []string{ann.ID}, Remove: []string{ann.ID}})
	assert.ErrorIs(t, err, store.ErrInvalid)
	assert.Empty(t, mustGetGroup(t, b, acme, g.ID).Members)
}

// ErrNotFound for a group or tenant that does not exist, and for another tenant's group.
func testPatchNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	g := mustGroup(t, b, globex, "Theirs")
	for _, c := range []struct{ tenant, id string }{{acme, "group_missing"}, {"nosuch", g.ID}, {acme, g.ID}} {
		_, err := b.Groups.Patch(ctx(), c.tenant, c.id, store.GroupPatch{})
		assert.ErrorIs(t, err, store.ErrNotFound, "%s/%s", c.tenant, c.id)
		_, err = b.Groups.GetWithoutMembers(ctx(), c.tenant, c.id)
		assert.ErrorIs(t, err, store.ErrNotFound, "GetWithoutMembers %s/%s", c.tenant, c.id)
	}
}

// Attrs gets the group without its members and changes its other attributes; members it sets are
// ignored; users' groups follow a rename.
func testPatchAttrs(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann, bob := mustUser(t, b, acme, "ann"), mustUser(t, b, acme, "bob")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	var seen []store.Member
	got := mustPatch(t, b, g.ID, store.GroupPatch{
		Attrs: func(g *store.Group) error {
			seen = g.Members
			g.DisplayName, g.ExternalID = "All staff", "ext-1"
			g.Members = []store.Member{{Value: "user_ignored"}}
			return nil
		},
		Add: []string{bob.ID},
	})
	assert.Nil(t, seen, "Attrs gets the group without its members")
	assert.Equal(t, "All staff", got.DisplayName)
	stored := mustGetGroup(t, b, acme, g.ID)
	assert.Equal(t, "All staff", stored.DisplayName)
	assert.Equal(t, "ext-1", stored.ExternalID)
	assert.Equal(t, []string{ann.ID, bob.ID}, orderedMembers(t, b, g.ID))
	for _, u := range []string{ann.ID, bob.ID} {
		assert.Equal(t, []store.GroupRef{{Value: g.ID, Display: "All staff", Type: "direct"}}, mustGetUser(t, b, acme, u).Groups)
	}
	p, err := b.Groups.List(ctx(), acme, store.Query{Filter: parseGroups(t, `displayName eq "all staff"`), Count: -1})
	require.NoError(t, err)
	assert.Equal(t, 1, p.TotalResults, "the new displayName is found")
}

// Attrs' error is returned as it is; a changed id or an empty displayName is ErrInvalid; nothing
// is stored.
func testPatchAttrsErrors(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann, bob := mustUser(t, b, acme, "ann"), mustUser(t, b, acme, "bob")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	boom := errors.New("boom")
	for _, c := range []struct {
		fn   func(*store.Group) error
		want error
	}{
		{func(*store.Group) error { return boom }, boom},
		{func(g *store.Group) error { g.ID = "group_other"; return nil }, store.ErrInvalid},
		{func(g *store.Group) error { g.DisplayName = ""; return nil }, store.ErrInvalid},
	} {
		_, err := b.Groups.Patch(ctx(), acme, g.ID, store.GroupPatch{Attrs: c.fn, Add: []string{bob.ID}})
		assert.ErrorIs(t, err, c.want)
	}
	got := mustGetGroup(t, b, acme, g.ID)
	assert.Equal(t, "Staff", got.DisplayName)
	assert.Equal(t, []string{ann.ID}, memberValues(got))
	assert.True(t, g.Meta.LastModified.Equal(got.Meta.LastModified))
}

// LastModified becomes Modified when the membership or the attributes change, unless Attrs set
// it; Created stays.
func testPatchModified(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	g, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Staff", Meta: store.Meta{Created: day(1, 1, 0)}})
	require.NoError(t, err)
	got := mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{ann.ID}, Modified: day(2, 1, 0)})
	assert.True(t, day(2, 1, 0).Equal(got.Meta.LastModified), "after an add: %v", got.Meta.LastModified)
	assert.True(t, day(1, 1, 0).Equal(got.Meta.Created))
	got = mustPatch(t, b, g.ID, store.GroupPatch{Attrs: func(g *store.Group) error { g.ExternalID = "x"; return nil }, Modified: day(3, 1, 0)})
	assert.True(t, day(3, 1, 0).Equal(got.Meta.LastModified), "after an attribute change")
	got = mustPatch(t, b, g.ID, store.GroupPatch{Attrs: func(g *store.Group) error {
		g.Meta.LastModified = day(4, 1, 0)
		return nil
	}, Remove: []string{ann.ID}, Modified: day(5, 1, 0)})
	assert.True(t, day(4, 1, 0).Equal(got.Meta.LastModified), "a LastModified Attrs set is kept")
	before := time.Now().Add(-time.Minute)
	got = mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{ann.ID}})
	assert.True(t, got.Meta.LastModified.After(before), "zero Modified: the store's clock")
	assert.True(t, got.Meta.LastModified.Equal(mustGetGroup(t, b, acme, g.ID).Meta.LastModified))
}

// MaxMembers refuses a Patch that leaves more members than it allows and more than there were;
// one that shrinks or keeps the size passes.
func testPatchMaxMembers(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	var ids []string
	for i := range 4 {
		ids = append(ids, mustUser(t, b, acme, fmt.Sprintf("u%d", i)).ID)
	}
	g := mustGroup(t, b, acme, "Staff", ids[0], ids[1], ids[2])
	_, err := b.Groups.Patch(ctx(), acme, g.ID, store.GroupPatch{Add: []string{ids[3]}, MaxMembers: 3})
	assert.ErrorIs(t, err, store.ErrTooManyMembers)
	assert.Len(t, mustGetGroup(t, b, acme, g.ID).Members, 3, "nothing stored")
	// Above a lower limit, a patch that does not grow the group passes.
	mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{ids[3]}, Remove: []string{ids[0]}, MaxMembers: 2})
	mustPatch(t, b, g.ID, store.GroupPatch{Remove: []string{ids[1]}, MaxMembers: 1})
	_, err = b.Groups.Patch(ctx(), acme, g.ID, store.GroupPatch{Add: []string{ids[0]}, MaxMembers: 2})
	assert.ErrorIs(t, err, store.ErrTooManyMembers)
	// The count follows Update and adds of members there already.
	_, err = b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error { g.Members = memberList(ids[0]); return nil })
	require.NoError(t, err)
	mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{ids[0], ids[1]}, MaxMembers: 2})
	_, err = b.Groups.Patch(ctx(), acme, g.ID, store.GroupPatch{Add: []string{ids[2]}, MaxMembers: 2})
	assert.ErrorIs(t, err, store.ErrTooManyMembers)
}

// A user's Delete leaves its groups one member fewer for MaxMembers.
func testPatchMaxMembersAfterUserDelete(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann, bob, cy := mustUser(t, b, acme, "ann"), mustUser(t, b, acme, "bob"), mustUser(t, b, acme, "cy")
	g := mustGroup(t, b, acme, "Staff", ann.ID, bob.ID)
	require.NoError(t, b.Users.Delete(ctx(), acme, ann.ID))
	mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{cy.ID}, MaxMembers: 2})
	assert.Equal(t, []string{bob.ID, cy.ID}, orderedMembers(t, b, g.ID))
}

// Filters on members and on users' groups see what Patch did, and a value filter sees each
// member's sub-attributes together.
func testPatchFiltersFollow(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann, bob, cy := mustUser(t, b, acme, "ann"), mustUser(t, b, acme, "bob"), mustUser(t, b, acme, "cy")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	other := mustGroup(t, b, acme, "Other", bob.ID)
	mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{bob.ID, cy.ID}, Remove: []string{ann.ID}})
	count := func(f string) []string {
		t.Helper()
		p, err := b.Groups.List(ctx(), acme, store.Query{Filter: parseGroups(t, f), Count: -1})
		require.NoError(t, err, f)
		return groupNames(p.Resources)
	}
	assert.Equal(t, []string{}, count(`members.value eq "`+ann.ID+`"`))
	assert.Equal(t, []string{"Staff", "Other"}, count(`members.value eq "`+bob.ID+`"`))
	assert.Equal(t, []string{"Staff"}, count(`members[value eq "`+cy.ID+`" and display eq "cy"]`))
	assert.Equal(t, []string{}, count(`members[value eq "`+cy.ID+`" and display eq "bob"]`))
	assert.Equal(t, []string{}, count(`members.display eq "ann"`))
	_, err := b.Users.Update(ctx(), acme, cy.ID, func(u *store.User) error { u.UserName = "cyrus"; return nil })
	require.NoError(t, err)
	assert.Equal(t, []string{"Staff"}, count(`members[value eq "`+cy.ID+`" and display eq "cyrus"]`), "after a rename")
	users, err := b.Users.List(ctx(), acme, store.Query{Filter: parseUsers(t, `groups.value eq "`+g.ID+`"`), Count: -1})
	require.NoError(t, err)
	assert.Equal(t, []string{"bob", "cyrus"}, userNames(users.Resources))
	_ = other
}

// An Update after Patches sees the members in order, and Patches after it go on from there.
func testPatchThenUpdate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann, bob, cy, dan := mustUser(t, b, acme, "ann"), mustUser(t, b, acme, "bob"), mustUser(t, b, acme, "cy"), mustUser(t, b, acme, "dan")
	g := mustGroup(t, b, acme, "Staff", ann.ID, bob.ID)
	mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{cy.ID}, Remove: []string{ann.ID}})
	var seen []string
	_, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
		for _, m := range g.Members {
			seen = append(seen, m.Value)
		}
		g.Members = append(g.Members, store.Member{Value: ann.ID})
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{bob.ID, cy.ID}, seen)
	mustPatch(t, b, g.ID, store.GroupPatch{Add: []string{dan.ID}, Remove: []string{bob.ID}})
	assert.Equal(t, []string{cy.ID, ann.ID, dan.ID}, orderedMembers(t, b, g.ID))
	p, err := b.Groups.List(ctx(), acme, store.Query{Filter: parseGroups(t, `members[value eq "`+dan.ID+`" and display eq "dan"]`), Count: -1})
	require.NoError(t, err)
	assert.Equal(t, 1, p.TotalResults)
}

// Patch records the events Update would: group.updated with the group and its members when
// the attributes changed, then one member event a user; a Patch that changes nothing records
// none.
func testPatchEvents(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann, bob, cy := mustUser(t, b, acme, "ann"), mustUser(t, b, acme, "bob"), mustUser(t, b, acme, "cy")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	c := changeBy("key_a")
	_, err := b.Groups.Patch(c, acme, g.ID, store.GroupPatch{Add: []string{bob.ID, cy.ID}, Remove: []string{ann.ID}})
	require.NoError(t, err)
	_, err = b.Groups.Patch(c, acme, g.ID, store.GroupPatch{Add: []string{bob.ID}, Remove: []string{ann.ID}})
	require.NoError(t, err)
	_, err = b.Groups.Patch(c, acme, g.ID, store.GroupPatch{
		Attrs: func(g *store.Group) error { g.DisplayName = "All staff"; return nil }, Remove: []string{cy.ID}})
	require.NoError(t, err)
	events := allEvents(t, b, acme)
	require.Equal(t, []store.EventType{store.EventGroupMemberAdded, store.EventGroupMemberAdded, store.EventGroupMemberRemoved,
		store.EventGroupUpdated, store.EventGroupMemberRemoved}, eventTypes(events))
	assert.Equal(t, map[string]any{"group": g.ID, "user": bob.ID}, dataOf(t, events[0]))
	assert.Equal(t, map[string]any{"group": g.ID, "user": cy.ID}, dataOf(t, events[1]))
	assert.Equal(t, map[string]any{"group": g.ID, "user": ann.ID}, dataOf(t, events[2]))
	assert.Equal(t, "All staff", dataOf(t, events[3])["DisplayName"])
	assert.Len(t, dataOf(t, events[3])["Members"], 1, "group.updated carries the members after the change")
	assert.Equal(t, map[string]any{"group": g.ID, "user": cy.ID}, dataOf(t, events[4]))
	for _, e := range events {
		assert.Equal(t, "key_a", e.Actor)
		assert.Equal(t, g.ID, e.SubjectID)
	}
}

// Concurrent Patches that each add a member all take effect, each member once.
func testPatchConcurrentAdds(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 50
	var ids []string
	for i := range n {
		ids = append(ids, mustUser(t, b, acme, fmt.Sprintf("member%03d", i)).ID)
	}
	g := mustGroup(t, b, acme, "Everyone", ids[0])
	errs := parallel(n, func(i int) error {
		_, err := b.Groups.Patch(ctx(), acme, g.ID, store.GroupPatch{Add: []string{ids[i], ids[0]}, MaxMembers: n})
		return err
	})
	for i, err := range errs {
		assert.NoError(t, err, "Patch %d", i)
	}
	assert.Equal(t, sorted(ids...), memberValues(mustGetGroup(t, b, acme, g.ID)))
	_, err := b.Groups.Patch(ctx(), acme, g.ID, store.GroupPatch{Add: []string{mustUser(t, b, acme, "one-more").ID}, MaxMembers: n})
	assert.ErrorIs(t, err, store.ErrTooManyMembers, "the count saw every concurrent add")
}

// GetWithoutMembers returns what Get returns less the members.
func testGetWithoutMembers(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	g, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Staff", ExternalID: "ext", Members: memberList(ann.ID)})
	require.NoError(t, err)
	got, err := b.Groups.GetWithoutMembers(ctx(), acme, g.ID)
	require.NoError(t, err)
	full := mustGetGroup(t, b, acme, g.ID)
	require.Len(t, full.Members, 1)
	full.Members = nil
	assert.Nil(t, got.Members)
	assert.Equal(t, full.ID, got.ID)
	assert.Equal(t, full.DisplayName, got.DisplayName)
	assert.Equal(t, full.ExternalID, got.ExternalID)
	assert.True(t, full.Meta.Created.Equal(got.Meta.Created))
	assert.True(t, full.Meta.LastModified.Equal(got.Meta.LastModified))
}

// Query.WithoutMembers lists the groups with Members nil; filters on members still apply.
func testListWithoutMembers(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	mustGroup(t, b, acme, "Staff", ann.ID)
	mustGroup(t, b, acme, "Empty")
	for _, f := range []string{"", `members.value eq "` + ann.ID + `"`} {
		q := store.Query{Count: -1, WithoutMembers: true}
		if f != "" {
			q.Filter = parseGroups(t, f)
		}
		p, err := b.Groups.List(ctx(), acme, q)
		require.NoError(t, err)
		require.NotEmpty(t, p.Resources)
		assert.Equal(t, "Staff", p.Resources[0].DisplayName)
		for _, g := range p.Resources {
			assert.Nil(t, g.Members, f)
		}
	}
}
