package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/internal/changes"
	"github.com/visid/visid/store/internal/stamp"
	"github.com/visid/visid/store/schema"
)

// groupRec is a stored group. g.Members is always nil: members holds the member users, in the
// order they were added, and byUser finds a member's place in it, so a member is added or
// removed in O(log n) whatever the group's size.
type groupRec struct {
	g       store.Group
	members seq[*memberRec]
	byUser  map[*userRec]*memberRec
	pos     int
}

func (r *groupRec) setPos(p int) { r.pos = p }

// memberRec is one member of a group: the user, and its place in the group's members.
type memberRec struct {
	u   *userRec
	pos int
}

func (m *memberRec) setPos(p int)  { m.pos = p }
func (m *memberRec) position() int { return m.pos }

// memberAt returns the i-th member (from 0), or nil when there are fewer.
func (r *groupRec) memberAt(i int) *userRec {
	if i >= r.members.live {
		return nil
	}
	if r.members.live == len(r.members.slots) {
		return r.members.slots[i].u
	}
	return r.members.slots[r.members.nth(i)].u
}

// eachMember calls fn with the members in order.
func (r *groupRec) eachMember(fn func(*userRec)) {
	for _, m := range r.members.slots {
		if m != nil {
			fn(m.u)
		}
	}
}

// Groups implements store.Groups.
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
	var out *store.Group
	p := changes.New(ctx, tenant)
	err := gs.s.write(ctx, tenant, func(t *tenantData) error {
		if _, dup := t.groupByID[g.ID]; dup {
			return fmt.Errorf("group id %q: %w", g.ID, store.ErrConflict)
		}
		members, err := t.resolveMembers(g.Members)
		if err != nil {
			return err
		}
		if err := t.checkUnique('g', nil, g.Unique); err != nil {
			return err
		}
		rec := &groupRec{g: g}
		rec.g.Members = nil
		rec.g.Extensions = g.Extensions.Clone()
		rec.g.Unique = cloneUnique(g.Unique)
		out = new(store.Group)
		rec.fill(out)
		out.Members = toMembers(members)
		if err := p.Add(store.EventGroupCreated, store.SubjectGroup, g.ID, out); err != nil {
			return err
		}
		t.groups.push(rec)
		if t.groupByID == nil {
			t.groupByID = map[string]*groupRec{}
		}
		t.groupByID[g.ID] = rec
		t.claimUnique('g', rec, nil, rec.g.Unique)
		t.groupByName.add(schema.Fold(g.DisplayName), rec)
		t.groupByExtID.add(g.ExternalID, rec)
		t.setMembers(rec, members)
		commit(p, t)
		return nil
	})
	return out, err
}

// Get implements store.Groups.
func (gs *Groups) Get(ctx context.Context, tenant, id string) (*store.Group, error) {
	return get(gs.s, ctx, tenant, id, (*tenantData).group, (*groupRec).fill)
}

// GetWithoutMembers implements store.Groups.
func (gs *Groups) GetWithoutMembers(ctx context.Context, tenant, id string) (*store.Group, error) {
	return get(gs.s, ctx, tenant, id, (*tenantData).group, (*groupRec).fillAttrs)
}

// Update implements store.Groups.
func (gs *Groups) Update(ctx context.Context, tenant, id string, fn func(*store.Group) error) (*store.Group, error) {
	return update(gs.s, ctx, tenant, id, (*tenantData).group, (*groupRec).fill, fn, (*tenantData).applyGroup, changes.Group)
}

