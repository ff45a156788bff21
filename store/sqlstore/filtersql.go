package sqlstore

// Filters run in the database. whereFilter turns a filter.Expr into a boolean SQL expression
// over the resource row r (column r.id) of one tenant that holds exactly when filter.Match holds
// for the resource whose values attrRows put in the attrs table (attrs.go, dialect.go):
//
//   - and, or and not become AND, OR and NOT. Every comparison becomes an IN (or, for "eq null",
//     a NOT IN) over a subquery of attrs whose columns are never NULL, so the expression is
//     never NULL and SQL's three-valued logic never shows.
//   - A comparison "attr.sub op value" is `r.id IN (SELECT rid FROM attrs WHERE <keys> AND
//     <value satisfies it>)`, the keys being (tenant, kind, attr, sub): Match's "any value
//     satisfies". The subquery does not refer to r, so the database evaluates it once (a
//     semi-join), whatever the number of resources and of values of each: never as a scan of
//     the attribute's rows per resource. Absent values have no row, so only "eq null" holds for
//     them. The keys come first and the compared column last, so `userName eq "x"` and
//     `emails.value eq "x"` are lookups in attrs_lookup (tenant, kind, attr, sub, sf) and
//     `externalId eq "x"`, `members.value eq "x"` in attrs_exact (tenant, kind, attr, sub, s), a
//     partial index of the rows of caseExact strings (s IS NOT NULL AND sf IS NULL), a condition
//     such comparisons repeat.
//   - "pr" and "ne null" are IN the rows with a value; "eq null" is NOT IN. For a complex
//     attribute itself (`emails pr`), the rows are those with sub '' and a non-NULL value.
//   - A value path `emails[f]` is `r.id IN (SELECT m.rid FROM attrs m WHERE <m is an element
//     marker of emails> AND <f holds at m>)`; inside f, a comparison is the pair (m.rid, m.idx)
//     IN (or NOT IN) the (rid, idx) of the rows of the same attribute that satisfy it, so the
//     value and the element are the same one. When f is a conjunction with a comparison c of a
//     sub-attribute that only a present value satisfies, the subquery starts from c's rows
//     instead of the markers (drivenValuePath): `emails[value eq "x" and primary eq true]` is
//     the rows of emails.value equal to "x" whose element's primary is true. `emails[f].value
//     op x` is the comparison's subquery with f holding at its row's (rid, idx). A value path
//     inside f starts over at m's resource (m.rid IN …).
//   - On SQLite, whose planner may answer a correlated subquery by scanning the attribute's
//     rows in attrs_lookup for each resource, only three kinds of comparison stay correlated
//     EXISTS: equalities (a lookup of the value for one resource), presence tests (a lookup by
//     the primary key's tenant, kind, rid, attr and sub) and comparisons inside a value filter
//     (a lookup by the whole primary key, rid and idx included); a value path
//     whose conjuncts are all equalities stays an EXISTS over the resource's markers, which
//     List starts from the candidates the equalities name (list.go).
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
//   - Every literal is a bound parameter, and so are the tenant, the kind and the attribute
//     names; the SQL uses '?' placeholders and no '?' elsewhere.
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
// in tenant (whose row is aliased r and has column id) that e matches. The condition does not
// check r's tenant: the caller does.
func whereFilter(d dialect, kind resourceKind, tenant string, e filter.Expr) (string, []any, error) {
	if d != sqliteDialect && d != postgresDialect {
		return "", nil, fmt.Errorf("sqlstore: unknown dialect %d", d)
	}
	w := &filterSQL{d: d, kind: string(kind), tenant: tenant}
	if err := w.expr(e, scope{rid: "r.id"}); err != nil {
		return "", nil, err
	}
	return w.b.String(), w.args, nil
}

// filterSQL writes one filter's SQL.
type filterSQL struct {
	d       dialect
	kind    string
	tenant  string
	b       strings.Builder
	args    []any
	aliases int
}

// scope is where an expression is evaluated: the resource whose id is the SQL expression rid
// and, inside a value filter, its element whose index is idx ("" at the top level).
type scope struct{ rid, idx string }

