package filter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/visid/visid/store/schema"
)

// Error is a filter that cannot be used: malformed, naming an unknown attribute, comparing an
// attribute in a way its type does not allow, or over a limit. Pos is the byte offset in the
// filter where the problem was found; Msg says what was expected. The SCIM layer answers it with
// 400 and scimType invalidFilter.
type Error struct {
	Pos int
	Msg string

	limit bool
}

func (e *Error) Error() string { return fmt.Sprintf("invalid filter at offset %d: %s", e.Pos, e.Msg) }

// ErrLimit is wrapped by the *Error of a filter that exceeds a Limits bound.
var ErrLimit = errors.New("filter exceeds a limit")

// Unwrap returns ErrLimit for a filter over a limit.
func (e *Error) Unwrap() error {
	if e.limit {
		return ErrLimit
	}
	return nil
}

// Limits bound the filters Parse accepts, so a hostile filter costs little to reject. Zero
// fields take the defaults.
type Limits struct {
	// MaxLength is the longest filter in bytes. Default 4096.
	MaxLength int
	// MaxNodes is the most expressions (comparisons, value paths, and, or, not) in a filter.
	// Default 64.
	MaxNodes int
	// MaxDepth is the deepest nesting of parentheses, not (…) and value paths. Default 32.
	MaxDepth int
}

func (l Limits) withDefaults() Limits {
	if l.MaxLength <= 0 {
		l.MaxLength = 4096
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = 64
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = 32
	}
	return l
}

// Parse parses a filter over resources of type rt with the default Limits.
func Parse(s string, rt *schema.ResourceType) (Expr, error) {
	return Limits{}.Parse(s, rt)
}

// Parse parses a SCIM filter (RFC 7644 §3.4.2.2) over resources of type rt, resolving every
// attribute path against rt's schemas. Keywords, operators and attribute names are
// case-insensitive. Besides the RFC grammar it accepts the form `emails[type eq "work"].value eq
// "x"`, "external_id" for externalId, and for boolean attributes the strings "true" and "false"
// in any case. A comparison on a complex attribute without a sub-attribute compares its "value"
// sub-attribute. Any problem is reported as an *Error.
func (l Limits) Parse(s string, rt *schema.ResourceType) (Expr, error) {
	l = l.withDefaults()
	if len(s) > l.MaxLength {
		return nil, &Error{Pos: l.MaxLength, Msg: fmt.Sprintf("too long: a filter may have at most %d bytes", l.MaxLength), limit: true}
	}
	p := &parser{s: s, rt: rt, lim: l}
	p.space()
	if p.pos == len(s) {
		return nil, &Error{Pos: 0, Msg: "the filter is empty"}
	}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(s) {
		return nil, p.fail(`expected "and", "or" or the end of the filter`)
	}
	return e, nil
}

// ParseValueFilter parses the filter of a value path attr[filter] on its own, s being the text
// between the brackets: its attribute names are sub-attributes of the complex attribute attr,
// which may also be single-valued (a PATCH path such as
// `urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager[value eq "id"]`). The
// comparisons it returns have Attr set to attr, as in a ValuePath. Any problem is reported as an
// *Error.
func (l Limits) ParseValueFilter(s string, attr *schema.Attribute) (Expr, error) {
	l = l.withDefaults()
	if len(s) > l.MaxLength {
		return nil, &Error{Pos: l.MaxLength, Msg: fmt.Sprintf("too long: a filter may have at most %d bytes", l.MaxLength), limit: true}
	}
	if attr.Type != schema.Complex || attr.Parent != nil {
		return nil, &Error{Pos: 0, Msg: fmt.Sprintf("a value filter [...] needs a complex attribute, and %s is not one", attr.Name)}
	}
	p := &parser{s: s, lim: l, inner: attr}
	p.space()
	if p.pos == len(s) {
		return nil, &Error{Pos: 0, Msg: "the filter is empty"}
	}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(s) {
		return nil, p.fail(`expected "and", "or" or the end of the filter`)
	}
	return e, nil
}

type parser struct {
	s     string
	pos   int
	rt    *schema.ResourceType
	lim   Limits
	nodes int
	depth int
	inner *schema.Attribute // the attribute whose value filter is being parsed
}

func (p *parser) fail(expected string) *Error {
	return &Error{Pos: p.pos, Msg: expected + ", found " + p.found()}
}

