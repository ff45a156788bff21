package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// listed is what list reports besides the rows: the total and the page's keyset positions
// (store.Page's TotalResults, Next and Prev).
type listed struct {
	total      int
	next, prev *store.Position
}

// into sets a page's TotalResults, Next and Prev.
func (l listed) into(total *int, next, prev **store.Position) {
	*total, *next, *prev = l.total, l.next, l.prev
}

// list runs q over the tenant's rows of table (users or groups, aliased r), in q.Sort's order:
// it counts the matches, then reads the page's id and doc and hands each to each. The filter
// runs in the database (whereFilter, over the attrs table). On SQLite, whose planner does not
// turn whereFilter's correlated EXISTS (equalities, value paths of equalities) into a join, the
// candidates the filter's equalities allow are named too, so that the query starts from an
// index of attrs instead of scanning the tenant.
//
// The order is pushed down too (sortKey): creation order is r.seq, which the index (tenant,
// seq) serves; userName and a group's displayName are columns of their own with indexes
// (tenant, column, seq), and so are name.familyName, emails.value, meta.created and
// meta.lastModified (sortColumns; read by listQuery.readParts, as they may be NULL); any other
// sortable attribute is a subquery of attrs per row. A keyset
// position (q.After, q.Before) is a condition on (key, seq), never an OFFSET, so with an index
// the page after a million rows is read like the first.
func (t *txn) list(ctx context.Context, table string, kind resourceKind, tenant string, q store.Query, each func(id, doc string)) (listed, error) {
	if err := store.CheckSort(q.Sort); err != nil {
		return listed{}, err
	}
	if q.After != nil {
		q.Before = nil
	}
	for _, p := range []*store.Position{q.After, q.Before} {
		if err := store.CheckPosition(q.Sort, p); err != nil {
			return listed{}, err
		}
	}
	if err := t.tenantExists(ctx, tenant); err != nil {
		return listed{}, err
	}
	from := table + ` r`
	where := `r.tenant = ?`
	var args []any
	if q.Filter != nil {
		w, wargs, err := whereFilter(t.d, kind, tenant, q.Filter)
		if err != nil {
			return listed{}, err
		}
		if t.d == postgresDialect {
			// No JIT compilation: a List reads at most a tenant's rows, which JIT makes slower
			// (it compiles for longer than such a query runs once its cost estimate passes
			// jit_above_cost). While attrs has no statistics (after an import, before
			// autovacuum) the planner takes every subquery of whereFilter for one row, and
			// nests loops over them: for a value path, loops that scan the rows of one
			// attribute per row of another (minutes for a user with 30k emails); for an order,
			// a part or presence, a lookup of the resource per matching value (seconds over
			// 300k values). Then hash joins, which cost one pass over each row set whatever
			// the statistics, are the only joins, unless every comparison is an equality,
			// whose subquery is the few rows the planner takes it for. With statistics the
			// planner's choice stands.
			nestLoop := `'on'`
			if !onlyEqualities(q.Filter) {
				nestLoop = `CASE WHEN EXISTS (SELECT 1 FROM pg_stats s JOIN pg_namespace n ON n.nspname = s.schemaname
					JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename
					WHERE c.oid = 'attrs'::regclass AND s.attname = 'rid') THEN 'on' ELSE 'off' END`
			}
			if _, err := t.exec(ctx, `SELECT set_config('jit', 'off', true), set_config('enable_nestloop', `+nestLoop+`, true)`); err != nil {
				return listed{}, err
			}
		}
		if t.d == sqliteDialect {
			if c, cargs, ok := candidates(kind, tenant, q.Filter); ok {
				// CROSS JOIN makes SQLite loop over the candidates first.
				from = `(SELECT DISTINCT rid FROM (` + c + `)) cand CROSS JOIN ` + from
				where += ` AND r.id = cand.rid`
				args = append(args, cargs...)
			}
		}
		args = append(args, tenant)
		where += ` AND (` + w + `)`
		args = append(args, wargs...)
	} else {
		args = append(args, tenant)
	}
	var l listed
	if err := t.queryRow(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+where, args...).Scan(&l.total); err != nil {
		return listed{}, err
	}
	skip := max(q.StartIndex, 1) - 1
	if q.Count == 0 || (q.After == nil && q.Before == nil && skip >= l.total) {
		return l, nil
	}

	k := t.sortKey(kind, q.Sort)
	reverse := q.Before != nil
	at := q.After
	if reverse {
		at = q.Before
	}
	limit := q.Count
	if at != nil && q.Count > 0 {
		limit++ // one more tells whether more follow
	}
	page := listQuery{t: t, table: table, from: from, where: where, args: args, key: k,
		desc: q.Sort.Descending, reverse: reverse}
	var rows []listRow
	var err error
	if k.index != "" {
		rows, err = page.readParts(ctx, at, limit, skip)
	} else {
		rows, err = page.read(ctx, at, limit, skip)
	}
	if err != nil {
		return listed{}, err
	}
	more := at != nil && q.Count > 0 && len(rows) > q.Count
	if more {
		rows = rows[:q.Count]
	}
	if reverse {
		slices.Reverse(rows)
	}
	for _, r := range rows {
		each(r.id, r.doc)
	}
	if len(rows) == 0 {
		return l, nil
	}
	first, last := rows[0].at, rows[len(rows)-1].at
	switch {
	case q.Before != nil:
		if q.Count > 0 {
			l.next = &last
		}
		if more {
			l.prev = &first
		}
	case q.After != nil:
		l.prev = &first
		if more {
			l.next = &last
		}
	default:
		if skip > 0 {
			l.prev = &first
		}
		if q.Count > 0 && skip+len(rows) < l.total {
			l.next = &last
		}
	}
	return l, nil
}

