package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/schema"
)

func concurrencyTests() []test {
	return []test{
		{"GroupMemberAddsAllTakeEffect", testConcurrentGroupMemberAdds},
		{"UserUpdatesNotLost", testConcurrentUserUpdates},
		{"UserUpdatesRaceGroupWrites", testConcurrentUserUpdatesAndGroups},
		{"CreateSameUserName", testConcurrentCreateSameUserName},
		{"RenameToSameUserName", testConcurrentRenameToSameUserName},
		{"CreateSameUserID", testConcurrentCreateSameUserID},
		{"CreateSameGroupID", testConcurrentCreateSameGroupID},
		{"CreateSameTenant", testConcurrentCreateSameTenant},
		{"CreateSameAPIKeyHash", testConcurrentCreateSameAPIKeyHash},
		{"TouchKeepsLatest", testConcurrentTouch},
		{"UserDeleteRacesMemberAdd", testConcurrentDeleteRacesMemberAdd},
		{"ClientUpdatesAllTakeEffect", testConcurrentClientUpdates},
		{"CreateSameClientID", testConcurrentCreateSameClientID},
		{"CodeConsumedOnce20", testConcurrentConsume(20)},
		{"CodeConsumedOnce200", testConcurrentConsume(200)},
		{"CodesConsumedOnceEach", testConcurrentConsumeManyCodes},
		{"CreateSameCodeHash", testConcurrentCreateSameCodeHash},
		{"InteractionTakenOnce", testConcurrentTake},
		{"InteractionUpdatesAllTakeEffect", testConcurrentInteractionUpdates},
		{"CreateSameInteractionID", testConcurrentCreateSameInteractionID},
		{"PictureFailuresCountedOnce", testConcurrentAddFailure},
		{"PictureCreateOnce", testConcurrentPictureCreate},
		{"PictureFamiliarNetworksBounded", testConcurrentSucceeded},
		{"PushedRequestConsumedOnce", testConcurrentPushedConsume},
		{"PasskeyCreateOnce", testConcurrentPasskeyCreate},
		{"PasskeysPerUserBounded", testConcurrentPasskeyMax},
		{"PasskeyUseOnce", testConcurrentPasskeyUse},
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

// Users.Update racing writes of groups that change the user's groups: every update takes effect,
// and filters on the user's values and groups find it afterwards.
func testConcurrentUserUpdatesAndGroups(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "ann")
	const n = 20
	errs := parallel(2*n, func(i int) error {
		if i%2 == 1 {
			_, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: fmt.Sprintf("G%02d", i/2), Members: memberList(u.ID)})
			return err
		}
		_, err := b.Users.Update(ctx(), acme, u.ID, func(u *store.User) error {
			u.Roles = append(u.Roles, store.MultiValue{Value: fmt.Sprintf("role%02d", i/2)})
			return nil
		})
		return err
	})
	for i, err := range errs {
		require.NoError(t, err, "write %d", i)
	}
	got := mustGetUser(t, b, acme, u.ID)
	assert.Len(t, got.Roles, n)
	assert.Len(t, got.Groups, n)
	for i := range n {
		for _, f := range []string{fmt.Sprintf(`roles.value eq "role%02d"`, i), fmt.Sprintf(`groups.display eq "G%02d"`, i)} {
			assert.Equal(t, []string{"ann"}, listNames(t, b, schema.User(), f), f)
		}
	}
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
	ts, err := b.Tenants.List(ctx(), "", store.MaxTenantPage)
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

// Clients.Update: no other write to the client comes between fn's read and the write, so
// concurrent Updates that each add a redirect URI all take effect.
func testConcurrentClientUpdates(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := mustClient(t, b, newClient(acme, "", "shop"))
	const n = 50
	errs := parallel(n, func(i int) error {
		_, err := b.Clients.Update(ctx(), acme, c.ID, func(c *store.Client) error {
			c.RedirectURIs = append(c.RedirectURIs, fmt.Sprintf("https://shop.example.com/cb/%02d", i))
			return nil
		})
		return err
	})
	want := slices.Clone(c.RedirectURIs)
	for i, err := range errs {
		assert.NoError(t, err, "Update %d", i)
		want = append(want, fmt.Sprintf("https://shop.example.com/cb/%02d", i))
	}
	assert.Equal(t, sorted(want...), sorted(mustGetClient(t, b, acme, c.ID).RedirectURIs...))
}

