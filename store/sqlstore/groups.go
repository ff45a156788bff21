package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
	"github.com/visid/visid/store/internal/stamp"
	"github.com/visid/visid/store/schema"
)

// Groups implements store.Groups. A group is a row of groups (its JSON document without
// Members) and its members, one row of members each, in the order they were listed.
type Groups struct{ s *Store }

var _ store.Groups = (*Groups)(nil)

// Create implements store.Groups.
func (gs *Groups) Create(ctx context.Context, tenant string, g store.Group) (*store.Group, error) {
	if g.DisplayName == "" {
		return nil, fmt.Errorf("group without displayName: %w", store.ErrInvalid)
	}
	if g.ID == "" {
		g.ID = store.NewID("group")
	}
	stamp.Create(&g.Meta, stamp.Now())
	want := g.Members
	doc, err := groupDoc(&g)
	if err != nil {
		return nil, err
	}
	var out *store.Group
	err = gs.s.write(ctx, func(tx *txn) error {
		if err := tx.lockTenant(ctx, tenant); err != nil {
			return err
		}
		dup, err := tx.exists(ctx, `SELECT 1 FROM groups WHERE tenant = ? AND id = ?`, tenant, g.ID)
		if err != nil {
			return err
		}
		if dup {
			return fmt.Errorf("group id %q: %w", g.ID, store.ErrConflict)
		}
		members, err := tx.resolveMembers(ctx, tenant, want)
		if err != nil {
			return err
		}
		sortArgs := sortColumnArgs(kindGroup, &g)
		n, err := tx.affected(ctx, `INSERT INTO groups (tenant, id, display_name, display_name_fold, external_id, doc, `+sortColumnNames(kindGroup)+`)
			VALUES (?, ?, ?, ?, ?, ?, `+placeholders(len(sortArgs))+`) ON CONFLICT DO NOTHING`,
			append([]any{tenant, g.ID, g.DisplayName, schema.Fold(g.DisplayName), g.ExternalID, doc}, sortArgs...)...)
		switch {
		case isForeignKey(err):
			return fmt.Errorf("tenant %q: %w", tenant, store.ErrNotFound)
		case err != nil:
			return err
		case n == 0:
			return fmt.Errorf("group id %q: %w", g.ID, store.ErrConflict)
		}
		if err := tx.putUnique(ctx, tenant, kindGroup, g.ID, nil, g.Unique); err != nil {
			return err
		}
		if out, err = tx.storeGroup(ctx, tenant, doc, members, nil); err != nil {
			return err
		}
		if err := tx.syncUserGroups(ctx, tenant, memberIDs(members)); err != nil {
			return err
		}
		p := changes.New(ctx, tenant)
		if err := p.Add(store.EventGroupCreated, store.SubjectGroup, g.ID, out); err != nil {
			return err
		}
		return tx.recordEvents(ctx, tenant, p)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Get implements store.Groups.
func (gs *Groups) Get(ctx context.Context, tenant, id string) (*store.Group, error) {
	var out *store.Group
	err := gs.s.read(ctx, func(tx *txn) error {
		g, err := tx.group(ctx, tenant, id, false)
		if err != nil {
			return err
		}
		ms, err := tx.members(ctx, tenant, []string{id})
		if err != nil {
			return err
		}
		g.Members = ms[id]
		out = g
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Update implements store.Groups.
func (gs *Groups) Update(ctx context.Context, tenant, id string, fn func(*store.Group) error) (*store.Group, error) {
	var out *store.Group
	err := gs.s.write(ctx, func(tx *txn) error {
		if err := tx.lockTenant(ctx, tenant); err != nil {
			return err
		}
		work, err := tx.group(ctx, tenant, id, true)
		if err != nil {
			return err
		}
		oldName, oldUnique := work.DisplayName, work.Unique
		ms, err := tx.members(ctx, tenant, []string{id})
		if err != nil {
			return err
		}
		old := ms[id]
		work.Members = append([]store.Member(nil), old...)
		before := stamp.CloneGroup(work)
		p := changes.New(ctx, tenant)
		if err := fn(work); err != nil {
			return err
		}
		stamp.Group(before, work, stamp.Now())
		switch {
		case work.ID != id:
			return fmt.Errorf("group %q: the id cannot change: %w", id, store.ErrInvalid)
		case work.DisplayName == "":
			return fmt.Errorf("group %q: displayName cannot be empty: %w", id, store.ErrInvalid)
		}
		members, err := tx.resolveMembers(ctx, tenant, work.Members)
		if err != nil {
			return err
		}
		if err := tx.putUnique(ctx, tenant, kindGroup, id, oldUnique, work.Unique); err != nil {
			return err
		}
		doc, err := groupDoc(work)
		if err != nil {
			return err
		}
		args := append([]any{work.DisplayName, schema.Fold(work.DisplayName), work.ExternalID, doc}, sortColumnArgs(kindGroup, work)...)
		if _, err := tx.exec(ctx, `UPDATE groups SET display_name = ?, display_name_fold = ?, external_id = ?, doc = ?, `+sortColumnSet(kindGroup)+`
			WHERE tenant = ? AND id = ?`,
			append(args, tenant, id)...); err != nil {
			return err
		}
		if out, err = tx.storeGroup(ctx, tenant, doc, members, old); err != nil {
			return err
		}
		// The users whose groups changed: those added or removed, and every member after a
		// rename (their groups.display).
		changed := map[string]bool{}
		for _, m := range old {
			changed[m.Value] = true
		}
		for _, m := range members {
			if changed[m.Value] && oldName == work.DisplayName {
				delete(changed, m.Value)
			} else {
				changed[m.Value] = true
			}
		}
		ids := make([]string, 0, len(changed))
		for id := range changed {
			ids = append(ids, id)
		}
		if err := tx.syncUserGroups(ctx, tenant, ids); err != nil {
			return err
		}
		if err := changes.Group(p, before, out); err != nil {
			return err
		}
		return tx.recordEvents(ctx, tenant, p)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete implements store.Groups.
func (gs *Groups) Delete(ctx context.Context, tenant, id string) error {
	return gs.delete(ctx, tenant, id, func(*store.Group) error { return nil })
}

// DeleteIfVersion implements store.Groups. The version is compared on the row the write
// transaction locked.
func (gs *Groups) DeleteIfVersion(ctx context.Context, tenant, id string, version int64) error {
	return gs.delete(ctx, tenant, id, func(g *store.Group) error {
		return checkVersion("group", id, g.Meta.Version, version)
	})
}

// delete removes group id when check accepts the group as the write transaction read it.
func (gs *Groups) delete(ctx context.Context, tenant, id string, check func(*store.Group) error) error {
	return gs.s.write(ctx, func(tx *txn) error {
		if err := tx.lockTenant(ctx, tenant); err != nil {
			return err
		}
		gone, err := tx.group(ctx, tenant, id, true)
		if err != nil {
			return err
		}
		if err := check(gone); err != nil {
			return err
		}
		p := changes.New(ctx, tenant)
		if p != nil {
			ms, err := tx.members(ctx, tenant, []string{id})
			if err != nil {
				return err
			}
			gone.Members = ms[id]
			if err := p.Add(store.EventGroupDeleted, store.SubjectGroup, id, gone); err != nil {
				return err
			}
		}
		users, err := tx.strings(ctx, `SELECT user_id FROM members WHERE tenant = ? AND group_id = ?`, tenant, id)
		if err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM members WHERE tenant = ? AND group_id = ?`,
			`DELETE FROM attrs WHERE tenant = ? AND kind = 'g' AND rid = ?`,
			`DELETE FROM unique_values WHERE tenant = ? AND kind = 'g' AND rid = ?`,
			`DELETE FROM groups WHERE tenant = ? AND id = ?`,
		} {
			if _, err := tx.exec(ctx, q, tenant, id); err != nil {
				return err
			}
		}
		if err := tx.syncUserGroups(ctx, tenant, users); err != nil {
			return err
		}
		return tx.recordEvents(ctx, tenant, p)
	})
}

// List implements store.Groups.
func (gs *Groups) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.Group], error) {
	page := store.Page[store.Group]{Resources: []store.Group{}}
	err := gs.s.read(ctx, func(tx *txn) error {
		var ids, docs []string
		l, err := tx.list(ctx, "groups", kindGroup, tenant, q, func(id, doc string) {
			ids = append(ids, id)
			docs = append(docs, doc)
		})
		if err != nil {
			return err
		}
		l.into(&page.TotalResults, &page.Next, &page.Prev)
		var ms map[string][]store.Member
		if !q.WithoutMembers {
			if ms, err = tx.members(ctx, tenant, ids); err != nil {
				return err
			}
		}
		for i, doc := range docs {
			g, err := decodeGroup(doc)
			if err != nil {
				return err
			}
			g.Members = ms[ids[i]]
			page.Resources = append(page.Resources, *g)
		}
		return nil
	})
	if err != nil {
		return store.Page[store.Group]{}, err
	}
	return page, nil
}

// resolveMembers returns the members want names, each once in the order of its first mention,
// with Display and Type filled; ErrMemberNotFound if one is not a user of the tenant.
func (t *txn) resolveMembers(ctx context.Context, tenant string, want []store.Member) ([]store.Member, error) {
	var ids []string
	seen := make(map[string]bool, len(want))
	for _, m := range want {
		if !seen[m.Value] {
			seen[m.Value] = true
			ids = append(ids, m.Value)
		}
	}
	names := make(map[string]string, len(ids))
	err := inChunks(ids, func(chunk []string) error {
		rows, err := t.query(ctx, `SELECT id, user_name FROM users WHERE tenant = ? AND id IN (`+placeholders(len(chunk))+`)`,
			append([]any{tenant}, strArgs(chunk)...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, name string
			if err := rows.Scan(&id, &name); err != nil {
				return err
			}
			names[id] = name
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	out := make([]store.Member, len(ids))
	for i, id := range ids {
		name, ok := names[id]
		if !ok {
			return nil, fmt.Errorf("member %q: %w", id, store.ErrMemberNotFound)
		}
		out[i] = store.Member{Value: id, Display: name, Type: "User"}
	}
	return out, nil
}

// storeGroup writes the members of the group doc describes, replacing old (its members so
// far), and its attrs rows, and returns the group as stored. Only
// what changed is written: the memberships added or removed, the positions that moved.
func (t *txn) storeGroup(ctx context.Context, tenant string, doc string, members, old []store.Member) (*store.Group, error) {
	g, err := decodeGroup(doc)
	if err != nil {
		return nil, err
	}
	pos := map[string]int{}
	if len(old) > 0 {
		rows, err := t.query(ctx, `SELECT user_id, pos FROM members WHERE tenant = ? AND group_id = ?`, tenant, g.ID)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			var p int
			if err := rows.Scan(&id, &p); err != nil {
				rows.Close()
				return nil, err
			}
			pos[id] = p
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	var added []store.Member
	var addedAt []int
	for i, m := range members {
		p, ok := pos[m.Value]
		delete(pos, m.Value)
		switch {
		case !ok:
			added, addedAt = append(added, m), append(addedAt, i)
		case p != i:
			if _, err := t.exec(ctx, `UPDATE members SET pos = ? WHERE tenant = ? AND group_id = ? AND user_id = ?`, i, tenant, g.ID, m.Value); err != nil {
				return nil, err
			}
		}
	}
	removed := make([]string, 0, len(pos))
	for id := range pos {
		removed = append(removed, id)
	}
	err = inChunks(removed, func(chunk []string) error {
		_, err := t.exec(ctx, `DELETE FROM members WHERE tenant = ? AND group_id = ? AND user_id IN (`+placeholders(len(chunk))+`)`,
			append([]any{tenant, g.ID}, strArgs(chunk)...)...)
		return err
	})
	if err != nil {
		return nil, err
	}
	const perInsert = 200
	for start := 0; start < len(added); start += perInsert {
		end := min(start+perInsert, len(added))
		var b strings.Builder
		b.WriteString(`INSERT INTO members (tenant, group_id, user_id, pos) VALUES `)
		args := make([]any, 0, 4*(end-start))
		for i := start; i < end; i++ {
			if i > start {
				b.WriteByte(',')
			}
			b.WriteString(`(?,?,?,?)`)
			args = append(args, tenant, g.ID, added[i].Value, addedAt[i])
		}
		if _, err := t.exec(ctx, b.String(), args...); err != nil {
			if isForeignKey(err) {
				return nil, fmt.Errorf("a member was deleted meanwhile: %w", store.ErrMemberNotFound)
			}
			return nil, err
		}
	}
	if _, err := t.exec(ctx, `UPDATE groups SET member_count = ? WHERE tenant = ? AND id = ?`, len(members), tenant, g.ID); err != nil {
		return nil, err
	}
	g.Members = members
	if err := t.putAttrs(ctx, tenant, kindGroup, g.ID, attrRows(kindGroup, g)); err != nil {
		return nil, err
	}
	out := *g
	out.Members = append([]store.Member(nil), members...)
	return &out, nil
}

// bumpGroupVersions moves on the version (store.Meta.Version) of each group of ms, whose
// members changed without a Groups.Update (a member user was deleted). The meta times, and so
// the sort columns, stay.
func (t *txn) bumpGroupVersions(ctx context.Context, tenant string, ms []membership) error {
	for _, m := range ms {
		g, err := t.group(ctx, tenant, m.group, true)
		if err != nil {
			return err
		}
		g.Meta.Version++
		doc, err := groupDoc(g)
		if err != nil {
			return err
		}
		if _, err := t.exec(ctx, `UPDATE groups SET doc = ? WHERE tenant = ? AND id = ?`, doc, tenant, m.group); err != nil {
			return err
		}
	}
	return nil
}

// group reads one group without its members, locking its row when lock is set.
func (t *txn) group(ctx context.Context, tenant, id string, lock bool) (*store.Group, error) {
	q := `SELECT doc FROM groups WHERE tenant = ? AND id = ?`
	if lock {
		q += t.d.forUpdate()
	}
	var doc string
	err := t.queryRow(ctx, q, tenant, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("group %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return decodeGroup(doc)
}

// members returns the members of each of the groups ids, in their order, with Display (the
// userName) and Type filled.
func (t *txn) members(ctx context.Context, tenant string, ids []string) (map[string][]store.Member, error) {
	out := map[string][]store.Member{}
	err := inChunks(ids, func(chunk []string) error {
		rows, err := t.query(ctx, `SELECT m.group_id, m.user_id, u.user_name FROM members m
			JOIN users u ON u.tenant = m.tenant AND u.id = m.user_id
			WHERE m.tenant = ? AND m.group_id IN (`+placeholders(len(chunk))+`) ORDER BY m.group_id, m.pos`,
			append([]any{tenant}, strArgs(chunk)...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var group string
			m := store.Member{Type: "User"}
			if err := rows.Scan(&group, &m.Value, &m.Display); err != nil {
				return err
			}
			out[group] = append(out[group], m)
		}
		return rows.Err()
	})
	return out, err
}

func memberIDs(ms []store.Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Value
	}
	return out
}

// groupDoc returns the JSON document stored for g: g without Members, which members holds.
func groupDoc(g *store.Group) (string, error) {
	c := *g
	c.Members = nil
	b, err := json.Marshal(&c)
	return string(b), err
}

func decodeGroup(doc string) (*store.Group, error) {
	g := new(store.Group)
	if err := json.Unmarshal([]byte(doc), g); err != nil {
		return nil, fmt.Errorf("sqlstore: a stored group does not decode: %w", err)
	}
	return g, nil
}
