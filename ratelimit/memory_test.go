package ratelimit_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/ratelimit/ratelimittest"
)

func TestRateValidate(t *testing.T) {
	tests := []struct {
		name string
		rate ratelimit.Rate
		want error
	}{
		{"LimitPerPeriod", ratelimit.Rate{Limit: 200, Period: time.Minute}, nil},
		{"WithBurst", ratelimit.Rate{Limit: 200, Period: time.Minute, Burst: 20}, nil},
		{"ZeroLimit", ratelimit.Rate{Period: time.Minute}, ratelimit.ErrInvalidRate},
		{"NegativeLimit", ratelimit.Rate{Limit: -1, Period: time.Minute}, ratelimit.ErrInvalidRate},
		{"ZeroPeriod", ratelimit.Rate{Limit: 1}, ratelimit.ErrInvalidRate},
		{"NegativePeriod", ratelimit.Rate{Limit: 1, Period: -time.Second}, ratelimit.ErrInvalidRate},
		{"NegativeBurst", ratelimit.Rate{Limit: 1, Period: time.Second, Burst: -1}, ratelimit.ErrInvalidRate},
		{"Zero", ratelimit.Rate{}, ratelimit.ErrInvalidRate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.rate.Validate()
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tc.want)
		})
	}
}

func TestNewMemoryConfig(t *testing.T) {
	valid := ratelimit.Rate{Limit: 1, Period: time.Second}
	tests := []struct {
		name string
		cfg  ratelimit.MemoryConfig
		want error
	}{
		{"Defaults", ratelimit.MemoryConfig{Rate: valid}, nil},
		{"MaxKeysOne", ratelimit.MemoryConfig{Rate: valid, MaxKeys: 1}, nil},
		{"ZeroRate", ratelimit.MemoryConfig{}, ratelimit.ErrInvalidRate},
		{"InvalidRate", ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: 1}}, ratelimit.ErrInvalidRate},
		{"NegativeMaxKeys", ratelimit.MemoryConfig{Rate: valid, MaxKeys: -1}, ratelimit.ErrInvalidConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ratelimit.NewMemory(tc.cfg)
			if tc.want != nil {
				assert.ErrorIs(t, err, tc.want)
				assert.Nil(t, m)
				return
			}
			require.NoError(t, err)
			d, err := m.Allow(context.Background(), "k")
			require.NoError(t, err)
			assert.True(t, d.Allowed, "first Allow")
		})
	}
}

// newMemory returns a Memory on a fake clock standing at start.
func newMemory(t *testing.T, cfg ratelimit.MemoryConfig) (*ratelimit.Memory, *ratelimittest.Clock) {
	t.Helper()
	clock := ratelimittest.NewClock(start)
	cfg.Now = clock.Now
	m, err := ratelimit.NewMemory(cfg)
	require.NoError(t, err)
	return m, clock
}

func allow(t *testing.T, l ratelimit.Limiter, key string) ratelimit.Decision {
	t.Helper()
	d, err := l.Allow(context.Background(), key)
	require.NoError(t, err, "Allow(%q)", key)
	return d
}

func peek(t *testing.T, l ratelimit.Limiter, key string) ratelimit.Decision {
	t.Helper()
	d, err := l.Peek(context.Background(), key)
	require.NoError(t, err, "Peek(%q)", key)
	return d
}

// exhaust takes key's whole quota of n.
func exhaust(t *testing.T, l ratelimit.Limiter, key string, n int) {
	t.Helper()
	for i := range n {
		require.True(t, allow(t, l, key).Allowed, "Allow(%q) #%d of %d", key, i+1, n)
	}
	require.False(t, allow(t, l, key).Allowed, "Allow(%q) past a quota of %d", key, n)
}

