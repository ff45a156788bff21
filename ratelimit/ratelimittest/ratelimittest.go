package ratelimittest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/ratelimit"
)

// NewLimiter returns a fresh limiter enforcing r, sharing no state with any other, and an
// Advance that moves its clock forward, or nil when it runs on real time.
type NewLimiter func(t *testing.T, r ratelimit.Rate) (ratelimit.Limiter, Advance)

// test is one subtest: run gets a subject whose newLimiter makes fresh limiters.
type test struct {
	name string
	run  func(t *testing.T, s subject)
}

// Run runs the conformance suite against the limiters newLimiter returns; see the package
// documentation.
func Run(t *testing.T, newLimiter NewLimiter) {
	t.Helper()
	if newLimiter == nil {
		t.Fatal("ratelimittest.Run: newLimiter is nil")
	}
	var controlled bool
	if !t.Run("NewLimiter", func(t *testing.T) {
		l, adv := newLimiter(t, hourly(1, 0))
		require.NotNil(t, l, "newLimiter returned a nil Limiter")
		controlled = adv != nil
	}) {
		t.Fatal("ratelimittest.Run: newLimiter must return a Limiter; the suite did not run")
	}
	var tests []test
	tests = append(tests, quotaTests()...)
	tests = append(tests, timeTests()...)
	tests = append(tests, peekTests()...)
	tests = append(tests, concurrencyTests()...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, subject{newLimiter: newLimiter, controlled: controlled})
		})
	}
}

// subject makes the limiters of one subtest.
type subject struct {
	newLimiter NewLimiter
	controlled bool // whether newLimiter returns an Advance
}

// limiter is a limiter under test with its clock.
type limiter struct {
	ratelimit.Limiter
	rate    ratelimit.Rate
	advance Advance
}

// new returns a fresh limiter enforcing r.
func (s subject) new(t *testing.T, r ratelimit.Rate) limiter {
	t.Helper()
	require.NoError(t, r.Validate(), "the suite's own Rate")
	l, adv := s.newLimiter(t, r)
	require.NotNil(t, l, "newLimiter returned a nil Limiter")
	require.Equal(t, s.controlled, adv != nil, "newLimiter returns an Advance for some limiters and not for others")
	return limiter{Limiter: l, rate: r, advance: adv}
}

// controlled reports whether the limiter's clock is under the test's control.
func (l limiter) controlled() bool { return l.advance != nil }

// wait lets d pass on the limiter's clock.
func (l limiter) wait(d time.Duration) {
	if l.advance != nil {
		l.advance(d)
		return
	}
	time.Sleep(d)
}

// slack is how far a duration the limiter reports may be from the one the test computes.
func (l limiter) slack() time.Duration {
	if l.controlled() {
		return time.Millisecond
	}
	return time.Second
}

// burst is the bucket's size.
func (l limiter) burst() int {
	if l.rate.Burst == 0 {
		return l.rate.Limit
	}
	return l.rate.Burst
}

// tokenTime is the time to regain n requests.
func (l limiter) tokenTime(n int) time.Duration {
	return time.Duration(n) * l.rate.Period / time.Duration(l.rate.Limit)
}

func (l limiter) allow(t *testing.T, key string) ratelimit.Decision {
	t.Helper()
	d, err := l.Allow(ctx(t), key)
	require.NoError(t, err, "Allow(%q)", key)
	return d
}

func (l limiter) peek(t *testing.T, key string) ratelimit.Decision {
	t.Helper()
	d, err := l.Peek(ctx(t), key)
	require.NoError(t, err, "Peek(%q)", key)
	return d
}

// exhaust takes the key's whole quota, which must be n requests, checking each decision.
func (l limiter) exhaust(t *testing.T, key string, n int) {
	t.Helper()
	for i := range n {
		d := l.allow(t, key)
		require.True(t, d.Allowed, "Allow(%q) #%d of a quota of %d: %+v", key, i+1, n, d)
	}
	d := l.allow(t, key)
	require.False(t, d.Allowed, "Allow(%q) #%d of a quota of %d: %+v", key, n+1, n, d)
}

// whole asserts that d reports a whole quota.
func (l limiter) whole(t *testing.T, d ratelimit.Decision, what string) {
	t.Helper()
	assert.Equal(t, ratelimit.Decision{Allowed: true, Limit: l.rate.Limit, Remaining: l.burst()}, d,
		"%s: a whole quota is Allowed, Remaining the burst, RetryAfter and Reset 0", what)
}

// near asserts that got is want within the limiter's slack.
func (l limiter) near(t *testing.T, want, got time.Duration, what string) {
	t.Helper()
	assert.InDelta(t, float64(want), float64(got), float64(l.slack()), "%s: want %v within %v, got %v", what, want, l.slack(), got)
}

func ctx(t *testing.T) context.Context { return t.Context() }

// Rates the subtests use. Those of quota tests refill so slowly (a token every 3 minutes or
// slower) that a test on real time sees no refill.
func hourly(limit, burst int) ratelimit.Rate {
	return ratelimit.Rate{Limit: limit, Period: time.Hour, Burst: burst}
}

// everyTwentySeconds regains a request every 20 seconds, up to 3: RetryAfter and Reset are
// long enough to compare on real time with a slack of a second.
var everyTwentySeconds = ratelimit.Rate{Limit: 3, Period: time.Minute}

// refilling returns a limiter for a subtest that needs time to pass: on a controlled clock one
// of everyTwentySeconds, on real time one that regains a request every second and a half, up
// to 2 — slow enough that a loaded machine (CI runs packages in parallel under -race) does not
// regain a request between two calls the test expects to see the same quota.
func refilling(t *testing.T, s subject) limiter {
	t.Helper()
	if s.controlled {
		return s.new(t, everyTwentySeconds)
	}
	return s.new(t, ratelimit.Rate{Limit: 2, Period: 3 * time.Second})
}

func itoa(i int) string { return strconv.Itoa(i) }
