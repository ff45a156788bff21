package schema

// Schema URNs.
const (
	UserURN           = "urn:ietf:params:scim:schemas:core:2.0:User"
	EnterpriseUserURN = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	GroupURN          = "urn:ietf:params:scim:schemas:core:2.0:Group"
)

// The tables are built once and never modified; they are reached through User and Group.
var (
	userResource  = newResourceType(&ResourceType{Name: "User", Endpoint: "/Users", Description: "User Account", Schema: link(userSchema()), Extensions: []Extension{{Schema: link(enterpriseSchema())}}, Common: common("User")})
	groupResource = newResourceType(&ResourceType{Name: "Group", Endpoint: "/Groups", Description: "Group", Schema: link(groupSchema()), Common: common("Group")})
)

// User returns the User resource type: the core User schema, the enterprise extension and the
// common attributes. The value is shared and must not be modified.
func User() *ResourceType { return userResource }

// Group returns the Group resource type. The value is shared and must not be modified.
func Group() *ResourceType { return groupResource }

// option adjusts an attribute definition while the table is built.
type option func(*Attribute)

func caseExact(a *Attribute) { a.CaseExact = true }
func required(a *Attribute)  { a.Required = true }
func multi(a *Attribute)     { a.MultiValued = true }
func readOnly(a *Attribute)  { a.Mutability = ReadOnly }
func immutable(a *Attribute) { a.Mutability = Immutable }
func always(a *Attribute)    { a.Returned = Always }
func unique(a *Attribute)    { a.Uniqueness = ServerUnique }
func writeOnlyNever(a *Attribute) {
	a.Mutability = WriteOnly
	a.Returned = Never
}
func unfilterable(a *Attribute) { a.Unfilterable = true }

func canonical(values ...string) option {
	return func(a *Attribute) { a.CanonicalValues = values }
}

func refs(types ...string) option {
	return func(a *Attribute) { a.ReferenceTypes = types }
}

func subs(attrs ...*Attribute) option {
	return func(a *Attribute) { a.SubAttributes = attrs }
}

// attr makes a definition with RFC 7643's defaults: single-valued, optional, case-insensitive,
// readWrite, returned by default, not unique.
func attr(name string, t Type, desc string, opts ...option) *Attribute {
	a := &Attribute{Name: name, Type: t, Description: desc, Mutability: ReadWrite, Returned: Default, Uniqueness: NotUnique}
	for _, o := range opts {
		o(a)
	}
	return a
}

func common(resourceType string) []*Attribute {
	return []*Attribute{
		attr("id", String, "Unique identifier of the resource, issued by the service provider.", caseExact, readOnly, always, unique),
		attr("externalId", String, "Identifier of the resource as defined by the provisioning client.", caseExact),
		attr("meta", Complex, "Resource metadata.", readOnly, subs(
			attr("resourceType", String, "The name of the resource type: "+resourceType+".", caseExact, readOnly),
			attr("created", DateTime, "When the resource was added to the service provider.", readOnly),
			attr("lastModified", DateTime, "When the resource was last changed.", readOnly),
			attr("location", Reference, "The URI of the resource.", caseExact, readOnly, refs("uri"), unfilterable),
			attr("version", String, "The version of the resource, a weak entity tag (RFC 7232) that changes with every change of the resource.", caseExact, readOnly, unfilterable),
		)),
		attr("schemas", String, "The URNs of the schemas the resource has values of: the core schema's, then each extension's. Derived by the service provider.", multi, readOnly, always),
	}
}

// multiValue makes the sub-attributes shared by emails, phoneNumbers, ims, entitlements and
// roles.
func multiValue(what string, types ...string) option {
	typ := attr("type", String, "A label indicating the "+what+"'s function.")
	if len(types) > 0 {
		typ.CanonicalValues = types
	}
	return subs(
		attr("value", String, "The "+what+" itself."),
		attr("display", String, "A human-readable name, primarily used for display purposes."),
		typ,
		attr("primary", Boolean, "Whether this is the preferred "+what+"; at most one value is primary."),
	)
}

