package picture_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

func (e *env) locks(t *testing.T) []picture.Lock {
	t.Helper()
	locks, err := e.auth.Locks(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	for i := range locks {
		locks[i].Until = locks[i].Until.UTC()
	}
	return locks
}

// TestOutsiderCannotLockTheUser: five wrong attempts by someone who knows only ann's name, from
// another network, lock that network and not ann, who signs in from hers.
func TestOutsiderCannotLockTheUser(t *testing.T) {
	e, clk := clockedEnv(t)
	assert.Equal(t, "access_denied", e.signInFrom("203.0.113.7", "ann", repeat(wrong, 5)...).Get("error"))
	assert.Equal(t, []picture.Lock{{Network: "203.0.113.0/24", Failures: 5, Until: clk.Now().Add(time.Minute).UTC()}},
		e.locks(t), "the outsider's network is locked")
	assert.NotEmpty(t, e.signInFrom("198.51.100.20", "ann", right).Get("code"), "ann's own network is not locked")
	assert.Nil(t, e.signInFrom("203.0.113.99", "ann", right),
		"the outsider's network stays locked, even with the right points, from any address in it")
	assert.Equal(t, []picture.Lock{{Network: "203.0.113.0/24", Failures: 6, Until: clk.Now().Add(2 * time.Minute).UTC()}},
		e.locks(t), "ann's success leaves the outsider's lock; the refused attempt doubled it")
}

// TestOutsiderKeepsRetrying: the outsider's attempts, one per lock as the issue's "three requests
// an hour", keep only the outsider's network locked, for longer each time, up to LockMax.
func TestOutsiderKeepsRetrying(t *testing.T) {
	e, clk := clockedEnv(t)
	assert.Equal(t, "access_denied", e.signInFrom("203.0.113.7", "ann", repeat(wrong, 5)...).Get("error"))
	for range 20 {
		clk.Advance(20 * time.Minute)
		assert.Nil(t, e.signInFrom("203.0.113.7", "ann", wrong))
		assert.NotEmpty(t, e.signInFrom("198.51.100.20", "ann", right).Get("code"), "ann signs in all along")
	}
	locks := e.locks(t)
	require.Len(t, locks, 1)
	assert.Equal(t, clk.Now().Add(picture.DefaultLockMax).UTC(), locks[0].Until, "the outsider's lock reached LockMax")
}

// TestNetworkLockBoundsGuessing: from a locked network even the right points fail until its
// back-off ends; then they sign in, and the network's count starts again.
func TestNetworkLockBoundsGuessing(t *testing.T) {
	e, clk := clockedEnv(t)
	assert.Equal(t, "access_denied", e.signInFrom("2001:db8:1:aa00::1", "ann", repeat(wrong, 5)...).Get("error"))
	clk.Advance(30 * time.Second)
	assert.Nil(t, e.signInFrom("2001:db8:1:ffff::2", "ann", right), "the same /48")
	clk.Advance(2*time.Minute + time.Second)
	assert.NotEmpty(t, e.signInFrom("2001:db8:1:aa00::1", "ann", right).Get("code"), "after the back-off")
	assert.Empty(t, e.locks(t))
	nf, err := e.b.Pictures.NetworkFailures(context.Background(), "acme", e.ann.ID, "2001:db8:1::/48")
	require.NoError(t, err)
	assert.Zero(t, nf.Failures, "a success resets the network's count")
}

// TestUserWideLockNeedsManyNetworks: failures from four networks lock none but their own; a
// fifth locks the factor for every network for UserLockBase, and a sixth doubles it. While the
// lock holds, every failure restarts it; after it, one guess is checked and starts it again.
func TestUserWideLockNeedsManyNetworks(t *testing.T) {
	e, clk := clockedEnv(t)
	from := func(i int) string { return fmt.Sprintf("192.0.%d.1", 100+i) }
	n := picture.DefaultUserLockNetworks
	for i := range n - 1 {
		assert.Nil(t, e.signInFrom(from(i), "ann", wrong))
	}
	assert.Empty(t, e.locks(t), "four networks lock nothing")
	c, err := e.b.Pictures.Get(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Equal(t, n-1, c.Networks)

	clk.Advance(time.Minute)
	assert.Nil(t, e.signInFrom(from(n-1), "ann", wrong))
	assert.Equal(t, []picture.Lock{{Failures: n, Networks: n, Until: clk.Now().Add(picture.DefaultUserLockBase).UTC()}}, e.locks(t))
	assert.Contains(t, e.log.String(), `picture login locked after too many failures" lock="every network"`)

	clk.Advance(time.Minute)
	assert.Nil(t, e.signInFrom("198.51.100.20", "ann", right), "locked for ann's network too: the right points fail")
	assert.Equal(t, clk.Now().Add(2*picture.DefaultUserLockBase).UTC(), e.locks(t)[0].Until, "a further network doubles it")

	clk.Advance(time.Hour)
	assert.Nil(t, e.signInFrom(from(0), "ann", right), "a known network is refused too")
	assert.Equal(t, clk.Now().Add(2*picture.DefaultUserLockBase).UTC(), e.locks(t)[0].Until, "and its failure restarts the lock")

	clk.Advance(2*picture.DefaultUserLockBase + time.Second)
	assert.Empty(t, e.locks(t), "the lock ended")
	assert.Nil(t, e.signInFrom(from(1), "ann", wrong), "one guess is checked")
	assert.Contains(t, e.log.String()[len(e.log.String())-2000:], `reason="wrong picture"`)
	assert.Equal(t, clk.Now().Add(2*picture.DefaultUserLockBase).UTC(), e.locks(t)[0].Until, "and it starts the lock again")

	clk.Advance(2*picture.DefaultUserLockBase + time.Second)
	assert.NotEmpty(t, e.signInFrom("198.51.100.20", "ann", right).Get("code"), "after the lock ann signs in")
	c, err = e.b.Pictures.Get(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Zero(t, c.Failures, "a success resets the user-wide count")
	assert.Zero(t, c.Networks)
}

// TestUserWideLockBoundsADistributedGuess: once the user-wide lock holds, the attempts of many
// further networks, five each, are all refused unchecked, even the right points.
func TestUserWideLockBoundsADistributedGuess(t *testing.T) {
	e, clk := clockedEnv(t)
	for i := range picture.DefaultUserLockNetworks {
		assert.Nil(t, e.signInFrom(fmt.Sprintf("10.%d.0.1", i), "ann", wrong))
	}
	checked := strings.Count(e.log.String(), `reason="wrong picture"`)
	for i := range 20 {
		clk.Advance(time.Minute)
		q := e.signInFrom(fmt.Sprintf("172.16.%d.1", i), "ann", repeat(right, 5)...)
		require.NotNil(t, q)
		assert.Equal(t, "access_denied", q.Get("error"))
	}
	log := e.log.String()
	assert.Equal(t, 100, strings.Count(log, "reason=locked attempt="), "every attempt refused")
	assert.Equal(t, checked, strings.Count(log, `reason="wrong picture"`), "none checked")
	assert.NotContains(t, log, "picture login passed")
	assert.Equal(t, picture.DefaultUserLockMax, e.locks(t)[0].Until.Sub(clk.Now()), "the lock grew to its cap")
}

// TestPrefixLenConfig: with IPv4PrefixLen 32 every address counts alone.
func TestPrefixLenConfig(t *testing.T) {
	e, _ := clockedEnv(t, func(c *picture.Config) { c.IPv4PrefixLen = 32 })
	assert.Equal(t, "access_denied", e.signInFrom("203.0.113.7", "ann", repeat(wrong, 5)...).Get("error"))
	assert.NotEmpty(t, e.signInFrom("203.0.113.8", "ann", right).Get("code"), "a neighbour is another network")
	assert.Equal(t, "203.0.113.7/32", e.locks(t)[0].Network)
}

// TestUnlockEndsEveryLock: an administrator's unlock forgets every network's failures and the
// user-wide lock.
func TestUnlockEndsEveryLock(t *testing.T) {
	e, _ := clockedEnv(t, func(c *picture.Config) { c.UserLockNetworks = 2 })
	assert.Equal(t, "access_denied", e.signInFrom("203.0.113.7", "ann", repeat(wrong, 5)...).Get("error"))
	assert.Nil(t, e.signInFrom("198.51.100.7", "ann", wrong))
	require.Len(t, e.locks(t), 2, "user-wide and one network")
	require.NoError(t, e.auth.Unlock(store.WithChange(context.Background(), store.Change{Actor: "admin"}), "acme", e.ann.ID))
	assert.Empty(t, e.locks(t))
	list, err := e.b.Pictures.ListNetworkFailures(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	assert.Empty(t, list)
	assert.NotEmpty(t, e.signInFrom("203.0.113.7", "ann", right).Get("code"))
}

func TestSmartLockConfigErrors(t *testing.T) {
	for name, cfg := range map[string]func(*picture.Config){
		"negative user base":      func(c *picture.Config) { c.UserLockBase = -time.Second },
		"negative user max":       func(c *picture.Config) { c.UserLockMax = -time.Second },
		"user max below the base": func(c *picture.Config) { c.UserLockBase, c.UserLockMax = time.Hour, time.Minute },
		"negative networks":       func(c *picture.Config) { c.UserLockNetworks = -1 },
		"IPv4 prefix too long":    func(c *picture.Config) { c.IPv4PrefixLen = 33 },
		"IPv6 prefix negative":    func(c *picture.Config) { c.IPv6PrefixLen = -1 },
	} {
		c := picture.Config{Credentials: newEnv(t).b.Pictures, Peppers: []picture.Pepper{testPepper}}
		cfg(&c)
		_, err := picture.New(c)
		assert.Error(t, err, name)
	}
}

// TestOneIPv6AllocationIsOneNetwork: one wrong attempt from each of five /56s of one /48 (a free
// tunnel allocation holds 256 of them) counts as one network: it locks that /48 and nobody
// elsewhere, so ann signs in from her own address.
func TestOneIPv6AllocationIsOneNetwork(t *testing.T) {
	e, clk := clockedEnv(t)
	for i := range picture.DefaultUserLockNetworks {
		assert.Nil(t, e.signInFrom(fmt.Sprintf("2001:db8:77:%x00::1", i), "ann", wrong))
	}
	assert.Equal(t, []picture.Lock{{Network: "2001:db8:77::/48", Failures: 5, Until: clk.Now().Add(time.Minute).UTC()}},
		e.locks(t), "the /48 is locked, not the user")
	assert.NotEmpty(t, e.signInFrom("2001:db8:aa:100::5", "ann", right).Get("code"), "ann signs in from her own network")
	assert.Nil(t, e.signInFrom("2001:db8:77:ff00::1", "ann", right), "another /56 of the locked /48 is locked")
}

func TestFamiliarConfigErrors(t *testing.T) {
	for name, cfg := range map[string]func(*picture.Config){
		"negative familiar time":     func(c *picture.Config) { c.FamiliarFor = -time.Hour },
		"negative familiar networks": func(c *picture.Config) { c.FamiliarNetworks = -1 },
	} {
		c := picture.Config{Credentials: newEnv(t).b.Pictures, Peppers: []picture.Pepper{testPepper}}
		cfg(&c)
		_, err := picture.New(c)
		assert.Error(t, err, name)
	}
}
