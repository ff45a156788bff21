package ratelimittest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/visid/visid/ratelimit"
)

func quotaTests() []test {
	return []test{
		{"FreshKeyHasWholeQuota", testFreshKeyHasWholeQuota},
		{"BurstAllowedThenDenied", testBurstAllowedThenDenied},
		{"RemainingDecreasesByOne", testRemainingDecreasesByOne},
		{"DecisionLimitIsConfiguredLimit", testDecisionLimitIsConfiguredLimit},
		{"KeysAreIndependent", testKeysAreIndependent},
	}
}

// quotas are the Rates of the table subtests: every shape of burst.
var quotas = []struct {
	name string
	rate ratelimit.Rate
}{
	{"BurstZeroMeansLimit", hourly(5, 0)},
	{"BurstBelowLimit", hourly(10, 3)},
	{"BurstAboveLimit", hourly(4, 9)},
	{"LimitOne", hourly(1, 0)},
}

// A key that has not been seen has its whole quota: Peek reports it, and the first Allow is
// allowed and leaves all but one.
func testFreshKeyHasWholeQuota(t *testing.T, s subject) {
	for _, q := range quotas {
		t.Run(q.name, func(t *testing.T) {
			l := s.new(t, q.rate)
			l.whole(t, l.peek(t, "fresh"), "Peek of a fresh key")
			d := l.allow(t, "fresh")
			assert.True(t, d.Allowed, "first Allow: %+v", d)
			assert.Equal(t, l.burst()-1, d.Remaining, "first Allow's Remaining")
			assert.Zero(t, d.RetryAfter, "first Allow's RetryAfter")
			l.near(t, l.tokenTime(1), d.Reset, "first Allow's Reset")
		})
	}
}

// Allow takes one request when there is one left: exactly the burst is allowed at once, with
// RetryAfter zero, then Allow is denied with nothing Remaining and RetryAfter positive.
func testBurstAllowedThenDenied(t *testing.T, s subject) {
	for _, q := range quotas {
		t.Run(q.name, func(t *testing.T) {
			l := s.new(t, q.rate)
			for i := range l.burst() {
				d := l.allow(t, "k")
				assert.True(t, d.Allowed, "Allow #%d of a burst of %d: %+v", i+1, l.burst(), d)
				assert.Zero(t, d.RetryAfter, "Allow #%d: RetryAfter of an allowed request", i+1)
			}
			for i := range 3 {
				d := l.allow(t, "k")
				assert.False(t, d.Allowed, "Allow #%d after the burst: %+v", i+1, d)
				assert.Zero(t, d.Remaining, "Remaining after the burst")
				assert.Positive(t, d.RetryAfter, "RetryAfter of a denied request")
			}
		})
	}
}

// Remaining is what the key could make now, after this decision, and never negative: each
// allowed request takes one, a denied one nothing.
func testRemainingDecreasesByOne(t *testing.T, s subject) {
	l := s.new(t, hourly(5, 0))
	var got []int
	for range 7 {
		got = append(got, l.allow(t, "k").Remaining)
	}
	assert.Equal(t, []int{4, 3, 2, 1, 0, 0, 0}, got, "Remaining after each of 7 Allows on a quota of 5")
}

// Limit is the number of requests the key may make per Period, as configured, whatever the
// burst and in every kind of decision.
func testDecisionLimitIsConfiguredLimit(t *testing.T, s subject) {
	for _, q := range quotas {
		t.Run(q.name, func(t *testing.T) {
			l := s.new(t, q.rate)
			decisions := map[string]ratelimit.Decision{"Peek of a fresh key": l.peek(t, "k")}
			decisions["first Allow"] = l.allow(t, "k")
			decisions["Peek after an Allow"] = l.peek(t, "k")
			for range l.burst() {
				decisions["denied Allow"] = l.allow(t, "k")
			}
			decisions["Peek of an exhausted key"] = l.peek(t, "k")
			assert.False(t, decisions["denied Allow"].Allowed, "the last Allow should have been denied")
			for what, d := range decisions {
				assert.Equal(t, q.rate.Limit, d.Limit, "%s: Limit", what)
			}
		})
	}
}

// Keys are opaque strings; distinct keys never share a quota. Keys that differ only in case, by
// a trailing byte, or that look like prefixed keys of a shared store, are distinct; so are the
// empty key and a long one.
func testKeysAreIndependent(t *testing.T, s subject) {
	keys := []string{
		"", "a", "A", "a ", "a\x00", "a:b", "a:", ":b", "tenant/a", "ключ", "🔑",
		strings.Repeat("k", 4096), strings.Repeat("k", 4095),
	}
	l := s.new(t, hourly(2, 0))
	for _, k := range keys {
		l.whole(t, l.peek(t, k), "Peek of a key no other key's requests reached: "+quote(k))
		l.exhaust(t, k, 2)
	}
	for _, k := range keys {
		d := l.peek(t, k)
		assert.False(t, d.Allowed, "Peek of exhausted %s: %+v", quote(k), d)
	}
}

// quote shortens a key for a message.
func quote(k string) string {
	if len(k) > 20 {
		return fmt.Sprintf("%q… (%d bytes)", k[:20], len(k))
	}
	return fmt.Sprintf("%q", k)
}
