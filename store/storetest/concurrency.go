package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func concurrencyTests() []test {
	return []test{
		{"GroupMemberAddsAllTakeEffect", testConcurrentGroupMemberAdds},
		{"UserUpdatesNotLost", testConcurrentUserUpdates},
		{"CreateSameUserName", testConcurrentCreateSameUserName},
		{"RenameToSameUserName", testConcurrentRenameToSameUserName},
		{"CreateSameUserID", testConcurrentCreateSameUserID},
		{"CreateSameGroupID", testConcurrentCreateSameGroupID},
		{"CreateSameTenant", testConcurrentCreateSameTenant},
		{"CreateSameAPIKeyHash", testConcurrentCreateSameAPIKeyHash},
		{"TouchKeepsLatest", testConcurrentTouch},
		{"UserDeleteRacesMemberAdd", testConcurrentDeleteRacesMemberAdd},
	}
}

// parallel runs fn(0) … fn(n-1) in n goroutines released together and returns their errors by
// index. Assertions belong on the test goroutine, after parallel returns.
func parallel(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// exactlyOneWins checks that one error is nil and every other is target.
func exactlyOneWins(t *testing.T, errs []error, target error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			assert.Equal(t, -1, winner, "call %d succeeded after call %d did", i, winner)
			winner = i
		case !errors.Is(err, target):
			t.Errorf("call %d: got %v, want nil or %v", i, err, target)
		}
	}
	require.NotEqual(t, -1, winner, "no call succeeded")
	return winner
}

// caseVariant spells s with the letters whose bit is set in i in upper case.
func caseVariant(s string, i int) string {
	b := []byte(s)
	for j := range b {
		if i&(1<<j) != 0 {
			b[j] = b[j] - 'a' + 'A'
		}
	}
	return string(b)
}

// Groups.Update: concurrent Updates that each add a member all take effect.
func testConcurrentGroupMemberAdds(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 100
	var ids []string
	for i := range n {
		ids = append(ids, mustUser(t, b, acme, fmt.Sprintf("member%03d", i)).ID)
	}
	g := mustGroup(t, b, acme, "Everyone")
	errs := parallel(n, func(i int) error {
		_, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
			g.Members = append(g.Members, store.Member{Value: ids[i]})
			return nil
		})
		return err
	})
	for i, err := range errs {
		assert.NoError(t, err, "Update %d", i)
	}
	assert.Equal(t, sorted(ids...), memberValues(mustGetGroup(t, b, acme, g.ID)))
	for _, id := range []string{ids[0], ids[n/2], ids[n-1]} {
		assert.Equal(t, []string{g.ID}, groupRefValues(mustGetUser(t, b, acme, id)))
	}
}

// Users.Update: no other write to the user comes between fn's read and the write.
func testConcurrentUserUpdates(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "ann")
	const n = 50
	errs := parallel(n, func(i int) error {
		_, err := b.Users.Update(ctx(), acme, u.ID, func(u *store.User) error {
			u.Roles = append(u.Roles, store.MultiValue{Value: fmt.Sprintf("role%02d", i)})
			return nil
		})
		return err
	})
	var want []string
	for i, err := range errs {
		assert.NoError(t, err, "Update %d", i)
		want = append(want, fmt.Sprintf("role%02d", i))
	}
	var got []string
	for _, r := range mustGetUser(t, b, acme, u.ID).Roles {
		got = append(got, r.Value)
	}
	assert.Equal(t, sorted(want...), sorted(got...))
}

