package ratelimittest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func timeTests() []test {
	return []test{
		{"DeniedTakesNothing", testDeniedTakesNothing},
		{"RetryAfterIsTimeToOneToken", testRetryAfterIsTimeToOneToken},
		{"RefillAfterTimePasses", testRefillAfterTimePasses},
		{"ResetIsTimeToWholeQuota", testResetIsTimeToWholeQuota},
	}
}

// A denied request takes nothing: however many are denied, RetryAfter does not grow, and an
// Allow made RetryAfter later succeeds.
func testDeniedTakesNothing(t *testing.T, s subject) {
	l := refilling(t, s)
	l.exhaust(t, "k", l.burst())
	last := l.allow(t, "k")
	for i := range 10 {
		d := l.allow(t, "k")
		require.False(t, d.Allowed, "denied Allow #%d: %+v", i+2, d)
		assert.LessOrEqual(t, d.RetryAfter, last.RetryAfter, "RetryAfter of denied Allow #%d, against the one before", i+2)
		last = d
	}
	l.wait(last.RetryAfter)
	d := l.allow(t, "k")
	assert.True(t, d.Allowed, "Allow RetryAfter (%v) after 11 denied Allows: %+v", last.RetryAfter, d)
}

// When denied, RetryAfter is how long until the next Allow can be allowed: about the time to
// regain one request, less the time since the quota ran out; Peek of an exhausted key reports
// the same.
func testRetryAfterIsTimeToOneToken(t *testing.T, s subject) {
	l := s.new(t, everyTwentySeconds)
	l.exhaust(t, "k", l.burst())
	d := l.allow(t, "k")
	l.near(t, 20*time.Second, d.RetryAfter, "RetryAfter of a denied Allow right after the quota ran out")
	p := l.peek(t, "k")
	assert.False(t, p.Allowed, "Peek of an exhausted key: %+v", p)
	assert.Zero(t, p.Remaining, "Peek of an exhausted key: Remaining")
	l.near(t, 20*time.Second, p.RetryAfter, "RetryAfter of Peek right after the quota ran out")
	if !l.controlled() {
		return
	}
	l.wait(5 * time.Second)
	d = l.allow(t, "k")
	require.False(t, d.Allowed, "Allow 5s after the quota ran out: %+v", d)
	l.near(t, 15*time.Second, d.RetryAfter, "RetryAfter 5s after the quota ran out")
	l.wait(d.RetryAfter - 2*time.Millisecond)
	d = l.allow(t, "k")
	require.False(t, d.Allowed, "Allow a little before RetryAfter: %+v", d)
	l.wait(d.RetryAfter)
	d = l.allow(t, "k")
	assert.True(t, d.Allowed, "Allow after RetryAfter: %+v", d)
}

// Time regains requests: one after RetryAfter, the whole quota after Reset, and never more than
// the burst however long the key waits.
func testRefillAfterTimePasses(t *testing.T, s subject) {
	l := refilling(t, s)
	l.exhaust(t, "k", l.burst())
	d := l.allow(t, "k")
	l.wait(d.RetryAfter)
	d = l.allow(t, "k")
	require.True(t, d.Allowed, "Allow RetryAfter after the quota ran out: %+v", d)
	assert.Zero(t, d.Remaining, "Remaining after taking the one request regained")
	d = l.allow(t, "k")
	require.False(t, d.Allowed, "Allow after taking the one request regained: %+v", d)
	l.wait(d.Reset)
	l.whole(t, l.peek(t, "k"), "Peek Reset after the quota ran out")
	l.wait(2 * l.rate.Period)
	l.whole(t, l.peek(t, "k"), "Peek two periods after the quota was whole")
	l.exhaust(t, "k", l.burst())
}

// Reset is how long until the key's quota is whole again: zero for a whole quota, the time to
// regain what was taken otherwise, and it counts down as time passes.
func testResetIsTimeToWholeQuota(t *testing.T, s subject) {
	l := s.new(t, everyTwentySeconds)
	assert.Zero(t, l.peek(t, "k").Reset, "Reset of a fresh key")
	for i := range l.burst() {
		d := l.allow(t, "k")
		l.near(t, l.tokenTime(i+1), d.Reset, "Reset after "+itoa(i+1)+" allowed")
	}
	d := l.allow(t, "k")
	require.False(t, d.Allowed, "Allow after the burst: %+v", d)
	l.near(t, l.tokenTime(l.burst()), d.Reset, "Reset of a denied Allow")
	l.near(t, l.tokenTime(l.burst()), l.peek(t, "k").Reset, "Reset of Peek of an exhausted key")
	if !l.controlled() {
		return
	}
	l.wait(30 * time.Second)
	p := l.peek(t, "k")
	assert.Equal(t, 1, p.Remaining, "Remaining 30s after the quota ran out")
	l.near(t, 30*time.Second, p.Reset, "Reset 30s after the quota ran out")
	l.wait(p.Reset)
	l.whole(t, l.peek(t, "k"), "Peek Reset later")
}
