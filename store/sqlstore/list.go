package sqlstore

import (
	"context"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// list runs q over the tenant's rows of table (users or groups, aliased r), in creation order:
// it counts the matches, then reads the page's id and doc and hands each to each. The filter
// runs in the database (whereFilter, over the attrs table). On SQLite, whose planner does not
// turn whereFilter's correlated EXISTS (equalities, value paths of equalities) into a join, the
// candidates the filter's equalities allow are named too, so that the query starts from an
// index of attrs instead of scanning the tenant.
func (t *txn) list(ctx context.Context, table string, kind resourceKind, tenant string, q store.Query, each func(id, doc string)) (int, error) {
	if err := t.tenantExists(ctx, tenant); err != nil {
		return 0, err
	}
	from := table + ` r`
	where := `r.tenant = ?`
	var args []any
	if q.Filter != nil {
		w, wargs, err := whereFilter(t.d, kind, tenant, q.Filter)
		if err != nil {
			return 0, err
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
				return 0, err
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
	var total int
	if err := t.queryRow(ctx, `SELECT COUNT(*) FROM `+from+` WHERE `+where, args...).Scan(&total); err != nil {
		return 0, err
	}
	skip := max(q.StartIndex, 1) - 1
	if q.Count == 0 || skip >= total {
		return total, nil
	}
	query := `SELECT r.id, r.doc FROM ` + from + ` WHERE ` + where + ` ORDER BY r.seq`
	switch {
	case q.Count > 0:
		query += ` LIMIT ? OFFSET ?`
		args = append(args, q.Count, skip)
	case t.d == sqliteDialect:
		query += ` LIMIT -1 OFFSET ?`
		args = append(args, skip)
	default:
		query += ` OFFSET ?`
		args = append(args, skip)
	}
	rows, err := t.query(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, doc string
		if err := rows.Scan(&id, &doc); err != nil {
			return 0, err
		}
		each(id, doc)
	}
	return total, rows.Err()
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
