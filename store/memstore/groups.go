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
// order they were added.
type groupRec struct {
	g       store.Group
	members []*userRec
	pos     int
}

func (r *groupRec) setPos(p int) { r.pos = p }

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
		rec := &groupRec{g: g, members: members}
		rec.g.Members = nil
		rec.g.Extensions = g.Extensions.Clone()
		out = new(store.Group)
		rec.fill(out)
		rec.members = nil // setMembers below links both sides
		if err := p.Add(store.EventGroupCreated, store.SubjectGroup, g.ID, out); err != nil {
			return err
		}
		t.groups.push(rec)
		t.groupByID[g.ID] = rec
		addTo(t.groupByName, schema.Fold(g.DisplayName), rec)
		addTo(t.groupByExtID, g.ExternalID, rec)
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

// Update implements store.Groups.
func (gs *Groups) Update(ctx context.Context, tenant, id string, fn func(*store.Group) error) (*store.Group, error) {
	return update(gs.s, ctx, tenant, id, (*tenantData).group, (*groupRec).fill, fn, (*tenantData).applyGroup, changes.Group)
}

// applyGroup stores what an Update function left, with its meta times (stamp.Group), keeping
// the indexes in step.
func (t *tenantData) applyGroup(rec *groupRec, work *store.Group) error {
	var before store.Group
	rec.fill(&before)
	stamp.Group(&before, work, stamp.Now())
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
	removeFrom(t.groupByName, schema.Fold(rec.g.DisplayName), rec)
	removeFrom(t.groupByExtID, rec.g.ExternalID, rec)
	rec.g = *work
	rec.g.Members = nil
	rec.g.Extensions = work.Extensions.Clone()
	addTo(t.groupByName, schema.Fold(rec.g.DisplayName), rec)
	addTo(t.groupByExtID, rec.g.ExternalID, rec)
	t.setMembers(rec, members)
	return nil
}

// Delete implements store.Groups.
func (gs *Groups) Delete(ctx context.Context, tenant, id string) error {
	p := changes.New(ctx, tenant)
	return gs.s.write(ctx, tenant, func(t *tenantData) error {
		rec, err := t.group(id)
		if err != nil {
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
		removeFrom(t.groupByName, schema.Fold(rec.g.DisplayName), rec)
		removeFrom(t.groupByExtID, rec.g.ExternalID, rec)
		t.groups.remove(rec.pos)
		return nil
	})
}

// List implements store.Groups.
func (gs *Groups) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.Group], error) {
	var page store.Page[store.Group]
	err := gs.s.read(ctx, tenant, func(t *tenantData) error {
		var view groupView
		match := func(r *groupRec) bool {
			view.r = r
			return filter.Match(q.Filter, &view)
		}
		var err error
		page, err = list(ctx, &t.groups, q, t.groupIndex, match, (*groupRec).fill)
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

// setMembers replaces g's members and keeps every user's groups (the reverse index) in step.
func (t *tenantData) setMembers(g *groupRec, members []*userRec) {
	keep := make(map[*userRec]bool, len(members))
	for _, u := range members {
		keep[u] = true
	}
	for _, u := range g.members {
		if !keep[u] {
			if i := slices.Index(u.groups, g); i >= 0 {
				u.groups = slices.Delete(u.groups, i, i+1)
			}
		}
		delete(keep, u) // what is left in keep is new
	}
	for _, u := range members {
		if keep[u] {
			i, _ := slices.BinarySearchFunc(u.groups, g.pos, func(x *groupRec, pos int) int { return x.pos - pos })
			u.groups = slices.Insert(u.groups, i, g)
		}
	}
	g.members = members
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
		return t.groupByName[c.Key()], true
	case "externalId":
		return t.groupByExtID[c.Value.Str], true
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
	*dst = r.g
	dst.Extensions = r.g.Extensions.Clone()
	if len(r.members) > 0 {
		dst.Members = make([]store.Member, len(r.members))
		for i, u := range r.members {
			dst.Members[i] = store.Member{Value: u.id(), Display: u.userName(), Type: "User"}
		}
	}
}

// groupView shows a stored group to filter.Match, its members included.
type groupView struct{ r *groupRec }

func (v *groupView) FilterValue(a, sub *schema.Attribute, i int) (filter.Value, bool) {
	if a.Name != "members" || a.Schema != schema.GroupURN {
		return v.r.g.FilterValue(a, sub, i)
	}
	if i >= len(v.r.members) {
		return filter.Value{}, false
	}
	u := v.r.members[i]
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
