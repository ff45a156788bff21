package scimsvc

import (
	"strconv"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/schema"
)

// The typed encoders write a *store.User or a *store.Group straight from its fields, in the
// order of the built-in schema, with the bytes writeResource writes for it: attributes without
// a value and false sub-attribute booleans left out, password never written, the enterprise
// extension listed in schemas only when it has a value, the $ref of groups and members derived
// from their value. Values of host-defined extensions are written by the schema-driven code.
// Tests compare the encoders on many resources (TestTypedUserEncoder, FuzzTypedUserEncoder,
// TestTypedGroupEncoder, FuzzTypedGroupEncoder).

// writesUser reports whether writeUser writes the users of rt under p: rt is the built-in User
// resource type, perhaps with host-defined extensions after the enterprise one, and p the zero
// projection.
func writesUser(rt *schema.ResourceType, p *projection) bool {
	if !p.empty() {
		return false
	}
	builtin := schema.User()
	return rt.Schema == builtin.Schema && len(rt.Common) == len(builtin.Common) &&
		&rt.Common[0] == &builtin.Common[0] && len(rt.Extensions) > 0 &&
		rt.Extensions[0].Schema == builtin.Extensions[0].Schema
}

// userSchemas opens a user's object with its schemas when it has no host-defined extension
// value, without and with the enterprise extension's URN.
const (
	userSchemas           = `{"schemas":["` + schema.UserURN + `"]`
	userEnterpriseSchemas = `{"schemas":["` + schema.UserURN + `","` + schema.EnterpriseUserURN + `"]`
)

// writeUser appends the JSON object of u, described by r, under p, when writesUser(r.rt, p).
func (e *encoder) writeUser(r *resourceOut, u *store.User, p *projection) {
	enterprise := u.Enterprise != store.EnterpriseUser{}
	switch {
	case len(u.Extensions) > 0:
		r.extended = true
		e.schemas(r, p)
	case enterprise:
		e.buf = append(e.buf, userEnterpriseSchemas...)
	default:
		e.buf = append(e.buf, userSchemas...)
	}
	e.first = false
	e.field("id", u.ID)
	e.field("externalId", u.ExternalID)
	e.field("userName", u.UserName)
	e.name(&u.Name)
	e.field("displayName", u.DisplayName)
	e.field("nickName", u.NickName)
	e.field("profileUrl", u.ProfileURL)
	e.field("title", u.Title)
	e.field("userType", u.UserType)
	e.field("preferredLanguage", u.PreferredLanguage)
	e.field("locale", u.Locale)
	e.field("timezone", u.Timezone)
	e.key("active")
	e.buf = strconv.AppendBool(e.buf, u.Active)
	list(e, "emails", u.Emails, e.multiValue)
	list(e, "phoneNumbers", u.PhoneNumbers, e.multiValue)
	list(e, "ims", u.Ims, e.multiValue)
	list(e, "photos", u.Photos, e.multiValue)
	list(e, "addresses", u.Addresses, e.address)
	list(e, "groups", u.Groups, func(g *store.GroupRef) { e.reference(r, "/Groups/", g.Value, g.Display, g.Type) })
	list(e, "entitlements", u.Entitlements, e.multiValue)
	list(e, "roles", u.Roles, e.multiValue)
	list(e, "x509Certificates", u.X509Certificates, e.multiValue)
	if enterprise {
		e.enterprise(&u.Enterprise)
	}
	if len(u.Extensions) > 0 {
		e.extensions(r, r.rt.Extensions[1:], p)
	}
	e.typedMeta(r, &u.Meta)
	e.buf = append(e.buf, '}')
}

// writesGroup reports whether writeGroup writes the groups of rt under p: rt is the built-in
// Group resource type, perhaps with host-defined extensions, and p the zero projection or
// excludedAttributes=members.
func writesGroup(rt *schema.ResourceType, p *projection) bool {
	if p.only != nil || len(p.except) > 1 || len(p.except) == 1 && !p.except[membersAttr()] {
		return false
	}
	builtin := schema.Group()
	return rt.Schema == builtin.Schema && len(rt.Common) == len(builtin.Common) &&
		&rt.Common[0] == &builtin.Common[0]
}

// writeGroup appends the JSON object of g, described by r, under p, when writesGroup(r.rt, p).
func (e *encoder) writeGroup(r *resourceOut, g *store.Group, p *projection) {
	if len(g.Extensions) > 0 {
		r.extended = true
		e.schemas(r, p)
	} else {
		e.buf = append(e.buf, `{"schemas":["`+schema.GroupURN+`"]`...)
	}
	e.first = false
	e.field("id", g.ID)
	e.field("externalId", g.ExternalID)
	e.field("displayName", g.DisplayName)
	if p.except == nil { // else it excludes members alone
		list(e, "members", g.Members, func(m *store.Member) { e.reference(r, "/Users/", m.Value, m.Display, m.Type) })
	}
	if len(g.Extensions) > 0 {
		e.extensions(r, r.rt.Extensions, p)
	}
	e.typedMeta(r, &g.Meta)
	e.buf = append(e.buf, '}')
}