func (p *parser) found() string {
	if p.pos >= len(p.s) {
		return "the end of the filter"
	}
	rest := p.s[p.pos:]
	if w := wordLen(rest); w > 0 {
		return strconv.Quote(rest[:min(w, 40)])
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return strconv.QuoteRune(r)
}

func (p *parser) node() error {
	p.nodes++
	if p.nodes > p.lim.MaxNodes {
		return &Error{Pos: p.pos, Msg: fmt.Sprintf("too complex: a filter may have at most %d expressions", p.lim.MaxNodes), limit: true}
	}
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > p.lim.MaxDepth {
		return &Error{Pos: p.pos, Msg: fmt.Sprintf("too deep: a filter may nest at most %d levels", p.lim.MaxDepth), limit: true}
	}
	return nil
}

func (p *parser) space() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\n' || p.s[p.pos] == '\r') {
		p.pos++
	}
}

// keyword consumes the word kw (case-insensitive) if it comes next, followed by a non-word byte.
func (p *parser) keyword(kw string) bool {
	save := p.pos
	p.space()
	if n := wordLen(p.s[p.pos:]); n == len(kw) && strings.EqualFold(p.s[p.pos:p.pos+n], kw) {
		p.pos += n
		return true
	}
	p.pos = save
	return false
}

func (p *parser) or() (Expr, error) {
	left, err := p.and()
	for err == nil && p.keyword("or") {
		var right Expr
		if right, err = p.and(); err == nil {
			left, err = &Or{Left: left, Right: right}, p.node()
		}
	}
	return left, err
}

func (p *parser) and() (Expr, error) {
	left, err := p.atom()
	for err == nil && p.keyword("and") {
		var right Expr
		if right, err = p.atom(); err == nil {
			left, err = &And{Left: left, Right: right}, p.node()
		}
	}
	return left, err
}

// atom parses "(filter)", "not (filter)", a value path or a comparison.
func (p *parser) atom() (Expr, error) {
	p.space()
	if p.pos < len(p.s) && p.s[p.pos] == '(' {
		return p.group()
	}
	start := p.pos
	n := wordLen(p.s[p.pos:])
	if n == 0 {
		if p.inner != nil {
			return nil, p.fail("expected a sub-attribute of " + p.inner.Name + ", \"not\" or \"(\"")
		}
		return nil, p.fail(`expected an attribute name, "not" or "("`)
	}
	word := p.s[p.pos : p.pos+n]
	p.pos += n
	if strings.EqualFold(word, "not") {
		save := p.pos
		p.space()
		if p.pos < len(p.s) && p.s[p.pos] == '(' {
			x, err := p.group()
			if err != nil {
				return nil, err
			}
			return &Not{X: x}, p.node()
		}
		p.pos = save
		if p.inner == nil {
			if _, _, err := p.rt.Lookup(word); err != nil {
				p.space()
				return nil, p.fail(`expected "(" after "not"`)
			}
		}
	}
	return p.attrExpr(start, word)
}

func (p *parser) group() (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '('
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos >= len(p.s) || p.s[p.pos] != ')' {
		return nil, p.fail(`expected ")", "and" or "or"`)
	}
	p.pos++
	p.depth--
	return e, nil
}

// attrExpr parses what follows an attribute path: a value filter, a sub-attribute after it, and
// the comparison.
func (p *parser) attrExpr(start int, word string) (Expr, error) {
	attr, sub, err := p.resolve(start, word)
	if err != nil {
		return nil, err
	}
	var vf Expr
	if p.pos < len(p.s) && p.s[p.pos] == '[' {
		if vf, err = p.valueFilter(start, attr, sub); err != nil {
			return nil, err
		}
		if p.pos >= len(p.s) || p.s[p.pos] != '.' {
			return &ValuePath{Attr: attr, Filter: vf}, p.node()
		}
		p.pos++
		n := wordLen(p.s[p.pos:])
		if sub = attr.Sub(p.s[p.pos : p.pos+n]); n == 0 || sub == nil {
			return nil, p.fail("expected a sub-attribute of " + attr.Name)
		}
		if err := filterable(p.pos, sub); err != nil {
			return nil, err
		}
		p.pos += n
	}
	c := &Compare{Attr: attr, Filter: vf, Sub: sub}
	if err := p.comparison(c); err != nil {
		return nil, err
	}
	return c, p.node()
}

// resolve turns an attribute path into the attribute and sub-attribute it names.
func (p *parser) resolve(start int, word string) (attr, sub *schema.Attribute, err error) {
	if p.inner != nil {
		if sub = p.inner.Sub(word); sub == nil {
			return nil, nil, &Error{Pos: start, Msg: fmt.Sprintf("%s has no sub-attribute %q", p.inner.Name, word)}
		}
		return p.inner, sub, filterable(start, sub)
	}
	attr, sub, err = p.rt.Lookup(word)
	if err != nil {
		var pe *schema.PathError
		if errors.As(err, &pe) {
			return nil, nil, &Error{Pos: start, Msg: pe.Msg + " (in " + strconv.Quote(clip(word)) + ")"}
		}
		return nil, nil, &Error{Pos: start, Msg: err.Error()}
	}
	if err := filterable(start, attr); err != nil {
		return nil, nil, err
	}
	if sub != nil {
		return attr, sub, filterable(start, sub)
	}
	return attr, nil, nil
}

