package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// This file lets a host add its own extension schemas to a resource type, such as the custom
// extensions Microsoft Entra ID sends under
// "urn:ietf:params:scim:schemas:extension:CustomExtensionName:2.0:User".

// builtin reports whether urn is a schema visid defines itself (core or enterprise).
func builtin(urn string) bool {
	return strings.EqualFold(urn, UserURN) || strings.EqualFold(urn, GroupURN) || strings.EqualFold(urn, EnterpriseUserURN)
}

// HostDefined reports whether a is an attribute (or sub-attribute) of an extension schema added
// with WithExtensions: its values live in the resource's Extensions, not in typed fields.
func HostDefined(a *Attribute) bool { return a.Extension && !builtin(a.Schema) }

// attrName is RFC 7643 §2.1's ATTRNAME: ALPHA *(nameChar); "$ref" is allowed for references.
var attrName = regexp.MustCompile(`^(\$ref|[A-Za-z][A-Za-z0-9_-]*)$`)

// WithExtensions returns a new resource type: rt with the extension schemas exts added after its
// own. rt is left as it is, and so are the schemas of exts: they are copied. Each schema is
// checked (see CheckSchema), and its URN must differ from every schema rt already has.
func (rt *ResourceType) WithExtensions(exts ...Extension) (*ResourceType, error) {
	if len(exts) == 0 {
		return rt, nil
	}
	out := &ResourceType{Name: rt.Name, Endpoint: rt.Endpoint, Description: rt.Description, Schema: rt.Schema, Common: rt.Common}
	out.Extensions = append(out.Extensions, rt.Extensions...)
	for _, x := range exts {
		if x.Schema == nil {
			return nil, fmt.Errorf("schema: an extension of %s has no schema", rt.Name)
		}
		c := copySchema(x.Schema)
		if err := CheckSchema(c); err != nil {
			return nil, err
		}
		for _, s := range out.Schemas() {
			if strings.EqualFold(s.ID, x.Schema.ID) {
				return nil, fmt.Errorf("schema: %s already has the schema %q", rt.Name, x.Schema.ID)
			}
		}
		for _, a := range c.Attributes {
			a.Extension = true
			for _, sub := range a.SubAttributes {
				sub.Extension = true
			}
		}
		out.Extensions = append(out.Extensions, Extension{Schema: link(c), Required: x.Required})
	}
	// newResourceType marks extension attributes; the built-in extensions' are marked already.
	return newResourceType(out), nil
}

func copySchema(s *Schema) *Schema {
	c := *s
	c.Attributes = make([]*Attribute, len(s.Attributes))
	for i, a := range s.Attributes {
		c.Attributes[i] = copyAttr(a)
	}
	return &c
}

func copyAttr(a *Attribute) *Attribute {
	c := *a
	c.Parent, c.Extension, c.Unfilterable = nil, false, false
	c.CanonicalValues = append([]string(nil), a.CanonicalValues...)
	c.ReferenceTypes = append([]string(nil), a.ReferenceTypes...)
	c.SubAttributes = nil
	for _, s := range a.SubAttributes {
		c.SubAttributes = append(c.SubAttributes, copyAttr(s))
	}
	return &c
}

// CheckSchema fills the empty mutability, returned and uniqueness of s's attributes with RFC
// 7643's defaults and checks that s is a usable extension schema in the representation of RFC 7643 §7:
// an id starting "urn:", and attributes with valid, distinct names (sub-attributes too), a known type,
// mutability, returned and uniqueness ("global" uniqueness is not supported, "server" only on
// a single-valued simple attribute), sub-attributes only on a complex attribute, which must
// have some, and no complex or multi-valued sub-attribute. Top-level attributes may be
// multi-valued, simple or complex (RFC 7643 §2.4). The error names the attribute at fault.
func CheckSchema(s *Schema) error {
	if !strings.HasPrefix(s.ID, "urn:") || strings.ContainsAny(s.ID, " \t\r\n\"") {
		return fmt.Errorf("schema: extension schema id %q is not a URN (\"urn:…\", lower-case \"urn\", no spaces or quotes)", clip(s.ID))
	}
	if builtin(s.ID) {
		return fmt.Errorf("schema: %q is a built-in schema, not an extension to add", s.ID)
	}
	if len(s.Attributes) == 0 {
		return fmt.Errorf("schema: extension schema %q has no attributes", s.ID)
	}
	return checkAttrs(s.ID+":", s.Attributes, false)
}

func checkAttrs(prefix string, attrs []*Attribute, sub bool) error {
	seen := map[string]bool{}
	for i, a := range attrs {
		if a == nil {
			return fmt.Errorf("schema: %sattribute %d is null", prefix, i)
		}
		path := prefix + a.Name
		if !attrName.MatchString(a.Name) {
			return fmt.Errorf("schema: attribute %q: not a valid attribute name", clip(path))
		}
		if seen[strings.ToLower(a.Name)] {
			return fmt.Errorf("schema: attribute %q is defined twice", clip(path))
		}
		seen[strings.ToLower(a.Name)] = true
		switch a.Type {
		case String, Boolean, Decimal, Integer, DateTime, Binary, Reference, Complex:
		default:
			return fmt.Errorf("schema: attribute %q: unknown type %q", clip(path), clip(string(a.Type)))
		}
		switch a.Mutability {
		case "":
			a.Mutability = ReadWrite
		case ReadOnly, ReadWrite, Immutable, WriteOnly:
		default:
			return fmt.Errorf("schema: attribute %q: unknown mutability %q", clip(path), clip(string(a.Mutability)))
		}
		switch a.Returned {
		case "":
			a.Returned = Default
		case Always, Never, Default, OnRequest:
		default:
			return fmt.Errorf("schema: attribute %q: unknown returned %q", clip(path), clip(string(a.Returned)))
		}
		switch a.Uniqueness {
		case "":
			a.Uniqueness = NotUnique
		case NotUnique, ServerUnique:
		case GlobalUnique:
			return fmt.Errorf("schema: attribute %q: uniqueness \"global\" is not supported (use \"server\")", clip(path))
		default:
			return fmt.Errorf("schema: attribute %q: unknown uniqueness %q", clip(path), clip(string(a.Uniqueness)))
		}
		if a.MultiValued && sub {
			return fmt.Errorf("schema: attribute %q: a sub-attribute cannot be multi-valued", clip(path))
		}
		if a.Uniqueness == ServerUnique && (a.Type == Complex || a.MultiValued || sub) {
			return fmt.Errorf("schema: attribute %q: only a single-valued simple attribute can be unique", clip(path))
		}
		if a.Mutability == WriteOnly && a.Returned != Never {
			return fmt.Errorf("schema: attribute %q: a writeOnly attribute must have returned \"never\"", clip(path))
		}
		if a.Type == Complex {
			if sub {
				return fmt.Errorf("schema: attribute %q: a sub-attribute cannot be complex", clip(path))
			}
			if len(a.SubAttributes) == 0 {
				return fmt.Errorf("schema: attribute %q: a complex attribute needs subAttributes", clip(path))
			}
			if err := checkAttrs(path+".", a.SubAttributes, true); err != nil {
				return err
			}
		} else if len(a.SubAttributes) > 0 {
			return fmt.Errorf("schema: attribute %q: only a complex attribute has subAttributes", clip(path))
		}
	}
	return nil
}
