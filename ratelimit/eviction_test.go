package ratelimit_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/ratelimit"
)

// tenPerMinute refills in a minute: Memory sweeps each shard once a minute.
var tenPerMinute = ratelimit.Rate{Limit: 10, Period: time.Minute}

// sweepConfig has 256 shards, so that the tests' traffic reaches all of them.
var sweepConfig = ratelimit.MemoryConfig{Rate: tenPerMinute, MaxKeys: 100_000}

// allowMany makes one Allow on each of n keys named prefix0, prefix1, ….
func allowMany(t *testing.T, m *ratelimit.Memory, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		if _, err := m.Allow(ctx, prefix+strconv.Itoa(i)); err != nil {
			t.Fatalf("Allow: %v", err)
		}
	}
}

// Keys whose bucket is full are dropped by the next sweep of their shard, at most a refill time
// after the last; keys whose bucket is not full are kept.
func TestMemorySweepDropsFullBuckets(t *testing.T) {
	m, clock := newMemory(t, sweepConfig)
	allowMany(t, m, "old-", 10_000) // each full again 6s later
	require.Equal(t, 10_000, m.Len(), "Len after 10,000 keys")

	clock.Advance(30 * time.Second)
	for i := range 100 {
		exhaust(t, m, "limited-"+strconv.Itoa(i), 10) // full again 60s later
	}
	clock.Advance(29 * time.Second)
	allowMany(t, m, "new-", 20_000)
	assert.Equal(t, 30_100, m.Len(), "Len before a minute has passed since the shards' first sweep")

	clock.Advance(2 * time.Second) // 61s after the first sweep, 31s after the limited keys ran out
	allowMany(t, m, "newer-", 20_000)
	assert.Equal(t, 40_100, m.Len(), "Len once the shards have been swept: the old keys gone; the limited keys, the new ones (full again 6s after their request) and the newer ones left")
	for i := range 100 {
		require.Equal(t, 5, peek(t, m, "limited-"+strconv.Itoa(i)).Remaining, "limited-%d, 31s after its quota ran out", i)
	}

	clock.Advance(time.Minute)
	allowMany(t, m, "newest-", 20_000)
	assert.Equal(t, 20_000, m.Len(), "Len after another minute: only the newest keys")
}

