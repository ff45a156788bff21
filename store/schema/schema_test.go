package schema_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store/schema"
)

const (
	core = schema.UserURN + ":"
	ent  = schema.EnterpriseUserURN + ":"
)

func TestLookup(t *testing.T) {
	user, group := schema.User(), schema.Group()
	tests := []struct {
		rt   *schema.ResourceType
		path string
		want string // the canonical path of what Lookup returns
	}{
		{user, "userName", "userName"},
		{user, "USERNAME", "userName"},
		{user, "username", "userName"},
		{user, core + "userName", "userName"},
		{user, strings.ToUpper(core) + "USERNAME", "userName"},
		{user, "name.familyName", "name.familyName"},
		{user, "NAME.FAMILYNAME", "name.familyName"},
		{user, core + "name.familyName", "name.familyName"},
		{user, "emails", "emails"},
		{user, "emails.value", "emails.value"},
		{user, "groups.$ref", "groups.$ref"},
		{user, "id", "id"},
		{user, core + "id", "id"},
		{user, "externalId", "externalId"},
		{user, "external_id", "externalId"},
		{user, "EXTERNAL_ID", "externalId"},
		{user, core + "external_id", "externalId"},
		{user, "meta.lastModified", "meta.lastModified"},
		{user, core + "meta.created", "meta.created"},
		{user, "department", ent + "department"},
		{user, "DEPARTMENT", ent + "department"},
		{user, ent + "department", ent + "department"},
		{user, ent + "manager.value", ent + "manager.value"},
		{user, strings.ToLower(ent) + "MANAGER.VALUE", ent + "manager.value"},
		{user, "manager.displayName", ent + "manager.displayName"},
		{user, "manager", ent + "manager"},
		{group, "displayName", "displayName"},
		{group, "members", "members"},
		{group, "members.value", "members.value"},
		{group, schema.GroupURN + ":members.display", "members.display"},
		{group, "external_id", "externalId"},
		{group, "meta.resourceType", "meta.resourceType"},
	}
	for _, tt := range tests {
		t.Run(tt.rt.Name+"/"+tt.path, func(t *testing.T) {
			attr, sub, err := tt.rt.Lookup(tt.path)
			require.NoError(t, err)
			require.NotNil(t, attr)
			assert.Nil(t, attr.Parent, "the first result is a top-level attribute")
			got := attr
			if sub != nil {
				assert.Same(t, attr, sub.Parent)
				got = sub
			}
			assert.Equal(t, tt.want, got.Path())
			local := tt.want[strings.LastIndex(tt.want, ":")+1:]
			assert.Equal(t, strings.Contains(local, "."), sub != nil, "a sub-attribute is returned exactly when the path names one")
		})
	}
}

