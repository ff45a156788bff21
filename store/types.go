package store

import "time"

// User is a SCIM User (RFC 7643 §4.1) with the enterprise extension (§4.3). A field's zero
// value means the attribute is absent.
type User struct {
	ID         string
	ExternalID string
	UserName   string
	// Active is whether the user may sign in. Setting it false keeps the user (soft delete).
	Active            bool
	DisplayName       string
	NickName          string
	ProfileURL        string // kept as an opaque string: never parsed, never followed
	Title             string
	UserType          string
	PreferredLanguage string
	Locale            string
	Timezone          string
	Name              Name
	Emails            []MultiValue
	PhoneNumbers      []MultiValue
	Roles             []MultiValue
	Addresses         []Address
	Ims               []MultiValue // instant messaging addresses
	Photos            []MultiValue // Value is a URL, kept as an opaque string like ProfileURL
	Entitlements      []MultiValue
	// X509Certificates' Value is a certificate as a base64 string (a SCIM binary value), kept as
	// the client sent it.
	X509Certificates []MultiValue
	// Groups is derived by the store from group membership whenever a user is read; what a
	// caller puts here is ignored.
	Groups     []GroupRef
	Enterprise EnterpriseUser
	// Extensions holds the values of host-defined extension schemas.
	Extensions Extensions `json:",omitempty"`
	// Unique lists the user's values that no other user of the tenant may hold (see
	// UniqueValue): Users.Create and Users.Update fail with ErrConflict, storing nothing, when
	// another user holds one of them. The store keeps and returns the list as given.
	Unique []UniqueValue `json:",omitempty"`
	Meta   Meta
}

// Name is the components of a user's real name.
type Name struct {
	Formatted       string
	FamilyName      string
	GivenName       string
	MiddleName      string
	HonorificPrefix string
	HonorificSuffix string
}

// MultiValue is one value of emails, phoneNumbers, roles, ims, photos, entitlements or
// x509Certificates.
type MultiValue struct {
	Value   string
	Display string
	Type    string
	Primary bool
}

// Address is one value of addresses.
type Address struct {
	Formatted     string
	StreetAddress string
	Locality      string
	Region        string
	PostalCode    string
	Country       string
	Type          string
	Primary       bool
}

// GroupRef is one value of a user's groups: a group the user is a direct member of.
type GroupRef struct {
	Value   string // the group's id
	Display string // the group's displayName
	Type    string // "direct"
}

// EnterpriseUser is the enterprise extension
// (urn:ietf:params:scim:schemas:extension:enterprise:2.0:User).
type EnterpriseUser struct {
	EmployeeNumber string
	CostCenter     string
	Organization   string
	Division       string
	Department     string
	Manager        Manager
}

// Manager is the enterprise extension's manager.
type Manager struct {
	Value       string // the manager's user id
	Ref         string // $ref
	DisplayName string
}

// Meta is a resource's metadata. The store keeps the instants its caller sets (a backend may
// give them back in UTC) and fills the ones left zero (see Users.Create and Users.Update);
// resourceType and location are derived when a response is written.
type Meta struct {
	Created      time.Time
	LastModified time.Time
	// Version is the resource's revision, which the store owns: 1 when created, one more with
	// every Update (or other write) that changes the resource, never reused for the resource.
	// What a caller sets is ignored. SCIM shows it as meta.version and the ETag header, the
	// weak entity tag W/"Version".
	Version int64
}

// Group is a SCIM Group (RFC 7643 §4.2).
type Group struct {
	ID          string
	ExternalID  string
	DisplayName string
	// Members lists the users in the group, each once. On write only Value counts; on read the
	// store fills Display with the member's current userName and Type with "User".
	Members []Member
	// Extensions holds the values of host-defined extension schemas.
	Extensions Extensions `json:",omitempty"`
	// Unique lists the group's values that no other group of the tenant may hold, as
	// User.Unique does for users: Groups.Create, Groups.Update and Groups.Patch fail with
	// ErrConflict, storing nothing, when another group holds one of them.
	Unique []UniqueValue `json:",omitempty"`
	Meta   Meta
}

// Member is one member of a group.
type Member struct {
	Value   string // the member user's id
	Display string // the member's userName (derived)
	Type    string // "User" (derived)
}

// Tenant is one customer of the service: every user, group and client belongs to one.
type Tenant struct {
	// ID is the tenant's name in URLs (/scim/v2/{tenant}): 1 to 63 characters from a-z, 0-9,
	// '-' and '_', starting with a letter or digit.
	ID string
	// DisplayName is the tenant's name for people, the heading of its sign-in pages: at most
	// MaxDisplayNameLength characters, no control characters.
	DisplayName string
	Created     time.Time

	// The tenant's look on its sign-in and enrollment pages; each zero value means visid's
	// own. Stores check and canonicalize them with CheckTenant on every write.

	// Logo is an image (PNG, JPEG, WebP or SVG) of at most MaxLogoSize bytes; nil for none.
	Logo []byte
	// LogoType is Logo's media type (LogoPNG, LogoJPEG, LogoWebP, LogoSVG), and LogoHash its
	// SHA-256, which versions the logo's URL: both set by the store from Logo.
	LogoType string
	LogoHash [32]byte
	// AccentColor is the colour of the pages' buttons and focus rings, "#rrggbb", contrasting
	// with PageBackground and ButtonText by at least MinAccentContrast.
	AccentColor string
	// DefaultLanguage is the BCP 47 tag of the language of the tenant's pages when the browser
	// asks for none the pages have, in canonical form ("de-CH").
	DefaultLanguage string

	// SecondFactor is the tenant's policy for the second factor: SecondFactorPicture (the
	// picture password only; "" means it too) or SecondFactorPictureOrPasskey (a user may
	// enroll and pass with a passkey as well). CheckTenant refuses any other value and stores
	// SecondFactorPicture as "".
	SecondFactor string
}

// The second-factor policies of a tenant (Tenant.SecondFactor).
const (
	SecondFactorPicture          = "picture"
	SecondFactorPictureOrPasskey = "picture-or-passkey"
)

// PasskeysAllowed reports whether the tenant's users may enroll and pass the second factor with
// a passkey.
func (t *Tenant) PasskeysAllowed() bool { return t.SecondFactor == SecondFactorPictureOrPasskey }

// APIKey is a bearer key for the SCIM API. Only the SHA-256 of its secret is stored.
type APIKey struct {
	ID      string   // "key_…"; not secret, names the key in logs and for revocation
	Name    string   // a label for people
	Tenants []string // the tenants the key may act on
	Scopes  []string // what the key may do, such as "scim"
	// SecretHash is the SHA-256 of the secret ("scimkey_…") the client presents.
	SecretHash [32]byte
	Created    time.Time
	LastUsed   time.Time // zero until first used
	Revoked    bool
	RevokedAt  time.Time
}

// UniqueValue is a value of an attribute whose uniqueness is "server" (RFC 7643 §7), such as an
// attribute of a host-defined extension: within a tenant, at most one user (or one group) holds
// a given Attr and Key. The store compares Attr and Key as bytes and enforces the rule
// atomically (of concurrent writes of one value at most one succeeds), and a value is free
// again as soon as its holder drops it or is deleted. Users and groups are apart, and so are
// tenants. The caller decides what the key of a value is, so that values the attribute treats
// as equal have one key.
type UniqueValue struct {
	// Attr names the attribute, as its canonical path does (schema.Attribute.Path).
	Attr string
	// Key is the value in the form in which equal values are equal: schema.Fold of a string
	// whose caseExact is false, for instance.
	Key string
}
