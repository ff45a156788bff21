package scimsvc

import (
	"strings"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// patchPath is a parsed PATCH path (RFC 7644 §3.5.2): an attribute, optionally a value filter
// on a complex attribute (multi-valued, or single-valued as in Entra ID's remove of
// manager[value eq "id"]), optionally a sub-attribute.
type patchPath struct {
	attr   *schema.Attribute // the top-level attribute
	filter filter.Expr       // the value filter of attr[filter], or nil
	sub    *schema.Attribute // the sub-attribute, or nil
}

// parsePath parses path against rt. It accepts `attr`, `attr.sub`, `urn:…:attr[.sub]`,
// `attr[filter]` and `attr[filter].sub` — the last form is outside RFC 7644's grammar for
// filters but inside its grammar for paths, and Entra ID sends it. attr[filter] may also name a
// single-valued complex attribute (Entra ID removes
// `urn:…:enterprise:2.0:User:manager[value eq "id"]`). Errors are invalidPath.
func parsePath(path string, rt *schema.ResourceType, lim filter.Limits) (*patchPath, error) {
	if strings.TrimSpace(path) == "" {
		return nil, badRequest(typeInvalidPath, "the path is empty")
	}
	open := strings.IndexByte(path, '[')
	if open < 0 {
		a, sub, err := rt.Lookup(strings.TrimSpace(path))
		if err != nil {
			return nil, badRequest(typeInvalidPath, "%s", err.Error())
		}
		return &patchPath{attr: a, sub: sub}, nil
	}
	end := closingBracket(path, open)
	if end < 0 {
		return nil, badRequest(typeInvalidPath, "path %q: the value filter has no closing ']'", clip(path))
	}
	var p *patchPath
	if a, sub, err := rt.Lookup(strings.TrimSpace(path[:open])); err == nil && sub == nil &&
		a.Type == schema.Complex && !a.MultiValued {
		f, err := lim.ParseValueFilter(path[open+1:end], a)
		if err != nil {
			return nil, badRequest(typeInvalidPath, "path %q: %s", clip(path), err.Error())
		}
		p = &patchPath{attr: a, filter: f}
	} else {
		e, err := lim.Parse(path[:end+1], rt)
		if err != nil {
			return nil, badRequest(typeInvalidPath, "path %q: %s", clip(path), err.Error())
		}
		vp, ok := e.(*filter.ValuePath)
		if !ok {
			return nil, badRequest(typeInvalidPath, "path %q: expected attribute[filter]", clip(path))
		}
		p = &patchPath{attr: vp.Attr, filter: vp.Filter}
	}
	rest := path[end+1:]
	switch {
	case rest == "":
	case rest[0] == '.' && len(rest) > 1:
		if p.sub = p.attr.Sub(rest[1:]); p.sub == nil {
			return nil, badRequest(typeInvalidPath, "path %q: %s has no sub-attribute %q", clip(path), p.attr.Path(), clip(rest[1:]))
		}
	default:
		return nil, badRequest(typeInvalidPath, "path %q: unexpected text after ']'", clip(path))
	}
	return p, nil
}

// closingBracket returns the index of the ']' that closes the '[' at open, skipping quoted
// strings, or -1.
func closingBracket(s string, open int) int {
	inString := false
	for i := open + 1; i < len(s); i++ {
		switch c := s[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && c == ']':
			return i
		}
	}
	return -1
}

// elementResource lets filter.Match evaluate a value filter against one value of a multi-valued
// attribute, held as a tree object.
type elementResource struct{ el object }

func (e elementResource) FilterValue(a, sub *schema.Attribute, i int) (filter.Value, bool) {
	if i > 0 {
		return filter.Value{}, false
	}
	if sub == nil {
		return filter.ComplexValue(len(e.el) > 0), true
	}
	switch v := e.el[sub.Name].(type) {
	case string:
		return filter.StringValue(v), true
	case bool:
		return filter.BoolValue(v), true
	}
	if sub.Type == schema.Boolean {
		return filter.BoolValue(false), true // a primary that is not set is false
	}
	return filter.Value{}, true
}

// matches reports whether the element satisfies the value filter f.
func matches(f filter.Expr, el object) bool { return filter.Match(f, elementResource{el}) }

// equalities returns the sub-attribute values a filter made only of "sub eq literal" joined by
// "and" requires, so an add or replace that finds no matching value can create one
// (emails[type eq "work"].value); ok is false for any other filter.
func equalities(f filter.Expr) (object, bool) {
	out := object{}
	var walk func(e filter.Expr) bool
	walk = func(e filter.Expr) bool {
		switch e := e.(type) {
		case *filter.And:
			return walk(e.Left) && walk(e.Right)
		case *filter.Compare:
			if e.Op != filter.Eq || e.Sub == nil || e.Filter != nil || !writable(e.Sub) {
				return false
			}
			switch e.Value.Kind {
			case filter.KindString:
				out[e.Sub.Name] = e.Value.Str
			case filter.KindBool:
				if e.Value.Bool {
					out[e.Sub.Name] = true
				}
			default:
				return false
			}
			return true
		}
		return false
	}
	if !walk(f) {
		return nil, false
	}
	return out, true
}
