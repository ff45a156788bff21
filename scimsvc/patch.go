package scimsvc

import (
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

const patchOpURN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"

// patchOp is one operation of a PatchOp request.
type patchOp struct {
	op   string // "add", "replace" or "remove"
	path *patchPath
	// extension is set, and path nil, when the path is an extension schema's URN alone: the
	// operation addresses the whole extension object, its value an object of the extension's
	// attributes (accepted beyond RFC 7644's path grammar, as several clients send it).
	extension *schema.Schema
	value     any
	raw       string // the path as sent, for error details
}

// parsePatch reads a PatchOp request body (RFC 7644 §3.5.2). Member names and op values are
// matched case-insensitively ("Operations", "Replace"); every path is parsed before anything is
// applied.
func parsePatch(body object, rt *schema.ResourceType, lim filter.Limits) ([]patchOp, error) {
	var rawOps any
	found := false
	for k, v := range body {
		if strings.EqualFold(k, "Operations") {
			rawOps, found = v, true
		}
	}
	list, ok := rawOps.([]any)
	if !found || !ok || len(list) == 0 {
		return nil, badRequest(typeInvalidSyntax, "a PatchOp request needs a non-empty Operations array")
	}
	ops := make([]patchOp, 0, len(list))
	for i, raw := range list {
		m, ok := raw.(object)
		if !ok {
			return nil, badRequest(typeInvalidSyntax, "operation %d is not a JSON object", i+1)
		}
		var op patchOp
		var hasPath bool
		for k, v := range m {
			switch strings.ToLower(k) {
			case "op":
				s, _ := v.(string)
				op.op = strings.ToLower(s)
			case "path":
				s, isString := v.(string)
				if !isString && v != nil {
					return nil, badRequest(typeInvalidPath, "operation %d: path must be a string", i+1)
				}
				op.raw, hasPath = s, isString
			case "value":
				op.value = v
			}
		}
		op, err := finishOp(i, op, hasPath, rt, lim)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// finishOp checks operation i of a PatchOp request, op with its op, raw path (when hasPath)
// and value read from the body, and parses its path.
func finishOp(i int, op patchOp, hasPath bool, rt *schema.ResourceType, lim filter.Limits) (patchOp, error) {
	switch op.op {
	case "add", "replace", "remove":
	default:
		return op, badRequest(typeInvalidSyntax, "operation %d: op must be add, replace or remove", i+1)
	}
	if !hasPath {
		return op, nil
	}
	// The body is text; a filter in the path may escape what is not.
	if why := badEscapes(op.raw); why != "" {
		return op, badRequest(typeInvalidValue, "operation %d: the path %s: its strings must be UTF-8 text without NUL", i+1, why)
	}
	if x := schemaNamed(rt, strings.TrimSpace(op.raw)); x != nil && x != rt.Schema {
		op.extension = x
		return op, nil
	}
	p, err := parsePath(op.raw, rt, lim)
	if err != nil {
		return op, err
	}
	op.path = p
	return op, nil
}

// applyPatch applies ops to t in order; t is left half-changed when one fails, so the caller
// applies them to a copy inside a store Update and lets the error discard it. It stops with
// ctx's error once ctx is done, and with an invalidValue error as soon as an operation leaves a
// multi-valued attribute with more than twice the values lim allows and more than it had before
// the request. (The caller checks the result against the limit itself; the slack lets a request
// add values before it removes others, as Entra ID may, on an attribute at its limit.)
//
// Each operation costs time in proportion to what it touches, not to the whole resource: the
// first operation keeps one primary value in every multi-valued attribute, so each later one
// only needs to in the attribute it changes; and successive adds to one attribute share the
// index of its values.
func applyPatch(ctx context.Context, rt *schema.ResourceType, t object, ops []patchOp, lim valueLimits) error {
	all := multiValued(rt)
	had := make(map[*schema.Attribute]int, len(all))
	for _, a := range all {
		had[a] = len(valuesOf(t, a))
	}
	seen := indexes{}
	for i, op := range ops {
		if err := ctx.Err(); err != nil {
			return err
		}
		touched := all
		var vals object
		switch {
		case op.extension != nil && op.op == "remove":
			touched = nil
			for _, a := range all {
				if a.Schema == op.extension.ID {
					touched = append(touched, a)
				}
			}
		case op.path == nil && op.op == "remove":
			return badRequest(typeNoTarget, "a remove operation needs a path")
		case op.path == nil:
			var err error
			if vals, err = pathlessValues(rt, op); err != nil {
				return err
			}
			if i > 0 {
				touched = presentIn(all, vals)
			}
		case i > 0:
			touched = presentIn(all, nil, op.path.attr)
		}
		if op.op != "add" || op.path != nil && (op.path.filter != nil || op.path.sub != nil) {
			clear(seen) // only adds of whole values keep the values' identities as indexed
		}
		before := primaries(touched, t)
		var err error
		switch {
		case op.extension != nil && op.op == "remove":
			delete(t, op.extension.ID)
		case op.path == nil:
			err = applyPathless(rt, t, op, vals, seen)
		default:
			err = applyPath(t, op, seen)
		}
		if err != nil {
			return err
		}
		onePrimary(touched, t, newPrimaries(touched, t, before))
		for _, a := range touched {
			if n, limit := len(valuesOf(t, a)), lim.of(rt, a); limit > 0 && n > 2*limit && n > had[a] {
				return tooManyValues(a, n, limit)
			}
		}
	}
	return nil
}

// multiValued lists the multi-valued attributes of rt.
func multiValued(rt *schema.ResourceType) []*schema.Attribute {
	var out []*schema.Attribute
	for a := range rt.Attributes {
		if a.MultiValued {
			out = append(out, a)
		}
	}
	return out
}

// presentIn returns the attributes of all that are in vals, a tree, or are one of also.
func presentIn(all []*schema.Attribute, vals object, also ...*schema.Attribute) []*schema.Attribute {
	var out []*schema.Attribute
	for _, a := range all {
		if _, ok := holder(vals, a, false)[a.Name]; ok || slices.Contains(also, a) {
			out = append(out, a)
		}
	}
	return out
}

// valuesOf returns the values of the multi-valued attribute a in t.
func valuesOf(t object, a *schema.Attribute) []any {
	list, _ := holder(t, a, false)[a.Name].([]any)
	return list
}

// pathlessValues decodes the value of an add or replace without a path: an object of
// attributes, which may be dotted or URN-qualified. When the path is an extension's URN, the
// value is an object of that extension's attributes.
func pathlessValues(rt *schema.ResourceType, op patchOp) (object, error) {
	in, ok := op.value.(object)
	if op.extension != nil {
		if !ok {
			return nil, badRequest(typeInvalidValue, "an %s operation whose path is %s needs an object value", op.op, op.extension.ID)
		}
		return decodeTree(rt, object{op.extension.ID: in})
	}
	if !ok {
		return nil, badRequest(typeInvalidValue, "an %s operation without a path needs an object value", op.op)
	}
	return decodeTree(rt, in)
}

// applyPathless applies an add or replace without a path whose value pathlessValues decoded as
// vals. Read-only attributes in it (Okta sends the id) are ignored.
func applyPathless(rt *schema.ResourceType, t object, op patchOp, vals object, seen indexes) error {
	for a := range rt.Attributes {
		v, ok := holder(vals, a, false)[a.Name]
		if !ok {
			continue
		}
		if err := addOrReplace(t, op.op, a, v, seen); err != nil {
			return err
		}
	}
	return nil
}

// addOrReplace sets the decoded value v of the top-level attribute a: a multi-valued attribute
// gains the values not already there (add) or takes v whole (replace); a complex attribute gains
// v's sub-attributes; a simple one takes v. seen holds the indexes of the values of attributes
// that earlier adds of the request built and kept up to date.
func addOrReplace(t object, op string, a *schema.Attribute, v any, seen indexes) error {
	h := holder(t, a, true)
	switch {
	case a.MultiValued && a.Type != schema.Complex && op == "add":
		put(h, a.Name, addSimpleValues(a, h[a.Name], v))
	case a.MultiValued && op == "add":
		list, _ := h[a.Name].([]any)
		idx := seen[a]
		if idx == nil {
			idx = indexElements(a, list)
			seen[a] = idx
		}
		for _, el := range elements(v) {
			if same := idx.find(el); same != nil {
				for k, sv := range el {
					same[k] = sv
				}
				continue
			}
			list = append(list, el)
			idx.add(el)
		}
		put(h, a.Name, list)
	case a.Type == schema.Complex && !a.MultiValued:
		m, _ := h[a.Name].(object)
		if m == nil {
			m = object{}
		}
		for k, sv := range v.(object) {
			m[k] = sv
		}
		put(h, a.Name, emptyToNil(m))
	default:
		delete(seen, a)
		put(h, a.Name, v)
	}
	dropEmptyExtension(t, a)
	return nil
}

// applyPath applies an operation with a path; seen is as for addOrReplace.
func applyPath(t object, op patchOp, seen indexes) error {
	p := op.path
	a, target := p.attr, p.attr
	if p.sub != nil {
		target = p.sub
	}
	if a.Mutability == schema.WriteOnly || target.Mutability == schema.WriteOnly {
		return nil // password: accepted and discarded
	}
	if !writable(a) || !writable(target) {
		return badRequest(typeMutability, "%s is read-only", target.Path())
	}
	if p.filter != nil && p.sub != nil && p.sub.Mutability == schema.Immutable {
		return badRequest(typeMutability, "%s cannot be changed once set", target.Path())
	}
	if removesActive(op) {
		return badRequest(typeInvalidValue, "active cannot be removed, as an absent active means an active user: replace active with true or false instead")
	}
	defer dropEmptyExtension(t, a)
	if op.op == "remove" {
		return remove(t, p, op.value)
	}
	if p.filter != nil && !a.MultiValued {
		return badRequest(typeInvalidPath, "path %q: a value filter on the single-valued %s is accepted only by remove", clip(op.raw), a.Path())
	}
	if p.filter != nil {
		return setFiltered(t, op, p)
	}
	if p.sub != nil && a.MultiValued {
		return setSubOfAll(t, p, op.value)
	}
	if p.sub != nil {
		if op.op == "replace" && op.value == nil {
			return remove(t, p, nil)
		}
		return setValue(t, a, p.sub, op.value)
	}
	v, err := coerce(a, op.value)
	if err != nil {
		return err
	}
	if v == nil {
		if op.op == "replace" {
			return remove(t, p, nil)
		}
		return nil
	}
	return addOrReplace(t, op.op, a, v, seen)
}

// removesActive reports whether op removes the User's active (a remove, or a replace with null).
// An absent active means true (activeOf), so such an operation would reactivate a deactivated user; no
// identity provider sends it, and reactivation must never happen by accident.
func removesActive(op patchOp) bool {
	p := op.path
	if p.sub != nil || p.attr.Schema != schema.UserURN || p.attr.Name != "active" {
		return false
	}
	return op.op == "remove" || op.op == "replace" && op.value == nil
}

// setFiltered applies an add or replace to the values of a multi-valued attribute that its value
// filter selects. When none matches and the filter is made of equalities, a value with those
// sub-attributes is added (Entra ID replaces emails[type eq "work"].value on a user with no work
// email); otherwise there is no target.
func setFiltered(t object, op patchOp, p *patchPath) error {
	a := p.attr
	h := holder(t, a, true)
	list, _ := h[a.Name].([]any)
	hit := false
	for i, el := range list {
		m, _ := el.(object)
		if m == nil || !matches(p.filter, m) {
			continue
		}
		hit = true
		nm, err := setInElement(a, p.sub, op, m)
		if err != nil {
			return err
		}
		list[i] = nm
	}
	if hit {
		put(h, a.Name, list)
		return nil
	}
	seed, ok := equalities(p.filter)
	if !ok {
		return badRequest(typeNoTarget, "no value of %s matches the filter of path %q", a.Path(), clip(op.raw))
	}
	nm, err := setInElement(a, p.sub, op, seed)
	if err != nil {
		return err
	}
	h[a.Name] = append(list, nm)
	return nil
}

// setInElement returns element m with the operation's value applied: the sub-attribute set, or
// for a whole value, m merged with (add) or replaced by (replace) the value.
func setInElement(a, sub *schema.Attribute, op patchOp, m object) (object, error) {
	if sub != nil {
		v, err := coerceSimple(sub, op.value)
		if err != nil {
			return nil, err
		}
		if b, isBool := v.(bool); isBool && !b {
			v = nil
		}
		put(m, sub.Name, v)
		return m, nil
	}
	v, err := coerceComplex(a, op.value)
	if err != nil {
		return nil, err
	}
	if op.op == "replace" {
		if v == nil {
			return nil, badRequest(typeInvalidValue, "a replace of a value of %s needs a value", a.Path())
		}
		return v, nil
	}
	for k, sv := range v {
		m[k] = sv
	}
	return m, nil
}

// setSubOfAll sets a sub-attribute on every value of a multi-valued attribute (path
// "emails.type"); with no values, it adds one holding only that sub-attribute.
func setSubOfAll(t object, p *patchPath, value any) error {
	v, err := coerceSimple(p.sub, value)
	if err != nil {
		return err
	}
	h := holder(t, p.attr, true)
	list, _ := h[p.attr.Name].([]any)
	if len(list) == 0 && v != nil {
		h[p.attr.Name] = []any{object{p.sub.Name: v}}
		return nil
	}
	for _, el := range list {
		if m, ok := el.(object); ok {
			put(m, p.sub.Name, v)
		}
	}
	return nil
}

// remove removes the target of p. Removing what is not there succeeds, so a retried operation
// does no harm. A value array on a multi-valued attribute without a filter removes only the
// values it lists (Entra ID removes members this way).
func remove(t object, p *patchPath, value any) error {
	a := p.attr
	h := holder(t, a, false)
	if h == nil {
		return nil
	}
	switch {
	case p.filter != nil && !a.MultiValued:
		// manager[value eq "id"]: only the value the filter matches is removed.
		m, _ := h[a.Name].(object)
		if m == nil || !matches(p.filter, m) {
			return nil
		}
		if p.sub == nil {
			delete(h, a.Name)
			return nil
		}
		delete(m, p.sub.Name)
		put(h, a.Name, emptyToNil(m))
	case p.filter != nil:
		list, _ := h[a.Name].([]any)
		kept := list[:0:0]
		for _, el := range list {
			m, _ := el.(object)
			switch {
			case m == nil || !matches(p.filter, m):
				kept = append(kept, el)
			case p.sub != nil:
				delete(m, p.sub.Name)
				if len(m) > 0 {
					kept = append(kept, m)
				}
			}
		}
		put(h, a.Name, listOrNil(kept))
	case p.sub != nil && a.MultiValued:
		list, _ := h[a.Name].([]any)
		kept := list[:0:0]
		for _, el := range list {
			if m, ok := el.(object); ok {
				delete(m, p.sub.Name)
				if len(m) > 0 {
					kept = append(kept, m)
				}
			}
		}
		put(h, a.Name, listOrNil(kept))
	case p.sub != nil:
		m, _ := h[a.Name].(object)
		delete(m, p.sub.Name)
		put(h, a.Name, emptyToNil(m))
	case a.MultiValued && a.Type != schema.Complex && value != nil:
		v, err := coerce(a, value)
		if err != nil {
			return err
		}
		put(h, a.Name, removeSimpleValues(a, h[a.Name], v))
	case a.MultiValued && value != nil:
		v, err := coerce(a, value)
		if err != nil {
			return err
		}
		list, _ := h[a.Name].([]any)
		gone := indexRemoved(a, elements(v))
		kept := list[:0:0]
		for _, el := range list {
			m, _ := el.(object)
			if !gone.matches(m) {
				kept = append(kept, el)
			}
		}
		put(h, a.Name, listOrNil(kept))
	default:
		delete(h, a.Name)
	}
	return nil
}

func listOrNil(l []any) any {
	if len(l) == 0 {
		return nil
	}
	return l
}

// dropEmptyExtension removes the object of a's extension when an operation emptied it.
func dropEmptyExtension(t object, a *schema.Attribute) {
	if x, ok := t[a.Schema].(object); ok && a.Extension && len(x) == 0 {
		delete(t, a.Schema)
	}
}

// identifiedByValue reports whether the values of a are identified by their value
// sub-attribute alone (members, whose display and type are derived).
func identifiedByValue(a *schema.Attribute) bool {
	v := a.Sub("value")
	return v != nil && v.CaseExact
}

// indexes are the indexes of the values of multi-valued attributes that a request's adds share.
type indexes map[*schema.Attribute]*elementIndex

// elementIndex finds, among the values of a multi-valued attribute, the value a new one stands
// for, in constant time: for members, the value with the same value; otherwise the value with the
// same value and type (compared case-insensitively unless caseExact), so adding an email that is
// already there, say with primary: true, updates it instead of adding it twice. When several
// values are the same, the first one is found.
type elementIndex struct {
	a     *schema.Attribute
	names []string // the sub-attributes that identify a value
	first map[string]object
}

// indexElements indexes the values of list, a value of a.
func indexElements(a *schema.Attribute, list []any) *elementIndex {
	x := &elementIndex{a: a, names: []string{"value"}, first: make(map[string]object, len(list))}
	if !identifiedByValue(a) {
		x.names = append(x.names, "type")
	}
	for _, el := range list {
		if m, ok := el.(object); ok {
			x.add(m)
		}
	}
	return x
}

// key is the identity of el; false when el is the same as no other value (a value without value,
// such as an address, unless values are identified by value alone).
func (x *elementIndex) key(el object) (string, bool) {
	if len(x.names) > 1 && el["value"] == nil {
		return "", false
	}
	var b []byte
	for _, n := range x.names {
		b = appendKey(b, x.a.Sub(n), el[n])
	}
	return string(b), true
}

// add records el, unless a value the same as el is recorded already.
func (x *elementIndex) add(el object) {
	if k, ok := x.key(el); ok {
		if _, dup := x.first[k]; !dup {
			x.first[k] = el
		}
	}
}

// find returns the recorded value el stands for, or nil.
func (x *elementIndex) find(el object) object {
	k, ok := x.key(el)
	if !ok {
		return nil
	}
	return x.first[k]
}

// appendKey appends to b a form of v, a value of sub-attribute s (nil when a has no such
// sub-attribute), that is equal for two values exactly when they are the same: strings are
// folded unless s is caseExact, and an absent value differs from every present one. Each part
// carries its length, so the parts of a key cannot run into each other.
func appendKey(b []byte, s *schema.Attribute, v any) []byte {
	var part string
	switch v := v.(type) {
	case nil:
		return append(b, 0)
	case string:
		part = v
		if s != nil && !s.CaseExact {
			part = schema.Fold(v)
		}
		b = append(b, 1)
	default: // a decoded tree holds only strings here; other kinds are kept apart by type
		part = fmt.Sprintf("%T:%v", v, v)
		b = append(b, 2)
	}
	b = binary.AppendUvarint(b, uint64(len(part)))
	return append(b, part...)
}

// removedValues are the values listed by a remove operation without a filter: a stored value
// goes when one of them matches it, that is when every sub-attribute the listed value names has
// the same value in it (by value alone for members), strings compared case-insensitively unless
// caseExact. Listed values are indexed by value, so removing many values from many is linear.
type removedValues struct {
	a       *schema.Attribute
	byValue map[string][]object // listed values with a value, by the key of that value
	others  []object            // listed values without a value, compared with every stored one
	members bool
}

func indexRemoved(a *schema.Attribute, listed []object) *removedValues {
	r := &removedValues{a: a, byValue: make(map[string][]object, len(listed)), members: identifiedByValue(a)}
	for _, g := range listed {
		if r.members {
			r.byValue[string(appendKey(nil, a.Sub("value"), g["value"]))] = nil
			continue
		}
		if g["value"] == nil {
			r.others = append(r.others, g)
			continue
		}
		k := string(appendKey(nil, a.Sub("value"), g["value"]))
		r.byValue[k] = append(r.byValue[k], g)
	}
	return r
}

// matches reports whether one of the listed values matches m.
func (r *removedValues) matches(m object) bool {
	if m == nil {
		return false
	}
	candidates, found := r.byValue[string(appendKey(nil, r.a.Sub("value"), m["value"]))]
	if r.members {
		return found
	}
	for _, g := range candidates {
		if subset(r.a, g, m) {
			return true
		}
	}
	for _, g := range r.others {
		if subset(r.a, g, m) {
			return true
		}
	}
	return false
}

// equalSub compares two values of sub-attribute s, strings case-insensitively unless caseExact.
func equalSub(s *schema.Attribute, x, y any) bool {
	sx, ok1 := x.(string)
	sy, ok2 := y.(string)
	if ok1 && ok2 && s != nil && !s.CaseExact {
		return schema.Fold(sx) == schema.Fold(sy)
	}
	return x == y
}

// subset reports whether every sub-attribute of small has the same value in big, comparing
// strings case-insensitively unless the sub-attribute is caseExact.
func subset(a *schema.Attribute, small, big object) bool {
	for k, v := range small {
		w, ok := big[k]
		if !ok || !equalSub(a.Sub(k), v, w) {
			return false
		}
	}
	return true
}

// primaries records, for each of attrs that has a primary sub-attribute, the values marked
// primary.
func primaries(attrs []*schema.Attribute, t object) map[*schema.Attribute][]object {
	out := map[*schema.Attribute][]object{}
	for _, a := range attrs {
		if a.Sub("primary") == nil {
			continue
		}
		for _, x := range valuesOf(t, a) {
			if el, _ := x.(object); el["primary"] == true {
				out[a] = append(out[a], el)
			}
		}
	}
	return out
}

// newPrimaries returns, per attribute of attrs, the last value marked primary that was not
// marked before the operation: the value the operation made primary, which wins over the others.
func newPrimaries(attrs []*schema.Attribute, t object, before map[*schema.Attribute][]object) map[*schema.Attribute]object {
	out := map[*schema.Attribute]object{}
	for a, now := range primaries(attrs, t) {
		for _, el := range now {
			old := false
			for _, b := range before[a] {
				old = old || sameObject(b, el)
			}
			if !old {
				out[a] = el
			}
		}
	}
	return out
}

// sameObject reports whether a and b are the same map, not merely equal ones.
func sameObject(a, b object) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
