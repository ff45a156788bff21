package schema

import (
	"fmt"
	"strings"
)

// Type is a SCIM attribute data type (RFC 7643 §2.3).
type Type string

// The SCIM data types.
const (
	String    Type = "string"
	Boolean   Type = "boolean"
	Decimal   Type = "decimal"
	Integer   Type = "integer"
	DateTime  Type = "dateTime"
	Binary    Type = "binary"
	Reference Type = "reference"
	Complex   Type = "complex"
)

// Mutability says whether and how a client may change an attribute (RFC 7643 §7).
type Mutability string

// The mutability values.
const (
	ReadOnly  Mutability = "readOnly"
	ReadWrite Mutability = "readWrite"
	Immutable Mutability = "immutable"
	WriteOnly Mutability = "writeOnly"
)

// Returned says when an attribute appears in a response (RFC 7643 §7).
type Returned string

// The returned values.
const (
	Always    Returned = "always"
	Never     Returned = "never"
	Default   Returned = "default"
	OnRequest Returned = "request"
)

// Uniqueness says over what scope an attribute's value is unique (RFC 7643 §7).
type Uniqueness string

// The uniqueness values. A tenant is what RFC 7643 calls the server.
const (
	NotUnique    Uniqueness = "none"
	ServerUnique Uniqueness = "server"
	GlobalUnique Uniqueness = "global"
)

// Attribute is one attribute definition. Its JSON form is the attribute representation of
// RFC 7643 §7, as served under /Schemas. An Attribute reached through a ResourceType must not be
// modified: it is shared by every user of the table.
type Attribute struct {
	Name            string       `json:"name"`
	Type            Type         `json:"type"`
	MultiValued     bool         `json:"multiValued"`
	Description     string       `json:"description"`
	Required        bool         `json:"required"`
	CanonicalValues []string     `json:"canonicalValues,omitempty"`
	CaseExact       bool         `json:"caseExact"`
	Mutability      Mutability   `json:"mutability"`
	Returned        Returned     `json:"returned"`
	Uniqueness      Uniqueness   `json:"uniqueness"`
	ReferenceTypes  []string     `json:"referenceTypes,omitempty"`
	SubAttributes   []*Attribute `json:"subAttributes,omitempty"`

	// Schema is the URN of the schema that defines the attribute; for a sub-attribute, the
	// parent's schema.
	Schema string `json:"-"`
	// Parent is the complex attribute a sub-attribute belongs to; nil for a top-level one.
	Parent *Attribute `json:"-"`
	// Extension is set on the attributes (and sub-attributes) of an extension schema, whose
	// paths are written URN-qualified.
	Extension bool `json:"-"`
	// Unfilterable marks an attribute that stores do not keep (it is derived when a response is
	// written), so a filter may not name it.
	Unfilterable bool `json:"-"`
}

// Sub returns the sub-attribute called name (case-insensitively), or nil.
func (a *Attribute) Sub(name string) *Attribute {
	for _, s := range a.SubAttributes {
		if strings.EqualFold(s.Name, name) {
			return s
		}
	}
	return nil
}

// Path is the attribute's canonical path: "userName", "name.familyName", and for an extension
// attribute its URN-qualified form
// "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager.value".
func (a *Attribute) Path() string {
	var b strings.Builder
	top := a
	if a.Parent != nil {
		top = a.Parent
	}
	if top.Extension {
		b.WriteString(top.Schema)
		b.WriteByte(':')
	}
	b.WriteString(top.Name)
	if a.Parent != nil {
		b.WriteByte('.')
		b.WriteString(a.Name)
	}
	return b.String()
}

// Schema is a schema definition (RFC 7643 §7).
type Schema struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Attributes  []*Attribute `json:"attributes"`
}

// Attribute returns the top-level attribute called name (case-insensitively), or nil.
func (s *Schema) Attribute(name string) *Attribute {
	for _, a := range s.Attributes {
		if strings.EqualFold(a.Name, name) {
			return a
		}
	}
	return nil
}

// Extension is a schema extension of a resource type.
type Extension struct {
	Schema   *Schema
	Required bool
}

// ResourceType describes one kind of resource: its core schema, its extensions and the common
// attributes (id, externalId, meta) that every resource carries (RFC 7643 §3.1, §6).
type ResourceType struct {
	Name        string
	Endpoint    string
	Description string
	Schema      *Schema
	Extensions  []Extension
	// Common holds id, externalId, meta and schemas (multi-valued, read-only, derived: the core
	// schema's URN, then the URN of each extension the resource has a value of). They belong to
	// no schema's attribute list but may be named, with or without the core schema's URN,
	// wherever an attribute path is accepted.
	Common []*Attribute

	lookup map[string]*Attribute // lower-cased unqualified name -> attribute
}

// aliases maps spellings some clients use to the canonical attribute name.
func alias(name string) string {
	if strings.EqualFold(name, "external_id") {
		return "externalId"
	}
	return name
}

// PathError reports an attribute path that does not name an attribute of the resource type.
type PathError struct {
	Path string
	Msg  string
}

func (e *PathError) Error() string { return fmt.Sprintf("attribute path %q: %s", clip(e.Path), e.Msg) }

// clip shortens a name quoted in an error message.
func clip(s string) string {
	if len(s) > 128 {
		return s[:125] + "..."
	}
	return s
}