// applyGroup stores what an Update function left, with its meta times (stamp.Group), keeping
// the indexes in step.
func (t *tenantData) applyGroup(rec *groupRec, work, prior *store.Group) error {
	if prior == nil {
		prior = new(store.Group)
		rec.fill(prior)
	}
	stamp.Group(prior, work, stamp.Now())
	switch {
	case work.ID != rec.g.ID:
		return fmt.Errorf("group %q: the id cannot change: %w", rec.g.ID, store.ErrInvalid)
	case work.DisplayName == "":
		return fmt.Errorf("group %q: displayName cannot be empty: %w", rec.g.ID, store.ErrInvalid)
	}
	members, err := t.resolveMembers(work.Members)
	if err != nil {
		return err
	}
	if err := t.checkUnique('g', rec, work.Unique); err != nil {
		return err
	}
	t.groupByName.remove(schema.Fold(rec.g.DisplayName), rec)
	t.groupByExtID.remove(rec.g.ExternalID, rec)
	t.claimUnique('g', rec, rec.g.Unique, work.Unique)
	rec.g = *work
	rec.g.Members = nil
	rec.g.Extensions = work.Extensions.Clone()
	rec.g.Unique = cloneUnique(work.Unique)
	t.groupByName.add(schema.Fold(rec.g.DisplayName), rec)
	t.groupByExtID.add(rec.g.ExternalID, rec)
	t.setMembers(rec, members)
	return nil
}

