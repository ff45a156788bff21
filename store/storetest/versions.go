package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// The Meta.Version contract (store.Meta, Users.Update, Users.DeleteIfVersion and their Groups
// twins).
func versionTests() []test {
	return []test{
		{"UserCreateIsVersion1", testVersionUserCreate},
		{"UserUpdateMovesVersion", testVersionUserUpdate},
		{"UserListAndGetShowVersion", testVersionUserRead},
		{"GroupCreateIsVersion1", testVersionGroupCreate},
		{"GroupUpdateMovesVersion", testVersionGroupUpdate},
		{"UserDeleteIfVersion", testVersionUserDelete},
		{"GroupDeleteIfVersion", testVersionGroupDelete},
		{"UserDeleteMovesGroupVersions", testVersionUserDeleteMovesGroups},
		{"ConcurrentConditionalUserUpdates", testVersionConcurrentUserUpdates},
		{"ConcurrentConditionalGroupUpdates", testVersionConcurrentGroupUpdates},
		{"ConcurrentConditionalDeleteAndUpdate", testVersionConcurrentDeleteUpdate},
	}
}

// ifVersion is an update function that changes the resource with change when its version is
// want, and returns ErrVersionMismatch otherwise.
func ifVersion[T any](meta func(*T) *store.Meta, want int64, change func(*T)) func(*T) error {
	return func(v *T) error {
		if got := meta(v).Version; got != want {
			return fmt.Errorf("at version %d: %w", got, store.ErrVersionMismatch)
		}
		change(v)
		return nil
	}
}

func userMeta(u *store.User) *store.Meta   { return &u.Meta }
func groupMeta(g *store.Group) *store.Meta { return &g.Meta }

// Create: a created user is at version 1, whatever the caller set.
func testVersionUserCreate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u, err := b.Users.Create(ctx(), acme, store.User{UserName: "ann", Meta: store.Meta{Version: 42}})
	require.NoError(t, err)
	assert.Equal(t, int64(1), u.Meta.Version)
	got, err := b.Users.Get(ctx(), acme, u.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(1), got.Meta.Version)
}

// Update: a change moves the version on by one, an update that changes nothing keeps it, and a
// version the function sets is ignored.
func testVersionUserUpdate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "ann")
	steps := []struct {
		name string
		fn   func(*store.User)
		want int64
	}{
		{"change", func(u *store.User) { u.Title = "Boss" }, 2},
		{"no change", func(u *store.User) {}, 2},
		{"same value", func(u *store.User) { u.Title = "Boss" }, 2},
		{"change and set version", func(u *store.User) { u.Title = "Chief"; u.Meta.Version = 1 }, 3},
		{"set version only", func(u *store.User) { u.Meta.Version = 100 }, 3},
		{"rename", func(u *store.User) { u.UserName = "anna" }, 4},
	}
	for _, s := range steps {
		got, err := b.Users.Update(ctx(), acme, u.ID, func(u *store.User) error { s.fn(u); return nil })
		require.NoError(t, err, s.name)
		assert.Equal(t, s.want, got.Meta.Version, s.name)
		read, err := b.Users.Get(ctx(), acme, u.ID)
		require.NoError(t, err, s.name)
		assert.Equal(t, s.want, read.Meta.Version, s.name)
	}
	// A failed update stores nothing, so the version stays.
	refused := errors.New("refused")
	_, err := b.Users.Update(ctx(), acme, u.ID, func(u *store.User) error { u.Title = "x"; return refused })
	require.ErrorIs(t, err, refused)
	read, err := b.Users.Get(ctx(), acme, u.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(4), read.Meta.Version)
}

// Get and List return the stored version.
func testVersionUserRead(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	mustUser(t, b, acme, "bob")
	for i := range 3 {
		_, err := b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error { u.Title = fmt.Sprint("title ", i); return nil })
		require.NoError(t, err)
	}
	p, err := b.Users.List(ctx(), acme, store.Query{Count: -1})
	require.NoError(t, err)
	require.Len(t, p.Resources, 2)
	assert.Equal(t, int64(4), p.Resources[0].Meta.Version)
	assert.Equal(t, int64(1), p.Resources[1].Meta.Version)
}

func testVersionGroupCreate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	g, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Staff", Meta: store.Meta{Version: 9}})
	require.NoError(t, err)
	assert.Equal(t, int64(1), g.Meta.Version)
	got, err := b.Groups.Get(ctx(), acme, g.ID)
	require.NoError(t, err)
	assert.Equal(t, int64(1), got.Meta.Version)
	p, err := b.Groups.List(ctx(), acme, store.Query{Count: -1})
	require.NoError(t, err)
	require.Len(t, p.Resources, 1)
	assert.Equal(t, int64(1), p.Resources[0].Meta.Version)
}

// Groups.Update: a change of the displayName or of the members moves the version; a member
// list in another order of the same values, or an unchanged group, keeps it.
func testVersionGroupUpdate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, acme, "bob")
	g := mustGroup(t, b, acme, "Staff")
	steps := []struct {
		name string
		fn   func(*store.Group)
		want int64
	}{
		{"add member", func(g *store.Group) { g.Members = append(g.Members, store.Member{Value: ann.ID}) }, 2},
		{"no change", func(g *store.Group) {}, 2},
		{"add second member", func(g *store.Group) { g.Members = append(g.Members, store.Member{Value: bob.ID}) }, 3},
		{"remove member", func(g *store.Group) { g.Members = g.Members[:1] }, 4},
		{"rename", func(g *store.Group) { g.DisplayName = "All staff" }, 5},
		{"set version only", func(g *store.Group) { g.Meta.Version = 1 }, 5},
	}
	for _, s := range steps {
		got, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error { s.fn(g); return nil })
		require.NoError(t, err, s.name)
		assert.Equal(t, s.want, got.Meta.Version, s.name)
		read, err := b.Groups.Get(ctx(), acme, g.ID)
		require.NoError(t, err, s.name)
		assert.Equal(t, s.want, read.Meta.Version, s.name)
	}
}

