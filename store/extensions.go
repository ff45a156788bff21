package store

import (
	"time"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// Extensions holds a resource's values of the extension schemas a host adds to a resource type
// (schema.ResourceType.WithExtensions): the enterprise extension has typed fields instead. It
// maps a schema URN, as the schema's id spells it, to the extension's object, which maps an
// attribute name, as the definition spells it, to its value: a string (string, binary,
// reference and dateTime attributes; a dateTime in RFC 3339 form), a bool, a float64 (integer
// and decimal), a map[string]any (a complex value, keyed the same way), a []any of
// map[string]any (a multi-valued complex attribute) or a []any of simple values (a
// multi-valued simple attribute). Absent values have no key, and an
// extension without values no entry. A store keeps the values as they are given, without the
// definitions: checking them is the caller's job (scimsvc does it).
type Extensions map[string]map[string]any

// Clone returns a deep copy of x (nil for an empty one).
func (x Extensions) Clone() Extensions {
	if len(x) == 0 {
		return nil
	}
	out := make(Extensions, len(x))
	for urn, obj := range x {
		out[urn] = cloneValue(obj).(map[string]any)
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = cloneValue(e)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = cloneValue(e)
		}
		return l
	}
	return v
}

// FilterValue implements filter.Resource's contract for a (and sub) of a host-defined extension
// (schema.HostDefined).
func (x Extensions) FilterValue(a, sub *schema.Attribute, i int) (filter.Value, bool) {
	v := x[a.Schema][a.Name]
	if a.MultiValued {
		list, _ := v.([]any)
		if i >= len(list) {
			return filter.Value{}, false
		}
		v = list[i]
	} else if i > 0 {
		return filter.Value{}, false
	}
	if a.Type == schema.Complex {
		m, _ := v.(map[string]any)
		if sub == nil {
			return filter.ComplexValue(len(m) > 0), true
		}
		return ExtensionValue(sub, m[sub.Name]), true
	}
	return ExtensionValue(a, v), true
}

// ExtensionValue is the filter.Value of v, a simple value of attribute a kept in Extensions.
func ExtensionValue(a *schema.Attribute, v any) filter.Value {
	switch v := v.(type) {
	case string:
		if a.Type == schema.DateTime {
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				return filter.TimeValue(t)
			}
		}
		return filter.StringValue(v)
	case bool:
		return filter.BoolValue(v)
	case float64:
		return filter.NumberValue(v)
	}
	return filter.Value{}
}
