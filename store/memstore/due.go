package memstore

import (
	"container/heap"
	"sync"
	"time"
)

// dueIndex is the store's index of the webhook endpoints that have something to deliver,
// across tenants, behind its own lock, which a writer takes after the tenant's: Webhooks.Due
// reads it without visiting a tenant.
//
// An endpoint is idle (caught up, or failing), woken (an event was recorded after its cursor:
// the next Due puts it in the heap) or due (in the heap, from its at).
type dueIndex struct {
	mu    sync.Mutex
	woken []*webhookRec // in the order they were woken; an entry no longer woken is passed over
	heap  dueHeap       // the due endpoints, by (at, n)
	n     uint64        // endpoints created so far, numbering them in creation order
	wakes chan struct{} // closed at the next wake-up (WakeUps); nil: nobody waits
}

// The states of an endpoint in the dueIndex.
const (
	dueIdle = iota
	dueWoken
	dueDue
)

// dueEntry is where an endpoint stands in the dueIndex, under its lock.
type dueEntry struct {
	state int
	at    time.Time // due since, when dueDue
	woke  time.Time // when it was woken, when dueWoken
	noted bool      // it is in dueIndex.woken
	idx   int       // its index in the heap, when dueDue
	until time.Time // the end of its lease (a copy of webhookRec.until)
	n     uint64    // creation order
	gone  bool      // deleted, with its tenant or alone
}

// dueHeap is a min-heap of endpoints by (at, n).
type dueHeap []*webhookRec

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	a, b := &h[i].due, &h[j].due
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.n < b.n
}
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].due.idx, h[j].due.idx = i, j
}
func (h *dueHeap) Push(x any) {
	r := x.(*webhookRec)
	r.due.idx = len(*h)
	*h = append(*h, r)
}
func (h *dueHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return r
}

// added numbers a new endpoint and, when woken, wakes it.
func (x *dueIndex) added(r *webhookRec, woken bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.n++
	r.due.n = x.n
	if woken {
		x.wakeLocked(r)
	}
}

// wake wakes the endpoints of rs that are idle, not failing and whose cursors come before
// event last: an event was recorded after their cursors. The caller holds their tenant's
// write lock.
func (x *dueIndex) wake(rs []*webhookRec, last int64) {
	if len(rs) == 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range rs {
		if !r.e.Delivery.Failing && r.cursor < last {
			x.wakeLocked(r)
		}
	}
}

func (x *dueIndex) wakeLocked(r *webhookRec) {
	if r.due.state == dueIdle && !r.due.gone {
		r.due.state, r.due.woke = dueWoken, time.Now()
		if !r.due.noted { // woken, idle and woken again before a Due: noted once
			r.due.noted = true
			x.woken = append(x.woken, r)
		}
		if x.wakes != nil {
			close(x.wakes)
			x.wakes = nil
		}
	}
}

// wakeUps returns a channel closed at the next wake-up.
func (x *dueIndex) wakeUps() <-chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.wakes == nil {
		x.wakes = make(chan struct{})
	}
	return x.wakes
}

// set makes r due from at (zero: idle). The caller holds r's tenant's write lock.
func (x *dueIndex) set(r *webhookRec, at time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case at.IsZero() || r.due.gone:
		x.idleLocked(r)
	case r.due.state == dueDue:
		r.due.at = at
		heap.Fix(&x.heap, r.due.idx)
	default:
		r.due.state, r.due.at = dueDue, at
		heap.Push(&x.heap, r)
	}
}

func (x *dueIndex) idleLocked(r *webhookRec) {
	if r.due.state == dueDue {
		heap.Remove(&x.heap, r.due.idx)
	}
	r.due.state = dueIdle // a woken entry stays in x.woken, passed over
}

// leased records the end of r's lease.
func (x *dueIndex) leased(r *webhookRec, until time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r.due.until = until
}

// drop removes deleted endpoints.
func (x *dueIndex) drop(rs ...*webhookRec) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range rs {
		x.idleLocked(r)
		r.due.gone = true
	}
}

// due returns at most limit endpoints due at now, oldest due first: the woken ones become due
// from when they were woken (from now, if that is earlier), then the heap is walked best
// first, down to the entries past now, passing over the leased ones.
func (x *dueIndex) due(now time.Time, limit int) []*webhookRec {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range x.woken {
		r.due.noted = false
		if r.due.state == dueWoken && !r.due.gone {
			r.due.state, r.due.at = dueDue, r.due.woke
			if now.Before(r.due.woke) {
				r.due.at = now
			}
			heap.Push(&x.heap, r)
		}
	}
	clear(x.woken)
	x.woken = x.woken[:0]
	var out []*webhookRec
	if len(x.heap) == 0 {
		return out
	}
	next := &indexHeap{h: x.heap, idx: []int{0}}
	for next.Len() > 0 && len(out) < limit {
		i := heap.Pop(next).(int)
		r := x.heap[i]
		if r.due.at.After(now) {
			continue // and so are the entries below it
		}
		if !r.due.until.After(now) {
			out = append(out, r)
		}
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(x.heap) {
				heap.Push(next, c)
			}
		}
	}
	return out
}

// indexHeap orders indexes of h as h orders its entries: the frontier of a best-first walk.
type indexHeap struct {
	h   dueHeap
	idx []int
}

func (q *indexHeap) Len() int           { return len(q.idx) }
func (q *indexHeap) Less(i, j int) bool { return q.h.Less(q.idx[i], q.idx[j]) }
func (q *indexHeap) Swap(i, j int)      { q.idx[i], q.idx[j] = q.idx[j], q.idx[i] }
func (q *indexHeap) Push(x any)         { q.idx = append(q.idx, x.(int)) }
func (q *indexHeap) Pop() any {
	n := len(q.idx) - 1
	v := q.idx[n]
	q.idx = q.idx[:n]
	return v
}
