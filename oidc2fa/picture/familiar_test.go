package picture_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

// lockEverywhere fails one attempt at ann's factor from each of five networks, IPv4 /24s and
// IPv6 /48s, none of them ann's: the user-wide lock falls.
func (e *env) lockEverywhere(t *testing.T) {
	t.Helper()
	for _, from := range []string{"192.0.2.1", "2001:db8:10::1", "203.0.113.1", "2001:db8:11:ff00::1", "2001:db8:12::1"} {
		require.Nil(t, e.signInFrom(from, "ann", wrong))
	}
	locks := e.locks(t)
	require.NotEmpty(t, locks)
	require.Equal(t, "", locks[0].Network, "the user-wide lock: %+v", locks)
}

// familiar returns ann's familiar networks with times in UTC.
func (e *env) familiar(t *testing.T) []store.FamiliarNetwork {
	t.Helper()
	fams, err := e.auth.FamiliarNetworks(context.Background(), "acme", e.ann.ID)
	require.NoError(t, err)
	for i := range fams {
		fams[i].Passed = fams[i].Passed.UTC()
	}
	return fams
}

// TestFamiliarNetworkStaysOpen: when failures from five other networks lock ann's factor
// everywhere, her right points still sign her in from a network where she passed within 30
// days, from any address in it, while an unfamiliar network is refused even the right points.
// Her success there leaves the user-wide lock to the others.
func TestFamiliarNetworkStaysOpen(t *testing.T) {
	e, clk := clockedEnv(t)
	require.NotEmpty(t, e.signInFrom("198.51.100.20", "ann", right).Get("code"))
	assert.Equal(t, []store.FamiliarNetwork{{Network: "198.51.100.0/24", Passed: clk.Now().UTC()}}, e.familiar(t))

	clk.Advance(10 * 24 * time.Hour)
	e.lockEverywhere(t)
	assert.Nil(t, e.signInFrom("2001:db8:aa::7", "ann", right), "an unfamiliar network is locked")
	q := e.signInFrom("198.51.100.77", "ann", right)
	require.NotNil(t, q, "the familiar network is open")
	assert.NotEmpty(t, q.Get("code"))
	assert.Equal(t, []store.FamiliarNetwork{{Network: "198.51.100.0/24", Passed: clk.Now().UTC()}}, e.familiar(t),
		"the success renewed it")

	locks := e.locks(t)
	require.NotEmpty(t, locks)
	assert.Equal(t, picture.Lock{Failures: 7, Networks: 7, Until: clk.Now().Add(4 * picture.DefaultUserLockBase).UTC()}, locks[0],
		"the user-wide lock outlives ann's success; her attempt counted as its network's first failure")
	clk.Advance(time.Minute)
	assert.Nil(t, e.signInFrom("2001:db8:aa::7", "ann", right), "the unfamiliar network is still locked")
	assert.NotEmpty(t, e.signInFrom("198.51.100.20", "ann", right).Get("code"), "and the familiar one still open")
	assert.Equal(t, 7, e.locks(t)[0].Networks, "each network counts once towards the user-wide lock, the familiar one too")
}

// TestFamiliarNetworkExpires: a network where ann last passed 30 days ago is no longer
// familiar, and the user-wide lock shuts it out like any other.
func TestFamiliarNetworkExpires(t *testing.T) {
	e, clk := clockedEnv(t)
	require.NotEmpty(t, e.signInFrom("198.51.100.20", "ann", right).Get("code"))
	clk.Advance(picture.DefaultFamiliarFor - time.Second)
	assert.Len(t, e.familiar(t), 1, "familiar for 30 days")
	clk.Advance(time.Second)
	assert.Empty(t, e.familiar(t), "not after")
	e.lockEverywhere(t)
	assert.Nil(t, e.signInFrom("198.51.100.20", "ann", right), "locked like any other network")
	assert.Contains(t, e.log.String(), `network=198.51.100.0/24 familiar=false reason=locked`)
}

// TestAtMostEightFamiliarNetworks: of the networks ann passed from, the eight most recent stay
// familiar; the oldest is locked with the rest when the user-wide lock falls.
func TestAtMostEightFamiliarNetworks(t *testing.T) {
	e, clk := clockedEnv(t)
	from := func(i int) string { return fmt.Sprintf("10.%d.0.1", i) }
	for i := range picture.DefaultFamiliarNetworks + 1 {
		require.NotEmpty(t, e.signInFrom(from(i), "ann", right).Get("code"))
		clk.Advance(time.Hour)
	}
	fams := e.familiar(t)
	require.Len(t, fams, picture.DefaultFamiliarNetworks)
	assert.Equal(t, fmt.Sprintf("10.%d.0.0/24", picture.DefaultFamiliarNetworks), fams[0].Network, "the most recent first")
	assert.Equal(t, "10.1.0.0/24", fams[len(fams)-1].Network, "the oldest went")

	e.lockEverywhere(t)
	assert.Nil(t, e.signInFrom(from(0), "ann", right), "the ninth most recent is not familiar")
	assert.NotEmpty(t, e.signInFrom(from(1), "ann", right).Get("code"), "the eighth is")
}

// TestFamiliarNetworkLockedByItsOwnFailures: five wrong attempts from ann's familiar network
// lock it, for her right points too, while the user-wide lock holds and after it has ended.
func TestFamiliarNetworkLockedByItsOwnFailures(t *testing.T) {
	e, clk := clockedEnv(t)
	require.NotEmpty(t, e.signInFrom("198.51.100.20", "ann", right).Get("code"))
	clk.Advance(time.Hour)
	e.lockEverywhere(t)
	assert.Equal(t, "access_denied", e.signInFrom("198.51.100.66", "ann", repeat(wrong, 5)...).Get("error"))
	assert.Nil(t, e.signInFrom("198.51.100.20", "ann", right), "the familiar network's own lock holds")
	assert.Contains(t, e.log.String(), `network=198.51.100.0/24 familiar=true reason=locked`)

	clk.Advance(picture.DefaultUserLockMax + time.Second)
	assert.Empty(t, e.locks(t), "every lock ended")
	assert.NotEmpty(t, e.signInFrom("198.51.100.20", "ann", right).Get("code"))
}