func userSchema() *Schema {
	return &Schema{
		ID:          UserURN,
		Name:        "User",
		Description: "User Account",
		Attributes: []*Attribute{
			attr("userName", String, "Unique identifier for the user, used to sign in. Unique within a tenant, compared case-insensitively.", required, unique),
			attr("name", Complex, "The components of the user's real name.", subs(
				attr("formatted", String, "The full name, formatted for display."),
				attr("familyName", String, "The family name, or last name."),
				attr("givenName", String, "The given name, or first name."),
				attr("middleName", String, "The middle name(s)."),
				attr("honorificPrefix", String, "The honorific prefix(es), or title (\"Ms.\")."),
				attr("honorificSuffix", String, "The honorific suffix(es) (\"III\")."),
			)),
			attr("displayName", String, "The name of the user, suitable for display to end-users."),
			attr("nickName", String, "The casual way to address the user."),
			attr("profileUrl", Reference, "A URI of the user's online profile, kept as an opaque string.", refs("external")),
			attr("title", String, "The user's title, such as \"Vice President\"."),
			attr("userType", String, "The relationship between the organization and the user, such as \"Employee\" or \"Contractor\"."),
			attr("preferredLanguage", String, "The user's preferred written or spoken language (RFC 7231 Accept-Language form)."),
			attr("locale", String, "The user's default location, for localizing items such as currency and dates (\"en-US\")."),
			attr("timezone", String, "The user's time zone in IANA Time Zone database format (\"America/Los_Angeles\")."),
			attr("active", Boolean, "Whether the user may sign in. An inactive user is kept and still listed."),
			attr("password", String, "The user's password. Accepted and discarded: never stored, never returned.", writeOnlyNever),
			attr("emails", Complex, "Email addresses for the user.", multi, multiValue("email address", "work", "home", "other")),
			attr("phoneNumbers", Complex, "Phone numbers for the user.", multi, multiValue("phone number", "work", "home", "mobile", "fax", "pager", "other")),
			attr("ims", Complex, "Instant messaging addresses for the user.", multi, multiValue("instant messaging address", "aim", "gtalk", "icq", "xmpp", "msn", "skype", "qq", "yahoo")),
			attr("photos", Complex, "URLs of photos of the user.", multi, subs(
				attr("value", Reference, "The URL of a photo of the user, kept as an opaque string.", refs("external")),
				attr("display", String, "A human-readable name, primarily used for display purposes."),
				attr("type", String, "A label indicating the photo's function.", canonical("photo", "thumbnail")),
				attr("primary", Boolean, "Whether this is the preferred photo; at most one value is primary."),
			)),
			attr("addresses", Complex, "Physical mailing addresses for the user.", multi, subs(
				attr("formatted", String, "The full mailing address, formatted for display."),
				attr("streetAddress", String, "The full street address component."),
				attr("locality", String, "The city or locality component."),
				attr("region", String, "The state or region component."),
				attr("postalCode", String, "The zip code or postal code component."),
				attr("country", String, "The country name component (ISO 3166-1 alpha-2 code)."),
				attr("type", String, "A label indicating the address's function.", canonical("work", "home", "other")),
				attr("primary", Boolean, "Whether this is the preferred mailing address; at most one value is primary."),
			)),
			attr("groups", Complex, "The groups the user belongs to, derived from group membership. Read-only.", multi, readOnly, subs(
				attr("value", String, "The identifier of the group.", readOnly, caseExact),
				attr("$ref", Reference, "The URI of the group.", readOnly, refs("User", "Group"), unfilterable),
				attr("display", String, "The group's displayName.", readOnly),
				attr("type", String, "How the user belongs to the group.", readOnly, canonical("direct", "indirect")),
			)),
			attr("entitlements", Complex, "Entitlements of the user: things the user has.", multi, multiValue("entitlement")),
			attr("roles", Complex, "Roles of the user.", multi, multiValue("role")),
			attr("x509Certificates", Complex, "X.509 certificates issued to the user.", multi, subs(
				attr("value", Binary, "The value of an X.509 certificate: base64-encoded DER.", caseExact),
				attr("display", String, "A human-readable name, primarily used for display purposes."),
				attr("type", String, "A label indicating the certificate's function."),
				attr("primary", Boolean, "Whether this is the preferred certificate; at most one value is primary."),
			)),
		},
	}
}

func enterpriseSchema() *Schema {
	return &Schema{
		ID:          EnterpriseUserURN,
		Name:        "EnterpriseUser",
		Description: "Enterprise User",
		Attributes: []*Attribute{
			attr("employeeNumber", String, "Identifier assigned to the person by the organization."),
			attr("costCenter", String, "Name of a cost center."),
			attr("organization", String, "Name of an organization."),
			attr("division", String, "Name of a division."),
			attr("department", String, "Name of a department."),
			attr("manager", Complex, "The user's manager.", subs(
				attr("value", String, "The id of the manager's User resource.", caseExact),
				attr("$ref", Reference, "The URI of the manager's User resource.", refs("User")),
				attr("displayName", String, "The manager's displayName.", readOnly),
			)),
		},
	}
}

func groupSchema() *Schema {
	return &Schema{
		ID:          GroupURN,
		Name:        "Group",
		Description: "Group",
		Attributes: []*Attribute{
			attr("displayName", String, "A human-readable name for the group.", required),
			attr("members", Complex, "The members of the group: users of the same tenant.", multi, subs(
				attr("value", String, "The id of the member's User resource.", immutable, caseExact),
				attr("$ref", Reference, "The URI of the member's resource.", immutable, refs("User"), unfilterable),
				attr("display", String, "The member's userName.", readOnly),
				attr("type", String, "The type of the member.", immutable, canonical("User")),
			)),
		},
	}
}
