package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// The filter fixture: eight users and four groups in tenant acme, created in this order. Ids
// are generated at runtime; filters and manager values name them by placeholder: {alice} is
// alice's id, {ALICE} the same id in upper case (ids are caseExact), {g:eng} the group
// Engineering's id.
//
//	user         active  title        externalId  created (UTC)     groups
//	alice        true    Engineer     EXT-1       2024-01-01 00:00  Engineering
//	Bob          true    (empty)      ext-1       2024-01-02 00:00  Engineering
//	CAROL.Smith  false   Manager      (empty)     2024-01-03 00:00  Sales
//	dörte        true    Ingénieure   EXT-4       2024-01-04 00:00  engineering
//	ÉMILE        true    Writer       EXT-5       2024-01-05 12:00  Sales
//	frank        false   (empty)      EXT-6       2024-01-06 00:00  -
//	grace        true    Engineer     ext-7       2024-01-07 00:00  Engineering
//	heidi        true    (empty)      (empty)     2023-12-31 23:30  -
//
// Groups, in order: Engineering (alice, Bob, grace), engineering (dörte), Sales (CAROL.Smith,
// ÉMILE), Empty (no members).
type fixtureUser struct {
	key  string // placeholder name
	user store.User
}

type fixtureGroup struct {
	key     string
	group   store.Group
	members []string // keys of fixture users
}

func fixtureUsers() []fixtureUser {
	mv := func(value, typ string, primary bool) store.MultiValue {
		return store.MultiValue{Value: value, Type: typ, Primary: primary}
	}
	// frank alone has no value in the enterprise extension.
	return []fixtureUser{
		{"alice", store.User{
			UserName: "alice", ExternalID: "EXT-1", Active: true, DisplayName: "Alice Liddell", NickName: "Al",
			ProfileURL: "https://example.com/Profiles/Alice", Title: "Engineer", UserType: "Employee",
			PreferredLanguage: "en-GB", Locale: "en-GB", Timezone: "Europe/London",
			Name:         store.Name{Formatted: "Alice Liddell", FamilyName: "Liddell", GivenName: "Alice"},
			Emails:       []store.MultiValue{mv("alice@example.com", "work", true), mv("alice@home.example", "home", false)},
			PhoneNumbers: []store.MultiValue{mv("+44 20 7946 0001", "work", false)},
			Roles:        []store.MultiValue{mv("admin", "", false)},
			Ims:          []store.MultiValue{mv("alice@jabber.example", "xmpp", false), {Value: "alice.liddell", Type: "skype", Primary: true}},
			Photos: []store.MultiValue{mv("https://photos.example.com/Alice.jpg", "photo", true),
				mv("https://photos.example.com/alice-small.jpg", "thumbnail", false)},
			Entitlements: []store.MultiValue{{Value: "vpn", Display: "VPN access"}, mv("wiki", "", false)},
			Addresses: []store.Address{{StreetAddress: "1 Rabbit Hole", Locality: "London", PostalCode: "EC1A 1BB",
				Country: "GB", Type: "work", Primary: true}},
			Enterprise: store.EnterpriseUser{EmployeeNumber: "1001", CostCenter: "CC-10", Organization: "Acme",
				Division: "R&D", Department: "Engineering"},
			Meta: store.Meta{Created: day(1, 1, 0), LastModified: day(2, 1, 0)},
		}},
		{"bob", store.User{
			UserName: "Bob", ExternalID: "ext-1", Active: true, DisplayName: "Bob Builder", UserType: "Contractor",
			Name:         store.Name{FamilyName: "Builder", GivenName: "Bob"},
			Emails:       []store.MultiValue{mv("bob@example.com", "work", false), mv("Bob@Example.org", "home", true)},
			PhoneNumbers: []store.MultiValue{mv("+1 555 0100", "mobile", false)},
			Roles:        []store.MultiValue{mv("user", "", false)},
			Enterprise: store.EnterpriseUser{EmployeeNumber: "1002", CostCenter: "CC-10", Department: "engineering",
				Manager: store.Manager{Value: "{alice}", DisplayName: "Alice Liddell"}},
			Meta: store.Meta{Created: day(1, 2, 0)},
		}},
		{"carol", store.User{
			UserName: "CAROL.Smith", Active: false, DisplayName: "Carol Smith", Title: "Manager", UserType: "Employee",
			ProfileURL: "https://example.com/profiles/carol",
			Name:       store.Name{FamilyName: "Smith", GivenName: "Carol"},
			Emails:     []store.MultiValue{mv("carol@example.com", "work", true)},
			Roles:      []store.MultiValue{mv("admin", "", false), mv("auditor", "", false)},
			Addresses:  []store.Address{{Locality: "Paris", Country: "FR", Type: "home"}},
			Enterprise: store.EnterpriseUser{EmployeeNumber: "1003", CostCenter: "CC-20", Department: "Sales"},
			Meta:       store.Meta{Created: day(1, 3, 0)},
		}},
		{"doerte", store.User{
			UserName: "dörte", ExternalID: "EXT-4", Active: true, DisplayName: "Dörte Müller", Title: "Ingénieure",
			PreferredLanguage: "de",
			Name:              store.Name{FamilyName: "Müller", GivenName: "Dörte"},
			Emails:            []store.MultiValue{mv("doerte@example.de", "work", false)},
			PhoneNumbers:      []store.MultiValue{mv("+49 30 1234", "work", false), mv("+49 170 5555", "mobile", true)},
			Addresses:         []store.Address{{Locality: "Berlin", Country: "DE", Type: "work"}},
			Enterprise: store.EnterpriseUser{EmployeeNumber: "1004", Department: "Engineering",
				Manager: store.Manager{Value: "{alice}"}},
			Meta: store.Meta{Created: day(1, 4, 0)},
		}},
		{"emile", store.User{
			UserName: "ÉMILE", ExternalID: "EXT-5", Active: true, DisplayName: "Émile Zola", Title: "Writer",
			Name:   store.Name{FamilyName: "Zola", GivenName: "Émile"},
			Emails: []store.MultiValue{mv("emile@example.fr", "other", false)},
			Roles:  []store.MultiValue{{Value: "user", Display: "Regular User"}},
			Enterprise: store.EnterpriseUser{EmployeeNumber: "1005", CostCenter: "CC-20", Department: "Sales",
				Manager: store.Manager{Value: "{carol}"}},
			Meta: store.Meta{Created: day(1, 5, 12*time.Hour)},
		}},
		{"frank", store.User{
			UserName: "frank", ExternalID: "EXT-6", Active: false,
			Emails: []store.MultiValue{},
			Meta:   store.Meta{Created: day(1, 6, 0)},
		}},
		{"grace", store.User{
			UserName: "grace", ExternalID: "ext-7", Active: true, DisplayName: "Grace Hopper", Title: "Engineer",
			UserType: "Employee", ProfileURL: "https://example.org/grace",
			Name: store.Name{Formatted: "Grace Hopper", FamilyName: "Hopper", GivenName: "Grace",
				HonorificPrefix: "Rear Admiral"},
			Emails: []store.MultiValue{mv("grace@example.com", "work", true), mv("grace@navy.example", "work", false),
				mv("grace@home.example", "home", false)},
			PhoneNumbers: []store.MultiValue{mv("+1 555 0199", "work", true)},
			Roles:        []store.MultiValue{{Value: "admin", Display: "Administrator"}},
			Ims:          []store.MultiValue{mv("grace.hopper", "aim", false)},
			Entitlements: []store.MultiValue{mv("VPN", "", true)},
			X509Certificates: []store.MultiValue{{Value: "MIIBgrace+cert/A==", Display: "Grace's signing certificate", Primary: true},
				{Value: "MIIBgrace+CERT/B=="}},
			Enterprise: store.EnterpriseUser{EmployeeNumber: "1007", CostCenter: "CC-10", Department: "Engineering",
				Manager: store.Manager{Value: "{alice}", DisplayName: "Alice Liddell"}},
			Meta: store.Meta{Created: day(1, 7, 0), LastModified: day(3, 1, 0)},
		}},
		{"heidi", store.User{
			UserName: "heidi", Active: true, DisplayName: "Heidi",
			Emails:     []store.MultiValue{mv("HEIDI@EXAMPLE.COM", "work", false), mv("heidi@alps.example", "home", false)},
			Addresses:  []store.Address{{Locality: "Zürich", Country: "CH", Type: "home", Primary: true}},
			Enterprise: store.EnterpriseUser{EmployeeNumber: "1008", Department: "Support"},
			Meta:       store.Meta{Created: time.Date(2023, 12, 31, 23, 30, 0, 0, time.UTC)},
		}},
	}
}

