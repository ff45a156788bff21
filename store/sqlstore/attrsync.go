package sqlstore

import (
	"context"
	"strings"

	"github.com/visid/visid/store"
)

// The attrs table follows every write of a user or a group in the write's transaction: the
// resource's own rows are replaced whole, and the derived ones of the resources it is related to
// (a user's groups, a group's members) are replaced attribute by attribute.

// attrRowsPerInsert is how many rows one INSERT into attrs carries (11 parameters each).
const attrRowsPerInsert = 64

// attrInserter batches rows into multi-row INSERTs; with upsert set, a row whose key is taken
// replaces the values there.
type attrInserter struct {
	t      *txn
	upsert bool
	args   []any
	n      int
}

func (a *attrInserter) add(ctx context.Context, tenant string, kind resourceKind, rid string, r *attrRow) error {
	a.args = append(a.args, tenant, string(kind), rid, r.Attr, r.Sub, r.Idx, r.S, r.SF, r.N, r.B, r.T)
	a.n++
	if a.n == attrRowsPerInsert {
		return a.flush(ctx)
	}
	return nil
}

func (a *attrInserter) flush(ctx context.Context) error {
	if a.n == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf, n, b, t) VALUES `)
	for i := range a.n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`(?,?,?,?,?,?,?,?,?,?,?)`)
	}
	if a.upsert {
		b.WriteString(` ON CONFLICT (tenant, kind, rid, attr, sub, idx) DO UPDATE
			SET s = excluded.s, sf = excluded.sf, n = excluded.n, b = excluded.b, t = excluded.t`)
	}
	_, err := a.t.exec(ctx, b.String(), a.args...)
	a.args, a.n = a.args[:0], 0
	return err
}

// insertAttrs writes rows, the attrs rows of a resource that has none yet (one just created).
func (t *txn) insertAttrs(ctx context.Context, tenant string, kind resourceKind, rid string, rows []attrRow) error {
	ins := attrInserter{t: t}
	for i := range rows {
		if err := ins.add(ctx, tenant, kind, rid, &rows[i]); err != nil {
			return err
		}
	}
	return ins.flush(ctx)
}

// attrColumns returns rows column by column, as the arrays of PostgreSQL's unnest takes them:
// attr, sub, idx, s, sf, n, b and t, with nil for NULL.
func attrColumns(rows []attrRow) []any {
	attr, sub, idx := make([]string, len(rows)), make([]string, len(rows)), make([]int64, len(rows))
	s, sf := make([]*string, len(rows)), make([]*string, len(rows))
	n, b, t := make([]*float64, len(rows)), make([]*bool, len(rows)), make([]*int64, len(rows))
	for i := range rows {
		r := &rows[i]
		attr[i], sub[i], idx[i] = r.Attr, r.Sub, int64(r.Idx)
		if r.S.Valid {
			s[i] = &r.S.String
		}
		if r.SF.Valid {
			sf[i] = &r.SF.String
		}
		if r.N.Valid {
			n[i] = &r.N.Float64
		}
		if r.B.Valid {
			b[i] = &r.B.Bool
		}
		if r.T.Valid {
			t[i] = &r.T.Int64
		}
	}
	return []any{attr, sub, idx, s, sf, n, b, t}
}

// attrKey identifies a row of one resource.
type attrKey struct {
	attr, sub string
	idx       int
}

// putAttrs makes rows the attrs rows of one resource: it reads what is stored, deletes the
// rows whose key rows lacks and writes those that are new or changed, so that a write costs
// about what it changes.
func (t *txn) putAttrs(ctx context.Context, tenant string, kind resourceKind, rid string, rows []attrRow) error {
	stored, err := t.storedAttrs(ctx, tenant, kind, rid)
	if err != nil {
		return err
	}
	changed, gone := attrDiff(stored, rows)
	return t.applyAttrDiff(ctx, tenant, kind, rid, changed, gone, len(stored) > 0)
}

// attrDiff returns what turns the stored rows of a resource into rows: the rows to write
// (new, or with other values) and the keys of the stored rows to delete.
func attrDiff(stored map[attrKey]attrRow, rows []attrRow) ([]attrRow, []attrKey) {
	var changed []attrRow
	seen := make(map[attrKey]bool, len(rows))
	for i := range rows {
		k := attrKey{rows[i].Attr, rows[i].Sub, rows[i].Idx}
		seen[k] = true
		if was, ok := stored[k]; ok && was == rows[i] {
			continue
		}
		changed = append(changed, rows[i])
	}
	var gone []attrKey
	for k := range stored {
		if !seen[k] {
			gone = append(gone, k)
		}
	}
	return changed, gone
}

// applyAttrDiff writes the changed rows of a resource (as upserts when it has stored rows) and
// deletes its gone ones.
func (t *txn) applyAttrDiff(ctx context.Context, tenant string, kind resourceKind, rid string, changed []attrRow, gone []attrKey, upsert bool) error {
	ins := attrInserter{t: t, upsert: upsert}
	for i := range changed {
		if err := ins.add(ctx, tenant, kind, rid, &changed[i]); err != nil {
			return err
		}
	}
	if err := ins.flush(ctx); err != nil {
		return err
	}
	const perDelete = 100
	var args []any
	var cond strings.Builder
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		_, err := t.exec(ctx, `DELETE FROM attrs WHERE tenant = ? AND kind = ? AND rid = ? AND (`+cond.String()+`)`,
			append([]any{tenant, string(kind), rid}, args...)...)
		args = args[:0]
		cond.Reset()
		return err
	}
	for _, k := range gone {
		if len(args) > 0 {
			cond.WriteString(" OR ")
		}
		cond.WriteString(`(attr = ? AND sub = ? AND idx = ?)`)
		args = append(args, k.attr, k.sub, k.idx)
		if len(args) == 3*perDelete {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// storedAttrs returns the attrs rows of one resource by key.
func (t *txn) storedAttrs(ctx context.Context, tenant string, kind resourceKind, rid string) (map[attrKey]attrRow, error) {
	rows, err := t.query(ctx, `SELECT attr, sub, idx, s, sf, n, b, t FROM attrs WHERE tenant = ? AND kind = ? AND rid = ?`,
		tenant, string(kind), rid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[attrKey]attrRow{}
	for rows.Next() {
		var r attrRow
		if err := rows.Scan(&r.Attr, &r.Sub, &r.Idx, &r.S, &r.SF, &r.N, &r.B, &r.T); err != nil {
			return nil, err
		}
		out[attrKey{r.Attr, r.Sub, r.Idx}] = r
	}
	return out, rows.Err()
}

// syncUserGroups rewrites the groups rows of the users ids from the current memberships.
func (t *txn) syncUserGroups(ctx context.Context, tenant string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	refs, err := t.groupRefs(ctx, tenant, ids)
	if err != nil {
		return err
	}
	return t.syncDerived(ctx, tenant, kindUser, "groups", ids, func(id string) []attrRow {
		return attrRows(kindUser, &store.User{Groups: refs[id]})
	})
}

// membership is a user's place in a group: the group and the user's position in its list.
type membership struct {
	group string
	pos   int
}

// memberships returns the groups of the user id with its position in each.
func (t *txn) memberships(ctx context.Context, tenant, id string) ([]membership, error) {
	rows, err := t.query(ctx, `SELECT group_id, pos FROM members WHERE tenant = ? AND user_id = ?`, tenant, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []membership
	for rows.Next() {
		var m membership
		if err := rows.Scan(&m.group, &m.pos); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// syncMember rewrites, in the members rows of each group in ms, the element of the user: with m
// the member's values (after a rename), or none when m is nil (the user is gone). A group's
// members rows take the member's position (members.pos) as their idx, which needs to be the
// same for the rows of one element only: so a member's rows change without the others'.
func (t *txn) syncMember(ctx context.Context, tenant string, ms []membership, m *store.Member) error {
	var rows []attrRow
	if m != nil {
		for _, r := range attrRows(kindGroup, &store.Group{Members: []store.Member{*m}}) {
			if r.Attr == "members" {
				rows = append(rows, r)
			}
		}
	}
	ins := attrInserter{t: t}
	subs := memberAttrSubs()
	for _, g := range ms {
		if err := t.deleteMemberAttrs(ctx, tenant, g.group, int64(g.pos), subs); err != nil {
			return err
		}
		for _, r := range rows {
			r.Idx = g.pos
			if err := ins.add(ctx, tenant, kindGroup, g.group, &r); err != nil {
				return err
			}
		}
	}
	return ins.flush(ctx)
}

// syncDerived replaces the rows of attribute attr of the resources ids with those of rowsOf.
func (t *txn) syncDerived(ctx context.Context, tenant string, kind resourceKind, attr string, ids []string, rowsOf func(id string) []attrRow) error {
	err := inChunks(ids, func(chunk []string) error {
		args := append([]any{tenant, string(kind), attr}, strArgs(chunk)...)
		_, err := t.exec(ctx, `DELETE FROM attrs WHERE tenant = ? AND kind = ? AND attr = ? AND rid IN (`+placeholders(len(chunk))+`)`, args...)
		return err
	})
	if err != nil {
		return err
	}
	ins := attrInserter{t: t}
	for _, id := range ids {
		rows := rowsOf(id)
		for i := range rows {
			if rows[i].Attr != attr {
				continue
			}
			if err := ins.add(ctx, tenant, kind, id, &rows[i]); err != nil {
				return err
			}
		}
	}
	return ins.flush(ctx)
}

// inChunkSize bounds the values of one IN list.
const inChunkSize = 500

// inChunks calls fn with ids in pieces of at most inChunkSize.
func inChunks(ids []string, fn func([]string) error) error {
	for len(ids) > 0 {
		n := min(len(ids), inChunkSize)
		if err := fn(ids[:n]); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

func strArgs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
