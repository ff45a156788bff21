package scimsvc

import (
	"strconv"
	"time"

	"github.com/visid/visid/internal/jsonenc"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// encoder writes SCIM resources as JSON straight from a filter.Resource, walking the schema table
// in order, so responses list attributes in schema order and no intermediate map is built.
type encoder struct {
	buf   []byte
	first bool // the object being written has no member yet
}

// resourceOut describes one resource to write.
type resourceOut struct {
	rt       *schema.ResourceType
	res      filter.Resource
	base     string // Config.BaseURL
	tenant   string
	id       string // meta.location is base/tenant/Endpoint/id
	extended bool   // the resource has a value in an extension schema
}

// writeResource appends the JSON object of r under projection p.
func (e *encoder) writeResource(r *resourceOut, p *projection) {
	e.schemas(r, p)
	var meta *schema.Attribute
	for _, a := range r.rt.Common {
		switch a.Name {
		case "schemas": // written first, by schemas
			continue
		case "meta":
			meta = a
			continue
		}
		e.attribute(r, a, p)
	}
	for _, a := range r.rt.Schema.Attributes {
		e.attribute(r, a, p)
	}
	e.extensions(r, r.rt.Extensions, p)
	e.meta(r, meta, p)
	e.buf = append(e.buf, '}')
}

// schemas opens the object of r and appends its schemas: the core schema's URN, then, when the
// resource has a value in an extension that p selects, the URNs of the extensions (of several,
// only those it has values of). It clears r.extended when p selects no extension value.
func (e *encoder) schemas(r *resourceOut, p *projection) {
	e.buf = append(e.buf, `{"schemas":[`...)
	e.str(r.rt.Schema.ID)
	if r.extended && (p.only != nil || p.except != nil) {
		r.extended = selectsExtension(r, p)
	}
	if r.extended {
		for _, x := range r.rt.Extensions {
			if len(r.rt.Extensions) > 1 && !hasExtensionValue(r, x.Schema, p) {
				continue // of several extensions, only those the resource has values of
			}
			e.buf = append(e.buf, ',')
			e.str(x.Schema.ID)
		}
	}
	e.buf = append(e.buf, ']')
	e.first = false
}

// extensions appends, when r.extended, an object for each extension of xs that has a value p
// selects.
func (e *encoder) extensions(r *resourceOut, xs []schema.Extension, p *projection) {
	if !r.extended {
		return
	}
	for _, x := range xs {
		mark := len(e.buf)
		e.buf = append(e.buf, ',')
		e.str(x.Schema.ID)
		e.buf = append(e.buf, ':', '{')
		e.first = true
		for _, a := range x.Schema.Attributes {
			e.attribute(r, a, p)
		}
		if e.first { // nothing of the extension selected
			e.buf = e.buf[:mark]
		} else {
			e.buf = append(e.buf, '}')
		}
		e.first = false
	}
}

// selectsExtension reports whether p selects an extension attribute that has a value.
func selectsExtension(r *resourceOut, p *projection) bool {
	for _, x := range r.rt.Extensions {
		if hasExtensionValue(r, x.Schema, p) {
			return true
		}
	}
	return false
}

// hasExtensionValue reports whether p selects an attribute of the extension schema s that has a
// value.
func hasExtensionValue(r *resourceOut, s *schema.Schema, p *projection) bool {
	for _, a := range s.Attributes {
		if v, _ := r.res.FilterValue(a, nil, 0); v.Kind != filter.Absent && p.attr(a) {
			return true
		}
	}
	return false
}

// attribute appends ,"name":value for a top-level attribute when it has a value and p selects it.
func (e *encoder) attribute(r *resourceOut, a *schema.Attribute, p *projection) {
	if !p.attr(a) {
		return
	}
	switch {
	case a.MultiValued:
		mark, first := len(e.buf), e.first
		e.key(a.Name)
		e.buf = append(e.buf, '[')
		n := 0
		for i := 0; ; i++ {
			v, ok := r.res.FilterValue(a, nil, i)
			if !ok {
				break
			}
			if v.Kind == filter.Absent {
				continue
			}
			if n > 0 {
				e.buf = append(e.buf, ',')
			}
			if a.Type == schema.Complex {
				e.complex(r, a, i, p)
			} else {
				e.value(v) // a multi-valued simple attribute of a host-defined extension
			}
			n++
		}
		if n == 0 {
			e.buf, e.first = e.buf[:mark], first
			return
		}
		e.buf = append(e.buf, ']')
	case a.Type == schema.Complex:
		if v, _ := r.res.FilterValue(a, nil, 0); v.Kind == filter.Absent {
			return
		}
		e.key(a.Name)
		e.complex(r, a, 0, p)
	default:
		v, _ := r.res.FilterValue(a, nil, 0)
		if v.Kind == filter.Absent {
			return
		}
		e.key(a.Name)
		e.value(v)
	}
}

// complex appends the object of the i-th value of the complex attribute a. Sub-attribute booleans
// are written only when true (primary), and $ref of groups and members is derived from value.
func (e *encoder) complex(r *resourceOut, a *schema.Attribute, i int, p *projection) {
	e.buf = append(e.buf, '{')
	e.first = true
	var ref *schema.Attribute
	var value string
	for _, s := range a.SubAttributes {
		if !p.sub(a, s) {
			continue
		}
		if s.Unfilterable {
			ref = s
			continue
		}
		v, _ := r.res.FilterValue(a, s, i)
		if v.Kind == filter.Absent || v.Kind == filter.KindBool && !v.Bool {
			continue
		}
		if s.Name == "value" {
			value = v.Str
		}
		e.key(s.Name)
		e.value(v)
	}
	if ref != nil && value != "" {
		if endpoint := refEndpoint(a); endpoint != "" {
			e.key(ref.Name)
			e.ref(r, endpoint, value)
		}
	}
	e.buf = append(e.buf, '}')
	e.first = false
}

// refEndpoint is the path segment a derived $ref points into.
func refEndpoint(a *schema.Attribute) string {
	switch a.Name {
	case "groups":
		return "/Groups/"
	case "members":
		return "/Users/"
	}
	return ""
}

// meta appends the meta attribute: resourceType always, the rest as p selects.
func (e *encoder) meta(r *resourceOut, meta *schema.Attribute, p *projection) {
	e.buf = append(e.buf, `,"meta":{`...)
	e.first = true
	for _, s := range meta.SubAttributes {
		if !p.sub(meta, s) {
			continue
		}
		if s.Name == "location" {
			e.key(s.Name)
			e.location(r)
			continue
		}
		if v, _ := r.res.FilterValue(meta, s, 0); v.Kind != filter.Absent {
			e.key(s.Name)
			e.value(v)
		}
	}
	e.buf = append(e.buf, '}')
	e.first = false
}

// location appends meta.location of r as a JSON string: base/tenant/Endpoint/id. Escaping the
// parts one by one gives the bytes of escaping the whole, as they are joined by ASCII.
func (e *encoder) location(r *resourceOut) {
	e.buf = append(e.buf, '"')
	e.buf = jsonenc.AppendEscaped(e.buf, r.base)
	e.buf = append(e.buf, '/')
	e.buf = jsonenc.AppendEscaped(e.buf, r.tenant)
	e.buf = jsonenc.AppendEscaped(e.buf, r.rt.Endpoint)
	e.buf = append(e.buf, '/')
	e.buf = jsonenc.AppendEscaped(e.buf, r.id)
	e.buf = append(e.buf, '"')
}

// ref appends the $ref of the resource with id under endpoint ("/Groups/") of r's tenant as a
// JSON string.
func (e *encoder) ref(r *resourceOut, endpoint, id string) {
	e.buf = append(e.buf, '"')
	e.buf = jsonenc.AppendEscaped(e.buf, r.base)
	e.buf = append(e.buf, '/')
	e.buf = jsonenc.AppendEscaped(e.buf, r.tenant)
	e.buf = append(e.buf, endpoint...)
	e.buf = jsonenc.AppendEscaped(e.buf, id)
	e.buf = append(e.buf, '"')
}

// key appends "name": preceded by a comma unless it is the object's first member.
func (e *encoder) key(name string) {
	if !e.first {
		e.buf = append(e.buf, ',')
	}
	e.first = false
	e.buf = append(e.buf, '"')
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, '"', ':')
}

// value appends the JSON of the simple value v.
func (e *encoder) value(v filter.Value) {
	switch v.Kind {
	case filter.KindBool:
		if v.Bool {
			e.buf = append(e.buf, "true"...)
		} else {
			e.buf = append(e.buf, "false"...)
		}
	case filter.KindNumber:
		e.buf = strconv.AppendFloat(e.buf, v.Num, 'f', -1, 64)
	case filter.KindTime:
		e.instant(v.Time)
	default:
		e.str(v.Str)
	}
}

// instant appends t as a JSON string: in UTC, RFC 3339 with as many fractional digits as it has.
func (e *encoder) instant(t time.Time) {
	e.buf = append(e.buf, '"')
	e.buf = t.UTC().AppendFormat(e.buf, time.RFC3339Nano)
	e.buf = append(e.buf, '"')
}

// str appends s as a JSON string.
func (e *encoder) str(s string) {
	e.buf = append(e.buf, '"')
	e.buf = jsonenc.AppendEscaped(e.buf, s)
	e.buf = append(e.buf, '"')
}
