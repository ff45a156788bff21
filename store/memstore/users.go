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

// userRec is a stored user: its row, and its groups (ordered by their creation), which are the
// reverse of the groups' member lists.
type userRec struct {
	row     row
	version int64 // Meta.Version, kept beside the row
	groups  []*groupRec
	pos     int
	picture *store.PictureCredential // nil until the user enrolls; goes with the user
	// ext holds the values of host-defined extensions, which the row does not; never changed
	// once set (an update sets a new copy).
	ext store.Extensions
	// unique is the user's store.User.Unique, each value held in tenantData.unique.
	unique []store.UniqueValue
	// nets are the failure counts of picture per source network; epoch is bumped by each
	// reset of picture's count, and a network whose epoch is older has not failed since.
	nets  map[string]*netFailures
	epoch int
	// familiar are the networks picture was passed from, the most recently passed first.
	familiar []store.FamiliarNetwork
}

func (r *userRec) id() string       { return r.row.str(idxID) }
func (r *userRec) userName() string { return r.row.str(idxUserName) }
func (r *userRec) externalID() string {
	return r.row.str(idxExternalID)
}

func (r *userRec) setPos(p int) { r.pos = p }

// Users implements store.Users.
type Users struct{ s *Store }

var _ store.Users = (*Users)(nil)