// expr writes e in scope sc.
func (w *filterSQL) expr(e filter.Expr, sc scope) error {
	switch e := e.(type) {
	case *filter.And:
		return w.binary(e.Left, " AND ", e.Right, sc)
	case *filter.Or:
		return w.binary(e.Left, " OR ", e.Right, sc)
	case *filter.Not:
		w.b.WriteString("NOT (")
		if err := w.expr(e.X, sc); err != nil {
			return err
		}
		w.b.WriteByte(')')
		return nil
	case *filter.ValuePath:
		// On PostgreSQL an equality drives best (an index lookup); on SQLite the correlated
		// form below, which List starts from the equality's candidates, serves equalities,
		// and an order or a part drives.
		if c, rest, ok := elementDriver(e, w.d == postgresDialect); ok && (w.d == postgresDialect || c.Op != filter.Eq) {
			return w.drivenValuePath(c, rest, sc)
		}
		// Match visits every index at which FilterValue(attr, nil, i) is ok: the element
		// markers. A value path starts over at the resource, whatever element encloses it.
		m := w.open(scope{rid: sc.rid}, e.Attr, nil, w.d == sqliteDialect)
		w.b.WriteString(" AND ")
		if err := w.expr(e.Filter, scope{rid: m + ".rid", idx: m + ".idx"}); err != nil {
			return err
		}
		w.b.WriteByte(')')
		return nil
	case *filter.Compare:
		return w.compare(e, sc)
	case nil:
		return errors.New("sqlstore: nil filter expression")
	}
	return fmt.Errorf("sqlstore: unknown filter expression %T", e)
}

func (w *filterSQL) binary(l filter.Expr, op string, r filter.Expr, sc scope) error {
	w.b.WriteByte('(')
	if err := w.expr(l, sc); err != nil {
		return err
	}
	w.b.WriteString(op)
	if err := w.expr(r, sc); err != nil {
		return err
	}
	w.b.WriteByte(')')
	return nil
}

// open opens the condition that a row of attr's sub (nil: the attribute itself) of the resource
// sc.rid (and of its element sc.idx, unless "") satisfies what the caller writes next, and
// returns the alias aN of the row; the caller closes the parenthesis. The condition is
// "rid IN (SELECT aN.rid FROM attrs aN WHERE <keys>", or "(rid, idx) IN (SELECT aN.rid,
// aN.idx …", which the database evaluates once; with correlated set it is "EXISTS (SELECT 1
// FROM attrs aN WHERE <keys> AND aN.rid = rid [AND aN.idx = idx]", evaluated per resource (or
// element) through the primary key.
func (w *filterSQL) open(sc scope, attr, sub *schema.Attribute, correlated bool) string {
	w.aliases++
	a := "av" + strconv.Itoa(w.aliases)
	subName := ""
	if sub != nil {
		subName = sub.Name
	}
	switch {
	case correlated:
		fmt.Fprintf(&w.b, "EXISTS (SELECT 1 FROM attrs %s", a)
	case sc.idx == "":
		fmt.Fprintf(&w.b, "%[2]s IN (SELECT %[1]s.rid FROM attrs %[1]s", a, sc.rid)
	default:
		fmt.Fprintf(&w.b, "(%[2]s, %[3]s) IN (SELECT %[1]s.rid, %[1]s.idx FROM attrs %[1]s", a, sc.rid, sc.idx)
	}
	fmt.Fprintf(&w.b, " WHERE %[1]s.tenant = ? AND %[1]s.kind = ? AND %[1]s.attr = ? AND %[1]s.sub = ?", a)
	w.args = append(w.args, w.tenant, w.kind, attr.Path(), subName)
	if correlated {
		fmt.Fprintf(&w.b, " AND %s.rid = %s", a, sc.rid)
		if sc.idx != "" {
			fmt.Fprintf(&w.b, " AND %s.idx = %s", a, sc.idx)
		}
	}
	return a
}

// correlated reports whether comparison c in scope sc is written as a correlated EXISTS (see
// open). On SQLite it is for the comparisons in a value filter, which look up one row by the
// whole primary key (tenant, kind, rid, attr, sub, idx); for equalities, which look up one
// value of one resource in attrs_lookup or attrs_exact (or by primary key); and for presence
// tests, which constrain no indexed value, so that the primary key's (tenant, kind, rid, attr,
// sub) is the longest equality any index serves: each costs a lookup per resource, and stops
// at the first value found when List pages. SQLite cannot start a semi-join from the partial
// index attrs_exact either. An order or a part, whose correlated form SQLite may answer by
// scanning the values of every resource in attrs_lookup for each resource, and every comparison
// on PostgreSQL, which turns IN into a semi-join it plans with the rest, is an IN.
func (w *filterSQL) correlated(c *filter.Compare, sc scope) bool {
	if w.d != sqliteDialect {
		return false
	}
	return sc.idx != "" || c.Op == filter.Eq || c.Op == filter.Pr || c.Value.Kind == filter.KindNull
}