// Lookup resolves an attribute path of the resource type: an optional schema URN followed by
// ':', an attribute name, and an optional '.'-separated sub-attribute name. Names are matched
// case-insensitively, "external_id" is accepted for "externalId", and an unqualified name that is
// not a core or common attribute resolves to the extension attribute of that name if exactly one
// extension has it. It returns the top-level attribute and the sub-attribute (nil when the path
// names none), or a *PathError.
func (rt *ResourceType) Lookup(path string) (attr, sub *Attribute, err error) {
	rest := path
	var scope *Schema
	if len(path) > 4 && strings.EqualFold(path[:4], "urn:") {
		scope, rest = rt.schemaOf(path)
		if scope == nil {
			return nil, nil, &PathError{Path: path, Msg: "unknown schema URN"}
		}
		if rest == "" {
			return nil, nil, &PathError{Path: path, Msg: "names a schema, not an attribute"}
		}
	}
	name, subName, dotted := strings.Cut(rest, ".")
	name = alias(name)
	switch {
	case scope == nil:
		attr = rt.unqualified(name)
	case scope == rt.Schema:
		attr = scope.Attribute(name)
		if attr == nil {
			attr = rt.common(name)
		}
	default:
		attr = scope.Attribute(name)
	}
	if attr == nil {
		return nil, nil, &PathError{Path: path, Msg: fmt.Sprintf("%s has no attribute %q", rt.Name, clip(name))}
	}
	if !dotted {
		return attr, nil, nil
	}
	if attr.Type != Complex {
		return nil, nil, &PathError{Path: path, Msg: fmt.Sprintf("%s has no sub-attributes", attr.Name)}
	}
	if sub = attr.Sub(subName); sub == nil {
		return nil, nil, &PathError{Path: path, Msg: fmt.Sprintf("%s has no sub-attribute %q", attr.Name, clip(subName))}
	}
	return attr, sub, nil
}

// schemaOf splits a URN-qualified path into its schema (core or extension) and the remainder
// after the ':' that ends the URN. The longest matching URN wins.
func (rt *ResourceType) schemaOf(path string) (*Schema, string) {
	var best *Schema
	for _, s := range rt.Schemas() {
		if len(path) >= len(s.ID) && strings.EqualFold(path[:len(s.ID)], s.ID) &&
			(len(path) == len(s.ID) || path[len(s.ID)] == ':') {
			if best == nil || len(s.ID) > len(best.ID) {
				best = s
			}
		}
	}
	if best == nil {
		return nil, ""
	}
	return best, strings.TrimPrefix(path[len(best.ID):], ":")
}

func (rt *ResourceType) common(name string) *Attribute {
	for _, a := range rt.Common {
		if strings.EqualFold(a.Name, name) {
			return a
		}
	}
	return nil
}

func (rt *ResourceType) unqualified(name string) *Attribute {
	if len(name) <= 64 && rt.lookup != nil {
		var buf [64]byte
		return rt.lookup[string(lowerASCII(buf[:0], name))]
	}
	if a := rt.Schema.Attribute(name); a != nil {
		return a
	}
	if a := rt.common(name); a != nil {
		return a
	}
	var found *Attribute
	for _, ext := range rt.Extensions {
		if a := ext.Schema.Attribute(name); a != nil {
			if found != nil {
				return nil
			}
			found = a
		}
	}
	return found
}

func lowerASCII(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Schemas returns the core schema followed by the extension schemas.
func (rt *ResourceType) Schemas() []*Schema {
	out := make([]*Schema, 0, 1+len(rt.Extensions))
	out = append(out, rt.Schema)
	for _, e := range rt.Extensions {
		out = append(out, e.Schema)
	}
	return out
}

// Attributes calls yield for every top-level attribute of the resource type: common ones, then
// core, then each extension's.
func (rt *ResourceType) Attributes(yield func(*Attribute) bool) {
	for _, a := range rt.Common {
		if !yield(a) {
			return
		}
	}
	for _, s := range rt.Schemas() {
		for _, a := range s.Attributes {
			if !yield(a) {
				return
			}
		}
	}
}

// link sets Schema and Parent on every attribute of s, and returns s.
func link(s *Schema) *Schema {
	for _, a := range s.Attributes {
		linkAttr(a, s.ID)
	}
	return s
}

func linkAttr(a *Attribute, urn string) {
	a.Schema = urn
	for _, sub := range a.SubAttributes {
		sub.Schema = urn
		sub.Parent = a
	}
}

// newResourceType links the common attributes and builds the unqualified-name index. Common
// attributes shared with the resource type an extended one is made from (WithExtensions) are
// linked already, and are only read: extending a resource type in several goroutines at once
// writes nothing they share.
func newResourceType(rt *ResourceType) *ResourceType {
	for _, a := range rt.Common {
		if a.Schema != rt.Schema.ID {
			linkAttr(a, rt.Schema.ID)
		}
	}
	rt.lookup = make(map[string]*Attribute)
	ambiguous := map[string]bool{}
	for _, ext := range rt.Extensions {
		for _, a := range ext.Schema.Attributes {
			k := strings.ToLower(a.Name)
			if _, dup := rt.lookup[k]; dup {
				ambiguous[k] = true
			}
			rt.lookup[k] = a
		}
	}
	for _, ext := range rt.Extensions {
		for _, a := range ext.Schema.Attributes {
			if a.Extension { // marked already: shared with another resource type
				continue
			}
			a.Extension = true
			for _, sub := range a.SubAttributes {
				sub.Extension = true
			}
		}
	}
	for k := range ambiguous {
		delete(rt.lookup, k)
	}
	for _, a := range rt.Schema.Attributes {
		rt.lookup[strings.ToLower(a.Name)] = a
	}
	for _, a := range rt.Common {
		rt.lookup[strings.ToLower(a.Name)] = a
	}
	rt.lookup["external_id"] = rt.lookup["externalid"]
	return rt
}
