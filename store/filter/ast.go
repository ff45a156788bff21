package filter

import (
	"strconv"
	"strings"
	"time"

	"github.com/visid/visid/store/schema"
)

// Expr is a parsed filter: *And, *Or, *Not, *Compare or *ValuePath. Its String method prints
// the canonical form, which parses back to an equal Expr.
type Expr interface {
	String() string
	// writeTo prints the expression; inner is the multi-valued attribute whose value filter is
	// being printed, or nil at the top level.
	writeTo(b *strings.Builder, inner *schema.Attribute)
	prec() int
}

// Operator precedence: or binds loosest, then and; not, comparisons and value paths are atoms.
const (
	precOr = iota + 1
	precAnd
	precAtom
)

// And holds when both sides hold.
type And struct{ Left, Right Expr }

// Or holds when either side holds.
type Or struct{ Left, Right Expr }

// Not holds when X does not.
type Not struct{ X Expr }

// Op is a comparison operator.
type Op string

// The comparison operators of RFC 7644 §3.4.2.2.
const (
	Eq Op = "eq" // equal
	Ne Op = "ne" // not equal
	Co Op = "co" // contains
	Sw Op = "sw" // starts with
	Ew Op = "ew" // ends with
	Pr Op = "pr" // present (has a value)
	Gt Op = "gt" // greater than
	Ge Op = "ge" // greater than or equal
	Lt Op = "lt" // less than
	Le Op = "le" // less than or equal
)

// Kind is the kind of a literal or of a resource's value.
type Kind uint8

// The kinds. A zero Value is Absent.
const (
	Absent Kind = iota
	KindString
	KindNumber
	KindBool
	KindTime
	KindNull    // the literal null
	KindComplex // a complex value with at least one sub-attribute set
)

// Literal is the value a comparison compares with. Str holds a string literal as written
// (unescaped); for a dateTime attribute it must be an RFC 3339 instant.
type Literal struct {
	Kind Kind // KindString, KindNumber, KindBool or KindNull
	Str  string
	Num  float64
	Bool bool
}

func (l Literal) String() string {
	switch l.Kind {
	case KindString:
		return quote(l.Str)
	case KindNumber:
		return strconv.FormatFloat(l.Num, 'g', -1, 64)
	case KindBool:
		return strconv.FormatBool(l.Bool)
	default:
		return "null"
	}
}

// Compare is a comparison "path op value", or "path pr". Attr is the top-level attribute (core,
// common or extension) and Sub the sub-attribute, if any. Filter is set for the form
// `emails[type eq "work"].value eq "x"`, which holds when one value of Attr satisfies both Filter
// and the comparison. Inside a ValuePath's filter, Attr is the ValuePath's attribute and Sub the
// sub-attribute being compared, of the same value.
//
// A comparison holds when any value of the attribute satisfies it; an absent attribute (and an
// empty string) has no value, so only "eq null" holds for it.
type Compare struct {
	Attr   *schema.Attribute
	Filter Expr
	Sub    *schema.Attribute
	Op     Op
	Value  Literal

	want  string    // the string literal, folded unless the attribute is caseExact
	exact bool      // the attribute is a caseExact string
	at    time.Time // the literal instant, for dateTime attributes
}

// ValuePath is `attr[filter]`: it holds when one value of the multi-valued complex attribute Attr
// satisfies Filter, whose comparisons name Attr's sub-attributes.
type ValuePath struct {
	Attr   *schema.Attribute
	Filter Expr
}

func (*And) prec() int       { return precAnd }
func (*Or) prec() int        { return precOr }
func (*Not) prec() int       { return precAtom }
func (*Compare) prec() int   { return precAtom }
func (*ValuePath) prec() int { return precAtom }

func (e *And) String() string       { return str(e) }
func (e *Or) String() string        { return str(e) }
func (e *Not) String() string       { return str(e) }
func (e *Compare) String() string   { return str(e) }
func (e *ValuePath) String() string { return str(e) }

func str(e Expr) string {
	var b strings.Builder
	e.writeTo(&b, nil)
	return b.String()
}

func (e *And) writeTo(b *strings.Builder, inner *schema.Attribute) {
	binary(b, inner, e, e.Left, " and ", e.Right)
}

func (e *Or) writeTo(b *strings.Builder, inner *schema.Attribute) {
	binary(b, inner, e, e.Left, " or ", e.Right)
}

// binary prints a left-associative operator: a right operand of the same precedence needs
// parentheses to parse back to the same tree.
func binary(b *strings.Builder, inner *schema.Attribute, e, l Expr, op string, r Expr) {
	group(b, inner, l, l.prec() < e.prec())
	b.WriteString(op)
	group(b, inner, r, r.prec() <= e.prec())
}

func group(b *strings.Builder, inner *schema.Attribute, e Expr, paren bool) {
	if paren {
		b.WriteByte('(')
	}
	e.writeTo(b, inner)
	if paren {
		b.WriteByte(')')
	}
}

func (e *Not) writeTo(b *strings.Builder, inner *schema.Attribute) {
	b.WriteString("not (")
	e.X.writeTo(b, inner)
	b.WriteByte(')')
}

func (e *ValuePath) writeTo(b *strings.Builder, _ *schema.Attribute) {
	writeAttr(b, e.Attr)
	b.WriteByte('[')
	e.Filter.writeTo(b, e.Attr)
	b.WriteByte(']')
}

func (e *Compare) writeTo(b *strings.Builder, inner *schema.Attribute) {
	if inner != nil && e.Sub != nil {
		b.WriteString(e.Sub.Name)
	} else {
		writeAttr(b, e.Attr)
		if e.Filter != nil {
			b.WriteByte('[')
			e.Filter.writeTo(b, e.Attr)
			b.WriteByte(']')
		}
		if e.Sub != nil {
			b.WriteByte('.')
			b.WriteString(e.Sub.Name)
		}
	}
	b.WriteByte(' ')
	b.WriteString(string(e.Op))
	if e.Op != Pr {
		b.WriteByte(' ')
		b.WriteString(e.Value.String())
	}
}

// writeAttr prints a top-level attribute: core and common ones by name, extension ones with
// their schema URN.
func writeAttr(b *strings.Builder, a *schema.Attribute) {
	if a.Extension {
		b.WriteString(a.Schema)
		b.WriteByte(':')
	}
	b.WriteString(a.Name)
}

// quote writes s as a JSON string.
func quote(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			switch r {
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&0xf])
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
