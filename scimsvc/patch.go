package scimsvc

import (
	"reflect"
	"strings"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

const patchOpURN = "urn:ietf:params:scim:api:messages:2.0:PatchOp"

// patchOp is one operation of a PatchOp request.
type patchOp struct {
	op    string // "add", "replace" or "remove"
	path  *patchPath
	value any
	raw   string // the path as sent, for error details
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
		switch op.op {
		case "add", "replace", "remove":
		default:
			return nil, badRequest(typeInvalidSyntax, "operation %d: op must be add, replace or remove", i+1)
		}
		if hasPath {
			// The body is text; a filter in the path may escape what is not.
			if why := badEscapes(op.raw); why != "" {
				return nil, badRequest(typeInvalidValue, "operation %d: the path %s: its strings must be UTF-8 text without NUL", i+1, why)
			}
			p, err := parsePath(op.raw, rt, lim)
			if err != nil {
				return nil, err
			}
			op.path = p
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// applyPatch applies ops to t in order; t is left half-changed when one fails, so the caller
// applies them to a copy inside a store Update and lets the error discard it.
func applyPatch(rt *schema.ResourceType, t object, ops []patchOp) error {
	for _, op := range ops {
		before := primaries(rt, t)
		var err error
		switch {
		case op.path == nil && op.op == "remove":
			err = badRequest(typeNoTarget, "a remove operation needs a path")
		case op.path == nil:
			err = applyPathless(rt, t, op)
		default:
			err = applyPath(t, op)
		}
		if err != nil {
			return err
		}
		onePrimary(rt, t, newPrimaries(rt, t, before))
	}
	return nil
}

// applyPathless applies an add or replace whose value is an object of attributes, which may be
// dotted or URN-qualified. Read-only attributes in it (Okta sends the id) are ignored.
func applyPathless(rt *schema.ResourceType, t object, op patchOp) error {
	in, ok := op.value.(object)
	if !ok {
		return badRequest(typeInvalidValue, "an %s operation without a path needs an object value", op.op)
	}
	vals, err := decodeTree(rt, in)
	if err != nil {
		return err
	}
	for a := range rt.Attributes {
		v, ok := holder(vals, a, false)[a.Name]
		if !ok {
			continue
		}
		if err := addOrReplace(t, op.op, a, v); err != nil {
			return err
		}
	}
	return nil
}

// addOrReplace sets the decoded value v of the top-level attribute a: a multi-valued attribute
// gains the values not already there (add) or takes v whole (replace); a complex attribute gains
// v's sub-attributes; a simple one takes v.
func addOrReplace(t object, op string, a *schema.Attribute, v any) error {
	h := holder(t, a, true)
	switch {
	case a.MultiValued && op == "add":
		list, _ := h[a.Name].([]any)
		for _, el := range elements(v) {
			if same := sameElement(a, list, el); same != nil {
				for k, sv := range el {
					same[k] = sv
				}
				continue
			}
			list = append(list, el)
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
		put(h, a.Name, v)
	}
	dropEmptyExtension(t, a)
	return nil
}

// applyPath applies an operation with a path.
func applyPath(t object, op patchOp) error {
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
	return addOrReplace(t, op.op, a, v)
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
	case a.MultiValued && value != nil:
		v, err := coerce(a, value)
		if err != nil {
			return err
		}
		list, _ := h[a.Name].([]any)
		gone := elements(v)
		kept := list[:0:0]
		for _, el := range list {
			m, _ := el.(object)
			if !anySubset(a, gone, m) {
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

// sameElement returns the value of list that el stands for, or nil: for members, the value with
// el's value; otherwise the value with el's value and type (compared case-insensitively unless
// caseExact), so adding an email that is already there, say with primary: true, updates it
// instead of adding it twice.
func sameElement(a *schema.Attribute, list []any, el object) object {
	keys := []string{"value"}
	if !identifiedByValue(a) {
		keys = append(keys, "type")
		if el["value"] == nil {
			return nil // a value without value (an address) is never the same as another
		}
	}
	for _, x := range list {
		m, _ := x.(object)
		if m == nil {
			continue
		}
		match := true
		for _, k := range keys {
			match = match && equalSub(a.Sub(k), m[k], el[k])
		}
		if match {
			return m
		}
	}
	return nil
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

// anySubset reports whether one of the listed values matches m: every sub-attribute a listed value
// names has the same value in m (by value alone for members).
func anySubset(a *schema.Attribute, listed []object, m object) bool {
	if m == nil {
		return false
	}
	for _, g := range listed {
		if identifiedByValue(a) {
			if g["value"] == m["value"] {
				return true
			}
			continue
		}
		if subset(a, g, m) {
			return true
		}
	}
	return false
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

// primaries records, for each multi-valued attribute with a primary sub-attribute, the values
// marked primary.
func primaries(rt *schema.ResourceType, t object) map[*schema.Attribute][]object {
	out := map[*schema.Attribute][]object{}
	for a := range rt.Attributes {
		if !a.MultiValued || a.Sub("primary") == nil {
			continue
		}
		for _, el := range elements(holder(t, a, false)[a.Name]) {
			if el["primary"] == true {
				out[a] = append(out[a], el)
			}
		}
	}
	return out
}

// newPrimaries returns, per attribute, the last value marked primary that was not marked before
// the operation: the value the operation made primary, which wins over the others.
func newPrimaries(rt *schema.ResourceType, t object, before map[*schema.Attribute][]object) map[*schema.Attribute]object {
	out := map[*schema.Attribute]object{}
	for a, now := range primaries(rt, t) {
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