func filterable(pos int, a *schema.Attribute) error {
	if a.Unfilterable || a.Returned == schema.Never {
		return &Error{Pos: pos, Msg: fmt.Sprintf("%s cannot be used in a filter", a.Name)}
	}
	return nil
}

// valueFilter parses "[filter]" after a multi-valued complex attribute.
func (p *parser) valueFilter(start int, attr, sub *schema.Attribute) (Expr, error) {
	switch {
	case p.inner != nil:
		return nil, p.fail("expected a comparison: value filters do not nest")
	case sub != nil || attr.Type != schema.Complex || !attr.MultiValued:
		return nil, &Error{Pos: start, Msg: fmt.Sprintf("a value filter [...] needs a multi-valued complex attribute, and %s is not one", p.s[start:p.pos])}
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '['
	p.inner = attr
	e, err := p.or()
	p.inner = nil
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos >= len(p.s) || p.s[p.pos] != ']' {
		return nil, p.fail(`expected "]", "and" or "or"`)
	}
	p.pos++
	p.depth--
	return e, nil
}

// comparison parses " op value" (or " pr") into c and checks it against the attribute's type.
func (p *parser) comparison(c *Compare) error {
	p.space()
	n := wordLen(p.s[p.pos:])
	op := Op(strings.ToLower(p.s[p.pos : p.pos+n]))
	switch op {
	case Eq, Ne, Co, Sw, Ew, Gt, Ge, Lt, Le, Pr:
	default:
		return p.fail("expected an operator (eq, ne, co, sw, ew, gt, ge, lt, le or pr)")
	}
	p.pos += n
	c.Op = op
	if op != Pr {
		p.space()
		litPos := p.pos
		lit, err := p.literal()
		if err != nil {
			return err
		}
		c.Value = lit
		return c.check(litPos)
	}
	return nil
}

// literal parses a JSON string, a number, true, false or null.
func (p *parser) literal() (Literal, error) {
	if p.pos >= len(p.s) {
		return Literal{}, p.fail("expected a value (a string, a number, true, false or null)")
	}
	switch c := p.s[p.pos]; {
	case c == '"':
		s, err := p.stringLit()
		return Literal{Kind: KindString, Str: s}, err
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	}
	n := wordLen(p.s[p.pos:])
	switch strings.ToLower(p.s[p.pos : p.pos+n]) {
	case "true":
		p.pos += n
		return Literal{Kind: KindBool, Bool: true}, nil
	case "false":
		p.pos += n
		return Literal{Kind: KindBool}, nil
	case "null":
		p.pos += n
		return Literal{Kind: KindNull}, nil
	}
	return Literal{}, p.fail("expected a value (a string in double quotes, a number, true, false or null)")
}

func (p *parser) stringLit() (string, error) {
	start := p.pos
	p.pos++ // opening quote
	var b strings.Builder
	for {
		if p.pos >= len(p.s) {
			return "", &Error{Pos: start, Msg: "unterminated string"}
		}
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c < 0x20:
			return "", &Error{Pos: p.pos, Msg: "control character in string: escape it"}
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.pos++
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.pos:])
			b.WriteRune(r) // invalid UTF-8 becomes U+FFFD, as encoding/json does
			p.pos += size
		}
	}
}

func (p *parser) escape(b *strings.Builder) error {
	at := p.pos
	if p.pos+1 >= len(p.s) {
		return &Error{Pos: at, Msg: "unterminated escape in string"}
	}
	p.pos += 2
	switch p.s[at+1] {
	case '"', '\\', '/':
		b.WriteByte(p.s[at+1])
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return &Error{Pos: at, Msg: `expected four hex digits after \u`}
		}
		if utf16.IsSurrogate(r) {
			save := p.pos
			if strings.HasPrefix(p.s[p.pos:], `\u`) {
				p.pos += 2
				if r2, ok := p.hex4(); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						b.WriteRune(d)
						return nil
					}
				}
			}
			p.pos = save
			r = utf8.RuneError
		}
		b.WriteRune(r)
	default:
		return &Error{Pos: at, Msg: `unknown escape: use \" \\ \/ \b \f \n \r \t or \uXXXX`}
	}
	return nil
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.s[p.pos:p.pos+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(v), true
}