// Waiting RetryAfter is enough and hardly more than enough, and so is waiting Reset, whatever
// the rate's floating-point representation.
func TestMemoryDurationsAreExact(t *testing.T) {
	tests := []struct {
		name string
		rate ratelimit.Rate
	}{
		{"SCIMDefault", ratelimit.Rate{Limit: 200, Period: time.Minute}},
		{"SevenPerThirteenSeconds", ratelimit.Rate{Limit: 7, Period: 13 * time.Second}},
		{"OnePerHour", ratelimit.Rate{Limit: 1, Period: time.Hour}},
		{"ThreePerTenthOfASecond", ratelimit.Rate{Limit: 3, Period: 100 * time.Millisecond}},
		{"MillionPerSecond", ratelimit.Rate{Limit: 1_000_000, Period: time.Second, Burst: 10}},
		{"BurstAboveLimit", ratelimit.Rate{Limit: 3, Period: 7 * time.Second, Burst: 11}},
		{"OnePerDayBurstFive", ratelimit.Rate{Limit: 1, Period: 24 * time.Hour, Burst: 5}},
	}
	const tight = time.Microsecond
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, clock := newMemory(t, ratelimit.MemoryConfig{Rate: tc.rate})
			burst := tc.rate.Burst
			if burst == 0 {
				burst = tc.rate.Limit
			}
			for round := range 5 {
				d := ratelimit.Decision{Allowed: true}
				for d.Allowed {
					d = allow(t, m, "k")
				}
				require.Positive(t, d.RetryAfter, "round %d: RetryAfter", round)
				clock.Advance(d.RetryAfter - tight)
				require.False(t, allow(t, m, "k").Allowed, "round %d: Allow %v before RetryAfter %v", round, tight, d.RetryAfter)
				clock.Advance(tight)
				a := allow(t, m, "k")
				require.True(t, a.Allowed, "round %d: Allow RetryAfter (%v) later", round, d.RetryAfter)
				clock.Advance(a.Reset - tight)
				require.Less(t, peek(t, m, "k").Remaining, burst, "round %d: Remaining %v before Reset %v", round, tight, a.Reset)
				clock.Advance(tight)
				require.Equal(t, burst, peek(t, m, "k").Remaining, "round %d: Remaining Reset (%v) later", round, a.Reset)
				// Leave a fraction of a token behind, so the next round starts off the grid.
				clock.Advance(a.Reset / 3)
			}
		})
	}
}

// A clock that goes back grants nothing: the shard keeps using the latest time it saw.
func TestMemoryClockGoingBack(t *testing.T) {
	now := start
	m, err := ratelimit.NewMemory(ratelimit.MemoryConfig{
		Rate: ratelimit.Rate{Limit: 2, Period: time.Minute},
		Now:  func() time.Time { return now },
	})
	require.NoError(t, err)
	exhaust(t, m, "k", 2)
	for _, back := range []time.Duration{time.Second, time.Minute, 24 * time.Hour} {
		now = start.Add(-back)
		d := allow(t, m, "k")
		assert.False(t, d.Allowed, "Allow after the clock went back %v", back)
		assert.Equal(t, 30*time.Second, d.RetryAfter, "RetryAfter after the clock went back %v", back)
	}
	now = start.Add(30 * time.Second)
	assert.True(t, allow(t, m, "k").Allowed, "Allow 30s after the quota ran out")
	assert.False(t, allow(t, m, "k").Allowed, "a second Allow 30s after the quota ran out")
}

// Rates at the edges of what a Duration and a float64 hold decide without overflowing or
// hanging.
func TestMemoryExtremeRates(t *testing.T) {
	tests := []struct {
		name string
		rate ratelimit.Rate
	}{
		{"LongestPeriodHugeBurst", ratelimit.Rate{Limit: 1, Period: math.MaxInt64, Burst: 1 << 40}},
		{"LongestPeriodBurstOne", ratelimit.Rate{Limit: 1, Period: math.MaxInt64, Burst: 1}},
		{"ManyPerNanosecond", ratelimit.Rate{Limit: math.MaxInt32, Period: time.Nanosecond, Burst: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, clock := newMemory(t, ratelimit.MemoryConfig{Rate: tc.rate})
			d := ratelimit.Decision{Allowed: true}
			for i := 0; d.Allowed && i < 3; i++ {
				d = allow(t, m, "k")
				assert.GreaterOrEqual(t, d.Reset, time.Duration(0), "Reset")
				assert.GreaterOrEqual(t, d.RetryAfter, time.Duration(0), "RetryAfter")
			}
			clock.Advance(time.Hour)
			p := peek(t, m, "k")
			assert.GreaterOrEqual(t, p.Remaining, 0, "Remaining")
			assert.GreaterOrEqual(t, p.Reset, time.Duration(0), "Reset")
		})
	}
}
