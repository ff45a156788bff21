package sqlstore

// Filters run in the database. whereFilter turns a filter.Expr into a boolean SQL expression
// over the resource row r (columns r.tenant, r.id) that holds exactly when filter.Match holds
// for the resource whose values attrRows put in the attrs table (attrs.go, dialect.go):
//
//   - and, or and not become AND, OR and NOT. Every comparison becomes an EXISTS (or, for
//     "eq null", a NOT EXISTS) subquery over attrs, so the expression is never NULL and
//     SQL's three-valued logic never shows.
//   - A comparison "attr.sub op value" is EXISTS a row keyed by (tenant, kind, attr, sub),
//     correlated on r.tenant and r.id, whose value satisfies it: Match's "any value satisfies".
//     Absent values have no row, so only "eq null" holds for them. The keys come first and the
//     compared column last, so `userName eq "x"` and `emails.value eq "x"` are lookups in
//     attrs_lookup (tenant, kind, attr, sub, sf) and `externalId eq "x"`, `members.value eq
//     "x"` in attrs_exact (tenant, kind, attr, sub, s), a partial index of the rows of
//     caseExact strings (s IS NOT NULL AND sf IS NULL), a condition such comparisons repeat.
//   - "pr" and "ne null" are EXISTS a row with a value; "eq null" is NOT EXISTS. For a complex
//     attribute itself (`emails pr`), the row is the one with sub '' and a non-NULL value.
//   - A value path `emails[f]` is EXISTS an element marker row m of emails with f holding at
//     m.idx; inside f, a comparison is EXISTS (or NOT EXISTS) a row of the same element
//     (idx = m.idx). `emails[f].value op x` is the comparison's EXISTS with f at its row's idx.
//   - Values are compared in the column of their kind: strings on sf with the literal folded
//     as filter.Compare.Key gives it (s and the literal as written when the attribute is
//     caseExact), numbers on n, booleans on b, and for a dateTime attribute, instants on t as
//     Unix nanoseconds. A row of another kind does not satisfy the comparison, as in Match.
//   - Strings are ordered by bytes, as strings.Compare: SQLite's BINARY collation, and COLLATE
//     "C" on PostgreSQL. co, sw and ew use no LIKE: on SQLite instr and substr over the bytes
//     (CAST AS BLOB), on PostgreSQL strpos, starts_with and right over valid UTF-8, where a
//     suffix in characters is a suffix in bytes. PostgreSQL text cannot hold NUL, so a literal
//     with a NUL byte is rewritten to the comparison with its part before the NUL that stored
//     values (which have none) satisfy alike.
//   - t holds the instants from 1677-09-21T00:12:43.145224193Z to 2262-04-11T23:47:16.854775806Z
//     exactly; attrRows clamps earlier and later ones to math.MinInt64 and math.MaxInt64, and
//     a literal beyond an end orders before (after) every stored instant. The one difference
//     from Match: a stored instant and a literal both beyond the same end compare wrongly.
//   - Every literal is a bound parameter, and so are the kind and the attribute names; the SQL
//     uses '?' placeholders and no '?' elsewhere.
//
// The filter must come from filter.Parse for the kind's resource type (schema.User() or
// schema.Group()): whereFilter relies on what Parse checked and precomputed.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// whereFilter returns the SQL condition, with its arguments, that keeps the resources of kind
// (whose row is aliased r) that e matches.
func whereFilter(d dialect, kind resourceKind, e filter.Expr) (string, []any, error) {
	if d != sqliteDialect && d != postgresDialect {
		return "", nil, fmt.Errorf("sqlstore: unknown dialect %d", d)
	}
	w := &filterSQL{d: d, kind: string(kind)}
	if err := w.expr(e, ""); err != nil {
		return "", nil, err
	}
	return w.b.String(), w.args, nil
}

// filterSQL writes one filter's SQL.
type filterSQL struct {
	d       dialect
	kind    string
	b       strings.Builder
	args    []any
	aliases int
}

// expr writes e. elem is the SQL expression of the index of the element whose value filter e
// is part of, or "" at the top level.
func (w *filterSQL) expr(e filter.Expr, elem string) error {
	switch e := e.(type) {
	case *filter.And:
		return w.binary(e.Left, " AND ", e.Right, elem)
	case *filter.Or:
		return w.binary(e.Left, " OR ", e.Right, elem)
	case *filter.Not:
		w.b.WriteString("NOT (")
		if err := w.expr(e.X, elem); err != nil {
			return err
		}
		w.b.WriteByte(')')
		return nil
	case *filter.ValuePath:
		// Match visits every index at which FilterValue(attr, nil, i) is ok: the element
		// markers. A value path starts over whatever element encloses it.
		m := w.exists(e.Attr, nil)
		w.b.WriteString(" AND ")
		if err := w.expr(e.Filter, m+".idx"); err != nil {
			return err
		}
		w.b.WriteByte(')')
		return nil
	case *filter.Compare:
		return w.compare(e, elem)
	case nil:
		return errors.New("sqlstore: nil filter expression")
	}
	return fmt.Errorf("sqlstore: unknown filter expression %T", e)
}

