package rp

import "time"

// expiring is a map whose entries expire, holding at most max of them: when full, the oldest is
// dropped. Entries are expected to be put in order of expiry (one TTL, a clock that goes
// forward), so expired ones are found at the front of a queue and dropped as new ones are put,
// without a goroutine. It is not safe for concurrent use.
type expiring[K comparable, V any] struct {
	max   int
	m     map[K]expiringEntry[V]
	queue []queued[K] // in order of put; entries removed or replaced since stay until popped
	head  int
	seq   uint64
}

type expiringEntry[V any] struct {
	v       V
	expires time.Time
	seq     uint64
}

type queued[K comparable] struct {
	k   K
	seq uint64
}

func newExpiring[K comparable, V any](max int) *expiring[K, V] {
	return &expiring[K, V]{max: max, m: make(map[K]expiringEntry[V])}
}

// put adds k unless it is present and unexpired; it reports whether it added it.
func (e *expiring[K, V]) put(now time.Time, k K, v V, expires time.Time) bool {
	e.prune(now)
	if old, ok := e.m[k]; ok && now.Before(old.expires) {
		return false
	}
	for len(e.m) >= e.max {
		e.dropOldest()
	}
	e.seq++
	e.m[k] = expiringEntry[V]{v: v, expires: expires, seq: e.seq}
	e.queue = append(e.queue, queued[K]{k: k, seq: e.seq})
	return true
}

// get returns the unexpired value of k.
func (e *expiring[K, V]) get(now time.Time, k K) (V, bool) {
	en, ok := e.m[k]
	if !ok || !now.Before(en.expires) {
		var zero V
		return zero, false
	}
	return en.v, true
}

// remove deletes k; its queue slot is skipped when it reaches the front.
func (e *expiring[K, V]) remove(k K) { delete(e.m, k) }

// len counts the unexpired entries.
func (e *expiring[K, V]) len(now time.Time) int {
	e.prune(now)
	return len(e.m)
}

// prune drops expired entries from the front of the queue, and the slots of removed ones.
func (e *expiring[K, V]) prune(now time.Time) {
	for e.head < len(e.queue) {
		q := e.queue[e.head]
		en, ok := e.m[q.k]
		switch {
		case !ok || en.seq != q.seq:
		case !now.Before(en.expires):
			delete(e.m, q.k)
		default:
			e.compact()
			return
		}
		e.queue[e.head] = queued[K]{}
		e.head++
	}
	e.compact()
}

// dropOldest deletes the live entry put first.
func (e *expiring[K, V]) dropOldest() {
	for e.head < len(e.queue) {
		q := e.queue[e.head]
		e.queue[e.head] = queued[K]{}
		e.head++
		if en, ok := e.m[q.k]; ok && en.seq == q.seq {
			delete(e.m, q.k)
			return
		}
	}
}

// compact keeps the queue's memory in proportion to the live entries: it moves the queue to the
// front of its array when half of it is popped, and drops the slots of removed entries when
// they outnumber the live ones.
func (e *expiring[K, V]) compact() {
	if e.head > 0 && e.head >= len(e.queue)/2 {
		n := copy(e.queue, e.queue[e.head:])
		clear(e.queue[n:])
		e.queue, e.head = e.queue[:n], 0
	}
	if len(e.queue)-e.head > 2*len(e.m)+64 {
		live := e.queue[:0]
		for _, q := range e.queue[e.head:] {
			if en, ok := e.m[q.k]; ok && en.seq == q.seq {
				live = append(live, q)
			}
		}
		clear(e.queue[len(live):])
		e.queue, e.head = live, 0
	}
}
