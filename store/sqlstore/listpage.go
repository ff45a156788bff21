package sqlstore

import (
	"context"
	"strings"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
)

// listQuery reads the rows of a page of list: those of table (aliased r) FROM from WHERE where
// (with args), in the order of key, descending when desc, read backwards when reverse (for a
// page before a position, which list puts back in order).
type listQuery struct {
	t             *txn
	table         string
	from, where   string
	args          []any
	key           sortKey
	desc, reverse bool
}

// listRow is a row of a page: the resource's id and document, and its position.
type listRow struct {
	id, doc string
	at      store.Position
}

// read reads, in one query, at most limit rows (all when limit < 0) after position at, or when
// at is nil after the first skip rows.
func (lq *listQuery) read(ctx context.Context, at *store.Position, limit, skip int) ([]listRow, error) {
	t, k := lq.t, lq.key
	// The page's query: rows with id, doc, seq and (when sorting) the key, as the SQL names
	// seqCol and keyCol, filtered, then the keyset condition and the order.
	query := `SELECT r.id, r.doc, r.seq`
	seqCol, keyCol := `r.seq`, k.expr
	var qargs []any
	if k.expr != "" {
		query += `, ` + k.expr
		qargs = append(qargs, k.args...)
	}
	pageFrom := lq.from
	if t.d == sqliteDialect && k.expr == "" && lq.from == lq.table+` r` {
		// Without statistics SQLite reads a position in creation order from the rowid, over
		// every tenant's rows; (tenant, seq) reads the tenant's only.
		pageFrom += ` INDEXED BY ` + lq.table + `_order`
	}
	query += ` FROM ` + pageFrom + ` WHERE ` + lq.where
	qargs = append(qargs, lq.args...)
	cond := ` AND `
	if len(k.args) > 0 {
		// A key with arguments is computed once per row, in a derived table.
		query = `SELECT x.id, x.doc, x.seq, x.sk FROM (` + strings.Replace(query, `, `+k.expr, `, `+k.expr+` AS sk`, 1) + `) x`
		seqCol, keyCol = `x.seq`, `x.sk`
		cond = ` WHERE `
	}
	if at != nil {
		c, cargs := k.keyset(t.d, keyCol, seqCol, *at, lq.desc, lq.reverse)
		query += cond + c
		qargs = append(qargs, cargs...)
	}
	query += ` ORDER BY ` + k.order(t.d, keyCol, seqCol, lq.desc, lq.reverse)
	query, qargs = lq.limit(query, qargs, at != nil, limit, skip)
	return lq.scan(ctx, query, qargs)
}

// limit appends to query the LIMIT and OFFSET of at most limit rows (all when limit < 0) after
// the first skip, or none of skip when keyset is set (a keyset condition replaces the offset).
func (lq *listQuery) limit(query string, args []any, keyset bool, limit, skip int) (string, []any) {
	switch {
	case limit > 0 && !keyset:
		return query + ` LIMIT ? OFFSET ?`, append(args, limit, skip)
	case limit > 0:
		return query + ` LIMIT ?`, append(args, limit)
	case keyset:
		return query, args
	case lq.t.d == sqliteDialect:
		return query + ` LIMIT -1 OFFSET ?`, append(args, skip)
	}
	return query + ` OFFSET ?`, append(args, skip)
}

// scan runs query and reads its rows: id, doc, seq and, when sorting, the key.
func (lq *listQuery) scan(ctx context.Context, query string, args []any) ([]listRow, error) {
	rows, err := lq.t.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var page []listRow
	for rows.Next() {
		var r listRow
		dst := []any{&r.id, &r.doc, &r.at.Seq}
		var key keyValue
		if lq.key.expr != "" {
			dst = append(dst, key.dest(lq.key.kind))
		}
		if err := rows.Scan(dst...); err != nil {
			return nil, err
		}
		r.at.Value = key.value(lq.key.kind)
		page = append(page, r)
	}
	return page, rows.Err()
}