// compare writes a comparison in scope sc, following filter.Compare's any and holds.
func (w *filterSQL) compare(c *filter.Compare, sc scope) error {
	if c.Attr == nil {
		return errors.New("sqlstore: comparison without an attribute")
	}
	// "pr" and null literals test presence: "eq null" holds when no value is present.
	presence := c.Op == filter.Pr || c.Value.Kind == filter.KindNull
	if presence && c.Op == filter.Eq {
		w.b.WriteString("NOT ")
	}
	// Inside a value filter: the value of the enclosing element only.
	a := w.open(sc, c.Attr, c.Sub, w.correlated(c, sc))
	if sc.idx == "" && c.Attr.MultiValued && c.Filter != nil {
		// `emails[type eq "work"].value eq "x"`: a value of an element the filter keeps.
		w.b.WriteString(" AND ")
		if err := w.expr(c.Filter, scope{rid: a + ".rid", idx: a + ".idx"}); err != nil {
			return err
		}
	}
	if err := w.rowHolds(c, a); err != nil {
		return err
	}
	w.b.WriteByte(')')
	return nil
}

// rowHolds writes " AND <row a satisfies c>", nothing when c is a presence test of a
// sub-attribute (the row's existence is the test).
func (w *filterSQL) rowHolds(c *filter.Compare, a string) error {
	if c.Op == filter.Pr || c.Value.Kind == filter.KindNull {
		if c.Sub == nil && c.Attr.Type == schema.Complex {
			// Element markers are the only rows of absent values.
			fmt.Fprintf(&w.b, " AND (%[1]s.b IS NOT NULL OR %[1]s.s IS NOT NULL OR %[1]s.n IS NOT NULL OR %[1]s.t IS NOT NULL)", a)
		}
		return nil
	}
	w.b.WriteString(" AND ")
	return w.holds(c, a)
}

// elementDriver returns, for a value path whose filter is a conjunction with a comparison c
// that only an existing element's value satisfies (of a sub-attribute, not a test of absence;
// an equality preferred when preferEq is set, another comparison when not), c and the filter's
// other conjuncts.
func elementDriver(vp *filter.ValuePath, preferEq bool) (*filter.Compare, []filter.Expr, bool) {
	all := conjuncts(vp.Filter, nil)
	best := -1
	for i, x := range all {
		c, ok := x.(*filter.Compare)
		switch {
		case !ok, c.Attr == nil, c.Sub == nil, c.Filter != nil, c.Attr.Path() != vp.Attr.Path():
			continue
		case c.Op == filter.Eq && c.Value.Kind == filter.KindNull:
			continue
		}
		if best < 0 || (c.Op == filter.Eq) == preferEq && (all[best].(*filter.Compare).Op == filter.Eq) != preferEq {
			best = i
		}
	}
	if best < 0 {
		return nil, nil, false
	}
	rest := append(append([]filter.Expr(nil), all[:best]...), all[best+1:]...)
	return all[best].(*filter.Compare), rest, true
}

// conjuncts appends the operands of e's top-level ANDs to out.
func conjuncts(e filter.Expr, out []filter.Expr) []filter.Expr {
	if a, ok := e.(*filter.And); ok {
		return conjuncts(a.Right, conjuncts(a.Left, out))
	}
	return append(out, e)
}

// drivenValuePath writes a value path `attr[c and rest…]` as "rid IN (SELECT a.rid FROM attrs
// a WHERE <a is a value of c's sub-attribute that satisfies c> AND <rest holds at (a.rid,
// a.idx)>)": the element is the one of a value that satisfies c, which exists only for an
// existing element, so its marker row need not be read, and the subquery reads the values
// that satisfy c (one index lookup for an equality) instead of every element of the tenant.
func (w *filterSQL) drivenValuePath(c *filter.Compare, rest []filter.Expr, sc scope) error {
	a := w.open(scope{rid: sc.rid}, c.Attr, c.Sub, false)
	if err := w.rowHolds(c, a); err != nil {
		return err
	}
	for _, x := range rest {
		w.b.WriteString(" AND ")
		if err := w.expr(x, scope{rid: a + ".rid", idx: a + ".idx"}); err != nil {
			return err
		}
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
			w.stringHolds(c.Op, a, def, c.Key())
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
		w.stringHolds(c.Op, a, def, c.Key())
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
// only, serves it; but not for a host-defined extension attribute, whose rows have both s and
// sf (extensionAttrRows).
func (w *filterSQL) stringHolds(op filter.Op, a string, def *schema.Attribute, want string) {
	col := a + ".sf"
	if def.CaseExact {
		col = a + ".s"
		if !schema.HostDefined(def) {
			fmt.Fprintf(&w.b, "(%[1]s.s IS NOT NULL AND %[1]s.sf IS NULL AND ", a)
			defer w.b.WriteByte(')')
		}
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
