package filter

import (
	"strings"
	"time"
	"unsafe"

	"github.com/visid/visid/store/schema"
)

// Value is one value of a resource's attribute, as Match sees it. The zero Value is absent.
type Value struct {
	Kind Kind
	Str  string
	Num  float64
	Bool bool
	Time time.Time
}

// StringValue is s as a Value; the empty string is absent.
func StringValue(s string) Value {
	if s == "" {
		return Value{}
	}
	return Value{Kind: KindString, Str: s}
}

// BoolValue is b as a Value.
func BoolValue(b bool) Value { return Value{Kind: KindBool, Bool: b} }

// NumberValue is f as a Value.
func NumberValue(f float64) Value { return Value{Kind: KindNumber, Num: f} }

// TimeValue is t as a Value; the zero time is absent.
func TimeValue(t time.Time) Value {
	if t.IsZero() {
		return Value{}
	}
	return Value{Kind: KindTime, Time: t}
}

// ComplexValue is the Value of a complex attribute: present when at least one of its
// sub-attributes has a value.
func ComplexValue(present bool) Value {
	if !present {
		return Value{}
	}
	return Value{Kind: KindComplex}
}

// Resource is what Match evaluates a filter against. store.User and store.Group implement it;
// a host backend that cannot push filters down can implement it for its own types.
type Resource interface {
	// FilterValue returns the value of the top-level attribute attr (when sub is nil) or of its
	// sub-attribute sub. For a multi-valued attr, i selects the attr's i-th value (from 0) and ok
	// is false once i is past the last; for a single-valued attr only i == 0 is asked for and ok
	// is true. A complex attribute with sub nil reports ComplexValue.
	FilterValue(attr, sub *schema.Attribute, i int) (v Value, ok bool)
}

// Match reports whether r satisfies e.
func Match(e Expr, r Resource) bool { return match(e, r, -1) }

// match evaluates e; elem is the index of the multi-valued attribute's value whose value filter
// is being evaluated, or -1 at the top level.
func match(e Expr, r Resource, elem int) bool {
	switch e := e.(type) {
	case *And:
		return match(e.Left, r, elem) && match(e.Right, r, elem)
	case *Or:
		return match(e.Left, r, elem) || match(e.Right, r, elem)
	case *Not:
		return !match(e.X, r, elem)
	case *ValuePath:
		for i := 0; ; i++ {
			if _, ok := r.FilterValue(e.Attr, nil, i); !ok {
				return false
			}
			if match(e.Filter, r, i) {
				return true
			}
		}
	case *Compare:
		if e.Op == Pr || e.Value.Kind == KindNull {
			present := e.any(r, elem, true)
			return present != (e.Op == Eq)
		}
		return e.any(r, elem, false)
	}
	return false
}

// Key returns the literal string as the attribute compares it: schema.Fold of it when the
// attribute's caseExact is false, the string itself when it is true. Backends use it to look
// the literal up in an index or to bind it to a query on a folded column. It is empty for
// non-string comparisons.
func (c *Compare) Key() string { return c.want }

// any reports whether a value of the compared attribute is present (presence) or satisfies the
// comparison.
func (c *Compare) any(r Resource, elem int, presence bool) bool {
	if elem >= 0 {
		v, ok := r.FilterValue(c.Attr, c.Sub, elem)
		return ok && c.holds(v, presence)
	}
	if !c.Attr.MultiValued {
		v, _ := r.FilterValue(c.Attr, c.Sub, 0)
		return c.holds(v, presence)
	}
	for i := 0; ; i++ {
		v, ok := r.FilterValue(c.Attr, c.Sub, i)
		if !ok {
			return false
		}
		if c.Filter != nil && !match(c.Filter, r, i) {
			continue
		}
		if c.holds(v, presence) {
			return true
		}
	}
}

func (c *Compare) holds(v Value, presence bool) bool {
	if v.Kind == Absent {
		return false
	}
	if presence {
		return true
	}
	switch c.Value.Kind {
	case KindBool:
		return v.Kind == KindBool && (v.Bool == c.Value.Bool) == (c.Op == Eq)
	case KindNumber:
		if v.Kind != KindNumber {
			return false
		}
		switch {
		case v.Num < c.Value.Num:
			return order(c.Op, -1)
		case v.Num > c.Value.Num:
			return order(c.Op, 1)
		}
		return order(c.Op, 0)
	}
	switch v.Kind {
	case KindTime:
		t := c.Attr
		if c.Sub != nil {
			t = c.Sub
		}
		return t.Type == schema.DateTime && order(c.Op, v.Time.Compare(c.at))
	case KindString:
		if c.exact {
			return compareStrings(c.Op, v.Str, c.want)
		}
		if !schema.NeedsFold(v.Str) {
			return compareStrings(c.Op, v.Str, c.want)
		}
		if ascii(v.Str) {
			return compareASCIIFold(c.Op, v.Str, c.want)
		}
		var buf [64]byte
		f := schema.AppendFold(buf[:0], v.Str)
		return compareStrings(c.Op, unsafe.String(unsafe.SliceData(f), len(f)), c.want)
	}
	return false
}

func compareStrings(op Op, v, want string) bool {
	switch op {
	case Eq:
		return v == want
	case Ne:
		return v != want
	case Co:
		return strings.Contains(v, want)
	case Sw:
		return strings.HasPrefix(v, want)
	case Ew:
		return strings.HasSuffix(v, want)
	}
	return order(op, strings.Compare(v, want))
}

// order applies an ordering operator to a three-way comparison of the value with the literal.
func order(op Op, cmp int) bool {
	switch op {
	case Eq:
		return cmp == 0
	case Ne:
		return cmp != 0
	case Gt:
		return cmp > 0
	case Ge:
		return cmp >= 0
	case Lt:
		return cmp < 0
	case Le:
		return cmp <= 0
	}
	return false
}

// compareASCIIFold is compareStrings on schema.Fold(v) for an ASCII v, without building it.
func compareASCIIFold(op Op, v, want string) bool {
	switch op {
	case Eq:
		return len(v) == len(want) && hasPrefixFold(v, want)
	case Ne:
		return len(v) != len(want) || !hasPrefixFold(v, want)
	case Co:
		// Not hasPrefixFold at each offset: that is quadratic in the worst case, and
		// strings.Contains is not.
		var buf [64]byte
		f := schema.AppendFold(buf[:0], v)
		return strings.Contains(unsafe.String(unsafe.SliceData(f), len(f)), want)
	case Sw:
		return hasPrefixFold(v, want)
	case Ew:
		return len(v) >= len(want) && hasPrefixFold(v[len(v)-len(want):], want)
	}
	n := min(len(v), len(want))
	for i := 0; i < n; i++ {
		if c, w := lower(v[i]), want[i]; c != w {
			return order(op, int(c)-int(w))
		}
	}
	return order(op, len(v)-len(want))
}

// hasPrefixFold reports whether the ASCII string v, lower-cased, starts with want.
func hasPrefixFold(v, want string) bool {
	if len(v) < len(want) {
		return false
	}
	for i := 0; i < len(want); i++ {
		if lower(v[i]) != want[i] {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