func fixtureGroups() []fixtureGroup {
	return []fixtureGroup{
		{"g:eng", store.Group{DisplayName: "Engineering", ExternalID: "G-ENG", Meta: store.Meta{Created: day(2, 1, 0)}},
			[]string{"alice", "bob", "grace"}},
		{"g:eng2", store.Group{DisplayName: "engineering", Meta: store.Meta{Created: day(2, 2, 0)}},
			[]string{"doerte"}},
		{"g:sales", store.Group{DisplayName: "Sales", ExternalID: "G-SALES", Meta: store.Meta{Created: day(2, 3, 0)}},
			[]string{"carol", "emile"}},
		{"g:empty", store.Group{DisplayName: "Empty", Meta: store.Meta{Created: day(2, 4, 0)}},
			nil},
	}
}

// loadFixture creates the fixture in tenant acme of b and returns the replacer that turns
// placeholders into ids.
func loadFixture(t *testing.T, b store.Backend) *strings.Replacer {
	t.Helper()
	mustTenant(t, b, acme)
	ids := map[string]string{}
	replacer := func() *strings.Replacer {
		var pairs []string
		for k, id := range ids {
			pairs = append(pairs, "{"+k+"}", id, "{"+strings.ToUpper(k)+"}", strings.ToUpper(id))
		}
		return strings.NewReplacer(pairs...)
	}
	for _, fu := range fixtureUsers() {
		u := fu.user
		u.Enterprise.Manager.Value = replacer().Replace(u.Enterprise.Manager.Value)
		created, err := b.Users.Create(ctx(), acme, u)
		require.NoError(t, err, "creating fixture user %s", fu.key)
		ids[fu.key] = created.ID
	}
	for _, fg := range fixtureGroups() {
		g := fg.group
		for _, k := range fg.members {
			g.Members = append(g.Members, store.Member{Value: ids[k]})
		}
		created, err := b.Groups.Create(ctx(), acme, g)
		require.NoError(t, err, "creating fixture group %s", fg.key)
		ids[fg.key] = created.ID
	}
	return replacer()
}