// sortKey is how the rows of a list are ordered: expr is the SQL of the key (over the row r,
// with args; "" in creation order), kind the filter.Kind of its values, and nullable tells
// whether a row may have no value. index, when set, names the index of (tenant, key, seq) of a
// sort column (sortColumn), whose rows listQuery.readParts reads.
type sortKey struct {
	expr     string
	args     []any
	kind     filter.Kind
	nullable bool
	index    string
}

// sortKey returns the key of s for resources of kind: a column of the resource's row when there
// is one (userName's and displayName's folded forms, and the sort columns), otherwise the value
// store.SortValue gives, read from attrs: the row of a single-valued attribute, or of a
// multi-valued one the value of the first element that is primary, else of the first element
// with a value.
func (t *txn) sortKey(kind resourceKind, s store.Sort) sortKey {
	if s.IsZero() {
		return sortKey{}
	}
	def := s.Attr
	if s.Sub != nil {
		def = s.Sub
	}
	k := sortKey{nullable: true}
	col := ""
	switch def.Type {
	case schema.Boolean:
		k.kind, col = filter.KindBool, "b"
	case schema.Integer, schema.Decimal:
		k.kind, col = filter.KindNumber, "n"
	case schema.DateTime:
		k.kind, col = filter.KindTime, "t"
	default:
		k.kind, col = filter.KindString, "sf"
		if def.CaseExact {
			col = "s"
		}
	}
	switch path := s.Path(); {
	case kind == kindUser && path == "userName" && !def.CaseExact:
		return sortKey{expr: "r.user_name_fold", kind: filter.KindString}
	case kind == kindGroup && path == "displayName" && !def.CaseExact:
		return sortKey{expr: "r.display_name_fold", kind: filter.KindString}
	}
	if c, ok := sortColumnOf(kind, s); ok {
		k.expr, k.index = "r."+c.column, c.index
		return k
	}
	sub := ""
	if s.Sub != nil {
		sub = s.Sub.Name
	}
	k.expr = `(SELECT k.` + col + ` FROM attrs k WHERE k.tenant = r.tenant AND k.kind = ? AND k.rid = r.id AND k.attr = ? AND k.sub = ?`
	k.args = []any{string(kind), s.Attr.Path(), sub}
	if !s.Attr.MultiValued {
		k.expr += ` AND k.idx = 0)`
		return k
	}
	k.expr += ` AND k.` + col + ` IS NOT NULL ORDER BY `
	if p := s.Attr.Sub("primary"); p != nil && p != s.Sub {
		isTrue := "p.b"
		if t.d == sqliteDialect {
			isTrue = "p.b = 1"
		}
		k.expr += `CASE WHEN EXISTS (SELECT 1 FROM attrs p WHERE p.tenant = k.tenant AND p.kind = k.kind AND p.rid = k.rid AND p.attr = k.attr AND p.sub = 'primary' AND p.idx = k.idx AND ` + isTrue + `) THEN 0 ELSE 1 END, `
	}
	k.expr += `k.idx LIMIT 1)`
	return k
}