// field appends ,"name":"s" unless s is empty.
func (e *encoder) field(name, s string) {
	if s == "" {
		return
	}
	e.key(name)
	e.str(s)
}

// primary appends ,"primary":true when b is.
func (e *encoder) primary(b bool) {
	if b {
		e.key("primary")
		e.buf = append(e.buf, "true"...)
	}
}

// name appends the name attribute unless it is empty.
func (e *encoder) name(n *store.Name) {
	if *n == (store.Name{}) {
		return
	}
	e.key("name")
	e.buf = append(e.buf, '{')
	e.first = true
	e.field("formatted", n.Formatted)
	e.field("familyName", n.FamilyName)
	e.field("givenName", n.GivenName)
	e.field("middleName", n.MiddleName)
	e.field("honorificPrefix", n.HonorificPrefix)
	e.field("honorificSuffix", n.HonorificSuffix)
	e.buf = append(e.buf, '}')
	e.first = false
}

// list appends the multi-valued complex attribute name of the values vs: each value that is not
// empty as an object whose members write appends, and nothing when every value is empty.
func list[V comparable](e *encoder, name string, vs []V, write func(*V)) {
	var zero V
	n := 0
	for i := range vs {
		if vs[i] == zero {
			continue
		}
		if n == 0 {
			e.key(name)
			e.buf = append(e.buf, '[')
		} else {
			e.buf = append(e.buf, ',')
		}
		n++
		e.buf = append(e.buf, '{')
		e.first = true
		write(&vs[i])
		e.buf = append(e.buf, '}')
	}
	if n > 0 {
		e.buf = append(e.buf, ']')
		e.first = false
	}
}

// multiValue appends the members of a value of emails, phoneNumbers, ims, photos,
// entitlements, roles or x509Certificates.
func (e *encoder) multiValue(v *store.MultiValue) {
	e.field("value", v.Value)
	e.field("display", v.Display)
	e.field("type", v.Type)
	e.primary(v.Primary)
}

// address appends the members of a value of addresses.
func (e *encoder) address(a *store.Address) {
	e.field("formatted", a.Formatted)
	e.field("streetAddress", a.StreetAddress)
	e.field("locality", a.Locality)
	e.field("region", a.Region)
	e.field("postalCode", a.PostalCode)
	e.field("country", a.Country)
	e.field("type", a.Type)
	e.primary(a.Primary)
}

// reference appends the members of a value of a user's groups or a group's members: with a
// value also its $ref, the resource with that id under endpoint ("/Groups/"), last.
func (e *encoder) reference(r *resourceOut, endpoint, value, display, typ string) {
	e.field("value", value)
	e.field("display", display)
	e.field("type", typ)
	if value != "" {
		e.key("$ref")
		e.ref(r, endpoint, value)
	}
}

// enterprise appends the enterprise extension's object, whose value x is not empty.
func (e *encoder) enterprise(x *store.EnterpriseUser) {
	e.buf = append(e.buf, `,"`+schema.EnterpriseUserURN+`":{`...)
	e.first = true
	e.field("employeeNumber", x.EmployeeNumber)
	e.field("costCenter", x.CostCenter)
	e.field("organization", x.Organization)
	e.field("division", x.Division)
	e.field("department", x.Department)
	if m := &x.Manager; *m != (store.Manager{}) {
		e.key("manager")
		e.buf = append(e.buf, '{')
		e.first = true
		e.field("value", m.Value)
		e.field("$ref", m.Ref)
		e.field("displayName", m.DisplayName)
		e.buf = append(e.buf, '}')
		e.first = false
	}
	e.buf = append(e.buf, '}')
	e.first = false
}

// typedMeta appends the meta attribute of r, whose other values are m.
func (e *encoder) typedMeta(r *resourceOut, m *store.Meta) {
	e.buf = append(e.buf, `,"meta":{"resourceType":`...)
	e.str(r.rt.Name)
	e.timeField("created", m.Created)
	e.timeField("lastModified", m.LastModified)
	e.buf = append(e.buf, `,"location":`...)
	e.location(r)
	e.buf = append(e.buf, `,"version":"W/\"`...)
	e.buf = strconv.AppendInt(e.buf, m.Version, 10)
	e.buf = append(e.buf, `\""}`...)
	e.first = false
}

// timeField appends ,"name":"t" unless t is zero.
func (e *encoder) timeField(name string, t time.Time) {
	if t.IsZero() {
		return
	}
	e.key(name)
	e.instant(t)
}
