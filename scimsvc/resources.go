package scimsvc

import (
	"context"
	"net/http"
	"reflect"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// kind is the HTTP API of one resource type.
type kind interface {
	endpoint() string
	list(w http.ResponseWriter, r *http.Request)
	search(w http.ResponseWriter, r *http.Request)
	create(w http.ResponseWriter, r *http.Request)
	get(w http.ResponseWriter, r *http.Request)
	replace(w http.ResponseWriter, r *http.Request)
	patch(w http.ResponseWriter, r *http.Request)
	delete(w http.ResponseWriter, r *http.Request)
}

// crud is the part of store.Users and store.Groups the handler uses.
type crud[T any] interface {
	Create(ctx context.Context, tenant string, v T) (*T, error)
	Get(ctx context.Context, tenant, id string) (*T, error)
	Update(ctx context.Context, tenant, id string, fn func(*T) error) (*T, error)
	Delete(ctx context.Context, tenant, id string) error
	DeleteIfVersion(ctx context.Context, tenant, id string, version int64) error
	List(ctx context.Context, tenant string, q store.Query) (store.Page[T], error)
}

// resources serves one resource type T (store.User or store.Group) over its store.
type resources[T any, P interface {
	*T
	filter.Resource
}] struct {
	h        *handler
	rt       *schema.ResourceType
	store    crud[T]
	fromTree func(object) T
	// common returns the id and meta of a resource, which the handler sets and keeps.
	common func(*T) (*string, *store.Meta)
	// extended reports whether the resource has an extension attribute set.
	extended func(*T) bool
	// getWithoutMembers, set for groups, reads a resource without its members.
	getWithoutMembers func(ctx context.Context, tenant, id string) (*T, error)
	unique            bool // hasUniqueAttribute(rt)
}

func (h *handler) userKind() *resources[store.User, *store.User] {
	return &resources[store.User, *store.User]{
		h: h, rt: h.userRT, store: h.cfg.Users, unique: hasUniqueAttribute(h.userRT),
		fromTree: func(t object) store.User {
			u := userFromTree(t)
			u.Extensions = extensionsFromTree(h.userRT, t)
			u.Unique = uniqueKeys(h.userRT, &u)
			return u
		},
		common:   func(u *store.User) (*string, *store.Meta) { return &u.ID, &u.Meta },
		extended: func(u *store.User) bool { return u.Enterprise != store.EnterpriseUser{} || len(u.Extensions) > 0 },
	}
}

func (h *handler) groupKind() *resources[store.Group, *store.Group] {
	return &resources[store.Group, *store.Group]{
		h: h, rt: h.groupRT, store: h.cfg.Groups, unique: hasUniqueAttribute(h.groupRT),
		fromTree: func(t object) store.Group {
			g := groupFromTree(t)
			g.Extensions = extensionsFromTree(h.groupRT, t)
			g.Unique = uniqueKeys(h.groupRT, &g)
			return g
		},
		common:            func(g *store.Group) (*string, *store.Meta) { return &g.ID, &g.Meta },
		extended:          func(g *store.Group) bool { return len(g.Extensions) > 0 },
		getWithoutMembers: h.cfg.Groups.GetWithoutMembers,
	}
}

// hasUnique reports whether the resource type has a host-defined attribute whose uniqueness is
// "server".
func (k *resources[T, P]) hasUnique() bool { return k.unique }

// hasUniqueAttribute reports whether rt has a host-defined attribute whose uniqueness is
// "server".
func hasUniqueAttribute(rt *schema.ResourceType) bool {
	for a := range rt.Attributes {
		if schema.HostDefined(a) && a.Uniqueness == schema.ServerUnique {
			return true
		}
	}
	return false
}

func (k *resources[T, P]) endpoint() string { return k.rt.Endpoint[1:] }

// location is the URL of the resource with id in tenant.
func (k *resources[T, P]) location(tenant, id string) string {
	return k.h.base + "/" + tenant + k.rt.Endpoint + "/" + id
}

// write appends the JSON of v under projection p: with the typed encoder of users or groups
// when it writes the same bytes (writesUser, writesGroup), with the schema-driven one otherwise.
func (k *resources[T, P]) write(e *encoder, tenant string, v *T, p *projection) {
	id, _ := k.common(v)
	r := resourceOut{rt: k.rt, res: P(v), base: k.h.base, tenant: tenant, id: *id}
	switch typed := any(v).(type) {
	case *store.User:
		if writesUser(k.rt, p) {
			e.writeUser(&r, typed, p)
			return
		}
	case *store.Group:
		if writesGroup(k.rt, p) {
			e.writeGroup(&r, typed, p)
			return
		}
	}
	r.extended = k.extended(v)
	e.writeResource(&r, p)
}

// respond writes v as the response, projected by the request's attributes parameters, with
// its version as the ETag header.
func (k *resources[T, P]) respond(w http.ResponseWriter, r *http.Request, status int, v *T) {
	_, meta := k.common(v)
	p := requestProjection(r, k.rt)
	if k.h.cfg.Events != nil && p.empty() {
		if body := renderedBody(r.Context(), v); body != nil {
			writeJSONTagged(w, status, body, true, meta.Version)
			return
		}
	}
	buf := getBuf(1024)
	e := encoder{buf: *buf}
	k.write(&e, r.PathValue("tenant"), v, &p)
	writeJSONTagged(w, status, e.buf, true, meta.Version)
	*buf = e.buf
	putBuf(buf)
}

// decode reads a resource from the request body and checks its required attributes. A User
// body that decodeUser takes is decoded by it; any other body, from the same bytes, through
// a tree.
func (k *resources[T, P]) decode(w http.ResponseWriter, r *http.Request) (T, error) {
	var zero T
	body, err := k.h.readBody(w, r)
	if err != nil {
		return zero, err
	}
	if k.rt == schema.User() {
		if u, ok := decodeUser(body); ok {
			return any(u).(T), nil
		}
	}
	return k.decodeBody(body)
}

// decodeBody decodes a resource from a request body through a tree: the path of every resource
// type and every body, and the one that reports what is wrong with a body.
func (k *resources[T, P]) decodeBody(body []byte) (T, error) {
	var zero T
	tree, err := parseBody(body)
	if err != nil {
		return zero, err
	}
	t, err := decodeTree(k.rt, tree)
	if err != nil {
		return zero, err
	}
	if err := k.complete(t); err != nil {
		return zero, err
	}
	onePrimary(multiValued(k.rt), t, nil)
	return k.fromTree(t), nil
}

// complete reports a required attribute that t lacks, or a required extension (see
// checkRequiredExtensions).
func (k *resources[T, P]) complete(t object) error {
	if err := checkRequiredExtensions(k.rt, t); err != nil {
		return err
	}
	for a := range k.rt.Attributes {
		if a.Required && !a.Extension {
			if _, ok := holder(t, a, false)[a.Name]; !ok {
				return badRequest(typeInvalidValue, "%s is required", a.Path())
			}
		}
	}
	return nil
}

func (k *resources[T, P]) create(w http.ResponseWriter, r *http.Request) {
	v, err := k.decode(w, r)
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	_, meta := k.common(&v)
	now := k.h.now()
	meta.Created, meta.LastModified = now, now
	tenant := r.PathValue("tenant")
	if err := k.h.checkSizes(k.rt, P(&v), nil); err != nil {
		k.h.writeError(w, r, err)
		return
	}
	if k.hasUnique() {
		if vals := uniqueValues(k.rt, P(&v)); vals != nil {
			if err := k.checkUnique(r.Context(), tenant, "", vals); err != nil {
				k.h.writeError(w, r, err)
				return
			}
		}
	}
	stored, err := k.store.Create(r.Context(), tenant, v)
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	id, _ := k.common(stored)
	w.Header().Set("Location", k.location(tenant, *id))
	k.respond(w, r, http.StatusCreated, stored)
}

// get answers 304 Not Modified, without a body, when If-None-Match names the resource's
// version (or is "*").
func (k *resources[T, P]) get(w http.ResponseWriter, r *http.Request) {
	get := k.store.Get
	if k.getWithoutMembers != nil && !wantsMembers(r.URL.Query()) {
		get = k.getWithoutMembers
	}
	v, err := get(r.Context(), r.PathValue("tenant"), r.PathValue("id"))
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	if c := ifNoneMatch(r); c.present {
		if _, meta := k.common(v); c.matches(meta.Version) {
			w.Header().Set("ETag", meta.ETag())
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	k.respond(w, r, http.StatusOK, v)
}

// delete removes the resource; with If-Match (other than "*") only at a version it names, the
// comparison made by the store in the same atomic step as the removal. However many tags
// If-Match names, it costs one conditional write, after one read when there are several: the
// read finds the version the resource has, and the write removes it at that version only if a
// tag names it.
func (k *resources[T, P]) delete(w http.ResponseWriter, r *http.Request) {
	ctx, tenant, id := r.Context(), r.PathValue("tenant"), r.PathValue("id")
	var err error
	switch c := ifMatch(r); {
	case !c.present || c.any:
		err = k.store.Delete(ctx, tenant, id)
	case len(c.tags) <= 1:
		version := int64(-1) // no version of ours: 404 or 412, as the store finds the resource
		if len(c.tags) == 1 {
			version = c.tags[0]
		}
		err = k.store.DeleteIfVersion(ctx, tenant, id, version)
	default:
		get := k.store.Get
		if k.getWithoutMembers != nil {
			get = k.getWithoutMembers
		}
		var v P
		if v, err = get(ctx, tenant, id); err == nil {
			if _, meta := k.common(v); c.matches(meta.Version) {
				err = k.store.DeleteIfVersion(ctx, tenant, id, meta.Version)
			} else {
				err = errPreconditionFailed
			}
		}
	}
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// replace is PUT: the body replaces every attribute a client may write.
func (k *resources[T, P]) replace(w http.ResponseWriter, r *http.Request) {
	nv, err := k.decode(w, r)
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	k.update(w, r, func(*T) (T, error) { return nv, nil })
}

// patch is PATCH: the operations apply in order, all or none.
func (k *resources[T, P]) patch(w http.ResponseWriter, r *http.Request) {
	body, err := k.h.readBody(w, r)
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	ops, ok := decodePatch(body, k.rt, k.h.cfg.FilterLimits)
	if !ok {
		if ops, err = parsePatchBody(body, k.rt, k.h.cfg.FilterLimits); err != nil {
			k.h.writeError(w, r, err)
			return
		}
	}
	if tp := parseTypedPatch(k.rt, ops); tp != nil {
		k.updateTyped(w, r, func(v *T) bool { return tp.apply(any(v).(*store.User)) })
		return
	}
	// Uniqueness of host-defined attributes is checked by update only.
	if k.rt.Name == "Group" && !k.hasUnique() {
		if mp, ok := splitMemberPatch(k.rt, ops); ok {
			k.h.patchMembers(w, r, k.h.groups, mp)
			return
		}
	}
	k.update(w, r, func(old *T) (T, error) {
		var zero T
		t := toTree(k.rt, P(old))
		if err := applyPatch(r.Context(), k.rt, t, ops, k.h.limits); err != nil {
			return zero, err
		}
		if err := k.complete(t); err != nil {
			return zero, err
		}
		return k.fromTree(t), nil
	})
}

// update stores what change makes of the resource in one atomic store Update, keeping its id and
// creation time. lastModified moves only when something changed, so a retried request is a
// no-op. Nothing is stored when the request's deadline passed meanwhile, when the result
// holds more values than Config allows, or when the request's If-Match names no version the
// resource has (compared inside the store's Update, so the check and the write are atomic).
func (k *resources[T, P]) update(w http.ResponseWriter, r *http.Request, change func(*T) (T, error)) {
	ctx := r.Context()
	cond := ifMatch(r)
	tenant, id := r.PathValue("tenant"), r.PathValue("id")
	// Uniqueness of host-defined attributes is checked with a List, which cannot run inside
	// the store's Update: against the result of change on the resource as it is now, and
	// again, to be the same values, on the resource the Update gives.
	var checked map[*schema.Attribute]filter.Value
	if k.hasUnique() {
		cur, err := k.store.Get(ctx, tenant, id)
		if err != nil {
			k.h.writeError(w, r, err)
			return
		}
		nv, err := change(cur)
		if err != nil {
			k.h.writeError(w, r, err)
			return
		}
		checked = uniqueValues(k.rt, P(&nv))
		if err := k.checkUnique(ctx, tenant, id, checked); err != nil {
			k.h.writeError(w, r, err)
			return
		}
	}
	stored, err := k.store.Update(ctx, tenant, id, func(v *T) error {
		if _, meta := k.common(v); checkIfMatch(&cond, meta) != nil {
			return errPreconditionFailed
		}
		nv, err := change(v)
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := k.h.checkSizes(k.rt, P(&nv), P(v)); err != nil {
			return err
		}
		if err := checkImmutable(k.rt, P(v), P(&nv)); err != nil {
			return err
		}
		if k.hasUnique() && !reflect.DeepEqual(uniqueValues(k.rt, P(&nv)), checked) {
			return &Error{Status: http.StatusConflict, ScimType: typeUniqueness, Detail: "the resource changed during the request; retry"}
		}
		// before is v as a client could have written it, without what the store derives
		// (groups, members' display and type), so it compares equal to an unchanged nv.
		before := k.fromTree(toTree(k.rt, P(v)))
		id, meta := k.common(v)
		for _, x := range []*T{&before, &nv} {
			xid, xmeta := k.common(x)
			*xid, *xmeta = *id, *meta
		}
		if !reflect.DeepEqual(before, nv) {
			_, nmeta := k.common(&nv)
			nmeta.LastModified = k.h.now()
		}
		*v = nv
		return nil
	})
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	k.respondWrite(w, r, stored)
}

// updateTyped is update for a change that sets fields of the stored resource in place and
// reports whether any of them changed (a typedPatch): no tree is built and nothing compared but
// the fields it sets. It changes no multi-valued attribute, so no limit of Config can be crossed.
// If-Match is compared inside the store's Update, as update does.
func (k *resources[T, P]) updateTyped(w http.ResponseWriter, r *http.Request, set func(*T) bool) {
	ctx := r.Context()
	cond := ifMatch(r)
	stored, err := k.store.Update(ctx, r.PathValue("tenant"), r.PathValue("id"), func(v *T) error {
		if _, meta := k.common(v); checkIfMatch(&cond, meta) != nil {
			return errPreconditionFailed
		}
		changed := set(v)
		if err := ctx.Err(); err != nil {
			return err
		}
		if changed {
			_, meta := k.common(v)
			meta.LastModified = k.h.now()
		}
		return nil
	})
	if err != nil {
		k.h.writeError(w, r, err)
		return
	}
	k.respondWrite(w, r, stored)
}

// valueLimits bound the number of values of multi-valued attributes; 0 is no limit.
type valueLimits struct {
	values  int // Config.MaxMultiValued
	members int // Config.MaxGroupMembers
}

// of is the limit of the multi-valued attribute a of rt.
func (l valueLimits) of(rt *schema.ResourceType, a *schema.Attribute) int {
	if rt.Name == "Group" && a.Name == "members" {
		return l.members
	}
	return l.values
}

// tooManyValues is the error of a request that would leave n values in a, above its limit.
func tooManyValues(a *schema.Attribute, n, limit int) error {
	return badRequest(typeInvalidValue, "%s would hold %d values; at most %d are allowed", a.Path(), n, limit)
}

// checkSizes returns an invalidValue error when a multi-valued attribute of res holds more values
// than Config allows and, when res replaces before (nil for a new resource), more than it held
// there.
func (h *handler) checkSizes(rt *schema.ResourceType, res, before filter.Resource) error {
	for a := range rt.Attributes {
		if !a.MultiValued {
			continue
		}
		limit := h.limits.of(rt, a)
		if limit <= 0 || !writable(a) {
			continue
		}
		n := countValues(res, a)
		if n > limit && (before == nil || n > countValues(before, a)) {
			return tooManyValues(a, n, limit)
		}
	}
	return nil
}

// countValues is the number of values of the multi-valued attribute a in res.
func countValues(res filter.Resource, a *schema.Attribute) int {
	n := 0
	for {
		if _, ok := res.FilterValue(a, nil, n); !ok {
			return n
		}
		n++
	}
}
