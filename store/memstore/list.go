package memstore

import (
	"context"
	"slices"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
)

func (r *userRec) position() int  { return r.pos }
func (r *groupRec) position() int { return r.pos }

// list runs a query over one seq. Without a filter it pages through the seq directly; with a
// filter an index answers it when the plan allows (see candidates), and otherwise every record
// is matched. Results keep creation order either way. out copies a record into a result.
func list[R record, T any](ctx context.Context, s *seq[R], q store.Query, index func(*filter.Compare) ([]R, bool), match func(R) bool, out func(R, *T)) (store.Page[T], error) {
	p := pager[R, T]{skip: max(q.StartIndex, 1) - 1, count: q.Count, out: out}
	if q.Filter == nil {
		p.page.TotalResults = s.live
		if p.skip >= s.live || p.count == 0 {
			return p.page, nil
		}
		n := s.live - p.skip
		if p.count > 0 {
			n = min(n, p.count)
		}
		p.page.Resources = make([]T, 0, n)
		var zero R
		for pos := s.nth(p.skip); pos < len(s.slots) && len(p.page.Resources) < n; pos++ {
			if r := s.slots[pos]; r != zero {
				p.add(r)
			}
		}
		return p.page, nil
	}
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
			if exact || match(r) {
				p.keep(r)
			}
		}
		return p.page, nil
	}
	var zero R
	for i, r := range s.slots {
		if i%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return store.Page[T]{}, err
			}
		}
		if r != zero && match(r) {
			p.keep(r)
		}
	}
	return p.page, nil
}

// pager collects one page of results.
type pager[R any, T any] struct {
	skip, count int
	out         func(R, *T)
	page        store.Page[T]
}

func (p *pager[R, T]) add(r R) {
	var zero T
	p.page.Resources = append(p.page.Resources, zero)
	p.out(r, &p.page.Resources[len(p.page.Resources)-1])
}

// keep counts a match and adds it when it falls within the page.
func (p *pager[R, T]) keep(r R) {
	if n := p.page.TotalResults - p.skip; n >= 0 && (p.count < 0 || n < p.count) {
		p.add(r)
	}
	p.page.TotalResults++
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