func TestLookupErrors(t *testing.T) {
	user, group := schema.User(), schema.Group()
	tests := []struct {
		rt   *schema.ResourceType
		path string
		msg  string
	}{
		{user, "", `User has no attribute ""`},
		{user, "nope", `User has no attribute "nope"`},
		{user, "user_name", `User has no attribute "user_name"`},
		{user, "urn:", `User has no attribute "urn:"`},
		{user, "urn:example:params:scim:schemas:Widget:userName", "unknown schema URN"},
		{user, schema.UserURN, "names a schema, not an attribute"},
		{user, core, "names a schema, not an attribute"},
		{user, schema.UserURN + "x:userName", "unknown schema URN"},
		{user, schema.GroupURN + ":displayName", "unknown schema URN"},
		{user, ent + "userName", `User has no attribute "userName"`},
		{user, ent + "id", `User has no attribute "id"`},
		{user, "userName.value", "userName has no sub-attributes"},
		{user, "name.nope", `name has no sub-attribute "nope"`},
		{user, "name.", `name has no sub-attribute ""`},
		{user, "name.familyName.x", `name has no sub-attribute "familyName.x"`},
		{user, ent + "manager.nope", `manager has no sub-attribute "nope"`},
		{group, "department", `Group has no attribute "department"`},
		{group, "userName", `Group has no attribute "userName"`},
		{group, ent + "department", "unknown schema URN"},
		{group, "members.nope", `members has no sub-attribute "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.rt.Name+"/"+tt.path, func(t *testing.T) {
			attr, sub, err := tt.rt.Lookup(tt.path)
			assert.Nil(t, attr)
			assert.Nil(t, sub)
			var pe *schema.PathError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tt.path, pe.Path)
			assert.Equal(t, tt.msg, pe.Msg)
			assert.Equal(t, `attribute path "`+tt.path+`": `+tt.msg, err.Error())
		})
	}
}

// scanned returns a copy of rt built as a literal, whose Lookup has no index and scans the
// attribute lists instead.
func scanned(rt *schema.ResourceType) *schema.ResourceType {
	return &schema.ResourceType{Name: rt.Name, Schema: rt.Schema, Extensions: rt.Extensions, Common: rt.Common}
}

// TestLookupIndexMatchesScan checks that the index User and Group build resolves every spelling
// as a ResourceType literal (which has no index) does.
func TestLookupIndexMatchesScan(t *testing.T) {
	for _, rt := range []*schema.ResourceType{schema.User(), schema.Group()} {
		lit := scanned(rt)
		var paths []string
		for a := range rt.Attributes {
			names := []string{a.Name}
			for _, s := range a.SubAttributes {
				names = append(names, a.Name+"."+s.Name)
			}
			for _, n := range names {
				paths = append(paths, n, strings.ToUpper(n), strings.ToLower(n), a.Schema+":"+n, n+"x", n+strings.Repeat("x", 64))
			}
		}
		paths = append(paths, "external_id", "External_Id", "", "x", strings.Repeat("a", 65))
		for _, p := range paths {
			a1, s1, err1 := rt.Lookup(p)
			a2, s2, err2 := lit.Lookup(p)
			assert.Same(t, a1, a2, "%s %q", rt.Name, p)
			assert.Same(t, s1, s2, "%s %q", rt.Name, p)
			assert.Equal(t, err1, err2, "%s %q", rt.Name, p)
		}
	}
}

func TestLookupExtensions(t *testing.T) {
	ext := func(urn string, names ...string) schema.Extension {
		s := &schema.Schema{ID: urn}
		for _, n := range names {
			s.Attributes = append(s.Attributes, &schema.Attribute{Name: n, Type: schema.String, Schema: urn})
		}
		return schema.Extension{Schema: s}
	}
	a, b := ext("urn:example:a", "badge", "floor", "title"), ext("urn:example:b", "badge")
	rt := &schema.ResourceType{
		Name:       "Person",
		Schema:     &schema.Schema{ID: "urn:example:core", Attributes: []*schema.Attribute{{Name: "title", Type: schema.String, Schema: "urn:example:core"}}},
		Extensions: []schema.Extension{a, b},
	}

	// A name that two extensions define needs its URN.
	_, _, err := rt.Lookup("badge")
	var pe *schema.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, `Person has no attribute "badge"`, pe.Msg)
	for _, tt := range []struct {
		path string
		want *schema.Attribute
	}{
		{"urn:example:a:badge", a.Schema.Attributes[0]},
		{"URN:EXAMPLE:B:BADGE", b.Schema.Attributes[0]},
		{"floor", a.Schema.Attributes[1]},
		{"title", rt.Schema.Attributes[0]}, // the core attribute wins over an extension's
		{"urn:example:a:title", a.Schema.Attributes[2]},
	} {
		got, _, err := rt.Lookup(tt.path)
		require.NoError(t, err, tt.path)
		assert.Same(t, tt.want, got, tt.path)
	}
}

func TestAttributesAreLinked(t *testing.T) {
	for _, rt := range []*schema.ResourceType{schema.User(), schema.Group()} {
		t.Run(rt.Name, func(t *testing.T) {
			var names []string
			for a := range rt.Attributes {
				names = append(names, a.Name)
				assert.Nil(t, a.Parent, a.Name)
				want := rt.Schema.ID
				for _, e := range rt.Extensions {
					if e.Schema.Attribute(a.Name) == a {
						want = e.Schema.ID
					}
				}
				assert.Equal(t, want, a.Schema, a.Name)
				assert.Equal(t, a.Type == schema.Complex, len(a.SubAttributes) > 0, a.Name)
				for _, s := range a.SubAttributes {
					assert.Same(t, a, s.Parent, "%s.%s", a.Name, s.Name)
					assert.Equal(t, a.Schema, s.Schema, "%s.%s", a.Name, s.Name)
					assert.Empty(t, s.SubAttributes, "%s.%s", a.Name, s.Name)
				}
			}
			assert.Equal(t, []string{"id", "externalId", "meta"}, names[:3], "common attributes come first")
			assert.Len(t, slices.Compact(slices.Sorted(slices.Values(names))), len(names), "no attribute twice")
		})
	}
	ext := schema.User().Extensions
	require.Len(t, ext, 1)
	assert.Equal(t, schema.EnterpriseUserURN, ext[0].Schema.ID)
	assert.Equal(t, schema.EnterpriseUserURN, ext[0].Schema.Attribute("department").Schema)
}

func TestAttributesStops(t *testing.T) {
	var n int
	for range schema.User().Attributes {
		n++
		if n == 2 {
			break
		}
	}
	assert.Equal(t, 2, n)
}

func TestSchemas(t *testing.T) {
	var ids []string
	for _, s := range schema.User().Schemas() {
		ids = append(ids, s.ID)
	}
	assert.Equal(t, []string{schema.UserURN, schema.EnterpriseUserURN}, ids)
	require.Len(t, schema.Group().Schemas(), 1)
	assert.Equal(t, schema.GroupURN, schema.Group().Schemas()[0].ID)
}

func TestAttributeAndSub(t *testing.T) {
	s := schema.User().Schema
	name := s.Attribute("NAME")
	require.NotNil(t, name)
	assert.Equal(t, "name", name.Name)
	assert.Equal(t, "givenName", name.Sub("GIVENNAME").Name)
	assert.Nil(t, name.Sub("nope"))
	assert.Nil(t, s.Attribute("id"), "common attributes are in no schema's list")
	assert.Nil(t, s.Attribute("nope"))
}

func TestPath(t *testing.T) {
	user := schema.User()
	lookup := func(p string) *schema.Attribute {
		a, sub, err := user.Lookup(p)
		require.NoError(t, err)
		if sub != nil {
			return sub
		}
		return a
	}
	tests := []struct {
		path, want string
	}{
		{"userName", "userName"},
		{"name.familyName", "name.familyName"},
		{"id", "id"},
		{"meta.created", "meta.created"},
		{"department", ent + "department"},
		{"manager.value", ent + "manager.value"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, lookup(tt.path).Path(), tt.path)
	}
}

// TestCharacteristics pins the characteristics that filter semantics and the SCIM API depend
// on.
func TestCharacteristics(t *testing.T) {
	tests := []struct {
		rt        *schema.ResourceType
		path      string
		typ       schema.Type
		multi     bool
		caseExact bool
		mut       schema.Mutability
		returned  schema.Returned
		unique    schema.Uniqueness
	}{
		{schema.User(), "id", schema.String, false, true, schema.ReadOnly, schema.Always, schema.ServerUnique},
		{schema.User(), "externalId", schema.String, false, true, schema.ReadWrite, schema.Default, schema.NotUnique},
		{schema.User(), "userName", schema.String, false, false, schema.ReadWrite, schema.Default, schema.ServerUnique},
		{schema.User(), "active", schema.Boolean, false, false, schema.ReadWrite, schema.Default, schema.NotUnique},
		{schema.User(), "password", schema.String, false, false, schema.WriteOnly, schema.Never, schema.NotUnique},
		{schema.User(), "emails", schema.Complex, true, false, schema.ReadWrite, schema.Default, schema.NotUnique},
		{schema.User(), "emails.primary", schema.Boolean, false, false, schema.ReadWrite, schema.Default, schema.NotUnique},
		{schema.User(), "groups", schema.Complex, true, false, schema.ReadOnly, schema.Default, schema.NotUnique},
		{schema.User(), "groups.value", schema.String, false, true, schema.ReadOnly, schema.Default, schema.NotUnique},
		{schema.User(), "meta.created", schema.DateTime, false, false, schema.ReadOnly, schema.Default, schema.NotUnique},
		{schema.User(), "manager.value", schema.String, false, true, schema.ReadWrite, schema.Default, schema.NotUnique},
		{schema.User(), "profileUrl", schema.Reference, false, false, schema.ReadWrite, schema.Default, schema.NotUnique},
		{schema.Group(), "displayName", schema.String, false, false, schema.ReadWrite, schema.Default, schema.NotUnique},
		{schema.Group(), "members", schema.Complex, true, false, schema.ReadWrite, schema.Default, schema.NotUnique},
		{schema.Group(), "members.value", schema.String, false, true, schema.Immutable, schema.Default, schema.NotUnique},
	}
	for _, tt := range tests {
		t.Run(tt.rt.Name+"/"+tt.path, func(t *testing.T) {
			a, sub, err := tt.rt.Lookup(tt.path)
			require.NoError(t, err)
			if sub != nil {
				a = sub
			}
			assert.Equal(t, tt.typ, a.Type)
			assert.Equal(t, tt.multi, a.MultiValued)
			assert.Equal(t, tt.caseExact, a.CaseExact)
			assert.Equal(t, tt.mut, a.Mutability)
			assert.Equal(t, tt.returned, a.Returned)
			assert.Equal(t, tt.unique, a.Uniqueness)
		})
	}
	for _, p := range []string{"meta.location", "groups.$ref"} {
		_, sub, err := schema.User().Lookup(p)
		require.NoError(t, err)
		assert.True(t, sub.Unfilterable, p)
	}
	_, sub, err := schema.Group().Lookup("members.$ref")
	require.NoError(t, err)
	assert.True(t, sub.Unfilterable)
}

// TestAttributeJSON checks the RFC 7643 §7 representation served under /Schemas.
func TestAttributeJSON(t *testing.T) {
	decode := func(t *testing.T, v any) map[string]any {
		t.Helper()
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	user := schema.User()

	emails := decode(t, user.Schema.Attribute("emails"))
	assert.ElementsMatch(t, []string{"name", "type", "multiValued", "description", "required", "caseExact",
		"mutability", "returned", "uniqueness", "subAttributes"}, keys(emails))
	assert.Equal(t, "emails", emails["name"])
	assert.Equal(t, "complex", emails["type"])
	assert.Equal(t, true, emails["multiValued"])
	assert.Equal(t, false, emails["required"])
	assert.Equal(t, false, emails["caseExact"])
	assert.Equal(t, "readWrite", emails["mutability"])
	assert.Equal(t, "default", emails["returned"])
	assert.Equal(t, "none", emails["uniqueness"])
	subs, ok := emails["subAttributes"].([]any)
	require.True(t, ok)
	var subNames []string
	for _, s := range subs {
		sm := s.(map[string]any)
		subNames = append(subNames, sm["name"].(string))
		assert.NotContains(t, sm, "subAttributes")
		if sm["name"] == "type" {
			assert.Equal(t, []any{"work", "home", "other"}, sm["canonicalValues"])
		}
		if sm["name"] == "primary" {
			assert.Equal(t, "boolean", sm["type"])
		}
	}
	assert.Equal(t, []string{"value", "display", "type", "primary"}, subNames)

	id := decode(t, user.Common[0])
	assert.Equal(t, map[string]any{
		"name": "id", "type": "string", "multiValued": false, "required": false, "caseExact": true,
		"mutability": "readOnly", "returned": "always", "uniqueness": "server",
		"description": id["description"],
	}, id)
	assert.NotEmpty(t, id["description"])

	password := decode(t, user.Schema.Attribute("password"))
	assert.Equal(t, "writeOnly", password["mutability"])
	assert.Equal(t, "never", password["returned"])

	_, ref, err := user.Lookup("groups.$ref")
	require.NoError(t, err)
	refJSON := decode(t, ref)
	assert.Equal(t, "reference", refJSON["type"])
	assert.Equal(t, []any{"User", "Group"}, refJSON["referenceTypes"])
	assert.NotContains(t, refJSON, "Unfilterable")
	assert.NotContains(t, refJSON, "unfilterable")

	s := decode(t, schema.Group().Schema)
	assert.ElementsMatch(t, []string{"id", "name", "description", "attributes"}, keys(s))
	assert.Equal(t, schema.GroupURN, s["id"])
	assert.Len(t, s["attributes"], 2)
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
