package scimsvc

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// Host-defined extension schemas (Config.UserExtensions, Config.GroupExtensions) are part of the
// handler's resource types: decoding, PATCH paths, filters, projection and discovery all follow
// the resource type, so they serve them as they serve the enterprise extension. This file holds
// what is particular to them: their values' place in the store (store.Extensions), and the
// checks of their definitions that the built-in schemas need not make (required extensions,
// immutable attributes, uniqueness).

// extensionsFromTree returns the values of rt's host-defined extensions in t, in the form
// store.Extensions keeps them (numbers as float64).
func extensionsFromTree(rt *schema.ResourceType, t object) store.Extensions {
	var out store.Extensions
	for _, x := range rt.Extensions {
		if x.Schema.ID == schema.EnterpriseUserURN {
			continue
		}
		obj, _ := t[x.Schema.ID].(object)
		if len(obj) == 0 {
			continue
		}
		if out == nil {
			out = store.Extensions{}
		}
		out[x.Schema.ID] = storeValue(obj).(map[string]any)
	}
	return out
}

// storeValue deep-copies a tree value, turning json.Number into float64.
func storeValue(v any) any {
	switch v := v.(type) {
	case object:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = storeValue(e)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = storeValue(e)
		}
		return l
	case json.Number:
		f, _ := v.Float64()
		return f
	}
	return v
}

// hostDefined reports whether rt has host-defined extensions.
func hostDefined(rt *schema.ResourceType) bool {
	for _, x := range rt.Extensions {
		if x.Schema.ID != schema.EnterpriseUserURN {
			return true
		}
	}
	return false
}