// Users.Create: of concurrent creates of one userName (in any case) exactly one succeeds; the
// others get ErrConflict.
func testConcurrentCreateSameUserName(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 50
	errs := parallel(n, func(i int) error {
		_, err := b.Users.Create(ctx(), acme, store.User{UserName: caseVariant("concurrent", i), Active: true})
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	assert.Equal(t, []string{caseVariant("concurrent", winner)}, userNames(allUsers(t, b, acme)))
}

// Users.Update: of concurrent renames of different users to one userName exactly one succeeds.
func testConcurrentRenameToSameUserName(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 20
	var ids []string
	for i := range n {
		ids = append(ids, mustUser(t, b, acme, fmt.Sprintf("user%02d", i)).ID)
	}
	errs := parallel(n, func(i int) error {
		_, err := b.Users.Update(ctx(), acme, ids[i], func(u *store.User) error {
			u.UserName = caseVariant("target", i)
			return nil
		})
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	names := userNames(allUsers(t, b, acme))
	var renamed []string
	for _, name := range names {
		if strings.EqualFold(name, "target") {
			renamed = append(renamed, name)
		}
	}
	assert.Equal(t, []string{caseVariant("target", winner)}, renamed)
	assert.Len(t, names, n)
}

// Users.Create: of concurrent creates with one caller-set id exactly one succeeds.
func testConcurrentCreateSameUserID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 50
	errs := parallel(n, func(i int) error {
		_, err := b.Users.Create(ctx(), acme, store.User{ID: "user_same", UserName: fmt.Sprintf("user%02d", i)})
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	assert.Equal(t, []string{fmt.Sprintf("user%02d", winner)}, userNames(allUsers(t, b, acme)))
	assert.Equal(t, fmt.Sprintf("user%02d", winner), mustGetUser(t, b, acme, "user_same").UserName)
}

// Groups.Create: of concurrent creates with one caller-set id exactly one succeeds.
func testConcurrentCreateSameGroupID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 50
	errs := parallel(n, func(i int) error {
		_, err := b.Groups.Create(ctx(), acme, store.Group{ID: "group_same", DisplayName: fmt.Sprintf("group%02d", i)})
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	assert.Equal(t, []string{fmt.Sprintf("group%02d", winner)}, groupNames(allGroups(t, b, acme)))
}

// Tenants.Create: of concurrent creates of one id exactly one succeeds.
func testConcurrentCreateSameTenant(t *testing.T, b store.Backend) {
	const n = 50
	errs := parallel(n, func(i int) error {
		return b.Tenants.Create(ctx(), store.Tenant{ID: acme, DisplayName: fmt.Sprintf("tenant%02d", i)})
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	ts, err := b.Tenants.List(ctx())
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.Equal(t, fmt.Sprintf("tenant%02d", winner), ts[0].DisplayName)
}

// APIKeys.Create: of concurrent creates of one secret hash exactly one succeeds.
func testConcurrentCreateSameAPIKeyHash(t *testing.T, b store.Backend) {
	const n = 50
	errs := parallel(n, func(i int) error {
		k := newKey(fmt.Sprintf("key_%02d", i), "same")
		_, err := b.APIKeys.Create(ctx(), k)
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	k, err := b.APIKeys.ByHash(ctx(), secretHash("same"))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("key_%02d", winner), k.ID)
	keys, err := b.APIKeys.List(ctx())
	require.NoError(t, err)
	assert.Len(t, keys, 1)
}

// APIKeys.Touch: LastUsed never moves back, so concurrent touches leave the latest time.
func testConcurrentTouch(t *testing.T, b store.Backend) {
	mustKey(t, b, newKey("key_1", "one"))
	const n = 50
	base := day(8, 1, 0)
	errs := parallel(n, func(i int) error {
		// The latest time is touched by a goroutine in the middle.
		return b.APIKeys.Touch(ctx(), "key_1", base.Add(time.Duration((i*37)%n)*time.Second))
	})
	for i, err := range errs {
		assert.NoError(t, err, "Touch %d", i)
	}
	want := base.Add((n - 1) * time.Second)
	got := mustGetKey(t, b, "key_1")
	assert.True(t, want.Equal(got.LastUsed), "LastUsed: want %v, got %v", want, got.LastUsed)
}

// Members are users of the group's tenant, also when a user's Delete races an Update that adds
// it: afterwards no group lists a deleted user, and each add either took effect or reported
// ErrMemberNotFound.
func testConcurrentDeleteRacesMemberAdd(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 30
	var ids []string
	for i := range n {
		ids = append(ids, mustUser(t, b, acme, fmt.Sprintf("user%02d", i)).ID)
	}
	g := mustGroup(t, b, acme, "Racing")
	errs := parallel(2*n, func(i int) error {
		if i%2 == 0 {
			return b.Users.Delete(ctx(), acme, ids[i/2])
		}
		_, err := b.Groups.Update(ctx(), acme, g.ID, func(g *store.Group) error {
			g.Members = append(g.Members, store.Member{Value: ids[i/2]})
			return nil
		})
		return err
	})
	for i, err := range errs {
		if i%2 == 0 {
			assert.NoError(t, err, "Delete of user %d", i/2)
		} else if err != nil {
			assert.ErrorIs(t, err, store.ErrMemberNotFound, "adding user %d", i/2)
		}
	}
	assert.Empty(t, mustGetGroup(t, b, acme, g.ID).Members, "the group lists deleted users")
	assert.Empty(t, allUsers(t, b, acme))
	p, err := b.Groups.List(ctx(), acme, store.Query{Filter: parseGroups(t, `members pr`), Count: -1})
	require.NoError(t, err)
	assert.Empty(t, groupNames(p.Resources))
}