// Clients.Create: of concurrent creates with one caller-set id exactly one succeeds; the others
// get ErrConflict.
func testConcurrentCreateSameClientID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 50
	errs := parallel(n, func(i int) error {
		_, err := b.Clients.Create(ctx(), newClient(acme, "client_same", fmt.Sprintf("client%02d", i)))
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	assert.Equal(t, []string{fmt.Sprintf("client%02d", winner)}, clientNames(allClients(t, b, acme)))
	assert.Equal(t, fmt.Sprintf("client%02d", winner), mustGetClient(t, b, acme, "client_same").Name)
}

// Codes.Consume: of n concurrent Consumes of one code exactly one returns the grant with a nil
// error; the others return the grant with ErrUsed, and so does every later Consume until
// DeleteExpired removes the code; then Consume reports ErrNotFound.
func testConcurrentConsume(n int) func(t *testing.T, b store.Backend) {
	return func(t *testing.T, b store.Backend) {
		mustTenant(t, b, acme)
		code := newCode(acme, "client_1", "code_race")
		mustCode(t, b, code)
		grants := make([]*store.Code, n)
		errs := parallel(n, func(i int) error {
			var err error
			grants[i], err = b.Codes.Consume(ctx(), code.Hash)
			return err
		})
		exactlyOneWins(t, errs, store.ErrUsed)
		want := normCode(code)
		for i, g := range grants {
			if assert.NotNil(t, g, "Consume %d returned no grant (error %v)", i, errs[i]) {
				assert.Equal(t, want, normCode(*g), "Consume %d's grant (error %v)", i, errs[i])
			}
		}
		consumeUsed(t, b, code, "a later Consume")
		n, err := b.Codes.DeleteExpired(ctx(), code.Expires)
		require.NoError(t, err)
		assert.Zero(t, n, "DeleteExpired at the code's expiry")
		consumeUsed(t, b, code, "after DeleteExpired at the code's expiry")
		n, err = b.Codes.DeleteExpired(ctx(), code.Expires.Add(time.Second))
		require.NoError(t, err)
		assert.Equal(t, 1, n, "DeleteExpired past the code's expiry")
		consumeNotFound(t, b, code.Hash, "after DeleteExpired past the code's expiry")
	}
}

// Codes.Consume: codes consumed at the same time do not affect each other; each is consumed
// exactly once, with its own grant.
func testConcurrentConsumeManyCodes(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const codes, each = 20, 10
	var all []store.Code
	for i := range codes {
		c := newCode(acme, fmt.Sprintf("client_%02d", i), fmt.Sprintf("code_%02d", i))
		mustCode(t, b, c)
		all = append(all, c)
	}
	grants := make([]*store.Code, codes*each)
	errs := parallel(codes*each, func(i int) error {
		var err error
		grants[i], err = b.Codes.Consume(ctx(), all[i%codes].Hash)
		return err
	})
	for c := range codes {
		var mine []error
		for i := c; i < codes*each; i += codes {
			mine = append(mine, errs[i])
			if assert.NotNil(t, grants[i], "Consume %d of code %d returned no grant", i/codes, c) {
				assert.Equal(t, normCode(all[c]), normCode(*grants[i]), "Consume %d of code %d", i/codes, c)
			}
		}
		exactlyOneWins(t, mine, store.ErrUsed)
	}
}

// Codes.Create: of concurrent creates of one hash exactly one succeeds; the others get
// ErrConflict.
func testConcurrentCreateSameCodeHash(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 50
	errs := parallel(n, func(i int) error {
		c := newCode(acme, fmt.Sprintf("client_%02d", i), "code_same")
		return b.Codes.Create(ctx(), c)
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	got, err := b.Codes.Consume(ctx(), secretHash("code_same"))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("client_%02d", winner), got.ClientID)
}

// Interactions.Take: of concurrent Takes of one interaction exactly one succeeds; the others
// get ErrNotFound.
func testConcurrentTake(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newInteraction(acme, "race")
	mustInteraction(t, b, in)
	const n = 50
	taken := make([]*store.Interaction, n)
	errs := parallel(n, func(i int) error {
		var err error
		taken[i], err = b.Interactions.Take(ctx(), in.ID)
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrNotFound)
	require.NotNil(t, taken[winner])
	assert.Equal(t, normInteraction(in), normInteraction(*taken[winner]))
	_, err := b.Interactions.Get(ctx(), in.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Get after Take")
}

// Interactions.Update: no other write to the interaction comes between fn's read and the write,
// so concurrent Updates that each add to AuthState all take effect.
func testConcurrentInteractionUpdates(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newInteraction(acme, "one")
	in.AuthState = nil
	mustInteraction(t, b, in)
	const n = 50
	errs := parallel(n, func(i int) error {
		_, err := b.Interactions.Update(ctx(), in.ID, func(in *store.Interaction) error {
			in.AuthState = append(in.AuthState, byte(i))
			return nil
		})
		return err
	})
	var want []byte
	for i, err := range errs {
		assert.NoError(t, err, "Update %d", i)
		want = append(want, byte(i))
	}
	got := slices.Clone(mustGetInteraction(t, b, in.ID).AuthState)
	slices.Sort(got)
	assert.Equal(t, want, got)
}

// Interactions.Create: of concurrent creates of one id, in one tenant or another, exactly one
// succeeds; the others get ErrConflict.
func testConcurrentCreateSameInteractionID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	const n = 50
	id := interactionID("same")
	errs := parallel(n, func(i int) error {
		in := newInteraction([]string{acme, globex}[i%2], fmt.Sprintf("same%02d", i))
		in.ID = id
		return b.Interactions.Create(ctx(), in)
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	got := mustGetInteraction(t, b, id)
	assert.Equal(t, fmt.Sprintf("user_same%02d", winner), got.Subject)
}

// PictureCredentials.AddFailure: concurrent failures each get a different count, per user and
// per network, so a lockout limit cannot be raced past; the networks are counted once each.
func testConcurrentAddFailure(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	const n = 50
	nets := []string{netA, netB, netC}
	counts := make([]store.FailureCounts, n)
	errs := parallel(n, func(i int) error {
		var err error
		counts[i], err = b.Pictures.AddFailure(ctx(), acme, u.ID, nets[i%len(nets)], failedAt)
		return err
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	users := make([]int, 0, n)
	perNet := map[string][]int{}
	for i, c := range counts {
		users = append(users, c.User)
		perNet[nets[i%len(nets)]] = append(perNet[nets[i%len(nets)]], c.Network)
		assert.LessOrEqual(t, c.Networks, len(nets), "networks")
	}
	slices.Sort(users)
	for i, c := range users {
		require.Equal(t, i+1, c, "user counts %v", users)
	}
	for net, got := range perNet {
		slices.Sort(got)
		for i, c := range got {
			require.Equal(t, i+1, c, "counts of %s: %v", net, got)
		}
	}
	p := mustGetPicture(t, b, acme, u.ID)
	assert.Equal(t, n, p.Failures)
	assert.Equal(t, len(nets), p.Networks)
	list, err := b.Pictures.ListNetworkFailures(ctx(), acme, u.ID)
	require.NoError(t, err)
	require.Len(t, list, len(nets))
	for _, f := range list {
		assert.Len(t, perNet[f.Network], f.Failures, f.Network)
	}
}

// PictureCredentials.Create: of concurrent first enrollments of one user exactly one stores its
// credential; the others get ErrConflict.
func testConcurrentPictureCreate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	const n = 20
	errs := parallel(n, func(i int) error {
		return b.Pictures.Create(ctx(), newPicture(acme, u.ID, fmt.Sprintf("%c", 'a'+i)))
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	assert.Equal(t, newPicture(acme, u.ID, fmt.Sprintf("%c", 'a'+winner)).Hash, mustGetPicture(t, b, acme, u.ID).Hash)
}

// PushedRequests.Consume: of concurrent consumers of one request exactly one gets it; the
// others get ErrNotFound.
func testConcurrentPushedConsume(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	r := newPushed(acme, "client_a", "once")
	mustPushed(t, b, r)
	const n = 20
	errs := parallel(n, func(int) error {
		_, err := b.Pushed.Consume(ctx(), acme, "client_a", r.Hash, pushedNow())
		return err
	})
	exactlyOneWins(t, errs, store.ErrNotFound)
}

// PictureCredentials.Succeeded: concurrent successes of one user from many networks keep
// exactly the keep most recently passed.
func testConcurrentSucceeded(t *testing.T, b store.Backend) {
	_, u := enrolled(t, b)
	const n, keep = 20, 4
	errs := parallel(n, func(i int) error {
		return b.Pictures.Succeeded(ctx(), acme, u.ID, store.PictureSuccess{
			Network: fmt.Sprintf("10.%d.0.0/24", i), At: failedAt.Add(time.Duration(i) * time.Second), KeepFamiliar: keep})
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	got := mustFamiliar(t, b, acme, u.ID)
	require.Len(t, got, keep)
	for i, f := range got {
		assert.Equal(t, fmt.Sprintf("10.%d.0.0/24", n-1-i), f.Network)
	}
}

// Passkeys.Create: of concurrent Creates of one credential ID, by different users of a tenant,
// exactly one succeeds; the others get ErrConflict.
func testConcurrentPasskeyCreate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 20
	users := make([]*store.User, n)
	for i := range users {
		users[i] = mustUser(t, b, acme, fmt.Sprintf("user%02d", i))
	}
	errs := parallel(n, func(i int) error {
		p := newPasskey(acme, users[i].ID, "same")
		p.Name = users[i].UserName
		return b.Passkeys.Create(ctx(), p)
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	got := mustGetPasskey(t, b, acme, []byte("cred-same"))
	assert.Equal(t, users[winner].ID, got.UserID)
	assert.Equal(t, users[winner].UserName, got.Name)
	for i, u := range users {
		if i != winner {
			assert.Empty(t, mustListPasskeys(t, b, acme, u.ID), "passkeys of user %d", i)
		}
	}
}

// Passkeys.Create: of concurrent Creates of distinct passkeys of one user, no more than
// MaxPasskeysPerUser succeed, the others get ErrConflict.
func testConcurrentPasskeyMax(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "alice")
	const held = 3
	for i := range held {
		mustPasskey(t, b, newPasskey(acme, u.ID, fmt.Sprintf("held%d", i)))
	}
	const n = 30
	errs := parallel(n, func(i int) error {
		return b.Passkeys.Create(ctx(), newPasskey(acme, u.ID, fmt.Sprintf("new%02d", i)))
	})
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("call %d: got %v, want nil or %v", i, err, store.ErrConflict)
		}
	}
	assert.Equal(t, store.MaxPasskeysPerUser-held, ok, "Creates that succeeded")
	assert.Equal(t, store.MaxPasskeysPerUser, len(mustListPasskeys(t, b, acme, u.ID)), "passkeys stored")
}

// Passkeys.Use: of concurrent Uses of one passkey with the same OldSignCount exactly one
// succeeds and stores its values; the others get ErrConflict.
func testConcurrentPasskeyUse(t *testing.T, b store.Backend) {
	p, u := withPasskey(t, b)
	const n = 20
	errs := parallel(n, func(i int) error {
		return b.Passkeys.Use(ctx(), acme, u.ID, p.ID, store.PasskeyUse{
			SignCount: p.SignCount + 1 + uint32(i), BackupState: i%2 == 1,
			At: passkeyCreated.Add(time.Duration(i+1) * time.Second), OldSignCount: p.SignCount})
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	want := p
	want.SignCount, want.BackupState = p.SignCount+1+uint32(winner), winner%2 == 1
	want.LastUsed = passkeyCreated.Add(time.Duration(winner+1) * time.Second)
	assert.Equal(t, normPasskey(want), normPasskey(*mustGetPasskey(t, b, acme, p.ID)))
}