// collate is the clause that makes key (an expression of kind) compare as store.Sort says:
// strings by bytes.
func (k sortKey) collate(d dialect, key string) string {
	if k.kind != filter.KindString {
		return key
	}
	if d == postgresDialect {
		return key + ` COLLATE "C"`
	}
	return key + ` COLLATE BINARY`
}

// order is the ORDER BY list of a read in the order (desc: descending), or backwards when
// reverse is set: rows with a key before those without, each by key and seq.
func (k sortKey) order(d dialect, key, seq string, desc, reverse bool) string {
	dir := ` ASC`
	if desc != reverse {
		dir = ` DESC`
	}
	if k.expr == "" {
		return seq + dir
	}
	out := ""
	if k.nullable {
		nulls := ` ASC`
		if reverse {
			nulls = ` DESC`
		}
		out = `(` + key + ` IS NULL)` + nulls + `, `
	}
	return out + k.collate(d, key) + dir + `, ` + seq + dir
}

// keyset is the condition, with its arguments, that a row (key, seq) comes after position p in
// the order (desc: descending), or before it when reverse is set.
func (k sortKey) keyset(d dialect, key, seq string, p store.Position, desc, reverse bool) (string, []any) {
	gt := ` > `
	if desc != reverse {
		gt = ` < `
	}
	if k.expr == "" {
		return seq + gt + `?`, []any{p.Seq}
	}
	after, afterArgs := k.after(d, key, seq, p, desc, reverse)
	switch {
	case p.Value.Kind == filter.Absent && !k.nullable:
		// No row is without a key: every row comes before such a position.
		if reverse {
			return `TRUE`, nil
		}
		return `FALSE`, nil
	case p.Value.Kind == filter.Absent && reverse:
		return `(` + key + ` IS NOT NULL OR ` + seq + gt + `?)`, []any{p.Seq}
	case p.Value.Kind == filter.Absent:
		return `(` + key + ` IS NULL AND ` + seq + gt + `?)`, []any{p.Seq}
	case !k.nullable:
		return `(` + after + `)`, afterArgs
	case reverse:
		return `(` + key + ` IS NOT NULL AND ` + after + `)`, afterArgs
	}
	return `(` + key + ` IS NULL OR (` + after + `))`, afterArgs
}

// after is the condition, with its arguments, that a row (key, seq) with a key comes after
// position p, which has one, in the order (desc: descending), or before it when reverse is
// set. It is written so that an index of (…, key, seq) reads from the position on: key >= v
// bounds the index range, and the rest drops the rows of v up to s.
func (k sortKey) after(d dialect, key, seq string, p store.Position, desc, reverse bool) (string, []any) {
	gt, ge := ` > `, ` >= `
	if desc != reverse {
		gt, ge = ` < `, ` <= `
	}
	ck := k.collate(d, key)
	v := k.arg(p.Value)
	return ck + ge + `? AND (` + ck + gt + `? OR ` + seq + gt + `?)`, []any{v, v, p.Seq}
}

// arg is the SQL argument of a key value v, as the key's column holds it.
func (k sortKey) arg(v filter.Value) any {
	switch k.kind {
	case filter.KindBool:
		return v.Bool
	case filter.KindNumber:
		return v.Num
	case filter.KindTime:
		return attrNanos(v.Time)
	}
	return v.Str
}