// checkRequiredExtensions reports a required extension t has no value of, a required
// attribute of an extension t has values of but not that one, and a value of a complex
// attribute of an extension without one of its required sub-attributes. (The core schema's required
// attributes are checked by complete.)
func checkRequiredExtensions(rt *schema.ResourceType, t object) error {
	for _, x := range rt.Extensions {
		obj, _ := t[x.Schema.ID].(object)
		if len(obj) == 0 {
			if x.Required {
				return badRequest(typeInvalidValue, "the extension %s is required", x.Schema.ID)
			}
			continue
		}
		for _, a := range x.Schema.Attributes {
			v, ok := obj[a.Name]
			if a.Required && !ok {
				return badRequest(typeInvalidValue, "%s is required", a.Path())
			}
			if ok && a.Type == schema.Complex {
				if err := checkRequiredSubs(a, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkRequiredSubs reports a value of the complex attribute a (v, one value or a list of them)
// that lacks a required sub-attribute of a.
func checkRequiredSubs(a *schema.Attribute, v any) error {
	els, ok := v.([]any)
	if !ok {
		els = []any{v}
	}
	for _, s := range a.SubAttributes {
		if !s.Required {
			continue
		}
		for _, el := range els {
			if m, _ := el.(object); m[s.Name] == nil {
				return badRequest(typeInvalidValue, "%s is required in every value of %s", s.Path(), a.Path())
			}
		}
	}
	return nil
}

// checkImmutable reports a host-defined immutable attribute (or sub-attribute) that has a value
// in before and a different one in after.
func checkImmutable(rt *schema.ResourceType, before, after filter.Resource) error {
	for a := range rt.Attributes {
		if !schema.HostDefined(a) {
			continue
		}
		if a.Mutability == schema.Immutable {
			if err := sameValues(a, nil, before, after); err != nil {
				return err
			}
		}
		for _, s := range a.SubAttributes {
			if s.Mutability == schema.Immutable && a.Mutability != schema.Immutable {
				if err := sameValues(a, s, before, after); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func sameValues(a, sub *schema.Attribute, before, after filter.Resource) error {
	for i := 0; ; i++ {
		was, ok := before.FilterValue(a, sub, i)
		if !ok {
			return nil
		}
		now, _ := after.FilterValue(a, sub, i)
		if was.Kind != filter.Absent && !reflect.DeepEqual(was, now) {
			path := a.Path()
			if sub != nil {
				path = sub.Path()
			}
			return badRequest(typeMutability, "%s is immutable: its value cannot change", path)
		}
	}
}

// uniqueValues returns the values of res's host-defined attributes whose uniqueness is
// "server", keyed by attribute.
func uniqueValues(rt *schema.ResourceType, res filter.Resource) map[*schema.Attribute]filter.Value {
	var out map[*schema.Attribute]filter.Value
	for a := range rt.Attributes {
		if !schema.HostDefined(a) || a.Uniqueness != schema.ServerUnique {
			continue
		}
		if v, _ := res.FilterValue(a, nil, 0); v.Kind != filter.Absent {
			if out == nil {
				out = map[*schema.Attribute]filter.Value{}
			}
			out[a] = v
		}
	}
	return out
}

// uniqueKeys returns the values of res's host-defined attributes whose uniqueness is "server"
// as the store keeps them (store.User.Unique, store.Group.Unique), ordered by attribute: a
// string folded unless its attribute is caseExact, a number, boolean or dateTime in one
// canonical form. The store refuses a write that would give two resources of a tenant one of
// them, atomically, so that of concurrent writes of a value at most one succeeds.
func uniqueKeys(rt *schema.ResourceType, res filter.Resource) []store.UniqueValue {
	var out []store.UniqueValue
	for a, v := range uniqueValues(rt, res) {
		var key string
		switch v.Kind {
		case filter.KindString:
			key = v.Str
			if !a.CaseExact {
				key = schema.Fold(v.Str)
			}
		case filter.KindNumber:
			key = strconv.FormatFloat(v.Num, 'g', -1, 64)
		case filter.KindBool:
			key = strconv.FormatBool(v.Bool)
		case filter.KindTime:
			key = v.Time.UTC().Format(time.RFC3339Nano)
		default:
			continue
		}
		out = append(out, store.UniqueValue{Attr: a.Path(), Key: key})
	}
	slices.SortFunc(out, func(x, y store.UniqueValue) int { return strings.Compare(x.Attr, y.Attr) })
	return out
}

// checkUnique reports, as a 409 uniqueness error, a value of vals that another resource of the
// tenant (not the one with id self) has. It runs before the write to name the value in the
// error; the store's write, which holds the values (uniqueKeys), is what makes the rule hold
// under concurrent writes.
func (k *resources[T, P]) checkUnique(ctx context.Context, tenant, self string, vals map[*schema.Attribute]filter.Value) error {
	for a, v := range vals {
		var lit any
		switch v.Kind {
		case filter.KindString:
			lit = v.Str
		case filter.KindBool:
			lit = v.Bool
		case filter.KindNumber:
			lit = v.Num
		case filter.KindTime:
			lit = v.Time
		default:
			continue
		}
		b, err := json.Marshal(lit)
		if err != nil {
			return err
		}
		f, err := filter.Parse(a.Path()+" eq "+string(b), k.rt)
		if err != nil {
			return err
		}
		page, err := k.store.List(ctx, tenant, store.Query{Filter: f, Count: 2})
		if err != nil {
			return err
		}
		for i := range page.Resources {
			if id, _ := k.common(&page.Resources[i]); *id != self {
				return &Error{Status: http.StatusConflict, ScimType: typeUniqueness,
					Detail: a.Path() + " " + strconv.Quote(clip(string(b))) + " is taken by another " + k.rt.Name}
			}
		}
	}
	return nil
}

// checkCanonical reports a string value s of a host-defined attribute (or sub-attribute) a that
// has canonicalValues and is none of them (compared as a's caseExact says). The canonical
// values of the built-in schemas (emails.type and the like) stay suggestions, as RFC 7643 lets
// them be: clients send other types.
func checkCanonical(a *schema.Attribute, s string) error {
	if len(a.CanonicalValues) == 0 || !schema.HostDefined(a) {
		return nil
	}
	for _, c := range a.CanonicalValues {
		if c == s || !a.CaseExact && schema.Fold(c) == schema.Fold(s) {
			return nil
		}
	}
	return badRequest(typeInvalidValue, "%s must be one of its canonicalValues %s, not %s", a.Path(), quoteList(a.CanonicalValues), strconv.Quote(clip(s)))
}

func quoteList(l []string) string {
	b, _ := json.Marshal(l)
	return string(b)
}

// simpleKey is the identity of a value of the multi-valued simple attribute a: strings compared
// case-insensitively unless a is caseExact, numbers by value.
func simpleKey(a *schema.Attribute, v any) string {
	if n, ok := v.(json.Number); ok {
		if f, err := n.Float64(); err == nil {
			v = f
		}
	}
	return string(appendKey(nil, a, v))
}

// addSimpleValues returns the values of the multi-valued simple attribute a, list, with the
// values of add (a decoded []any) that are not there yet appended (RFC 7644 §3.5.2.1: a value
// already there is not added again).
func addSimpleValues(a *schema.Attribute, list, add any) any {
	have, _ := list.([]any)
	seen := make(map[string]bool, len(have))
	for _, v := range have {
		seen[simpleKey(a, v)] = true
	}
	vals, _ := add.([]any)
	for _, v := range vals {
		if k := simpleKey(a, v); !seen[k] {
			seen[k] = true
			have = append(have, v)
		}
	}
	return listOrNil(have)
}

// removeSimpleValues returns the values of the multi-valued simple attribute a, list, without
// those remove (a decoded []any) lists.
func removeSimpleValues(a *schema.Attribute, list, remove any) any {
	gone := map[string]bool{}
	vals, _ := remove.([]any)
	for _, v := range vals {
		gone[simpleKey(a, v)] = true
	}
	have, _ := list.([]any)
	kept := have[:0:0]
	for _, v := range have {
		if !gone[simpleKey(a, v)] {
			kept = append(kept, v)
		}
	}
	return listOrNil(kept)
}