// number scans a JSON number.
func (p *parser) number() (Literal, error) {
	start := p.pos
	i := p.pos
	digits := func() int {
		n := 0
		for i < len(p.s) && '0' <= p.s[i] && p.s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if p.s[i] == '-' {
		i++
	}
	intStart := i
	if digits() == 0 || (p.s[intStart] == '0' && i-intStart > 1) {
		return Literal{}, &Error{Pos: start, Msg: "malformed number"}
	}
	if i < len(p.s) && p.s[i] == '.' {
		i++
		if digits() == 0 {
			return Literal{}, &Error{Pos: start, Msg: "malformed number: digits must follow the decimal point"}
		}
	}
	if i < len(p.s) && (p.s[i] == 'e' || p.s[i] == 'E') {
		i++
		if i < len(p.s) && (p.s[i] == '+' || p.s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return Literal{}, &Error{Pos: start, Msg: "malformed number: digits must follow the exponent"}
		}
	}
	if i < len(p.s) && wordLen(p.s[i:]) > 0 {
		return Literal{}, &Error{Pos: start, Msg: "malformed number"}
	}
	f, err := strconv.ParseFloat(p.s[start:i], 64)
	if err != nil {
		return Literal{}, &Error{Pos: start, Msg: "number out of range"}
	}
	p.pos = i
	return Literal{Kind: KindNumber, Num: f}, nil
}

// check validates the comparison against the attribute's type, normalises the literal and
// precomputes what Match needs.
func (c *Compare) check(pos int) error {
	t := c.Attr
	if c.Sub != nil {
		t = c.Sub
	} else if t.Type == schema.Complex {
		if v := t.Sub("value"); v != nil {
			c.Sub, t = v, v
		}
	}
	bad := func(format string, args ...any) error {
		return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
	}
	name := t.Path()
	if c.Value.Kind == KindNull {
		if c.Op != Eq && c.Op != Ne {
			return bad("null can only be compared with eq or ne")
		}
		return nil
	}
	switch t.Type {
	case schema.Complex:
		return bad("%s is complex: name one of its sub-attributes", name)
	case schema.Boolean:
		if c.Op != Eq && c.Op != Ne {
			return bad("%s is a boolean: compare it with eq, ne or pr", name)
		}
		if c.Value.Kind == KindString {
			switch strings.ToLower(c.Value.Str) {
			case "true":
				c.Value = Literal{Kind: KindBool, Bool: true}
			case "false":
				c.Value = Literal{Kind: KindBool}
			}
		}
		if c.Value.Kind != KindBool {
			return bad("%s is a boolean: compare it with true or false", name)
		}
	case schema.DateTime:
		if c.Op == Co || c.Op == Sw || c.Op == Ew {
			return bad("%s is a dateTime: compare it with eq, ne, gt, ge, lt, le or pr", name)
		}
		if c.Value.Kind != KindString {
			return bad("%s is a dateTime: compare it with a quoted RFC 3339 time such as \"2024-05-01T00:00:00Z\"", name)
		}
		at, err := time.Parse(time.RFC3339Nano, c.Value.Str)
		if err != nil {
			return bad("%s is a dateTime: %q is not an RFC 3339 time such as \"2024-05-01T00:00:00Z\"", name, c.Value.Str)
		}
		c.at = at.UTC()
	case schema.Decimal, schema.Integer:
		if c.Op == Co || c.Op == Sw || c.Op == Ew {
			return bad("%s is a number: compare it with eq, ne, gt, ge, lt, le or pr", name)
		}
		if c.Value.Kind != KindNumber {
			return bad("%s is a number: compare it with a number", name)
		}
	default: // string, reference, binary
		if c.Value.Kind != KindString {
			return bad("%s is a string: compare it with a quoted string", name)
		}
		if t.Type == schema.Binary && c.Op != Eq && c.Op != Ne {
			return bad("%s is binary: compare it with eq, ne or pr", name)
		}
		c.exact = t.CaseExact
		c.want = c.Value.Str
		if !c.exact {
			c.want = schema.Fold(c.Value.Str)
		}
	}
	return nil
}

// clip shortens a word quoted in an error message.
func clip(s string) string {
	if len(s) > 128 {
		return s[:125] + "..."
	}
	return s
}

// wordLen returns the length of the attribute-path or keyword word at the start of s: letters,
// digits and "-_$:.".
func wordLen(s string) int {
	i := 0
	for i < len(s) {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c == '-' || c == '_' || c == '$' || c == ':' || c == '.' {
			i++
			continue
		}
		break
	}
	return i
}