// keyValue receives a key's column from a row.
type keyValue struct {
	s sql.NullString
	n sql.NullFloat64
	b sql.NullBool
	t sql.NullInt64
}

// dest is where Scan puts a key of kind.
func (v *keyValue) dest(kind filter.Kind) any {
	switch kind {
	case filter.KindBool:
		return &v.b
	case filter.KindNumber:
		return &v.n
	case filter.KindTime:
		return &v.t
	}
	return &v.s
}

// value is the scanned key as a sort value (the zero Value when NULL or not sorting).
func (v *keyValue) value(kind filter.Kind) filter.Value {
	switch {
	case kind == filter.KindBool && v.b.Valid:
		return filter.BoolValue(v.b.Bool)
	case kind == filter.KindNumber && v.n.Valid:
		return filter.NumberValue(v.n.Float64)
	case kind == filter.KindTime && v.t.Valid:
		return filter.Value{Kind: filter.KindTime, Time: time.Unix(0, v.t.Int64).UTC()}
	case kind == filter.KindString && v.s.Valid:
		return filter.Value{Kind: filter.KindString, Str: v.s.String}
	}
	return filter.Value{}
}

// onlyEqualities reports whether every comparison in e is an equality with a value (not null),
// outside any value path.
func onlyEqualities(e filter.Expr) bool {
	switch e := e.(type) {
	case *filter.Compare:
		return e.Op == filter.Eq && e.Value.Kind != filter.KindNull && e.Filter == nil
	case *filter.And:
		return onlyEqualities(e.Left) && onlyEqualities(e.Right)
	case *filter.Or:
		return onlyEqualities(e.Left) && onlyEqualities(e.Right)
	case *filter.Not:
		return onlyEqualities(e.X)
	}
	return false
}

// candidates returns a query of the ids (column rid, possibly repeated) of a superset of the
// resources e matches, built from the string equalities e requires (as memstore's indexes answer
// them), or false when e needs every resource looked at. An equality gives the ids whose attrs
// row has the value; "and" takes one side that has candidates, "or" the union of both sides',
// which both need candidates; a value path takes its filter's.
func candidates(kind resourceKind, tenant string, e filter.Expr) (string, []any, bool) {
	switch e := e.(type) {
	case *filter.Compare:
		def := e.Attr
		if e.Sub != nil {
			def = e.Sub
		}
		switch {
		case e.Op != filter.Eq || e.Value.Kind != filter.KindString:
			return "", nil, false
		case def.Type != schema.String && def.Type != schema.Reference && def.Type != schema.Binary:
			return "", nil, false
		}
		cond := "c.sf = ?"
		switch {
		case def.CaseExact && schema.HostDefined(def):
			cond = "c.s = ?" // its rows have sf too (extensionAttrRows)
		case def.CaseExact:
			cond = "c.s = ? AND c.sf IS NULL" // attrs_exact's condition
		}
		sub := ""
		if e.Sub != nil {
			sub = e.Sub.Name
		}
		return `SELECT c.rid AS rid FROM attrs c WHERE c.tenant = ? AND c.kind = ? AND c.attr = ? AND c.sub = ? AND ` + cond,
			[]any{tenant, string(kind), e.Attr.Path(), sub, e.Key()}, true
	case *filter.ValuePath:
		return candidates(kind, tenant, e.Filter)
	case *filter.And:
		if c, args, ok := candidates(kind, tenant, e.Left); ok {
			return c, args, true
		}
		return candidates(kind, tenant, e.Right)
	case *filter.Or:
		l, largs, ok := candidates(kind, tenant, e.Left)
		if !ok {
			return "", nil, false
		}
		r, rargs, ok := candidates(kind, tenant, e.Right)
		if !ok {
			return "", nil, false
		}
		return l + ` UNION ` + r, append(largs, rargs...), true
	}
	return "", nil, false
}
