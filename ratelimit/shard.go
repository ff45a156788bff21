package ratelimit

import (
	"sync"
	"time"
	"unsafe"

	"golang.org/x/time/rate"
)

// shard is one lock's worth of a Memory's keys. It is padded to a multiple of 128 bytes so that
// two shards' locks never share a cache line (or the pair of lines some CPUs fetch together).
type shard struct {
	shardState
	_ [(128 - unsafe.Sizeof(shardState{})%128) % 128]byte
}

type shardState struct {
	mu sync.Mutex
	// keys holds a bucket for each key seen and not yet dropped; nil until the first, and
	// again once a sweep has dropped every key.
	keys map[string]*rate.Limiter
	// peak is the most keys the map has held since it was made: a Go map keeps the room of its
	// peak when keys are deleted, so a sweep that leaves far fewer makes a smaller map.
	peak int
	// swept is when the shard was last swept (the zero time before the first Allow).
	swept time.Time
	// latest is the latest time the shard has used; no call uses an earlier one.
	latest time.Time
	// ops counts the Allows on the shard, to pace offers to sweep other shards.
	ops uint64
}

// clamp returns now, or the latest time the shard has used if that is later, and records it.
// Every bucket of the shard so sees time move forward only: x/time/rate would otherwise move
// a bucket's clock back for a caller that read the clock before another, and then count the
// same time twice.
func (s *shardState) clamp(now time.Time) time.Time {
	if now.Before(s.latest) {
		return s.latest
	}
	s.latest = now
	return now
}

// sweep drops every key whose bucket is full at now, when every has passed since the last
// sweep. A full bucket decides exactly as a new one, so no decision changes.
func (s *shardState) sweep(now time.Time, every time.Duration, burst float64) {
	if now.Sub(s.swept) < every {
		return
	}
	for k, lim := range s.keys {
		if lim.TokensAt(now) >= burst {
			delete(s.keys, k)
		}
	}
	s.swept = now
	s.shrink()
}

// shrinkBelow is the fewest keys a map must have held for a sweep to remake it smaller.
const shrinkBelow = 64

// shrink gives back the room of keys dropped: a map left empty goes, and one left with less
// than a quarter of its peak is copied into a map of its size. So the keys of tenants gone idle
// cost nothing once swept, however many there were. Copying costs at most a quarter of the
// keys dropped since the map was made.
func (s *shardState) shrink() {
	switch {
	case len(s.keys) == 0:
		s.keys, s.peak = nil, 0
	case s.peak >= shrinkBelow && len(s.keys) < s.peak/4:
		keys := make(map[string]*rate.Limiter, len(s.keys))
		for k, lim := range s.keys {
			keys[k] = lim
		}
		s.keys, s.peak = keys, len(keys)
	}
}

// evictionSample is how many keys insert compares to choose one to drop at the cap.
const evictionSample = 8

// insert adds a new key's bucket. When the shard already holds capacity keys, it first drops,
// of evictionSample keys picked at random (Go's map iteration order), the one whose bucket is
// fullest at now: the one whose fresh start grants least.
func (s *shardState) insert(key string, lim *rate.Limiter, capacity int, now time.Time) {
	if len(s.keys) >= capacity {
		var (
			drop string
			most = -1.0
			seen = 0
		)
		for k, l := range s.keys {
			if t := l.TokensAt(now); t > most {
				drop, most = k, t
			}
			if seen++; seen == evictionSample {
				break
			}
		}
		delete(s.keys, drop)
	}
	if s.keys == nil {
		s.keys = make(map[string]*rate.Limiter)
	}
	s.keys[key] = lim
	s.peak = max(s.peak, len(s.keys))
}
