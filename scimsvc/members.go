package scimsvc

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// A group's members are the one attribute whose size has no small bound: a directory group may
// have a million. So the handler never reads them when it need not:
//
//   - a PATCH that adds or removes members by value (Entra ID's and Okta's shapes: add or remove
//     with path "members" and a value list, remove with path members[value eq "id"]), alone or
//     with operations on other attributes, is made with store.Groups.Patch, which changes only
//     the members named;
//   - a GET, a list, or a write's response that the request's projection (attributes,
//     excludedAttributes) leaves without members reads none;
//   - Config.GroupNoContent answers PUT and PATCH of a group with 204 and no body.
//
// Any other PATCH of members (a replace, a remove of all, a filter on display) reads and
// rewrites the list whole through store.Groups.Update.

// membersAttr is the members attribute of the Group schema.
func membersAttr() *schema.Attribute {
	a, _, _ := schema.Group().Lookup("members")
	return a
}

// wantsMembers reports whether a group response under the projection of q shows members.
func wantsMembers(q url.Values) bool {
	p := parseProjection(q, schema.Group())
	return p.attr(membersAttr())
}

// memberPatch is a PATCH of a group split into what Groups.Patch makes of it: the operations on
// attributes other than members, applied in order, and the members' net change, user by user
// (the last operation naming a user decides).
type memberPatch struct {
	attrOps []patchOp
	order   []string        // the users named, in order of first mention
	in      map[string]bool // a user's final state: a member (true) or not
}

// splitMemberPatch returns ops as a memberPatch, or false when an operation needs the member
// list.
func splitMemberPatch(rt *schema.ResourceType, ops []patchOp) (*memberPatch, bool) {
	members := membersAttr()
	mp := &memberPatch{in: map[string]bool{}}
	for _, op := range ops {
		if op.path == nil {
			if op.op == "remove" {
				return nil, false // an error Update reports
			}
			vals, err := pathlessValues(rt, op)
			if err != nil {
				return nil, false
			}
			if _, ok := vals["members"]; ok {
				return nil, false
			}
			mp.attrOps = append(mp.attrOps, op)
			continue
		}
		if op.path.attr != members {
			mp.attrOps = append(mp.attrOps, op)
			continue
		}
		if op.path.sub != nil {
			return nil, false
		}
		var ids []string
		switch {
		case op.path.filter != nil && op.op == "remove":
			var ok bool
			if ids, ok = valueEqualities(op.path.filter); !ok {
				return nil, false
			}
		case op.path.filter == nil && (op.op == "add" || op.op == "remove" && op.value != nil):
			v, err := coerce(members, op.value)
			if err != nil {
				return nil, false // Update reports it
			}
			for _, el := range elements(v) {
				if id := str(el, "value"); id != "" {
					ids = append(ids, id)
				}
			}
		default:
			return nil, false
		}
		for _, id := range ids {
			if _, seen := mp.in[id]; !seen {
				mp.order = append(mp.order, id)
			}
			mp.in[id] = op.op == "add"
		}
	}
	return mp, true
}

// valueEqualities returns the ids of a value filter made of `value eq "id"` joined by "or".
func valueEqualities(f filter.Expr) ([]string, bool) {
	switch e := f.(type) {
	case *filter.Or:
		l, ok := valueEqualities(e.Left)
		if !ok {
			return nil, false
		}
		r, ok := valueEqualities(e.Right)
		return append(l, r...), ok
	case *filter.Compare:
		if e.Op == filter.Eq && e.Sub != nil && e.Sub.Name == "value" && e.Filter == nil && e.Value.Kind == filter.KindString {
			return []string{e.Value.Str}, true
		}
	}
	return nil, false
}

// patchMembers makes a PATCH of a group that splitMemberPatch accepted with one Groups.Patch.
func (h *handler) patchMembers(w http.ResponseWriter, r *http.Request, k *resources[store.Group, *store.Group], mp *memberPatch) {
	ctx := r.Context()
	gp := store.GroupPatch{
		Modified:    h.now(),
		MaxMembers:  h.limits.members,
		WithMembers: !h.cfg.GroupNoContent && wantsMembers(r.URL.Query()),
	}
	for _, id := range mp.order {
		if mp.in[id] {
			gp.Add = append(gp.Add, id)
		} else {
			gp.Remove = append(gp.Remove, id)
		}
	}
	cond := ifMatch(r)
	if len(mp.attrOps) > 0 || (cond.present && !cond.any) {
		// Attrs runs inside the store's atomic write, so the If-Match comparison and the
		// member change are one step, as they are for any other PATCH.
		gp.Attrs = func(g *store.Group) error {
			if cond.present && !cond.matches(g.Meta.Version) {
				return store.ErrVersionMismatch
			}
			if len(mp.attrOps) == 0 {
				return nil
			}
			return k.patchAttrs(ctx, g, mp.attrOps)
		}
	}
	stored, err := h.cfg.Groups.Patch(ctx, r.PathValue("tenant"), r.PathValue("id"), gp)
	if errors.Is(err, store.ErrTooManyMembers) {
		err = badRequest(typeInvalidValue, "members would hold more values than allowed: at most %d are allowed", h.limits.members)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	k.respondWrite(w, r, stored)
}

// patchAttrs applies ops, none of which touches members, to g, a group without its members.
func (k *resources[T, P]) patchAttrs(ctx context.Context, g *store.Group, ops []patchOp) error {
	t := toTree(k.rt, g)
	if err := applyPatch(ctx, k.rt, t, ops, k.h.limits); err != nil {
		return err
	}
	if err := k.complete(t); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	nv := groupFromTree(t)
	nv.Extensions = extensionsFromTree(k.rt, t)
	if err := checkImmutable(k.rt, g, &nv); err != nil {
		return err
	}
	g.DisplayName, g.ExternalID, g.Extensions = nv.DisplayName, nv.ExternalID, nv.Extensions
	g.Unique = uniqueKeys(k.rt, g)
	return nil
}

// respondWrite answers a PUT or PATCH with the resource as stored, or with 204 and no body for
// a group under Config.GroupNoContent.
func (k *resources[T, P]) respondWrite(w http.ResponseWriter, r *http.Request, stored *T) {
	if k.rt.Name == "Group" && k.h.cfg.GroupNoContent {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	k.respond(w, r, http.StatusOK, stored)
}