// Create implements store.Users.
func (us *Users) Create(ctx context.Context, tenant string, u store.User) (*store.User, error) {
	if u.UserName == "" {
		return nil, fmt.Errorf("user without userName: %w", store.ErrInvalid)
	}
	if u.ID == "" {
		u.ID = store.NewID("user")
	}
	stamp.Create(&u.Meta, stamp.Now())
	// out holds u until it is stored, then the stored user: one copy of u on the heap.
	out := new(store.User)
	*out = u
	p := changes.New(ctx, tenant)
	err := us.s.write(ctx, tenant, func(t *tenantData) error {
		if _, dup := t.userByID[out.ID]; dup {
			return fmt.Errorf("user id %q: %w", out.ID, store.ErrConflict)
		}
		key := userNameKey(out.UserName)
		if _, dup := t.userByName[key]; dup {
			return fmt.Errorf("userName %q: %w", out.UserName, store.ErrConflict)
		}
		if err := t.checkUnique('u', nil, out.Unique); err != nil {
			return err
		}
		rec := &userRec{row: encode(out), version: out.Meta.Version, ext: out.Extensions.Clone(), unique: cloneUnique(out.Unique)}
		rec.fill(out)
		if err := p.Add(store.EventUserCreated, store.SubjectUser, out.ID, out); err != nil {
			return err
		}
		t.users.push(rec)
		t.index(rec)
		commit(p, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Get implements store.Users.
func (us *Users) Get(ctx context.Context, tenant, id string) (*store.User, error) {
	return get(us.s, ctx, tenant, id, (*tenantData).user, (*userRec).fill)
}

// Update implements store.Users.
func (us *Users) Update(ctx context.Context, tenant, id string, fn func(*store.User) error) (*store.User, error) {
	return update(us.s, ctx, tenant, id, (*tenantData).user, (*userRec).fill, fn, (*tenantData).applyUser, changes.User)
}

// applyUser stores what an Update function left, with its meta times (stamp.User), keeping the
// indexes in step.
func (t *tenantData) applyUser(rec *userRec, work, prior *store.User) error {
	if prior == nil {
		prior = new(store.User)
		rec.view(prior)
	}
	stamp.User(prior, work, stamp.Now())
	return t.storeUser(rec, work)
}

// storeUser stores what an Update function left, keeping the indexes in step.
func (t *tenantData) storeUser(rec *userRec, work *store.User) error {
	switch {
	case work.ID != rec.id():
		return fmt.Errorf("user %q: the id cannot change: %w", rec.id(), store.ErrInvalid)
	case work.UserName == "":
		return fmt.Errorf("user %q: userName cannot be empty: %w", rec.id(), store.ErrInvalid)
	}
	if other, taken := t.userByName[userNameKey(work.UserName)]; taken && other != rec {
		return fmt.Errorf("userName %q: %w", work.UserName, store.ErrConflict)
	}
	if err := t.checkUnique('u', rec, work.Unique); err != nil {
		return err
	}
	reindex := !rec.sameKeys(work)
	if reindex {
		t.unindex(rec)
	}
	rec.row = encode(work)
	rec.version = work.Meta.Version
	rec.ext = work.Extensions.Clone()
	if reindex {
		rec.unique = cloneUnique(work.Unique)
		t.index(rec)
	}
	return nil
}

// sameKeys reports whether u has the values rec is indexed by — userName, externalId, the
// emails' values in order, the unique values — so that storing u leaves every index as it is.
func (r *userRec) sameKeys(u *store.User) bool {
	if r.userName() != u.UserName || r.externalID() != u.ExternalID ||
		r.row.count(listEmails) != len(u.Emails) || !slices.Equal(r.unique, u.Unique) {
		return false
	}
	for i, e := range u.Emails {
		if first, _ := r.row.first(listEmails, i); r.row.str(first) != e.Value {
			return false
		}
	}
	return true
}

// index adds rec to the user indexes; unindex removes it.
func (t *tenantData) index(rec *userRec) {
	if t.userByID == nil {
		t.userByID, t.userByName = map[string]*userRec{}, map[string]*userRec{}
	}
	t.userByID[rec.id()] = rec
	t.userByName[userNameKey(rec.userName())] = rec
	t.userByExtID.add(rec.externalID(), rec)
	for _, key := range rec.emailKeys() {
		t.userByEmail.add(key, rec)
	}
	t.claimUnique('u', rec, nil, rec.unique)
}

func (t *tenantData) unindex(rec *userRec) {
	delete(t.userByID, rec.id())
	delete(t.userByName, userNameKey(rec.userName()))
	t.userByExtID.remove(rec.externalID(), rec)
	t.claimUnique('u', rec, rec.unique, nil)
	for _, key := range rec.emailKeys() {
		t.userByEmail.remove(key, rec)
	}
}

// emailKeys returns the distinct folded values of the user's emails.
func (r *userRec) emailKeys() []string {
	n := r.row.count(listEmails)
	if n == 0 {
		return nil
	}
	keys := make([]string, 0, n)
	var seen map[string]struct{} // for many emails, so that a user with many costs linear time
	if n > 8 {
		seen = make(map[string]struct{}, n)
	}
	for i := range n {
		first, _ := r.row.first(listEmails, i)
		key := schema.Fold(r.row.str(first))
		if key == "" {
			continue
		}
		if seen != nil {
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = struct{}{}
		} else if slices.Contains(keys, key) {
			continue
		}
		keys = append(keys, key)
	}
	return keys
}

// Delete implements store.Users.
func (us *Users) Delete(ctx context.Context, tenant, id string) error {
	return us.delete(ctx, tenant, id, func(*userRec) error { return nil })
}

// DeleteIfVersion implements store.Users.
func (us *Users) DeleteIfVersion(ctx context.Context, tenant, id string, version int64) error {
	return us.delete(ctx, tenant, id, func(rec *userRec) error {
		return checkVersion("user", id, rec.version, version)
	})
}

// checkVersion returns ErrVersionMismatch unless the resource kind id, at version got, is at want.
func checkVersion(kind, id string, got, want int64) error {
	if got != want {
		return fmt.Errorf("%s %q is at version %d, not %d: %w", kind, id, got, want, store.ErrVersionMismatch)
	}
	return nil
}

// delete removes user id when check, called under the write lock, accepts it.
func (us *Users) delete(ctx context.Context, tenant, id string, check func(*userRec) error) error {
	p := changes.New(ctx, tenant)
	return us.s.write(ctx, tenant, func(t *tenantData) error {
		rec, err := t.user(id)
		if err != nil {
			return err
		}
		if err := check(rec); err != nil {
			return err
		}
		if p != nil {
			var gone store.User
			rec.fill(&gone)
			if err := p.Add(store.EventUserDeleted, store.SubjectUser, id, &gone); err != nil {
				return err
			}
		}
		defer commit(p, t)
		for _, g := range rec.groups {
			if m := g.byUser[rec]; m != nil {
				delete(g.byUser, rec)
				g.members.remove(m.pos)
				g.g.Meta.Version++ // the group's members changed
			}
		}
		t.unindex(rec)
		t.dropPasskeys(id)
		t.users.remove(rec.pos)
		return nil
	})
}

// List implements store.Users.
func (us *Users) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.User], error) {
	var page store.Page[store.User]
	err := us.s.read(ctx, tenant, func(t *tenantData) error {
		view := userView{fields: us.s.fields}
		show := func(r *userRec) filter.Resource {
			view.r = r
			return &view
		}
		var err error
		page, err = list(ctx, &t.users, q, t.userIndex, show, (*userRec).fill)
		return err
	})
	return page, err
}

func (t *tenantData) user(id string) (*userRec, error) {
	rec, ok := t.userByID[id]
	if !ok {
		return nil, fmt.Errorf("user %q: %w", id, store.ErrNotFound)
	}
	return rec, nil
}

// userIndex answers an equality on id, userName, externalId or emails.value from an index.
func (t *tenantData) userIndex(c *filter.Compare) ([]*userRec, bool) {
	if c.Attr.Schema != schema.UserURN {
		return nil, false
	}
	switch c.Attr.Name {
	case "id":
		return one(t.userByID[c.Value.Str]), true
	case "userName":
		return one(t.userByName[c.Key()]), true
	case "externalId":
		return t.userByExtID.get(c.Value.Str), true
	case "emails":
		if c.Sub != nil && c.Sub.Name == "value" {
			return t.userByEmail.get(c.Key()), true
		}
	}
	return nil, false
}

// fill copies the user into dst as callers see it, with its groups.
// view sets dst to the stored user, sharing the record's extension values and unique values and
// leaving its groups out: for comparing with, not for handing out.
func (r *userRec) view(dst *store.User) {
	r.row.decode(dst)
	dst.Meta.Version = r.version
	dst.Extensions = r.ext
	dst.Unique = r.unique
}

func (r *userRec) fill(dst *store.User) {
	r.row.decode(dst)
	dst.Meta.Version = r.version
	dst.Extensions = r.ext.Clone()
	dst.Unique = cloneUnique(r.unique)
	if len(r.groups) > 0 {
		dst.Groups = make([]store.GroupRef, len(r.groups))
		for i, g := range r.groups {
			dst.Groups[i] = store.GroupRef{Value: g.g.ID, Display: g.g.DisplayName, Type: "direct"}
		}
	}
}

// userView shows a stored user to filter.Match, its groups included.
type userView struct {
	r      *userRec
	fields *rowFields
}

func (v *userView) FilterValue(a, sub *schema.Attribute, i int) (filter.Value, bool) {
	if schema.HostDefined(a) {
		return v.r.ext.FilterValue(a, sub, i)
	}
	if a.Name == "schemas" && a.Schema == schema.UserURN && len(v.r.ext) > 0 && i > 0 {
		// After the row's (core, enterprise), the URNs of the host-defined extensions the
		// user has values of, as store.User's FilterValue lists them.
		if val, ok := v.fields.filterValue(v.r.row, a, sub, i); ok {
			return val, true
		}
		if _, enterprise := v.fields.filterValue(v.r.row, a, sub, 1); enterprise {
			i--
		}
		var u store.User
		u.Extensions = v.r.ext
		return u.FilterValue(a, sub, i)
	}
	if a.Name != "groups" || a.Schema != schema.UserURN {
		return v.fields.filterValue(v.r.row, a, sub, i)
	}
	if i >= len(v.r.groups) {
		return filter.Value{}, false
	}
	g := &v.r.groups[i].g
	switch {
	case sub == nil:
		return filter.ComplexValue(true), true
	case sub.Name == "value":
		return filter.StringValue(g.ID), true
	case sub.Name == "display":
		return filter.StringValue(g.DisplayName), true
	case sub.Name == "type":
		return filter.StringValue("direct"), true
	}
	return filter.Value{}, true
}

func one[T comparable](x T) []T {
	var zero T
	if x == zero {
		return nil
	}
	return []T{x}
}
