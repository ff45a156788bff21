package store

import (
	"maps"
	"slices"
	"strconv"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// FilterValue implements filter.Resource, so filter.Match can evaluate a filter against a user.
// groups comes from u.Groups, so a backend must fill it before matching a filter that names it.
func (u *User) FilterValue(a, sub *schema.Attribute, i int) (filter.Value, bool) {
	if schema.HostDefined(a) {
		return u.Extensions.FilterValue(a, sub, i)
	}
	if a.Schema == schema.EnterpriseUserURN {
		return u.Enterprise.filterValue(a, sub), true
	}
	switch a.Name {
	case "emails":
		return multiValue(u.Emails, sub, i)
	case "phoneNumbers":
		return multiValue(u.PhoneNumbers, sub, i)
	case "roles":
		return multiValue(u.Roles, sub, i)
	case "ims":
		return multiValue(u.Ims, sub, i)
	case "photos":
		return multiValue(u.Photos, sub, i)
	case "entitlements":
		return multiValue(u.Entitlements, sub, i)
	case "x509Certificates":
		return multiValue(u.X509Certificates, sub, i)
	case "addresses":
		if i >= len(u.Addresses) {
			return filter.Value{}, false
		}
		return u.Addresses[i].filterValue(sub), true
	case "groups":
		if i >= len(u.Groups) {
			return filter.Value{}, false
		}
		g := &u.Groups[i]
		return pick(sub, "value", g.Value, "display", g.Display, "type", g.Type), true
	case "schemas":
		return schemasValue(i, schema.UserURN, u.Enterprise != EnterpriseUser{}, u.Extensions)
	case "id":
		return filter.StringValue(u.ID), true
	case "externalId":
		return filter.StringValue(u.ExternalID), true
	case "userName":
		return filter.StringValue(u.UserName), true
	case "active":
		return filter.BoolValue(u.Active), true
	case "displayName":
		return filter.StringValue(u.DisplayName), true
	case "nickName":
		return filter.StringValue(u.NickName), true
	case "profileUrl":
		return filter.StringValue(u.ProfileURL), true
	case "title":
		return filter.StringValue(u.Title), true
	case "userType":
		return filter.StringValue(u.UserType), true
	case "preferredLanguage":
		return filter.StringValue(u.PreferredLanguage), true
	case "locale":
		return filter.StringValue(u.Locale), true
	case "timezone":
		return filter.StringValue(u.Timezone), true
	case "name":
		return u.Name.filterValue(sub), true
	case "meta":
		return u.Meta.filterValue(sub, "User"), true
	}
	return filter.Value{}, i == 0
}

// schemasValue is the i-th value of a resource's schemas: its core schema's URN, then, when
// enterprise is set, the enterprise extension's, then the URN of each host-defined extension x
// has values of, in the order of the URNs' bytes.
func schemasValue(i int, core string, enterprise bool, x Extensions) (filter.Value, bool) {
	switch {
	case i == 0:
		return filter.StringValue(core), true
	case i == 1 && enterprise:
		return filter.StringValue(schema.EnterpriseUserURN), true
	}
	i--
	if enterprise {
		i--
	}
	if i >= len(x) {
		return filter.Value{}, false
	}
	return filter.StringValue(x.urns()[i]), true
}

// urns returns the URNs of the extensions x has values of, in the order of their bytes.
func (x Extensions) urns() []string {
	return slices.Sorted(maps.Keys(x))
}

func (n *Name) filterValue(sub *schema.Attribute) filter.Value {
	if sub == nil {
		return filter.ComplexValue(*n != Name{})
	}
	switch sub.Name {
	case "formatted":
		return filter.StringValue(n.Formatted)
	case "familyName":
		return filter.StringValue(n.FamilyName)
	case "givenName":
		return filter.StringValue(n.GivenName)
	case "middleName":
		return filter.StringValue(n.MiddleName)
	case "honorificPrefix":
		return filter.StringValue(n.HonorificPrefix)
	case "honorificSuffix":
		return filter.StringValue(n.HonorificSuffix)
	}
	return filter.Value{}
}

func multiValue(vs []MultiValue, sub *schema.Attribute, i int) (filter.Value, bool) {
	if i >= len(vs) {
		return filter.Value{}, false
	}
	v := &vs[i]
	if sub == nil {
		return filter.ComplexValue(*v != MultiValue{}), true
	}
	if sub.Name == "primary" {
		return filter.BoolValue(v.Primary), true
	}
	return pick(sub, "value", v.Value, "display", v.Display, "type", v.Type), true
}

// pick returns the string of the sub-attribute named sub among three name/value pairs, or,
// when sub is nil, whether any of them is set.
func pick(sub *schema.Attribute, n1, v1, n2, v2, n3, v3 string) filter.Value {
	switch {
	case sub == nil:
		return filter.ComplexValue(v1 != "" || v2 != "" || v3 != "")
	case sub.Name == n1:
		return filter.StringValue(v1)
	case sub.Name == n2:
		return filter.StringValue(v2)
	case sub.Name == n3:
		return filter.StringValue(v3)
	}
	return filter.Value{}
}

func (a *Address) filterValue(sub *schema.Attribute) filter.Value {
	if sub == nil {
		return filter.ComplexValue(*a != Address{})
	}
	switch sub.Name {
	case "formatted":
		return filter.StringValue(a.Formatted)
	case "streetAddress":
		return filter.StringValue(a.StreetAddress)
	case "locality":
		return filter.StringValue(a.Locality)
	case "region":
		return filter.StringValue(a.Region)
	case "postalCode":
		return filter.StringValue(a.PostalCode)
	case "country":
		return filter.StringValue(a.Country)
	case "type":
		return filter.StringValue(a.Type)
	case "primary":
		return filter.BoolValue(a.Primary)
	}
	return filter.Value{}
}

func (e *EnterpriseUser) filterValue(a, sub *schema.Attribute) filter.Value {
	switch a.Name {
	case "employeeNumber":
		return filter.StringValue(e.EmployeeNumber)
	case "costCenter":
		return filter.StringValue(e.CostCenter)
	case "organization":
		return filter.StringValue(e.Organization)
	case "division":
		return filter.StringValue(e.Division)
	case "department":
		return filter.StringValue(e.Department)
	case "manager":
		m := &e.Manager
		return pick(sub, "value", m.Value, "$ref", m.Ref, "displayName", m.DisplayName)
	}
	return filter.Value{}
}

func (m *Meta) filterValue(sub *schema.Attribute, resourceType string) filter.Value {
	if sub == nil {
		return filter.ComplexValue(true)
	}
	switch sub.Name {
	case "resourceType":
		return filter.StringValue(resourceType)
	case "created":
		return filter.TimeValue(m.Created)
	case "lastModified":
		return filter.TimeValue(m.LastModified)
	case "version":
		return filter.StringValue(m.ETag())
	}
	return filter.Value{}
}

// FilterValue implements filter.Resource for a group. members' display and type come from
// g.Members as the store filled them.
func (g *Group) FilterValue(a, sub *schema.Attribute, i int) (filter.Value, bool) {
	if schema.HostDefined(a) {
		return g.Extensions.FilterValue(a, sub, i)
	}
	switch a.Name {
	case "members":
		if i >= len(g.Members) {
			return filter.Value{}, false
		}
		m := &g.Members[i]
		return pick(sub, "value", m.Value, "display", m.Display, "type", m.Type), true
	case "schemas":
		return schemasValue(i, schema.GroupURN, false, g.Extensions)
	case "id":
		return filter.StringValue(g.ID), true
	case "externalId":
		return filter.StringValue(g.ExternalID), true
	case "displayName":
		return filter.StringValue(g.DisplayName), true
	case "meta":
		return g.Meta.filterValue(sub, "Group"), true
	}
	return filter.Value{}, i == 0
}

// ETag is the resource's version as SCIM shows it in meta.version and the ETag header (RFC 7644
// §3.14): the weak entity tag W/"Version".
func (m *Meta) ETag() string {
	return `W/"` + strconv.FormatInt(m.Version, 10) + `"`
}
