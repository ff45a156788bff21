package ratelimittest

import (
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/ratelimit"
)

func concurrencyTests() []test {
	return []test{
		{"ConcurrentAllowsOnOneKey", testConcurrentAllowsOnOneKey},
		{"ConcurrentAllowsOnManyKeys", testConcurrentAllowsOnManyKeys},
	}
}

// result is what one goroutine saw.
type result struct {
	key string
	d   ratelimit.Decision
	err error
	op  string
}

// hammer runs Allow (and Peek, when peeks) on each of keys from perKey goroutines each, all
// released at once, and returns every result.
func hammer(t *testing.T, l limiter, keys []string, perKey int, peeks bool) []result {
	t.Helper()
	out := make(chan result, len(keys)*perKey*2)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, k := range keys {
		for range perKey {
			wg.Go(func() {
				<-start
				d, err := l.Allow(ctx(t), k)
				out <- result{key: k, d: d, err: err, op: "Allow"}
				if peeks {
					d, err := l.Peek(ctx(t), k)
					out <- result{key: k, d: d, err: err, op: "Peek"}
				}
			})
		}
	}
	close(start)
	wg.Wait()
	close(out)
	var rs []result
	for r := range out {
		require.NoError(t, r.err, "concurrent %s(%q)", r.op, r.key)
		rs = append(rs, r)
	}
	return rs
}

// Of concurrent Allows on a key with n requests left, exactly n are allowed; each leaves a
// different Remaining, n-1 down to 0; the denied ones leave 0 and a positive RetryAfter.
// Concurrent Peeks report a Remaining within the quota.
func testConcurrentAllowsOnOneKey(t *testing.T, s subject) {
	const goroutines, quota = 64, 20
	l := s.new(t, hourly(quota, 0))
	for round := range 3 {
		key := "k" + itoa(round)
		var remaining []int
		for _, r := range hammer(t, l, []string{key}, goroutines, true) {
			switch {
			case r.op == "Peek":
				assert.True(t, r.d.Remaining >= 0 && r.d.Remaining <= quota, "concurrent Peek: Remaining %d out of [0, %d]", r.d.Remaining, quota)
			case r.d.Allowed:
				remaining = append(remaining, r.d.Remaining)
			default:
				assert.Zero(t, r.d.Remaining, "denied concurrent Allow: Remaining")
				assert.Positive(t, r.d.RetryAfter, "denied concurrent Allow: RetryAfter")
			}
		}
		require.Len(t, remaining, quota, "round %d: allowed of %d concurrent Allows on a quota of %d", round, goroutines, quota)
		slices.Sort(remaining)
		want := make([]int, quota)
		for i := range want {
			want[i] = i
		}
		assert.Equal(t, want, remaining, "round %d: Remaining of the allowed requests", round)
	}
}

// Concurrent Allows on different keys: each key gets exactly its own quota.
func testConcurrentAllowsOnManyKeys(t *testing.T, s subject) {
	const keys, perKey, quota = 16, 16, 5
	l := s.new(t, hourly(quota, 0))
	var names []string
	for i := range keys {
		names = append(names, "key-"+itoa(i))
	}
	allowed := map[string]int{}
	for _, r := range hammer(t, l, names, perKey, false) {
		if r.d.Allowed {
			allowed[r.key]++
		}
	}
	for _, k := range names {
		assert.Equal(t, quota, allowed[k], "allowed of %d concurrent Allows on %q, with a quota of %d", perKey, k, quota)
	}
}
