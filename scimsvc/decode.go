package scimsvc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/visid/visid/store/schema"
)

// object is a resource, or a complex value, as a tree: keys are canonical attribute names (an
// extension's attributes sit in an object under the extension's URN), values are string, bool,
// json.Number, object or []any of objects. A decoded tree holds only attributes a client may
// write, each of the right type; absent attributes have no key.
type object = map[string]any

// readJSON decodes the request body into a JSON object. The body must be one JSON object, with
// no two member names alike in one object and only text in its strings (see parseBody), and no
// more than the handler's size limit.
func (h *handler) readJSON(w http.ResponseWriter, r *http.Request) (object, error) {
	body, err := h.readBody(w, r)
	if err != nil {
		return nil, err
	}
	return parseBody(body)
}

// readBody reads the request body, of a JSON content type and no more than the handler's size
// limit, for parseBody or decodeUser.
func (h *handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !jsonContentType(ct) {
		return nil, &Error{Status: http.StatusUnsupportedMediaType,
			Detail: "the request body must be application/scim+json or application/json"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		return nil, syntaxError(err)
	}
	return body, nil
}

// syntaxError keeps an oversized body's error (413) and reports anything else as invalidSyntax.
func syntaxError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return err
	}
	if errors.Is(err, io.EOF) {
		return badRequest(typeInvalidSyntax, "the request body is empty")
	}
	return badRequest(typeInvalidSyntax, "the request body is not valid JSON: %s", clip(err.Error()))
}

// jsonContentType reports whether a Content-Type header names JSON.
func jsonContentType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	return strings.EqualFold(mt, "application/scim+json") || strings.EqualFold(mt, "application/json")
}

// clip shortens text quoted in an error detail.
func clip(s string) string {
	if len(s) > 200 {
		return s[:197] + "..."
	}
	return s
}

// decodeTree turns a client's JSON object into a tree of rt: keys resolve case-insensitively,
// with or without a schema URN, and may be dotted ("name.givenName"); an extension's attributes may
// sit in an object under its URN, and the core attributes under the core URN. Unknown attributes
// and schemas, read-only attributes (id, meta, groups, members.display), write-only ones
// (password) and nulls are dropped; "schemas" is not checked. Two keys that name the same
// attribute, or an attribute and one of its sub-attributes ("name" and "name.givenName"), are an
// invalidSyntax error: which one wins would depend on the order of a map. A value of the wrong
// type is an invalidValue error.
func decodeTree(rt *schema.ResourceType, in object) (object, error) {
	out := object{}
	if err := mergeInto(out, rt, "", in, keyClaims{}); err != nil {
		return nil, err
	}
	return out, nil
}

// keyClaims records which key of a client's object named each attribute {top-level, sub or nil}.
// It holds at most one entry per attribute and sub-attribute of a resource type.
type keyClaims map[[2]*schema.Attribute]string

// claim records that key names a (and its sub-attribute sub, if not nil), or fails when another
// key named the same attribute, a whole attribute that key names part of, or a part of the
// whole attribute that key names.
func (c keyClaims) claim(key string, a, sub *schema.Attribute) error {
	prev, taken := c[[2]*schema.Attribute{a, sub}]
	if !taken {
		prev, taken = c[[2]*schema.Attribute{a, nil}]
	}
	if !taken && sub == nil {
		for k, p := range c {
			if k[0] == a {
				prev, taken = p, true
				break
			}
		}
	}
	if taken {
		return badRequest(typeInvalidSyntax, "the keys %q and %q both set %s", clip(prev), clip(key), a.Path())
	}
	c[[2]*schema.Attribute{a, sub}] = key
	return nil
}

// mergeInto decodes the members of in into out; prefix is the schema URN (with its colon) the
// keys of in are relative to, or "". claims holds the keys seen so far in the whole object.
func mergeInto(out object, rt *schema.ResourceType, prefix string, in object, claims keyClaims) error {
	for k, v := range in {
		if prefix == "" && strings.EqualFold(k, "schemas") {
			continue
		}
		if s := schemaNamed(rt, k); s != nil && prefix == "" {
			if v == nil {
				continue
			}
			inner, ok := v.(object)
			if !ok {
				return badRequest(typeInvalidValue, "%s must be a JSON object", clip(k))
			}
			if err := mergeInto(out, rt, s.ID+":", inner, claims); err != nil {
				return err
			}
			continue
		}
		a, sub, err := rt.Lookup(prefix + k)
		if err != nil {
			continue // an unknown attribute is ignored
		}
		if err := claims.claim(prefix+k, a, sub); err != nil {
			return err
		}
		if err := setValue(out, a, sub, v); err != nil {
			return err
		}
	}
	return nil
}

// writable reports whether a client's value for a (a top-level or sub-attribute) is kept.
func writable(a *schema.Attribute) bool {
	return a.Mutability != schema.ReadOnly && a.Mutability != schema.WriteOnly
}

// holder returns the object of t that holds the top-level attribute a: t itself, or for an
// extension attribute the object under the extension's URN, made when create is set.
func holder(t object, a *schema.Attribute, create bool) object {
	if !a.Extension {
		return t
	}
	x, _ := t[a.Schema].(object)
	if x == nil && create {
		x = object{}
		t[a.Schema] = x
	}
	return x
}

