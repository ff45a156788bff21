package scimsvc

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/visid/visid/store/schema"
)

// projection is what the attributes and excludedAttributes query parameters (RFC 7644 §3.9) ask
// for. The zero projection returns every attribute whose returned characteristic is "default" or
// "always". id, schemas and meta.resourceType are always returned, write-only attributes never.
type projection struct {
	// only holds the attributes and sub-attributes named by attributes=; nil when the parameter
	// is absent. Naming an attribute returns it whole; naming a sub-attribute returns the
	// attribute with that sub-attribute.
	only map[*schema.Attribute]bool
	// except holds the attributes and sub-attributes named by excludedAttributes=.
	except map[*schema.Attribute]bool
}

// requestProjection is the projection of r's query string (parseProjection); a request without
// one has the zero projection, found without parsing.
func requestProjection(r *http.Request, rt *schema.ResourceType) projection {
	if r.URL.RawQuery == "" {
		return projection{}
	}
	return parseProjection(r.URL.Query(), rt)
}

// parseProjection reads attributes and excludedAttributes from q. Names that do not resolve to an
// attribute of rt are ignored: clients ask for attributes of schemas they assume, and an unknown
// name selects nothing. When both parameters are given, attributes wins.
func parseProjection(q url.Values, rt *schema.ResourceType) projection {
	return projectionOf(q["attributes"], q["excludedAttributes"], rt)
}

// projectionOf is the projection of the attributes and excludedAttributes parameters (nil:
// absent, as in a url.Values or a POST /.search body).
func projectionOf(attributes, excluded []string, rt *schema.ResourceType) projection {
	var p projection
	if attributes != nil {
		p.only = attrSet(attributes, rt)
	} else if excluded != nil {
		p.except = attrSet(excluded, rt)
	}
	return p
}

// empty reports whether p is the zero projection: no attributes or excludedAttributes.
func (p *projection) empty() bool { return p.only == nil && p.except == nil }

// attrSet resolves comma-separated attribute paths. A schema URN alone names every attribute of
// that schema.
func attrSet(values []string, rt *schema.ResourceType) map[*schema.Attribute]bool {
	set := map[*schema.Attribute]bool{}
	for _, v := range values {
		for _, path := range strings.Split(v, ",") {
			path = strings.TrimSpace(path)
			if path == "" {
				continue
			}
			if s := schemaNamed(rt, path); s != nil {
				for _, a := range s.Attributes {
					set[a] = true
				}
				continue
			}
			a, sub, err := rt.Lookup(path)
			if err != nil {
				continue
			}
			if sub != nil {
				set[sub] = true
			} else {
				set[a] = true
			}
		}
	}
	return set
}

// schemaNamed returns the schema of rt whose URN is s (case-insensitively), or nil.
func schemaNamed(rt *schema.ResourceType, s string) *schema.Schema {
	for _, sc := range rt.Schemas() {
		if strings.EqualFold(sc.ID, s) {
			return sc
		}
	}
	return nil
}

// attr reports whether the top-level attribute a appears in the response (perhaps only some of
// its sub-attributes).
func (p *projection) attr(a *schema.Attribute) bool {
	switch {
	case a.Returned == schema.Never:
		return false
	case a.Returned == schema.Always || a.Name == "meta" && a.Parent == nil:
		return true // meta always carries resourceType
	case p.only != nil:
		if p.only[a] {
			return true
		}
		for _, s := range a.SubAttributes {
			if p.only[s] {
				return true
			}
		}
		return false
	case p.except[a]:
		return false
	}
	return a.Returned != schema.OnRequest
}

// sub reports whether sub-attribute s of a appears, given that a does.
func (p *projection) sub(a, s *schema.Attribute) bool {
	switch {
	case s.Returned == schema.Never:
		return false
	case s.Returned == schema.Always || a.Name == "meta" && s.Name == "resourceType":
		return true
	case p.only != nil:
		return p.only[a] || p.only[s]
	case p.except[a] || p.except[s]:
		return false
	}
	return s.Returned != schema.OnRequest
}