func (w *filterSQL) binary(l filter.Expr, op string, r filter.Expr, elem string) error {
	w.b.WriteByte('(')
	if err := w.expr(l, elem); err != nil {
		return err
	}
	w.b.WriteString(op)
	if err := w.expr(r, elem); err != nil {
		return err
	}
	w.b.WriteByte(')')
	return nil
}

// exists opens "EXISTS (SELECT 1 FROM attrs aN WHERE <keys>" for the rows of attr's sub (nil:
// the attribute itself) and returns the alias aN. The caller closes the parenthesis.
func (w *filterSQL) exists(attr, sub *schema.Attribute) string {
	w.aliases++
	a := "av" + strconv.Itoa(w.aliases)
	subName := ""
	if sub != nil {
		subName = sub.Name
	}
	fmt.Fprintf(&w.b, "EXISTS (SELECT 1 FROM attrs %[1]s WHERE %[1]s.tenant = r.tenant AND %[1]s.kind = ? AND %[1]s.attr = ? AND %[1]s.sub = ? AND %[1]s.rid = r.id", a)
	w.args = append(w.args, w.kind, attr.Path(), subName)
	return a
}

// compare writes a comparison, following filter.Compare's any and holds.
func (w *filterSQL) compare(c *filter.Compare, elem string) error {
	if c.Attr == nil {
		return errors.New("sqlstore: comparison without an attribute")
	}
	// "pr" and null literals test presence: "eq null" holds when no value is present.
	presence := c.Op == filter.Pr || c.Value.Kind == filter.KindNull
	if presence && c.Op == filter.Eq {
		w.b.WriteString("NOT ")
	}
	a := w.exists(c.Attr, c.Sub)
	switch {
	case elem != "":
		// Inside a value filter: the value of the enclosing element only.
		fmt.Fprintf(&w.b, " AND %s.idx = %s", a, elem)
	case c.Attr.MultiValued && c.Filter != nil:
		// `emails[type eq "work"].value eq "x"`: a value of an element the filter keeps.
		w.b.WriteString(" AND ")
		if err := w.expr(c.Filter, a+".idx"); err != nil {
			return err
		}
	}
	if presence {
		if c.Sub == nil && c.Attr.Type == schema.Complex {
			// Element markers are the only rows of absent values.
			fmt.Fprintf(&w.b, " AND (%[1]s.b IS NOT NULL OR %[1]s.s IS NOT NULL OR %[1]s.n IS NOT NULL OR %[1]s.t IS NOT NULL)", a)
		}
		w.b.WriteByte(')')
		return nil
	}
	w.b.WriteString(" AND ")
	if err := w.holds(c, a); err != nil {
		return err
	}
	w.b.WriteByte(')')
	return nil
}

// holds writes the condition on row a that its value satisfies c (not a presence test).
func (w *filterSQL) holds(c *filter.Compare, a string) error {
	def := c.Attr
	if c.Sub != nil {
		def = c.Sub
	}
	switch c.Value.Kind {
	case filter.KindBool:
		// Match: (v == literal) == (op == eq).
		op := "<>"
		if c.Op == filter.Eq {
			op = "="
		}
		w.cond(a+".b "+op+" ?", c.Value.Bool)
		return nil
	case filter.KindNumber:
		op, ok := sqlOrder(c.Op)
		if !ok {
			w.b.WriteString("FALSE")
			return nil
		}
		w.cond(a+".n "+op+" ?", c.Value.Num)
		return nil
	case filter.KindString:
		if !validOp(c.Op) {
			return fmt.Errorf("sqlstore: unknown filter operator %q", c.Op)
		}
		if def.Type != schema.DateTime {
			w.stringHolds(c.Op, a, def.CaseExact, c.Key())
			return nil
		}
		// A dateTime attribute compares instants; a string value there (which no store
		// resource has) compares with Key, as Match does.
		at, err := time.Parse(time.RFC3339Nano, c.Value.Str)
		if err != nil {
			return fmt.Errorf("sqlstore: %s: %q is not an RFC 3339 time: build filters with filter.Parse", def.Path(), c.Value.Str)
		}
		w.b.WriteByte('(')
		w.timeHolds(c.Op, a, at)
		w.b.WriteString(" OR ")
		w.stringHolds(c.Op, a, def.CaseExact, c.Key())
		w.b.WriteByte(')')
		return nil
	}
	return fmt.Errorf("sqlstore: cannot compare %s with a literal of kind %d", def.Path(), c.Value.Kind)
}

// cond writes a condition with its arguments.
func (w *filterSQL) cond(sql string, args ...any) {
	w.b.WriteString(sql)
	w.args = append(w.args, args...)
}

// sqlOrder returns the SQL operator of an ordering operator (eq and ne included).
func sqlOrder(op filter.Op) (string, bool) {
	switch op {
	case filter.Eq:
		return "=", true
	case filter.Ne:
		return "<>", true
	case filter.Gt:
		return ">", true
	case filter.Ge:
		return ">=", true
	case filter.Lt:
		return "<", true
	case filter.Le:
		return "<=", true
	}
	return "", false
}

