package ratelimit

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"time"

	"golang.org/x/time/rate"
)

// DefaultMaxKeys is the number of keys a Memory holds at most when MemoryConfig.MaxKeys is 0:
// about 300 MiB with short keys.
const DefaultMaxKeys = 2_000_000

// MemoryConfig configures NewMemory.
type MemoryConfig struct {
	// Rate is every key's quota; required, see Rate.Validate.
	Rate Rate
	// Now returns the current time. nil: time.Now. Tests pass a fake clock. Time never goes
	// back for a Memory: a Now earlier than one a shard has already used counts as that one.
	Now func() time.Time
	// MaxKeys is the most keys the Memory holds state for, a hard cap on its size; see Memory
	// for what happens when it is reached. 0: DefaultMaxKeys. Negative is an error.
	MaxKeys int
}

// Memory is the in-process Limiter: one golang.org/x/time/rate token bucket per key, for a
// single instance of a service (ratelimit/redislimit shares quotas between instances).
//
// Keys are spread by a hash seeded per Memory over up to 4096 shards, each a map with its own
// lock, so requests on different keys seldom wait for each other. Allow and Peek take a few
// hundred nanoseconds and allocate only for a key not yet held. Memory never returns an error;
// it ignores ctx.
//
// # Forgetting idle keys
//
// A key whose bucket is full decides exactly as a key never seen, so Memory drops it, without a
// goroutine: the first Allow on a shard once a refill time (Burst × Period / Limit, but at least
// 10 seconds) has passed since the shard was last swept sweeps it, dropping every key whose
// bucket is full. No other key is ever dropped, except at MaxKeys. A key whose bucket has
// refilled is so gone within a refill time. So that a shard no longer reached by any key is swept too, every 16th
// Allow on a shard also offers to sweep another shard, round robin, if its lock is free. A sweep
// visits each key of its shard (a shard holds at most about 500 keys at the default MaxKeys):
// tens of microseconds, once per refill time per shard. Peek reads state and never creates or
// drops any.
//
// # MaxKeys
//
// Each shard holds at most MaxKeys divided by the number of shards (chosen so that the share is
// at least 256 keys, or MaxKeys itself when it is smaller), so the total is a hard cap, reached
// a little before MaxKeys keys in all when the hash spreads keys unevenly. A new key arriving
// at a full shard drops, of 8 of the shard's keys picked at random, the one whose bucket is
// fullest. When that bucket was not full, the dropped key's next request starts with a whole
// quota, gaining what it had used. A key that has used more of its quota than most keys of its
// shard is seldom the one dropped: a flood of new keys, which have used one request each,
// mostly drops its own keys. Set MaxKeys above the number of distinct keys expected within two
// refill times.
//
// # Memory use
//
// A key costs about 135 bytes (its x/time/rate.Limiter and its map entry) plus its string,
// which Memory keeps as passed, not copied: do not pass a substring of a large buffer. A Memory
// with the default MaxKeys also has 512 KiB of shards. A sweep gives back the memory of the keys
// it drops, not only their entries: it remakes a shard's map that it leaves with less than a
// quarter of the keys the map once held (a Go map keeps the room of its peak), so 200,000 keys
// gone idle cost nothing once swept. BenchmarkRateLimiterAllow reports the live
// heap with a million keys.
type Memory struct {
	limitPerPeriod int
	limit          rate.Limit
	burst          int
	perSecond      float64
	now            func() time.Time
	every          time.Duration // the least time between two sweeps of a shard
	shardMax       int
	seed           maphash.Seed
	mask           uint64
	shards         []shard
}

var _ Limiter = (*Memory)(nil)

const (
	maxShards       = 4096
	minKeysPerShard = 256
	minSweepEvery   = 10 * time.Second
	offerEvery      = 16 // Allows on a shard between two offers to sweep another shard
)

