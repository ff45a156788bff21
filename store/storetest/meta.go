package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

func metaTests() []test {
	return []test{
		{"UserCreateSetsTimes", testMetaUserCreate},
		{"UserCreateKeepsCallerTimes", testMetaUserCreateKeeps},
		{"UserUpdateSetsLastModified", testMetaUserUpdate},
		{"UserUpdateWithoutChangeKeepsLastModified", testMetaUserNoop},
		{"GroupCreateSetsTimes", testMetaGroupCreate},
		{"GroupUpdateSetsLastModified", testMetaGroupUpdate},
		{"GroupUpdateWithoutChangeKeepsLastModified", testMetaGroupNoop},
	}
}

// between asserts that t is in [lo, hi].
func between(t *testing.T, got, lo, hi time.Time, what string) {
	t.Helper()
	assert.False(t, got.Before(lo) || got.After(hi), "%s %v is not between %v and %v", what, got, lo, hi)
}

// listNames returns the userNames (users) or displayNames (groups) of the tenant's resources
// that filter f matches.
func listNames(t *testing.T, b store.Backend, rt *schema.ResourceType, f string) []string {
	t.Helper()
	e, err := filter.Parse(f, rt)
	require.NoError(t, err, f)
	if rt == schema.Group() {
		p, err := b.Groups.List(ctx(), acme, store.Query{Filter: e, Count: -1})
		require.NoError(t, err, f)
		return groupNames(p.Resources)
	}
	p, err := b.Users.List(ctx(), acme, store.Query{Filter: e, Count: -1})
	require.NoError(t, err, f)
	return userNames(p.Resources)
}

// rfc3339 is t as a filter literal.
func rfc3339(t time.Time) string { return `"` + t.UTC().Format(time.RFC3339Nano) + `"` }

// Create: a user created without meta times gets the time of the create as both, and date
// filters find it.
func testMetaUserCreate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	lo := time.Now()
	u, err := b.Users.Create(ctx(), acme, store.User{UserName: "alice"})
	require.NoError(t, err)
	hi := time.Now()
	between(t, u.Meta.Created, lo, hi, "created")
	assert.True(t, u.Meta.LastModified.Equal(u.Meta.Created), "lastModified %v, created %v", u.Meta.LastModified, u.Meta.Created)
	got := mustGetUser(t, b, acme, u.ID)
	assert.True(t, got.Meta.Created.Equal(u.Meta.Created), "Get: created %v, want %v", got.Meta.Created, u.Meta.Created)
	assert.True(t, got.Meta.LastModified.Equal(u.Meta.LastModified), "Get: lastModified %v", got.Meta.LastModified)

	for f, want := range map[string][]string{
		`meta.created gt ` + rfc3339(lo.Add(-time.Second)):      {"alice"},
		`meta.created ge ` + rfc3339(u.Meta.Created):            {"alice"},
		`meta.lastModified ge ` + rfc3339(lo.Add(-time.Second)): {"alice"},
		`meta.lastModified pr`:                                  {"alice"},
		`meta.created gt ` + rfc3339(hi.Add(time.Second)):       {},
	} {
		assert.Equal(t, want, listNames(t, b, schema.User(), f), f)
	}
}

// Create keeps the meta times its caller sets; a zero lastModified becomes created.
func testMetaUserCreateKeeps(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, tc := range []struct {
		name string
		meta store.Meta
		want store.Meta
	}{
		{"both", store.Meta{Created: day(1, 2, 0), LastModified: day(3, 4, 0)}, store.Meta{Created: day(1, 2, 0), LastModified: day(3, 4, 0)}},
		{"created only", store.Meta{Created: day(1, 2, 0)}, store.Meta{Created: day(1, 2, 0), LastModified: day(1, 2, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := b.Users.Create(ctx(), acme, store.User{UserName: tc.name, Meta: tc.meta})
			require.NoError(t, err)
			got := mustGetUser(t, b, acme, u.ID).Meta
			assert.True(t, got.Created.Equal(tc.want.Created), "created %v, want %v", got.Created, tc.want.Created)
			assert.True(t, got.LastModified.Equal(tc.want.LastModified), "lastModified %v, want %v", got.LastModified, tc.want.LastModified)
		})
	}
}

// Update: when fn changes the user and leaves lastModified, lastModified becomes the time of the
// update and created stays; when fn sets lastModified itself, the store keeps it.
func testMetaUserUpdate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	old := store.Meta{Created: day(1, 2, 0), LastModified: day(1, 3, 0)}
	u, err := b.Users.Create(ctx(), acme, store.User{UserName: "alice", Meta: old})
	require.NoError(t, err)
	lo := time.Now()
	got, err := b.Users.Update(ctx(), acme, u.ID, func(u *store.User) error {
		u.DisplayName = "Alice"
		return nil
	})
	require.NoError(t, err)
	hi := time.Now()
	between(t, got.Meta.LastModified, lo, hi, "lastModified")
	assert.True(t, got.Meta.Created.Equal(old.Created), "created %v", got.Meta.Created)
	stored := mustGetUser(t, b, acme, u.ID)
	assert.True(t, stored.Meta.LastModified.Equal(got.Meta.LastModified), "Get: lastModified %v", stored.Meta.LastModified)
	assert.Equal(t, []string{"alice"}, listNames(t, b, schema.User(), `meta.lastModified ge `+rfc3339(lo)))
	assert.Equal(t, []string{"alice"}, listNames(t, b, schema.User(), `meta.created lt `+rfc3339(lo)))

	set := day(5, 6, 0)
	got, err = b.Users.Update(ctx(), acme, u.ID, func(u *store.User) error {
		u.DisplayName = "Alice A."
		u.Meta.LastModified = set
		return nil
	})
	require.NoError(t, err)
	assert.True(t, got.Meta.LastModified.Equal(set), "fn's lastModified: %v", got.Meta.LastModified)
}