func validOp(op filter.Op) bool {
	switch op {
	case filter.Eq, filter.Ne, filter.Co, filter.Sw, filter.Ew, filter.Gt, filter.Ge, filter.Lt, filter.Le:
		return true
	}
	return false
}

// stringHolds writes the comparison of row a's string (sf, or s when exact) with want, by bytes.
// A comparison on s starts with "s IS NOT NULL AND sf IS NULL", which the rows of a caseExact
// attribute's strings all satisfy, so that the partial index attrs_exact, which holds those rows
// only, serves it.
func (w *filterSQL) stringHolds(op filter.Op, a string, exact bool, want string) {
	col := a + ".sf"
	if exact {
		col = a + ".s"
		fmt.Fprintf(&w.b, "(%[1]s.s IS NOT NULL AND %[1]s.sf IS NULL AND ", a)
		defer w.b.WriteByte(')')
	}
	if want == "" && (op == filter.Co || op == filter.Sw || op == filter.Ew) {
		w.b.WriteString(col + " IS NOT NULL")
		return
	}
	if w.d == postgresDialect {
		if i := strings.IndexByte(want, 0); i >= 0 {
			w.nulHolds(op, col, want[:i])
			return
		}
	}
	sqlOp, _ := sqlOrder(op)
	switch op {
	case filter.Co, filter.Sw, filter.Ew:
		w.affixHolds(op, col, want)
	case filter.Eq, filter.Ne:
		// Byte equality. PostgreSQL's equality is byte equality under any deterministic
		// collation, so it goes without COLLATE and the indexes serve it whatever the
		// column's collation; SQLite's indexes serve "= ? COLLATE BINARY" on a BINARY column.
		eq := col + " " + sqlOp + " ?"
		if w.d == sqliteDialect {
			eq += " COLLATE BINARY"
		}
		w.cond(eq, want)
	default:
		w.cond(col+w.bytewise()+" "+sqlOp+" ?", want)
	}
}

// bytewise is the COLLATE clause that orders strings by bytes.
func (w *filterSQL) bytewise() string {
	if w.d == postgresDialect {
		return ` COLLATE "C"`
	}
	return " COLLATE BINARY"
}

// affixHolds writes co, sw or ew for a non-empty want.
func (w *filterSQL) affixHolds(op filter.Op, col, want string) {
	if w.d == postgresDialect {
		switch op {
		case filter.Co:
			w.cond("strpos("+col+", ?) > 0", want)
		case filter.Sw:
			w.cond("starts_with("+col+", ?)", want)
		default:
			w.cond("right("+col+", ?) = ?", utf8.RuneCountInString(want), want)
		}
		return
	}
	blob := "CAST(" + col + " AS BLOB)"
	switch op {
	case filter.Co:
		w.cond("instr("+blob+", CAST(? AS BLOB)) > 0", want)
	case filter.Sw:
		w.cond("substr("+blob+", 1, ?) = CAST(? AS BLOB)", len(want), want)
	default:
		w.cond("substr("+blob+", ?) = CAST(? AS BLOB)", -len(want), want)
	}
}

// nulHolds writes, for PostgreSQL, the comparison with a literal p + "\x00" + rest of values
// that hold no NUL: none equals it or has it as a part, and a value orders after it exactly
// when it orders after p.
func (w *filterSQL) nulHolds(op filter.Op, col, p string) {
	switch op {
	case filter.Ne:
		w.b.WriteString(col + " IS NOT NULL")
	case filter.Gt, filter.Ge:
		w.cond(col+w.bytewise()+" > ?", p)
	case filter.Lt, filter.Le:
		w.cond(col+w.bytewise()+" <= ?", p)
	default:
		w.b.WriteString("FALSE")
	}
}

// timeHolds writes the comparison of row a's instant with at. An at beyond the range t holds
// exactly orders after (or before) every stored instant, as those are clamped to the range.
func (w *filterSQL) timeHolds(op filter.Op, a string, at time.Time) {
	sqlOp, ok := sqlOrder(op)
	switch {
	case !ok:
		w.b.WriteString("FALSE")
	case at.Before(time.Unix(0, attrMinNanos)):
		w.presentIf(orderHolds(op, 1), a+".t")
	case at.After(time.Unix(0, attrMaxNanos)):
		w.presentIf(orderHolds(op, -1), a+".t")
	default:
		w.cond(a+".t "+sqlOp+" ?", at.UnixNano())
	}
}

func (w *filterSQL) presentIf(holds bool, col string) {
	if holds {
		w.b.WriteString(col + " IS NOT NULL")
	} else {
		w.b.WriteString("FALSE")
	}
}

// orderHolds applies an ordering operator to a three-way comparison of a value with the
// literal, as filter.Match does.
func orderHolds(op filter.Op, cmp int) bool {
	switch op {
	case filter.Eq:
		return cmp == 0
	case filter.Ne:
		return cmp != 0
	case filter.Gt:
		return cmp > 0
	case filter.Ge:
		return cmp >= 0
	case filter.Lt:
		return cmp < 0
	case filter.Le:
		return cmp <= 0
	}
	return false
}