// A shard that no traffic reaches any more is emptied by traffic on other shards.
func TestMemoryDropsRefilledKeysOfIdleShards(t *testing.T) {
	m, clock := newMemory(t, sweepConfig)
	allowMany(t, m, "old-", 10_000)
	clock.Advance(2 * time.Minute)
	for range 256 * 16 * 2 { // enough for every shard to be offered a rotation, whatever its place
		allow(t, m, "hot")
	}
	assert.Equal(t, 1, m.Len(), "Len after 2 minutes and traffic on one key only")
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC() // the first may leave what finalizers free
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// The memory of keys gone idle is given back once their shards are swept, not only their
// entries: a sweep remakes a shard's map that it left much smaller than it was (Go maps keep the
// room of their peak). The limiter of a host whose 200,000 tenants' keys made a request each
// and went idle goes back to the heap it started with; keys still limited keep theirs.
func TestMemoryIdleKeysGiveBackTheirMemory(t *testing.T) {
	m, clock := newMemory(t, ratelimit.MemoryConfig{Rate: tenPerMinute, MaxKeys: 1_000_000})
	before := heapInUse()
	allowMany(t, m, "tenant-key-", 200_000)
	held := heapInUse() - before
	t.Logf("200,000 keys: %d bytes, %d a key", held, held/200_000)
	clock.Advance(2 * time.Minute)
	for i := range 2_000 { // 1% of the keys stay: they are limited
		exhaust(t, m, "limited-"+strconv.Itoa(i), 10)
	}
	for range 4096 * 16 * 2 { // every shard is swept, whatever its place in the rotation
		allow(t, m, "hot")
	}
	require.Equal(t, 2_001, m.Len())
	left := int64(heapInUse()) - int64(before)
	runtime.KeepAlive(m) // measured alive
	t.Logf("after the sweeps, 2,001 keys: %d bytes", left)
	assert.Less(t, left, int64(held)/20, "the heap the idle keys held is given back (2,001 keys left of 200,000)")
}

// A key that has not refilled keeps its state however many rotations traffic on other keys
// causes: it is never given a fresh quota early. Checked with Peek only (which does not move a
// key to the current generation) and with a key exhausted again and again.
func TestMemoryKeepsKeysThatHaveNotRefilled(t *testing.T) {
	t.Run("PeekedOnly", func(t *testing.T) {
		m, clock := newMemory(t, sweepConfig)
		// Victims run out of quota at every phase of the shards' generations (traffic starts
		// them all at once), and are checked every second until they have refilled.
		exhausted := map[string]int{} // victim: the second its quota ran out
		for s := range 180 {
			if s < 120 {
				v := "victim-" + strconv.Itoa(s)
				exhaust(t, m, v, 10)
				exhausted[v] = s
			}
			allowMany(t, m, "other-"+strconv.Itoa(s)+"-", 600) // 36,000 keys a minute, under the cap
			for v, e := range exhausted {
				if s-e < 60 {
					require.Equal(t, (s-e)/6, peek(t, m, v).Remaining, "%s, %ds after its quota ran out", v, s-e)
				} else {
					require.Equal(t, 10, peek(t, m, v).Remaining, "%s, %ds after its quota ran out", v, s-e)
				}
			}
			clock.Advance(time.Second)
		}
	})
	t.Run("ExhaustedAgain", func(t *testing.T) {
		m, clock := newMemory(t, sweepConfig)
		exhaust(t, m, "victim", 10)
		for step := range 20 { // 10 minutes, 10 refill times
			clock.Advance(30 * time.Second)
			allowMany(t, m, "other-"+strconv.Itoa(step)+"-", 3_000)
			require.Equal(t, 5, peek(t, m, "victim").Remaining, "step %d: Remaining 30s after the quota ran out", step)
			exhaust(t, m, "victim", 5)
		}
	})
}

// MaxKeys is a hard cap. At the cap a new key drops, of 8 keys sampled, the one with the fullest
// bucket: a key that has used its quota stays while keys that have used less come and go; a
// key dropped while not full (the documented cost of the cap) starts afresh.
func TestMemoryMaxKeys(t *testing.T) {
	t.Run("HardCap", func(t *testing.T) {
		for _, maxKeys := range []int{1, 2, 100, 1_000, 20_000} {
			m, _ := newMemory(t, ratelimit.MemoryConfig{Rate: tenPerMinute, MaxKeys: maxKeys})
			for step := range 30 {
				allowMany(t, m, "k"+strconv.Itoa(step)+"-", max(maxKeys/10, 1))
				require.LessOrEqual(t, m.Len(), maxKeys, "Len after %d keys, MaxKeys %d", (step+1)*max(maxKeys/10, 1), maxKeys)
			}
			assert.GreaterOrEqual(t, m.Len(), maxKeys*3/4, "Len after 3×MaxKeys keys, MaxKeys %d: the cap is MaxKeys, not much less", maxKeys)
		}
	})
	t.Run("LimitedKeysStay", func(t *testing.T) {
		m, _ := newMemory(t, ratelimit.MemoryConfig{Rate: tenPerMinute, MaxKeys: 100}) // one shard
		exhaust(t, m, "victim", 10)
		allowMany(t, m, "flood-", 1_000)
		assert.Equal(t, 100, m.Len(), "Len at the cap")
		assert.Zero(t, peek(t, m, "victim").Remaining, "a key that used its quota, after a flood of new keys")
	})
	t.Run("DroppedKeyStartsAfresh", func(t *testing.T) {
		m, _ := newMemory(t, ratelimit.MemoryConfig{Rate: tenPerMinute, MaxKeys: 10})
		for i := range 10 {
			exhaust(t, m, "k"+strconv.Itoa(i), 10)
		}
		allow(t, m, "one-more")
		assert.Equal(t, 10, m.Len(), "Len at the cap")
		afresh := 0
		for i := range 10 {
			if peek(t, m, "k"+strconv.Itoa(i)).Remaining == 10 {
				afresh++
			}
		}
		assert.Equal(t, 1, afresh, "exhausted keys with a whole quota after one more key came at the cap")
	})
}
