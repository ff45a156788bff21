package store

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// Sort orders a List by one attribute (RFC 7644 §3.4.2.3). The zero Sort is creation order.
//
// Resources order by their sort value (SortValue), then by creation order among equal values.
// Resources without a value come after every resource with one, in both directions, in creation
// order among themselves. Descending reverses the order of the resources with a value and of
// those without (equal values included), so a descending list is the ascending one with its two
// parts each reversed. Strings order by their bytes: the schema.Fold form for attributes whose
// caseExact is false, the value as stored otherwise; dateTimes by instant, booleans false
// before true, numbers by value.
type Sort struct {
	// Attr is the top-level attribute and Sub its sub-attribute (nil for none), as
	// schema.ResourceType.Lookup returns them for the listed resource type; Sortable must hold.
	// Attr nil is creation order.
	Attr, Sub *schema.Attribute
	// Descending reverses the order, the resources without a value staying last.
	Descending bool
}

// IsZero reports whether s is creation order.
func (s Sort) IsZero() bool { return s.Attr == nil }

// Path is the sorted attribute's canonical path ("name.familyName"), "" for creation order.
func (s Sort) Path() string {
	switch {
	case s.Attr == nil:
		return ""
	case s.Sub != nil:
		return s.Sub.Path()
	}
	return s.Attr.Path()
}

// Sortable reports whether a List may sort by attr's sub (sub nil: attr itself): a value that a
// filter may name (stored, returned), of a simple type. A complex attribute sorts by one of its
// sub-attributes; a multi-valued one by the value of its primary element, or of its first
// element when none is primary.
func Sortable(attr, sub *schema.Attribute) bool {
	def := attr
	if sub != nil {
		def = sub
	}
	if attr == nil || attr.Unfilterable || attr.Returned == schema.Never || def.Unfilterable || def.Returned == schema.Never {
		return false
	}
	return def.Type != schema.Complex
}

// SortValue returns r's value for s: for a single-valued attribute its value, for a
// multi-valued one the value of the first element whose primary sub-attribute is true and that
// has the value, else the value of the first element that has one. A string value is returned
// in the form it orders by (schema.Fold unless the attribute is caseExact). A zero Value (Kind
// filter.Absent) means none.
func SortValue(r filter.Resource, s Sort) filter.Value {
	if s.Attr == nil {
		return filter.Value{}
	}
	def := s.Attr
	if s.Sub != nil {
		def = s.Sub
	}
	var v filter.Value
	if !s.Attr.MultiValued {
		v, _ = r.FilterValue(s.Attr, s.Sub, 0)
	} else {
		primary := s.Attr.Sub("primary")
		first := -1
		for i := 0; ; i++ {
			x, ok := r.FilterValue(s.Attr, s.Sub, i)
			if !ok {
				break
			}
			if x.Kind == filter.Absent {
				continue
			}
			if primary != nil && primary != s.Sub {
				if p, _ := r.FilterValue(s.Attr, primary, i); p.Kind == filter.KindBool && p.Bool {
					v, first = x, -2
					break
				}
			}
			if first == -1 {
				first = i
				v = x
			}
		}
	}
	switch v.Kind {
	case filter.KindString:
		if def.Type == schema.DateTime {
			// Stored dateTimes are times, never strings.
			return filter.Value{}
		}
		if !def.CaseExact {
			v.Str = schema.Fold(v.Str)
		}
	case filter.KindTime:
		v.Time = v.Time.UTC()
	case filter.KindNumber, filter.KindBool:
	default:
		return filter.Value{}
	}
	return v
}

// Position is where a resource stands in the order of a Sort: its sort value (SortValue; the
// zero Value for creation order or a resource without one) and its creation sequence number in
// the backend, which only orders (a backend's numbers mean nothing to another). Positions are
// what keyset paging (Query.After, Query.Before) compares with; a resource need not exist any
// more for its position to work.
type Position struct {
	Seq   int64
	Value filter.Value
}

// ComparePositions orders a and b as a List with s orders resources: those with a value first,
// by value and then by Seq, then those without one, by Seq; each part reversed when s is
// Descending.
func ComparePositions(s Sort, a, b Position) int {
	an, bn := a.Value.Kind == filter.Absent, b.Value.Kind == filter.Absent
	switch {
	case an && !bn:
		return 1
	case !an && bn:
		return -1
	}
	c := 0
	if !an {
		c = compareValues(a.Value, b.Value)
	}
	if c == 0 {
		c = cmp.Compare(a.Seq, b.Seq)
	}
	if s.Descending {
		c = -c
	}
	return c
}

// compareValues orders two present sort values of one kind.
func compareValues(a, b filter.Value) int {
	switch a.Kind {
	case filter.KindString:
		return strings.Compare(a.Str, b.Str)
	case filter.KindNumber:
		return cmp.Compare(a.Num, b.Num)
	case filter.KindBool:
		switch {
		case a.Bool == b.Bool:
			return 0
		case b.Bool:
			return -1
		}
		return 1
	case filter.KindTime:
		return a.Time.Compare(b.Time)
	}
	return 0
}

// CheckPosition reports, as an ErrInvalid, a position whose value does not fit s: a value of
// another kind than the attribute's, or one at all in creation order.
func CheckPosition(s Sort, p *Position) error {
	if p == nil || p.Value.Kind == filter.Absent {
		return nil
	}
	want := filter.Absent
	if s.Attr != nil {
		def := s.Attr
		if s.Sub != nil {
			def = s.Sub
		}
		switch def.Type {
		case schema.Boolean:
			want = filter.KindBool
		case schema.Integer, schema.Decimal:
			want = filter.KindNumber
		case schema.DateTime:
			want = filter.KindTime
		default:
			want = filter.KindString
		}
	}
	if p.Value.Kind != want {
		return fmt.Errorf("position of kind %d for sort %q: %w", p.Value.Kind, s.Path(), ErrInvalid)
	}
	return nil
}

// CheckSort reports, as an ErrInvalid, a sort by an attribute that is not Sortable.
func CheckSort(s Sort) error {
	if s.Attr != nil && !Sortable(s.Attr, s.Sub) {
		return fmt.Errorf("cannot sort by %q: %w", s.Path(), ErrInvalid)
	}
	return nil
}
