package memstore

import (
	"context"
	"slices"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
)

func (r *userRec) position() int  { return r.pos }
func (r *groupRec) position() int { return r.pos }

// list runs a query over one seq. In creation order without a filter it pages through the seq
// directly (by the k-th live record, or from a position's stamp); with a filter an index answers
// it when the plan allows (see candidates), and otherwise every record is matched. A sort orders
// the matches by store.ComparePositions. view shows a record to filter.Match and
// store.SortValue; out copies a record into a result.
func list[R record, T any](ctx context.Context, s *seq[R], q store.Query, index func(*filter.Compare) ([]R, bool), view func(R) filter.Resource, out func(R, *T)) (store.Page[T], error) {
	if err := store.CheckSort(q.Sort); err != nil {
		return store.Page[T]{}, err
	}
	if q.After != nil {
		q.Before = nil
	}
	for _, p := range []*store.Position{q.After, q.Before} {
		if err := store.CheckPosition(q.Sort, p); err != nil {
			return store.Page[T]{}, err
		}
	}
	if q.Filter == nil && q.Sort.IsZero() {
		return direct(s, q, out), nil
	}
	var matches []R
	if cands, ok := candidates(q.Filter, index); ok {
		if len(cands) > 1 {
			cands = slices.Clone(cands)
			slices.SortFunc(cands, func(a, b R) int { return a.position() - b.position() })
			cands = slices.Compact(cands)
		}
		// A lone equality is answered exactly by its index; anything more is matched.
		c, exact := q.Filter.(*filter.Compare)
		exact = exact && c.Filter == nil
		for _, r := range cands {
			if exact || filter.Match(q.Filter, view(r)) {
				matches = append(matches, r)
			}
		}
	} else {
		var zero R
		for i, r := range s.slots {
			if i%4096 == 4095 {
				if err := ctx.Err(); err != nil {
					return store.Page[T]{}, err
				}
			}
			if r != zero && (q.Filter == nil || filter.Match(q.Filter, view(r))) {
				matches = append(matches, r)
			}
		}
	}
	// matches are in creation order; give each its position and sort them.
	order := make([]ranked[R], len(matches))
	for i, r := range matches {
		order[i] = ranked[R]{r: r, at: store.Position{Seq: s.stamp(r.position())}}
		if !q.Sort.IsZero() {
			order[i].at.Value = store.SortValue(view(r), q.Sort)
		}
	}
	if !q.Sort.IsZero() {
		slices.SortFunc(order, func(a, b ranked[R]) int { return store.ComparePositions(q.Sort, a.at, b.at) })
	}
	after := func(p store.Position) int {
		i, _ := slices.BinarySearchFunc(order, p, func(x ranked[R], p store.Position) int {
			if store.ComparePositions(q.Sort, x.at, p) <= 0 {
				return -1
			}
			return 1
		})
		return i
	}
	w := window{total: len(order), count: q.Count}
	switch {
	case q.After != nil:
		w.fromAfter(after(*q.After))
	case q.Before != nil:
		i, _ := slices.BinarySearchFunc(order, *q.Before, func(x ranked[R], p store.Position) int {
			if store.ComparePositions(q.Sort, x.at, p) < 0 {
				return -1
			}
			return 1
		})
		w.fromBefore(i)
	default:
		w.fromIndex(q.StartIndex)
	}
	page := store.Page[T]{TotalResults: len(order)}
	if w.end > w.start {
		page.Resources = make([]T, w.end-w.start)
		for i := w.start; i < w.end; i++ {
			out(order[i].r, &page.Resources[i-w.start])
		}
		if w.next {
			page.Next = &order[w.end-1].at
		}
		if w.prev {
			page.Prev = &order[w.start].at
		}
	}
	return page, nil
}

// ranked is a match with its position in the query's order.
type ranked[R any] struct {
	r  R
	at store.Position
}

// window is the part [start, end) of total ordered results that a page holds, and whether the
// page gets a Next and a Prev (store.Page's rules).
type window struct {
	total, count int
	start, end   int
	next, prev   bool
}

// fromIndex is the page at the 1-based index.
func (w *window) fromIndex(index int) {
	w.start = min(max(index, 1)-1, w.total)
	w.end = w.total
	if w.count >= 0 {
		w.end = min(w.start+w.count, w.total)
	}
	w.next = w.count > 0 && w.end < w.total
	w.prev = w.start > 0
}