// DeleteIfVersion: another version is ErrVersionMismatch and the user stays; its own version
// removes it with its memberships; a missing user is ErrNotFound.
func testVersionUserDelete(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	_, err := b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error { u.Title = "Boss"; return nil })
	require.NoError(t, err)

	err = b.Users.DeleteIfVersion(ctx(), acme, ann.ID, 1)
	require.ErrorIs(t, err, store.ErrVersionMismatch)
	still, err := b.Users.Get(ctx(), acme, ann.ID)
	require.NoError(t, err)
	assert.Equal(t, "Boss", still.Title)

	require.NoError(t, b.Users.DeleteIfVersion(ctx(), acme, ann.ID, 2))
	_, err = b.Users.Get(ctx(), acme, ann.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	staff, err := b.Groups.Get(ctx(), acme, g.ID)
	require.NoError(t, err)
	assert.Empty(t, staff.Members)
	require.ErrorIs(t, b.Users.DeleteIfVersion(ctx(), acme, ann.ID, 2), store.ErrNotFound)
}

func testVersionGroupDelete(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	g := mustGroup(t, b, acme, "Staff", ann.ID)

	require.ErrorIs(t, b.Groups.DeleteIfVersion(ctx(), acme, g.ID, 2), store.ErrVersionMismatch)
	_, err := b.Groups.Get(ctx(), acme, g.ID)
	require.NoError(t, err)

	require.NoError(t, b.Groups.DeleteIfVersion(ctx(), acme, g.ID, 1))
	_, err = b.Groups.Get(ctx(), acme, g.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	u, err := b.Users.Get(ctx(), acme, ann.ID)
	require.NoError(t, err)
	assert.Empty(t, u.Groups)
	require.ErrorIs(t, b.Groups.DeleteIfVersion(ctx(), acme, g.ID, 1), store.ErrNotFound)
}

// conditionalWriters is how many writers race in the conditional-update tests.
const conditionalWriters = 20

// Update with a version check in fn: of concurrent writers that all read version 1, exactly
// one stores its change; the others get ErrVersionMismatch, and the user holds the winner's
// change at version 2.
func testVersionConcurrentUserUpdates(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "ann")
	errs := parallel(conditionalWriters, func(i int) error {
		_, err := b.Users.Update(ctx(), acme, u.ID, ifVersion(userMeta, u.Meta.Version, func(u *store.User) {
			u.Title = fmt.Sprintf("writer %d", i)
		}))
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrVersionMismatch)
	got, err := b.Users.Get(ctx(), acme, u.ID)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("writer %d", winner), got.Title)
	assert.Equal(t, int64(2), got.Meta.Version)
}

func testVersionConcurrentGroupUpdates(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	g := mustGroup(t, b, acme, "Staff")
	users := make([]*store.User, conditionalWriters)
	for i := range users {
		users[i] = mustUser(t, b, acme, fmt.Sprintf("user%d", i))
	}
	errs := parallel(conditionalWriters, func(i int) error {
		_, err := b.Groups.Update(ctx(), acme, g.ID, ifVersion(groupMeta, g.Meta.Version, func(g *store.Group) {
			g.Members = append(g.Members, store.Member{Value: users[i].ID})
		}))
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrVersionMismatch)
	got, err := b.Groups.Get(ctx(), acme, g.ID)
	require.NoError(t, err)
	require.Len(t, got.Members, 1)
	assert.Equal(t, users[winner].ID, got.Members[0].Value)
	assert.Equal(t, int64(2), got.Meta.Version)
}

// DeleteIfVersion racing conditional updates of one version: exactly one of them succeeds.
func testVersionConcurrentDeleteUpdate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "ann")
	errs := parallel(conditionalWriters, func(i int) error {
		var err error
		if i%2 == 0 {
			err = b.Users.DeleteIfVersion(ctx(), acme, u.ID, u.Meta.Version)
		} else {
			_, err = b.Users.Update(ctx(), acme, u.ID, ifVersion(userMeta, u.Meta.Version, func(u *store.User) {
				u.Title = fmt.Sprintf("writer %d", i)
			}))
		}
		if errors.Is(err, store.ErrNotFound) {
			return store.ErrVersionMismatch // a loser that came after the winning delete
		}
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrVersionMismatch)
	got, err := b.Users.Get(ctx(), acme, u.ID)
	if winner%2 == 0 {
		require.ErrorIs(t, err, store.ErrNotFound)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("writer %d", winner), got.Title)
	assert.Equal(t, int64(2), got.Meta.Version)
}

// Users.Delete: the deleted user's groups lost a member, so their versions move; other groups
// keep theirs.
func testVersionUserDeleteMovesGroups(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, acme, "bob")
	staff := mustGroup(t, b, acme, "Staff", ann.ID, bob.ID)
	admins := mustGroup(t, b, acme, "Admins", ann.ID)
	others := mustGroup(t, b, acme, "Others", bob.ID)
	require.NoError(t, b.Users.Delete(ctx(), acme, ann.ID))
	for _, want := range []struct {
		id      string
		version int64
	}{{staff.ID, 2}, {admins.ID, 2}, {others.ID, 1}} {
		g, err := b.Groups.Get(ctx(), acme, want.id)
		require.NoError(t, err)
		assert.Equal(t, want.version, g.Meta.Version, g.DisplayName)
	}
}