// Update: an update that changes nothing (or only what the store derives, the groups) keeps
// lastModified, and so does an fn that zeroes the meta times.
func testMetaUserNoop(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	old := store.Meta{Created: day(1, 2, 0), LastModified: day(1, 3, 0)}
	u, err := b.Users.Create(ctx(), acme, store.User{UserName: "alice", DisplayName: "Alice", Meta: old})
	require.NoError(t, err)
	g := mustGroup(t, b, acme, "Staff", u.ID)
	for name, fn := range map[string]func(*store.User) error{
		"nothing":         func(*store.User) error { return nil },
		"same value":      func(u *store.User) error { u.DisplayName = "Alice"; return nil },
		"groups":          func(u *store.User) error { u.Groups = nil; return nil },
		"empty for none":  func(u *store.User) error { u.Emails = []store.MultiValue{}; return nil },
		"zeroed meta":     func(u *store.User) error { u.Meta = store.Meta{}; return nil },
		"groups appended": func(u *store.User) error { u.Groups = append(u.Groups, store.GroupRef{Value: g.ID}); return nil },
	} {
		t.Run(name, func(t *testing.T) {
			got, err := b.Users.Update(ctx(), acme, u.ID, fn)
			require.NoError(t, err)
			assert.True(t, got.Meta.Created.Equal(old.Created), "created %v", got.Meta.Created)
			assert.True(t, got.Meta.LastModified.Equal(old.LastModified), "lastModified %v, want %v", got.Meta.LastModified, old.LastModified)
		})
	}
}

// Groups.Create: a group created without meta times gets the time of the create as both.
func testMetaGroupCreate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	lo := time.Now()
	g, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Staff"})
	require.NoError(t, err)
	hi := time.Now()
	between(t, g.Meta.Created, lo, hi, "created")
	assert.True(t, g.Meta.LastModified.Equal(g.Meta.Created), "lastModified %v", g.Meta.LastModified)
	got := mustGetGroup(t, b, acme, g.ID)
	assert.True(t, got.Meta.Created.Equal(g.Meta.Created), "Get: created %v", got.Meta.Created)
	assert.Equal(t, []string{"Staff"}, listNames(t, b, schema.Group(), `meta.created ge `+rfc3339(g.Meta.Created)))
	assert.Equal(t, []string{"Staff"}, listNames(t, b, schema.Group(), `meta.lastModified gt `+rfc3339(lo.Add(-time.Second))))
}

// Groups.Update: adding a member is a change; lastModified becomes the time of the update.
func testMetaGroupUpdate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	old := store.Meta{Created: day(1, 2, 0), LastModified: day(1, 3, 0)}
	g, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Staff", Meta: old})
	require.NoError(t, err)
	lo := time.Now()
	got, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
		g.Members = append(g.Members, store.Member{Value: ann.ID})
		return nil
	})
	require.NoError(t, err)
	between(t, got.Meta.LastModified, lo, time.Now(), "lastModified")
	assert.True(t, got.Meta.Created.Equal(old.Created), "created %v", got.Meta.Created)
	assert.Equal(t, []string{"Staff"}, listNames(t, b, schema.Group(), `meta.lastModified ge `+rfc3339(lo)))
}

// Groups.Update: an update that changes nothing, or only members' derived display and type,
// keeps lastModified.
func testMetaGroupNoop(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	old := store.Meta{Created: day(1, 2, 0), LastModified: day(1, 3, 0)}
	g, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Staff", Members: memberList(ann.ID), Meta: old})
	require.NoError(t, err)
	for name, fn := range map[string]func(*store.Group) error{
		"nothing":         func(*store.Group) error { return nil },
		"member display":  func(g *store.Group) error { g.Members = memberList(ann.ID); return nil },
		"repeated member": func(g *store.Group) error { g.Members = memberList(ann.ID, ann.ID); return nil },
	} {
		t.Run(name, func(t *testing.T) {
			got, err := b.Groups.Update(ctx(), acme, g.ID, fn)
			require.NoError(t, err)
			assert.True(t, got.Meta.LastModified.Equal(old.LastModified), "lastModified %v, want %v", got.Meta.LastModified, old.LastModified)
		})
	}
}