// fromAfter is the page from i, the first result after the position.
func (w *window) fromAfter(i int) {
	w.start, w.end = i, w.total
	if w.count >= 0 {
		w.end = min(i+w.count, w.total)
	}
	w.next = w.count > 0 && w.end < w.total
	w.prev = true
}

// fromBefore is the page that ends before i, the first result at or after the position.
func (w *window) fromBefore(i int) {
	w.start, w.end = 0, i
	if w.count >= 0 {
		w.start = max(i-w.count, 0)
	}
	w.next = w.count > 0
	w.prev = w.start > 0
}

// direct answers a query in creation order without a filter from the seq itself: the k-th live
// record for a StartIndex, the stamp's position for a keyset position, so a deep page costs what
// the first does.
func direct[R record, T any](s *seq[R], q store.Query, out func(R, *T)) store.Page[T] {
	page := store.Page[T]{TotalResults: s.live}
	if q.Count == 0 || s.live == 0 {
		return page
	}
	var zero R
	add := func(pos int) {
		var t T
		out(s.slots[pos], &t)
		page.Resources = append(page.Resources, t)
	}
	at := func(pos int) *store.Position { return &store.Position{Seq: s.stamp(pos)} }
	// nextLive returns the first live position from pos on, or len(s.slots).
	nextLive := func(pos int) int {
		for pos < len(s.slots) && s.slots[pos] == zero {
			pos++
		}
		return pos
	}
	if q.Before != nil {
		// Walk back from the position, then put the page in order.
		var pos []int
		more := false
		for p := s.from(q.Before.Seq) - 1; p >= 0; p-- {
			if s.slots[p] == zero {
				continue
			}
			if q.Count >= 0 && len(pos) == q.Count {
				more = true
				break
			}
			pos = append(pos, p)
		}
		slices.Reverse(pos)
		for _, p := range pos {
			add(p)
		}
		if len(pos) > 0 {
			if q.Count > 0 {
				page.Next = at(pos[len(pos)-1])
			}
			if more {
				page.Prev = at(pos[0])
			}
		}
		return page
	}
	var first int
	if q.After != nil {
		first = nextLive(s.from(q.After.Seq + 1))
	} else {
		skip := max(q.StartIndex, 1) - 1
		if skip >= s.live {
			return page
		}
		first = s.nth(skip)
	}
	last := -1
	for pos := first; pos < len(s.slots) && (q.Count < 0 || len(page.Resources) < q.Count); pos = nextLive(pos + 1) {
		add(pos)
		last = pos
	}
	if last < 0 {
		return page
	}
	if q.After != nil || q.StartIndex > 1 {
		page.Prev = at(first)
	}
	if q.Count > 0 && nextLive(last+1) < len(s.slots) {
		page.Next = at(last)
	}
	return page
}

// candidates returns a superset of the records e matches, taken from indexes, or false when e
// needs a scan. An equality the index function knows is a lookup; "and" takes the smaller side
// that has candidates; "or" needs both sides. The caller still matches every candidate.
func candidates[R record](e filter.Expr, index func(*filter.Compare) ([]R, bool)) ([]R, bool) {
	switch e := e.(type) {
	case *filter.Compare:
		// The Entra form emails[type eq "work"].value eq "x" is looked up by its value; the
		// caller matches the candidates against the value filter.
		if e.Op != filter.Eq || e.Value.Kind != filter.KindString {
			return nil, false
		}
		return index(e)
	case *filter.ValuePath:
		// A value filter's comparisons name the attribute's sub-attributes, which the index
		// function recognises (members.value) or declines.
		return candidates(e.Filter, index)
	case *filter.And:
		l, lok := candidates(e.Left, index)
		r, rok := candidates(e.Right, index)
		switch {
		case lok && (!rok || len(l) <= len(r)):
			return l, true
		case rok:
			return r, true
		}
	case *filter.Or:
		l, lok := candidates(e.Left, index)
		if !lok {
			return nil, false
		}
		r, rok := candidates(e.Right, index)
		if !rok {
			return nil, false
		}
		return append(slices.Clip(l), r...), true
	}
	return nil, false
}