// readParts is read for a key that is a column of the row with an index of (tenant, key, seq)
// (sortColumn), which may be NULL. Rows without a key come after those with one in both
// directions, which no single index order gives: so the rows with a key and those without are
// read by a query each, in the list's order, the second only when the first did not fill the
// page. Each query is an index range read from the position (key >= v … on the rows with a
// key, seq > s … on those without, the index's NULL part being ordered by seq), so that a page
// after a million rows costs what the first does.
func (lq *listQuery) readParts(ctx context.Context, at *store.Position, limit, skip int) ([]listRow, error) {
	// The parts in the order of the read: with a key first, or last when reading backwards.
	parts := []bool{true, false}
	if lq.reverse {
		parts = []bool{false, true}
	}
	var out []listRow
	for _, present := range parts {
		want := -1
		if limit >= 0 {
			want = limit - len(out)
			if want == 0 {
				break
			}
		}
		cond, cargs, ok := lq.partCondition(present, at)
		if !ok {
			continue
		}
		rows, err := lq.readPart(ctx, present, cond, cargs, at != nil, want, skip)
		if err != nil {
			return nil, err
		}
		if at == nil && skip > 0 && present {
			// The rows without a key start after the rest of the offset: when this part
			// gave rows, it ran out within the page; when it gave none, its rows are counted.
			if len(rows) > 0 {
				skip = 0
			} else if n, err := lq.countPart(ctx, true); err != nil {
				return nil, err
			} else {
				skip = max(skip-n, 0)
			}
		}
		out = append(out, rows...)
	}
	return out, nil
}

// partCondition is the keyset condition of the rows with a key (present) or without that come
// after at (before it when reverse), with its arguments; false when no row of the part does.
func (lq *listQuery) partCondition(present bool, at *store.Position) (string, []any, bool) {
	k, key, seq := lq.key, lq.key.expr, `r.seq`
	if at == nil {
		return "", nil, true
	}
	gt := ` > `
	if lq.desc != lq.reverse {
		gt = ` < `
	}
	atPresent := at.Value.Kind != filter.Absent
	switch {
	case present && atPresent:
		c, args := k.after(lq.t.d, key, seq, *at, lq.desc, lq.reverse)
		return ` AND ` + c, args, true
	case present:
		// The rows with a key all come before a position without one.
		return "", nil, lq.reverse
	case atPresent:
		// The rows without a key all come after a position with one.
		return "", nil, !lq.reverse
	}
	return ` AND ` + seq + gt + `?`, []any{at.Seq}, true
}

// readPart reads the rows with a key (present) or without, that meet cond (with cargs): at
// most limit (all when limit < 0), after the first skip unless keyset.
func (lq *listQuery) readPart(ctx context.Context, present bool, cond string, cargs []any, keyset bool, limit, skip int) ([]listRow, error) {
	t, k := lq.t, lq.key
	dir := ` ASC`
	if lq.desc != lq.reverse {
		dir = ` DESC`
	}
	from := lq.from
	if t.d == sqliteDialect && from == lq.table+` r` {
		// Without statistics SQLite may read another index and sort.
		from += ` INDEXED BY ` + k.index
	}
	query := `SELECT r.id, r.doc, r.seq, ` + k.expr + ` FROM ` + from + ` WHERE ` + lq.where
	args := append([]any(nil), lq.args...)
	order := ``
	if present {
		query += ` AND ` + k.expr + ` IS NOT NULL`
		order = k.collate(t.d, k.expr) + dir + `, `
	} else {
		query += ` AND ` + k.expr + ` IS NULL`
	}
	query += cond + ` ORDER BY ` + order + `r.seq` + dir
	args = append(args, cargs...)
	query, args = lq.limit(query, args, keyset, limit, skip)
	return lq.scan(ctx, query, args)
}

// countPart counts the rows with a key (present) or without.
func (lq *listQuery) countPart(ctx context.Context, present bool) (int, error) {
	null := ` IS NULL`
	if present {
		null = ` IS NOT NULL`
	}
	var n int
	err := lq.t.queryRow(ctx, `SELECT COUNT(*) FROM `+lq.from+` WHERE `+lq.where+` AND `+lq.key.expr+null, lq.args...).Scan(&n)
	return n, err
}