// Patch implements store.Groups.
func (gs *Groups) Patch(ctx context.Context, tenant, id string, gp store.GroupPatch) (*store.Group, error) {
	add, remove, err := changes.Delta(gp)
	if err != nil {
		return nil, err
	}
	var out *store.Group
	p := changes.New(ctx, tenant)
	err = gs.s.write(ctx, tenant, func(t *tenantData) error {
		rec, err := t.group(id)
		if err != nil {
			return err
		}
		var before store.Group
		rec.fillAttrs(&before)
		work := before
		if gp.Attrs != nil {
			if err := gp.Attrs(&work); err != nil {
				return err
			}
			work.Members = nil
		}
		switch {
		case work.ID != rec.g.ID:
			return fmt.Errorf("group %q: the id cannot change: %w", rec.g.ID, store.ErrInvalid)
		case work.DisplayName == "":
			return fmt.Errorf("group %q: displayName cannot be empty: %w", rec.g.ID, store.ErrInvalid)
		}
		// Everything is checked before anything changes, so an error stores nothing.
		if err := t.checkUnique('g', rec, work.Unique); err != nil {
			return err
		}
		var adds, removes []*userRec
		for _, uid := range add {
			u, ok := t.userByID[uid]
			if !ok {
				return fmt.Errorf("member %q: %w", uid, store.ErrMemberNotFound)
			}
			if rec.byUser[u] == nil {
				adds = append(adds, u)
			}
		}
		for _, uid := range remove {
			if u, ok := t.userByID[uid]; ok && rec.byUser[u] != nil {
				removes = append(removes, u)
			}
		}
		had := rec.members.live
		if n := had + len(adds) - len(removes); gp.MaxMembers > 0 && n > gp.MaxMembers && n > had {
			return fmt.Errorf("group %q would have %d members, above %d: %w", id, n, gp.MaxMembers, store.ErrTooManyMembers)
		}
		now := gp.Modified
		if now.IsZero() {
			now = stamp.Now()
		}
		stamp.GroupPatch(&before, &work, len(adds)+len(removes) > 0, now)
		attrsChanged := changes.GroupAttrs(&before, &work)
		if attrsChanged && p != nil {
			// group.updated carries the group with its members as they will be.
			after := work
			gone := make(map[*userRec]bool, len(removes))
			for _, u := range removes {
				gone[u] = true
			}
			rec.eachMember(func(u *userRec) {
				if !gone[u] {
					after.Members = append(after.Members, store.Member{Value: u.id(), Display: u.userName(), Type: "User"})
				}
			})
			after.Members = append(after.Members, toMembers(adds)...)
			if err := p.Add(store.EventGroupUpdated, store.SubjectGroup, id, &after); err != nil {
				return err
			}
		}
		if attrsChanged {
			t.groupByName.remove(schema.Fold(rec.g.DisplayName), rec)
			t.groupByExtID.remove(rec.g.ExternalID, rec)
			t.groupByName.add(schema.Fold(work.DisplayName), rec)
			t.groupByExtID.add(work.ExternalID, rec)
		}
		t.claimUnique('g', rec, rec.g.Unique, work.Unique)
		rec.g = work
		rec.g.Unique = cloneUnique(work.Unique)
		for _, u := range adds {
			t.addMember(rec, u)
		}
		for _, u := range removes {
			t.removeMember(rec, u)
		}
		for _, u := range adds {
			p.Member(store.EventGroupMemberAdded, id, u.id())
		}
		for _, u := range removes {
			p.Member(store.EventGroupMemberRemoved, id, u.id())
		}
		commit(p, t)
		out = new(store.Group)
		if gp.WithMembers {
			rec.fill(out)
		} else {
			rec.fillAttrs(out)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete implements store.Groups.
func (gs *Groups) Delete(ctx context.Context, tenant, id string) error {
	return gs.delete(ctx, tenant, id, func(*groupRec) error { return nil })
}

// DeleteIfVersion implements store.Groups.
func (gs *Groups) DeleteIfVersion(ctx context.Context, tenant, id string, version int64) error {
	return gs.delete(ctx, tenant, id, func(rec *groupRec) error {
		return checkVersion("group", id, rec.g.Meta.Version, version)
	})
}

// delete removes group id when check, called under the write lock, accepts it.
func (gs *Groups) delete(ctx context.Context, tenant, id string, check func(*groupRec) error) error {
	p := changes.New(ctx, tenant)
	return gs.s.write(ctx, tenant, func(t *tenantData) error {
		rec, err := t.group(id)
		if err != nil {
			return err
		}
		if err := check(rec); err != nil {
			return err
		}
		if p != nil {
			var gone store.Group
			rec.fill(&gone)
			if err := p.Add(store.EventGroupDeleted, store.SubjectGroup, id, &gone); err != nil {
				return err
			}
		}
		defer commit(p, t)
		t.setMembers(rec, nil)
		delete(t.groupByID, id)
		t.groupByName.remove(schema.Fold(rec.g.DisplayName), rec)
		t.groupByExtID.remove(rec.g.ExternalID, rec)
		t.claimUnique('g', rec, rec.g.Unique, nil)
		t.groups.remove(rec.pos)
		return nil
	})
}

// List implements store.Groups.
func (gs *Groups) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.Group], error) {
	var page store.Page[store.Group]
	err := gs.s.read(ctx, tenant, func(t *tenantData) error {
		var view groupView
		show := func(r *groupRec) filter.Resource {
			view.r = r
			return &view
		}
		var err error
		fill := (*groupRec).fill
		if q.WithoutMembers {
			fill = (*groupRec).fillAttrs
		}
		page, err = list(ctx, &t.groups, q, t.groupIndex, show, fill)
		return err
	})
	return page, err
}

func (t *tenantData) group(id string) (*groupRec, error) {
	rec, ok := t.groupByID[id]
	if !ok {
		return nil, fmt.Errorf("group %q: %w", id, store.ErrNotFound)
	}
	return rec, nil
}

// resolveMembers finds the member users, each once, or fails with ErrMemberNotFound.
func (t *tenantData) resolveMembers(ms []store.Member) ([]*userRec, error) {
	out := make([]*userRec, 0, len(ms))
	seen := make(map[*userRec]bool, len(ms))
	for _, m := range ms {
		rec, ok := t.userByID[m.Value]
		if !ok {
			return nil, fmt.Errorf("member %q: %w", m.Value, store.ErrMemberNotFound)
		}
		if !seen[rec] {
			seen[rec] = true
			out = append(out, rec)
		}
	}
	return out, nil
}

// toMembers returns the members users as Get shows them.
func toMembers(users []*userRec) []store.Member {
	if len(users) == 0 {
		return nil
	}
	out := make([]store.Member, len(users))
	for i, u := range users {
		out[i] = store.Member{Value: u.id(), Display: u.userName(), Type: "User"}
	}
	return out
}

// setMembers replaces g's members and keeps every user's groups (the reverse index) in step.
// Members that stay keep their places only if members lists them in the same order, so it
// rebuilds the list: O(n) in the sizes of both lists.
func (t *tenantData) setMembers(g *groupRec, members []*userRec) {
	keep := make(map[*userRec]bool, len(members))
	for _, u := range members {
		keep[u] = true
	}
	g.eachMember(func(u *userRec) {
		if !keep[u] {
			unlinkGroup(u, g)
		}
		delete(keep, u) // what is left in keep is new
	})
	for _, u := range members {
		if keep[u] {
			linkGroup(u, g)
		}
	}
	g.members = seq[*memberRec]{}
	g.byUser = make(map[*userRec]*memberRec, len(members))
	for _, u := range members {
		m := &memberRec{u: u}
		g.members.push(m)
		g.byUser[u] = m
	}
}

// addMember appends u to g's members; u is not one. O(log n) in g's size (amortized), plus
// u's groups.
func (t *tenantData) addMember(g *groupRec, u *userRec) {
	m := &memberRec{u: u}
	g.members.push(m)
	if g.byUser == nil {
		g.byUser = map[*userRec]*memberRec{}
	}
	g.byUser[u] = m
	linkGroup(u, g)
}

// removeMember removes u, a member, from g's members; O(log n) in g's size (amortized), plus
// u's groups.
func (t *tenantData) removeMember(g *groupRec, u *userRec) {
	m := g.byUser[u]
	delete(g.byUser, u)
	g.members.remove(m.pos)
	unlinkGroup(u, g)
}

// linkGroup adds g to u's groups, which are kept in the groups' creation order.
func linkGroup(u *userRec, g *groupRec) {
	i, _ := slices.BinarySearchFunc(u.groups, g.pos, func(x *groupRec, pos int) int { return x.pos - pos })
	u.groups = slices.Insert(u.groups, i, g)
}

// unlinkGroup removes g from u's groups.
func unlinkGroup(u *userRec, g *groupRec) {
	if i := slices.Index(u.groups, g); i >= 0 {
		u.groups = slices.Delete(u.groups, i, i+1)
	}
}

// groupIndex answers an equality on id, displayName, externalId or members.value from an
// index.
func (t *tenantData) groupIndex(c *filter.Compare) ([]*groupRec, bool) {
	if c.Attr.Schema != schema.GroupURN {
		return nil, false
	}
	switch c.Attr.Name {
	case "id":
		return one(t.groupByID[c.Value.Str]), true
	case "displayName":
		return t.groupByName.get(c.Key()), true
	case "externalId":
		return t.groupByExtID.get(c.Value.Str), true
	case "members":
		if c.Sub == nil || c.Sub.Name != "value" {
			return nil, false
		}
		if u, ok := t.userByID[c.Value.Str]; ok {
			return u.groups, true
		}
		return nil, true
	}
	return nil, false
}

// fill copies the group into dst as callers see it, members' display and type filled.
func (r *groupRec) fill(dst *store.Group) {
	r.fillAttrs(dst)
	if r.members.live > 0 {
		dst.Members = make([]store.Member, 0, r.members.live)
		r.eachMember(func(u *userRec) {
			dst.Members = append(dst.Members, store.Member{Value: u.id(), Display: u.userName(), Type: "User"})
		})
	}
}

// fillAttrs copies the group into dst without its members.
func (r *groupRec) fillAttrs(dst *store.Group) {
	*dst = r.g
	dst.Extensions = r.g.Extensions.Clone()
	dst.Unique = cloneUnique(r.g.Unique)
}

// groupView shows a stored group to filter.Match, its members included.
type groupView struct{ r *groupRec }

func (v *groupView) FilterValue(a, sub *schema.Attribute, i int) (filter.Value, bool) {
	if a.Name != "members" || a.Schema != schema.GroupURN {
		return v.r.g.FilterValue(a, sub, i)
	}
	u := v.r.memberAt(i)
	if u == nil {
		return filter.Value{}, false
	}
	switch {
	case sub == nil:
		return filter.ComplexValue(true), true
	case sub.Name == "value":
		return filter.StringValue(u.id()), true
	case sub.Name == "display":
		return filter.StringValue(u.userName()), true
	case sub.Name == "type":
		return filter.StringValue("User"), true
	}
	return filter.Value{}, true
}