// NewMemory returns a Memory enforcing cfg.Rate on every key. Its errors wrap ErrInvalidRate
// or ErrInvalidConfig.
func NewMemory(cfg MemoryConfig) (*Memory, error) {
	if err := cfg.Rate.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxKeys < 0 {
		return nil, fmt.Errorf("%w: MemoryConfig.MaxKeys is %d, must not be negative", ErrInvalidConfig, cfg.MaxKeys)
	}
	maxKeys := cfg.MaxKeys
	if maxKeys == 0 {
		maxKeys = DefaultMaxKeys
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	n := 1
	for n < maxShards && maxKeys/(2*n) >= minKeysPerShard {
		n *= 2
	}
	m := &Memory{
		limitPerPeriod: cfg.Rate.Limit,
		perSecond:      cfg.Rate.perSecond(),
		burst:          cfg.Rate.burst(),
		now:            now,
		shardMax:       max(maxKeys/n, 1),
		seed:           maphash.MakeSeed(),
		mask:           uint64(n - 1),
		shards:         make([]shard, n),
	}
	m.limit = rate.Limit(m.perSecond)
	m.every = max(nanoseconds(float64(m.burst)/m.perSecond*float64(time.Second)), minSweepEvery)
	return m, nil
}

// Allow takes one request from key's quota when there is one left. It never returns an error.
func (m *Memory) Allow(_ context.Context, key string) (Decision, error) {
	now := m.now()
	i := maphash.String(m.seed, key) & m.mask
	s := &m.shards[i]

	s.mu.Lock()
	now = s.clamp(now)
	s.sweep(now, m.every, float64(m.burst))
	lim := s.keys[key]
	if lim == nil {
		lim = rate.NewLimiter(m.limit, m.burst)
		s.insert(key, lim, m.shardMax, now)
	}
	allowed := lim.AllowN(now, 1)
	d := m.decide(lim, now, allowed)
	s.ops++
	ops := s.ops
	s.mu.Unlock()

	if ops%offerEvery == 0 {
		m.offerSweep((i+ops/offerEvery)&m.mask, now)
	}
	return d, nil
}

// Peek reports what Allow would decide for key now, without taking anything or storing any
// state. It never returns an error.
func (m *Memory) Peek(_ context.Context, key string) (Decision, error) {
	now := m.now()
	s := &m.shards[maphash.String(m.seed, key)&m.mask]

	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Before(s.latest) {
		now = s.latest
	}
	lim := s.keys[key]
	if lim == nil {
		return Decision{Allowed: true, Limit: m.limitPerPeriod, Remaining: m.burst}, nil
	}
	return m.decide(lim, now, m.wouldAllow(lim.TokensAt(now))), nil
}

// Len returns the number of keys m holds state for: at most MaxKeys, and including keys whose
// bucket has refilled but that no sweep has dropped yet. For monitoring and tests.
func (m *Memory) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.keys)
		s.mu.Unlock()
	}
	return n
}

// decide describes lim at now, after an Allow that allowed or not (for Peek: would or not).
// The caller holds the lock of lim's shard, so no other call changes lim meanwhile.
func (m *Memory) decide(lim *rate.Limiter, now time.Time, allowed bool) Decision {
	tokens := lim.TokensAt(now)
	d := Decision{
		Allowed:   allowed,
		Limit:     m.limitPerPeriod,
		Remaining: max(int(math.Floor(tokens)), 0),
		Reset:     m.until(lim, now, tokens, float64(m.burst)),
	}
	if !allowed {
		d.RetryAfter = m.until(lim, now, tokens, 1)
	}
	return d
}

// wouldAllow reports whether lim, holding tokens, allows one request: as x/time/rate decides,
// which also allows when the missing fraction of a token takes less than a nanosecond to come.
func (m *Memory) wouldAllow(tokens float64) bool {
	return tokens >= 1 || time.Duration((1-tokens)/m.perSecond*float64(time.Second)) <= 0
}

// until returns how long after now lim holds want tokens, given it holds have at now:
// (want-have)/rate rounded to the nanosecond, lengthened where floating point leaves
// lim.TokensAt short of want then, so that waiting that long is surely enough. Zero when
// have >= want.
func (m *Memory) until(lim *rate.Limiter, now time.Time, have, want float64) time.Duration {
	if have >= want {
		return 0
	}
	d := nanoseconds((want - have) / m.perSecond * float64(time.Second))
	for step := time.Duration(1); lim.TokensAt(now.Add(d)) < want; step *= 2 {
		if d > math.MaxInt64/2 || step > math.MaxInt64/2 {
			return math.MaxInt64
		}
		d += step
	}
	return d
}

// nanoseconds rounds ns to a Duration, saturating at the largest.
func nanoseconds(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(math.Round(ns))
}

// offerSweep sweeps shard i if it is due and no one holds its lock.
func (m *Memory) offerSweep(i uint64, now time.Time) {
	s := &m.shards[i]
	if !s.mu.TryLock() {
		return
	}
	s.sweep(s.clamp(now), m.every, float64(m.burst))
	s.mu.Unlock()
}