// setValue decodes v as the value of a (or of its sub-attribute sub) and stores it in t,
// replacing what was there; a null or empty value removes it.
func setValue(t object, a, sub *schema.Attribute, v any) error {
	if !writable(a) || sub != nil && !writable(sub) {
		return nil
	}
	if sub == nil {
		val, err := coerce(a, v)
		if err != nil {
			return err
		}
		put(holder(t, a, true), a.Name, val)
		return nil
	}
	if a.MultiValued {
		return badRequest(typeInvalidValue, "%s: a sub-attribute of a multi-valued attribute can only be set in a value of it", sub.Path())
	}
	val, err := coerceSimple(sub, v)
	if err != nil {
		return err
	}
	h := holder(t, a, true)
	m, _ := h[a.Name].(object)
	if m == nil {
		m = object{}
	}
	put(m, sub.Name, val)
	put(h, a.Name, emptyToNil(m))
	return nil
}

// put sets m[k] = v, or deletes k when v is nil.
func put(m object, k string, v any) {
	if v == nil {
		delete(m, k)
		return
	}
	m[k] = v
}

func emptyToNil(m object) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// coerce decodes v as a whole value of the top-level attribute a: nil when v is null or empty. A
// single-valued complex attribute may arrive as an array of one value.
func coerce(a *schema.Attribute, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if a.MultiValued {
		list, ok := v.([]any)
		if !ok {
			list = []any{v} // a single value where an array is expected
		}
		out := make([]any, 0, len(list))
		for _, el := range list {
			var m any
			var err error
			if a.Type == schema.Complex {
				var o object
				if o, err = coerceComplex(a, el); o != nil {
					m = o // a nil object is no value: a null or empty element is dropped
				}
			} else {
				m, err = coerceSimple(a, el)
			}
			if err != nil {
				return nil, err
			}
			if m != nil {
				out = append(out, m)
			}
		}
		if len(out) == 0 {
			return nil, nil
		}
		return out, nil
	}
	if a.Type == schema.Complex {
		if list, ok := v.([]any); ok {
			// Entra ID sends a single-valued complex attribute (manager) as an array of one.
			switch len(list) {
			case 0:
				return nil, nil
			case 1:
				v = list[0]
			default:
				return nil, badRequest(typeInvalidValue, "%s is single-valued: an array of %d values cannot be its value", a.Path(), len(list))
			}
		}
		m, err := coerceComplex(a, v)
		if m == nil || err != nil {
			return nil, err
		}
		return m, nil
	}
	return coerceSimple(a, v)
}

// coerceComplex decodes v as one value of the complex attribute a. A bare string stands for
// {"value": string} when a has a value sub-attribute (as clients send a manager or a member).
// Unknown and read-only sub-attributes are dropped, and so is a false boolean sub-attribute
// (primary: false is the same as no primary). It returns nil when nothing is left.
func coerceComplex(a *schema.Attribute, v any) (object, error) {
	if v == nil {
		return nil, nil
	}
	in, ok := v.(object)
	if !ok {
		s, isString := v.(string)
		if !isString || a.Sub("value") == nil {
			return nil, badRequest(typeInvalidValue, "%s must be a JSON object", a.Path())
		}
		in = object{"value": s}
	}
	out := object{}
	for k, sv := range in {
		s := a.Sub(k)
		if s == nil || !writable(s) {
			continue
		}
		val, err := coerceSimple(s, sv)
		if err != nil {
			return nil, err
		}
		if b, isBool := val.(bool); isBool && !b {
			continue
		}
		put(out, s.Name, val)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// coerceSimple decodes v as a value of the simple attribute a. Strings are kept as they are
// (a reference such as profileUrl is never parsed; a binary value such as x509Certificates.value
// must be base64 but is not decoded); a boolean may also arrive as the string "true" or "false"
// in any case. An empty string is no value.
func coerceSimple(a *schema.Attribute, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch a.Type {
	case schema.Boolean:
		switch b := v.(type) {
		case bool:
			return b, nil
		case string:
			switch {
			case strings.EqualFold(b, "true"):
				return true, nil
			case strings.EqualFold(b, "false"):
				return false, nil
			}
		}
		return nil, badRequest(typeInvalidValue, "%s must be a boolean", a.Path())
	case schema.Integer, schema.Decimal:
		if n, ok := v.(json.Number); ok {
			if _, err := n.Int64(); a.Type == schema.Integer && err != nil {
				return nil, badRequest(typeInvalidValue, "%s must be an integer", a.Path())
			}
			return n, nil
		}
		return nil, badRequest(typeInvalidValue, "%s must be a number", a.Path())
	case schema.Complex:
		return nil, badRequest(typeInvalidValue, "%s is complex and must be a JSON object", a.Path())
	}
	s, ok := v.(string)
	if !ok {
		return nil, badRequest(typeInvalidValue, "%s must be a string", a.Path())
	}
	if s == "" {
		return nil, nil
	}
	if a.Type == schema.Binary {
		// RFC 7643 §2.3.6: base64 (RFC 4648 §4), padded; kept as sent.
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return nil, badRequest(typeInvalidValue, "%s is binary and must be base64 (RFC 4648 §4)", a.Path())
		}
	}
	if a.Type == schema.DateTime {
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return nil, badRequest(typeInvalidValue, "%s must be a dateTime (RFC 3339)", a.Path())
		}
	}
	if err := checkCanonical(a, s); err != nil {
		return nil, err
	}
	return s, nil
}
