package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
	"github.com/visid/visid/store/internal/stamp"
	"github.com/visid/visid/store/schema"
)

// A group's membership is its rows of members, keyed (tenant, group_id, user_id), each with its
// position pos; groups.member_count counts them. A member added goes after the last one (found
// through members_pos), and a member removed leaves a gap: positions are never renumbered but by
// a replace of the whole list (Update), so a member change touches only that member's rows, here
// and in attrs, where a member's rows have its position as their idx.

// GetWithoutMembers implements store.Groups.
func (gs *Groups) GetWithoutMembers(ctx context.Context, tenant, id string) (*store.Group, error) {
	var out *store.Group
	err := gs.s.read(ctx, func(tx *txn) error {
		var err error
		out, err = tx.group(ctx, tenant, id, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Patch implements store.Groups.
func (gs *Groups) Patch(ctx context.Context, tenant, id string, gp store.GroupPatch) (*store.Group, error) {
	add, remove, err := changes.Delta(gp)
	if err != nil {
		return nil, err
	}
	var out *store.Group
	err = gs.s.write(ctx, func(tx *txn) error {
		if err := tx.lockTenant(ctx, tenant); err != nil {
			return err
		}
		before, count, err := tx.groupAndCount(ctx, tenant, id)
		if err != nil {
			return err
		}
		work := *before
		if gp.Attrs != nil {
			if err := gp.Attrs(&work); err != nil {
				return err
			}
			work.Members = nil
		}
		switch {
		case work.ID != id:
			return fmt.Errorf("group %q: the id cannot change: %w", id, store.ErrInvalid)
		case work.DisplayName == "":
			return fmt.Errorf("group %q: displayName cannot be empty: %w", id, store.ErrInvalid)
		}
		if err := tx.putUnique(ctx, tenant, kindGroup, id, before.Unique, work.Unique); err != nil {
			return err
		}
		adds, err := tx.newMembers(ctx, tenant, id, add)
		if err != nil {
			return err
		}
		removes, err := tx.memberPositions(ctx, tenant, id, remove)
		if err != nil {
			return err
		}
		n := count + len(adds) - len(removes)
		if gp.MaxMembers > 0 && n > gp.MaxMembers && n > count {
			return fmt.Errorf("group %q would have %d members, above %d: %w", id, n, gp.MaxMembers, store.ErrTooManyMembers)
		}
		now := gp.Modified
		if now.IsZero() {
			now = stamp.Now()
		}
		membersChanged := len(adds)+len(removes) > 0
		stamp.GroupPatch(before, &work, membersChanged, now)
		if err := tx.removeMembers(ctx, tenant, id, removes); err != nil {
			return err
		}
		if err := tx.appendMembers(ctx, tenant, id, adds); err != nil {
			return err
		}
		doc, err := groupDoc(&work)
		if err != nil {
			return err
		}
		args := append([]any{work.DisplayName, schema.Fold(work.DisplayName), work.ExternalID, doc, n}, sortColumnArgs(kindGroup, &work)...)
		if _, err := tx.exec(ctx, `UPDATE groups SET display_name = ?, display_name_fold = ?, external_id = ?, doc = ?, member_count = ?, `+
			sortColumnSet(kindGroup)+` WHERE tenant = ? AND id = ?`,
			append(args, tenant, id)...); err != nil {
			return err
		}
		if work.Meta != before.Meta || changes.GroupAttrs(before, &work) {
			if err := tx.putGroupOwnAttrs(ctx, tenant, &work); err != nil {
				return err
			}
		}
		// The users whose groups changed: those added or removed, and every member after a
		// rename (their groups.display), which costs in proportion to the group.
		users := make([]string, 0, len(adds)+len(removes))
		for _, m := range adds {
			users = append(users, m.Value)
		}
		for _, m := range removes {
			users = append(users, m.user)
		}
		if work.DisplayName != before.DisplayName {
			if users, err = tx.strings(ctx, `SELECT user_id FROM members WHERE tenant = ? AND group_id = ?`, tenant, id); err != nil {
				return err
			}
			for _, m := range removes {
				users = append(users, m.user)
			}
		}
		if err := tx.syncUserGroups(ctx, tenant, users); err != nil {
			return err
		}
		p := changes.New(ctx, tenant)
		var members []store.Member
		readMembers := gp.WithMembers || p != nil && changes.GroupAttrs(before, &work)
		if readMembers {
			ms, err := tx.members(ctx, tenant, []string{id})
			if err != nil {
				return err
			}
			members = ms[id]
		}
		if p != nil && changes.GroupAttrs(before, &work) {
			after := work
			after.Members = members
			if err := p.Add(store.EventGroupUpdated, store.SubjectGroup, id, &after); err != nil {
				return err
			}
		}
		for _, m := range adds {
			p.Member(store.EventGroupMemberAdded, id, m.Value)
		}
		for _, m := range removes {
			p.Member(store.EventGroupMemberRemoved, id, m.user)
		}
		if err := tx.recordEvents(ctx, tenant, p); err != nil {
			return err
		}
		out = &work
		if gp.WithMembers {
			out.Members = members
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// groupAndCount reads one group without its members, and its number of members, locking its
// row.
func (t *txn) groupAndCount(ctx context.Context, tenant, id string) (*store.Group, int, error) {
	var doc string
	var n int
	err := t.queryRow(ctx, `SELECT doc, member_count FROM groups WHERE tenant = ? AND id = ?`+t.d.forUpdate(), tenant, id).Scan(&doc, &n)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("group %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, 0, err
	}
	g, err := decodeGroup(doc)
	return g, n, err
}

// newMembers returns the users of ids that are not members of the group yet, in the order of
// ids, with Display and Type filled; ErrMemberNotFound if one is not a user of the tenant. Each
// id is one lookup by key (see memberPositions).
func (t *txn) newMembers(ctx context.Context, tenant, group string, ids []string) ([]store.Member, error) {
	var out []store.Member
	for _, id := range ids {
		var name string
		var member bool
		err := t.queryRow(ctx, `SELECT u.user_name, EXISTS (SELECT 1 FROM members m WHERE m.tenant = ? AND m.group_id = ? AND m.user_id = ?)
			FROM users u WHERE u.tenant = ? AND u.id = ?`, tenant, group, id, tenant, id).Scan(&name, &member)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("member %q: %w", id, store.ErrMemberNotFound)
		}
		if err != nil {
			return nil, err
		}
		if !member {
			out = append(out, store.Member{Value: id, Display: name, Type: "User"})
		}
	}
	return out, nil
}

// memberPosition is a member's place in a group.
type memberPosition struct {
	user string
	pos  int64
}

// memberPositions returns the users of ids that are members of the group, with their
// positions. Each id is one lookup of the primary key: an IN list would let PostgreSQL's generic
// plan of the statement scan the group's members.
func (t *txn) memberPositions(ctx context.Context, tenant, group string, ids []string) ([]memberPosition, error) {
	var out []memberPosition
	for _, id := range ids {
		var pos int64
		err := t.queryRow(ctx, `SELECT pos FROM members WHERE tenant = ? AND group_id = ? AND user_id = ?`, tenant, group, id).Scan(&pos)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, memberPosition{id, pos})
	}
	return out, nil
}

// removeMembers deletes the memberships ms of the group, with their attrs rows.
func (t *txn) removeMembers(ctx context.Context, tenant, group string, ms []memberPosition) error {
	subs := memberAttrSubs()
	for _, m := range ms {
		if _, err := t.exec(ctx, `DELETE FROM members WHERE tenant = ? AND group_id = ? AND user_id = ?`, tenant, group, m.user); err != nil {
			return err
		}
		if err := t.deleteMemberAttrs(ctx, tenant, group, m.pos, subs); err != nil {
			return err
		}
	}
	return nil
}

// deleteMemberAttrs deletes the attrs rows of the member at position pos of the group: one
// lookup of the primary key per sub-attribute, however many members the group has. Each
// statement names its attr and sub as literals, so that even PostgreSQL's generic plan of it
// (which it may keep once a statement has run a few times, and which uses no condition on a
// list of parameters as an index bound) looks the row up by the whole key.
func (t *txn) deleteMemberAttrs(ctx context.Context, tenant, group string, pos int64, subs []string) error {
	for _, sub := range subs {
		if _, err := t.exec(ctx, `DELETE FROM attrs WHERE tenant = ? AND kind = ? AND rid = ? AND attr = 'members'
			AND sub = `+sqlString(sub)+` AND idx = ?`, tenant, string(kindGroup), group, pos); err != nil {
			return err
		}
	}
	return nil
}

// sqlString returns s, a constant of the schema, as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// appendMembers adds ms, users that are not members, after the group's last member, with
// their attrs rows.
func (t *txn) appendMembers(ctx context.Context, tenant, group string, ms []store.Member) error {
	if len(ms) == 0 {
		return nil
	}
	var last sql.NullInt64
	if err := t.queryRow(ctx, `SELECT MAX(pos) FROM members WHERE tenant = ? AND group_id = ?`, tenant, group).Scan(&last); err != nil {
		return err
	}
	next := int64(0)
	if last.Valid {
		next = last.Int64 + 1
	}
	ins := attrInserter{t: t}
	for i, m := range ms {
		pos := next + int64(i)
		if _, err := t.exec(ctx, `INSERT INTO members (tenant, group_id, user_id, pos) VALUES (?, ?, ?, ?)`, tenant, group, m.Value, pos); err != nil {
			if isForeignKey(err) {
				return fmt.Errorf("a member was deleted meanwhile: %w", store.ErrMemberNotFound)
			}
			return err
		}
		for _, r := range memberAttrRows(m) {
			r.Idx = int(pos)
			if err := ins.add(ctx, tenant, kindGroup, group, &r); err != nil {
				return err
			}
		}
	}
	return ins.flush(ctx)
}

// memberAttrRows returns the attrs rows of member m of a group, at idx 0.
func memberAttrRows(m store.Member) []attrRow {
	var rows []attrRow
	for _, r := range attrRows(kindGroup, &store.Group{Members: []store.Member{m}}) {
		if r.Attr == "members" {
			rows = append(rows, r)
		}
	}
	return rows
}

// memberAttrSubs returns the sub values of a member's attrs rows: "" for the element's marker
// and each filterable sub-attribute of members.
func memberAttrSubs() []string {
	subs := []string{""}
	a, _, _ := schema.Group().Lookup("members")
	for _, s := range a.SubAttributes {
		if filterableAttr(s) {
			subs = append(subs, s.Name)
		}
	}
	return subs
}

// groupOwnAttrs returns the attributes of a group whose attrs rows are its own (all but
// members).
func groupOwnAttrs() []string {
	var out []string
	for a := range schema.Group().Attributes {
		if filterableAttr(a) && a.Path() != "members" {
			out = append(out, a.Path())
		}
	}
	return out
}

// putGroupOwnAttrs makes the attrs rows of g's attributes but members those of g, reading and
// writing none of its members' rows.
func (t *txn) putGroupOwnAttrs(ctx context.Context, tenant string, g *store.Group) error {
	// One branch an attribute, each an equality on a prefix of the primary key (see
	// deleteMemberAttrs), so the members' rows are never scanned.
	var q strings.Builder
	var args []any
	for i, a := range groupOwnAttrs() {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		q.WriteString(`SELECT attr, sub, idx, s, sf, n, b, t FROM attrs WHERE tenant = ? AND kind = ? AND rid = ? AND attr = ` + sqlString(a))
		args = append(args, tenant, string(kindGroup), g.ID)
	}
	// And the rows of host-defined extensions, whose paths start with their URN.
	q.WriteString(` UNION ALL SELECT attr, sub, idx, s, sf, n, b, t FROM attrs WHERE tenant = ? AND kind = ? AND rid = ? AND attr >= 'urn:' AND attr < 'urn;'`)
	args = append(args, tenant, string(kindGroup), g.ID)
	rows, err := t.query(ctx, q.String(), args...)
	if err != nil {
		return err
	}
	stored := map[attrKey]attrRow{}
	for rows.Next() {
		var r attrRow
		if err := rows.Scan(&r.Attr, &r.Sub, &r.Idx, &r.S, &r.SF, &r.N, &r.B, &r.T); err != nil {
			rows.Close()
			return err
		}
		stored[attrKey{r.Attr, r.Sub, r.Idx}] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	c := *g
	c.Members = nil
	changed, gone := attrDiff(stored, attrRows(kindGroup, &c))
	return t.applyAttrDiff(ctx, tenant, kindGroup, g.ID, changed, gone, true)
}
