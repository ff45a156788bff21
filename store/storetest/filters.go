package storetest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
)

func filterTests() []test {
	return []test{
		{"Users", testFilterUsers},
		{"Groups", testFilterGroups},
		{"AfterWrites", testFilterAfterWrites},
	}
}

// filterCase is a filter and the exact result over the fixture (see fixture.go): userNames or
// group displayNames in creation order, separated by spaces; "" for none.
type filterCase struct {
	filter string
	want   string
}

// ent qualifies an enterprise extension attribute.
const ent = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:"

// userFilterCases follow the semantics of store/filter: case-insensitive strings unless the
// attribute is caseExact (id, externalId, manager.value, groups.value), dateTimes compared as
// instants, any-value semantics for multi-valued attributes, and an absent attribute, empty
// string or empty list has no value (pr false, every comparison but "eq null" false, not (…)
// includes it).
func userFilterCases() []filterCase {
	return []filterCase{
		// userName: case-insensitive (schema.Fold), ordering on Fold forms.
		{`userName eq "alice"`, "alice"},
		{`userName eq "ALICE"`, "alice"},
		{`USERNAME Eq "bob"`, "Bob"},
		{`userName eq "carol.smith"`, "CAROL.Smith"},
		{`userName eq "DÖRTE"`, "dörte"},
		{`userName eq "émile"`, "ÉMILE"},
		{`userName ne "alice"`, "Bob CAROL.Smith dörte ÉMILE frank grace heidi"},
		{`userName co "o"`, "Bob CAROL.Smith"},
		{`userName sw "C"`, "CAROL.Smith"},
		{`userName ew "E"`, "alice dörte ÉMILE grace"},
		{`userName gt "frank"`, "ÉMILE grace heidi"},
		{`userName le "bob"`, "alice Bob"},
		{`userName lt "carol"`, "alice Bob"},
		{`userName ge "grace"`, "ÉMILE grace heidi"},

		// displayName and title: non-ASCII, empty and absent values.
		{`displayName co "MÜLLER"`, "dörte"},
		{`displayName sw "grace"`, "grace"},
		{`displayName pr`, "alice Bob CAROL.Smith dörte ÉMILE grace heidi"},
		{`not (displayName pr)`, "frank"},
		{`displayName ew "smith" or displayName ew "zola"`, "CAROL.Smith ÉMILE"},
		{`title pr`, "alice CAROL.Smith dörte ÉMILE grace"},
		{`title eq null`, "Bob frank heidi"},
		{`title ne null`, "alice CAROL.Smith dörte ÉMILE grace"},
		{`title ne "Engineer"`, "CAROL.Smith dörte ÉMILE"},
		{`not (title eq "Engineer")`, "Bob CAROL.Smith dörte ÉMILE frank heidi"},
		{`title eq ""`, ""},
		{`title co "génieur"`, "dörte"},
		{`title eq "engineer"`, "alice grace"},

		// externalId is caseExact; external_id is an accepted spelling.
		{`externalId eq "EXT-1"`, "alice"},
		{`externalId eq "ext-1"`, "Bob"},
		{`externalId sw "EXT"`, "alice dörte ÉMILE frank"},
		{`externalId pr`, "alice Bob dörte ÉMILE frank grace"},
		{`external_id eq "ext-7"`, "grace"},
		{`externalId gt "EXT-4"`, "Bob ÉMILE frank grace"},

		// active: boolean.
		{`active eq true`, "alice Bob dörte ÉMILE grace heidi"},
		{`active eq false`, "CAROL.Smith frank"},
		{`active ne true`, "CAROL.Smith frank"},
		{`active pr`, "alice Bob CAROL.Smith dörte ÉMILE frank grace heidi"},
		{`active eq "FALSE"`, "CAROL.Smith frank"},

		// dateTime: instants, whatever the offset.
		{`meta.created eq "2024-01-03T01:00:00+01:00"`, "CAROL.Smith"},
		{`meta.created gt "2024-01-03T01:00:00+01:00"`, "dörte ÉMILE frank grace"},
		{`meta.created ge "2024-01-03T00:00:00Z"`, "CAROL.Smith dörte ÉMILE frank grace"},
		{`meta.created lt "2024-01-01T00:30:00+00:30"`, "heidi"},
		{`meta.created le "2024-01-01T00:30:00+00:30"`, "alice heidi"},
		{`meta.created ne "2024-01-05T12:00:00Z"`, "alice Bob CAROL.Smith dörte frank grace heidi"},
		{`meta.created gt "2024-01-05T06:00:00-06:00"`, "frank grace"},
		{`meta.created lt "2024-01-05T12:00:00.001Z"`, "alice Bob CAROL.Smith dörte ÉMILE heidi"},
		{`meta.created eq "2024-01-05T13:00:00+01:00"`, "ÉMILE"},
		// The store sets a zero lastModified to created.
		{`meta.lastModified pr`, "alice Bob CAROL.Smith dörte ÉMILE frank grace heidi"},
		{`meta.lastModified eq null`, ""},
		{`meta.lastModified ge "2024-01-04T00:00:00Z"`, "alice dörte ÉMILE frank grace"},
		{`meta.lastModified gt "2024-01-31T00:00:00Z"`, "alice grace"},
		{`meta pr`, "alice Bob CAROL.Smith dörte ÉMILE frank grace heidi"},

		// profileUrl: a reference, compared as a case-insensitive string.
		{`profileUrl eq "https://example.com/profiles/alice"`, "alice"},
		{`profileUrl sw "https://example.com/"`, "alice CAROL.Smith"},
		{`profileUrl pr`, "alice CAROL.Smith grace"},

		// Single-valued complex attributes.
		{`name.familyName eq "müller"`, "dörte"},
		{`name.givenName sw "a"`, "alice"},
		{`name pr`, "alice Bob CAROL.Smith dörte ÉMILE grace"},
		{`name.honorificPrefix pr`, "grace"},
		{`name.formatted co "hopper"`, "grace"},

		// addresses.
		{`addresses.locality eq "zürich"`, "heidi"},
		{`addresses.country eq "gb" or addresses.country eq "fr"`, "alice CAROL.Smith"},
		{`addresses[type eq "home" and primary eq true]`, "heidi"},
		{`addresses pr`, "alice CAROL.Smith dörte heidi"},
		{`addresses.postalCode pr`, "alice"},

		// emails: value paths, the Entra form, any-value semantics.
		{`emails[type eq "work" and primary eq true]`, "alice CAROL.Smith grace"},
		{`emails[type eq "work"].value eq "grace@navy.example"`, "grace"},
		{`emails[type eq "work"].value eq "bob@example.org"`, ""},
		{`emails[type eq "home"].value eq "BOB@EXAMPLE.ORG"`, "Bob"},
		{`emails.value eq "bob@example.org"`, "Bob"},
		{`emails eq "heidi@example.com"`, "heidi"},
		{`emails co "@home.example"`, "alice grace"},
		{`emails.value ew ".com"`, "alice Bob CAROL.Smith grace heidi"},
		{`emails.type eq "other"`, "ÉMILE"},
		{`emails pr`, "alice Bob CAROL.Smith dörte ÉMILE grace heidi"},
		{`not (emails pr)`, "frank"},
		{`emails.primary eq true`, "alice Bob CAROL.Smith grace"},
		{`emails[primary eq true].type eq "home"`, "Bob"},
		{`emails[not (type eq "work")]`, "alice Bob ÉMILE grace heidi"},
		{`not (emails[type eq "work"])`, "ÉMILE frank"},
		{`emails.type eq "work" and emails.primary eq true`, "alice Bob CAROL.Smith grace"},
		{`emails.type ne "work"`, "alice Bob ÉMILE grace heidi"},
		{`emails.primary ne true`, "alice Bob dörte ÉMILE grace heidi"},
		{`emails.display pr`, ""},

		// phoneNumbers and roles.
		{`phoneNumbers[type eq "mobile"]`, "Bob dörte"},
		{`phoneNumbers.value sw "+1 "`, "Bob grace"},
		{`phoneNumbers.primary eq true`, "dörte grace"},
		{`phoneNumbers pr`, "alice Bob dörte grace"},
		{`roles.value eq "admin"`, "alice CAROL.Smith grace"},
		{`roles eq "AUDITOR"`, "CAROL.Smith"},
		{`roles.display pr`, "ÉMILE grace"},
		{`roles[value eq "user"]`, "Bob ÉMILE"},
		{`roles.value ne "admin"`, "Bob CAROL.Smith ÉMILE"},

		// ims, photos, entitlements and x509Certificates (value binary and caseExact).
		{`ims[type eq "skype" and primary eq true]`, "alice"},
		{`ims.value co "HOPPER"`, "grace"},
		{`ims.type eq "xmpp" or ims.type eq "aim"`, "alice grace"},
		{`photos[type eq "thumbnail"].value ew "small.jpg"`, "alice"},
		{`photos.value eq "https://photos.example.com/alice.jpg"`, "alice"},
		{`photos pr`, "alice"},
		{`entitlements eq "vpn"`, "alice grace"},
		{`entitlements.display sw "VPN"`, "alice"},
		{`entitlements.primary eq true`, "grace"},
		{`x509Certificates.value eq "MIIBgrace+cert/A=="`, "grace"},
		{`x509Certificates.value eq "miibgrace+cert/a=="`, ""},
		{`x509Certificates[primary eq true].display co "signing"`, "grace"},
		{`x509Certificates.value pr`, "grace"},
		{`not (x509Certificates pr)`, "alice Bob CAROL.Smith dörte ÉMILE frank heidi"},

		// schemas: the core URN always, the enterprise extension's when the user has a value there.
		{`schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"`, "alice Bob CAROL.Smith dörte ÉMILE grace heidi"},
		{`not (schemas eq "` + ent[:len(ent)-1] + `")`, "frank"},
		{`schemas eq "URN:IETF:PARAMS:SCIM:SCHEMAS:CORE:2.0:USER" and active eq false`, "CAROL.Smith frank"},
		{`schemas co "enterprise" and userName sw "f"`, ""},
		{`schemas pr`, "alice Bob CAROL.Smith dörte ÉMILE frank grace heidi"},
		{`schemas eq "urn:ietf:params:scim:schemas:core:2.0:Group"`, ""},

		// The enterprise extension, URN-qualified or not; the core URN.
		{ent + `department eq "engineering"`, "alice Bob dörte grace"},
		{`department eq "Sales"`, "CAROL.Smith ÉMILE"},
		{ent + `manager.value eq "{alice}"`, "Bob dörte grace"},
		{ent + `manager.value pr`, "Bob dörte ÉMILE grace"},
		{ent + `costCenter eq "cc-10"`, "alice Bob grace"},
		{ent + `employeeNumber gt "1004"`, "ÉMILE grace heidi"},
		{ent + `manager pr`, "Bob dörte ÉMILE grace"},
		{ent + `manager eq "{carol}"`, "ÉMILE"},
		{ent + `manager.displayName eq "alice liddell"`, "Bob grace"},
		{ent + `manager.value eq "{ALICE}"`, ""},
		{ent + `division pr`, "alice"},
		{`not (` + ent + `department eq "Engineering")`, "CAROL.Smith ÉMILE frank heidi"},
		{`urn:ietf:params:scim:schemas:core:2.0:User:userName eq "heidi"`, "heidi"},

		// groups, derived from memberships.
		{`groups.value eq "{g:eng}"`, "alice Bob grace"},
		{`groups.display eq "engineering"`, "alice Bob dörte grace"},
		{`groups[display eq "Sales"]`, "CAROL.Smith ÉMILE"},
		{`groups pr`, "alice Bob CAROL.Smith dörte ÉMILE grace"},
		{`not (groups pr)`, "frank heidi"},
		{`groups.type eq "direct"`, "alice Bob CAROL.Smith dörte ÉMILE grace"},
		{`groups eq "{g:sales}"`, "CAROL.Smith ÉMILE"},
		{`groups.value eq "{G:ENG}"`, ""},
		{`groups.value eq "{g:empty}"`, ""},

		// and binds tighter than or; not.
		{`userName eq "alice" or userName eq "bob" and active eq false`, "alice"},
		{`(userName eq "alice" or userName eq "bob") and active eq true`, "alice Bob"},
		{`userName eq "frank" or title eq "Manager" and active eq false`, "CAROL.Smith frank"},
		{`not (active eq true) and emails pr`, "CAROL.Smith"},
		{`not (userName eq "alice" or userName eq "bob")`, "CAROL.Smith dörte ÉMILE frank grace heidi"},
		{`active eq true and not (title pr)`, "Bob heidi"},
		{`(title eq "Engineer" or title eq "Manager") and not (department eq "Sales")`, "alice grace"},
		{`title eq "Engineer" and active eq true or externalId eq "EXT-6"`, "alice frank grace"},
		{`not (not (userName eq "bob"))`, "Bob"},

		// Shapes a backend answers from an index, alone and combined.
		{`userName eq "heidi" and active eq true`, "heidi"},
		{`userName eq "frank" and active eq true`, ""},
		{`userName eq "alice" or userName eq "GRACE"`, "alice grace"},
		{`id eq "{doerte}"`, "dörte"},
		{`id eq "{doerte}" or id eq "{frank}"`, "dörte frank"},
		{`id eq "{alice}" and active eq false`, ""},
		{`id ne "{alice}"`, "Bob CAROL.Smith dörte ÉMILE frank grace heidi"},
		{`id eq "user_doesnotexist"`, ""},
		{`id eq "{ALICE}"`, ""},
		{`externalId eq "EXT-6" and active eq false`, "frank"},
		{`externalId eq "ext-6"`, ""},
		{`userName eq "alice" and userName eq "bob"`, ""},
		{`userName eq "nobody"`, ""},
		{`id eq "{emile}" and userName eq "émile"`, "ÉMILE"},
		{`userName eq "carol.smith" or id eq "{heidi}"`, "CAROL.Smith heidi"},

		// Other string attributes.
		{`nickName pr`, "alice"},
		{`preferredLanguage eq "DE"`, "dörte"},
		{`userType eq "employee"`, "alice CAROL.Smith grace"},
		{`timezone pr`, "alice"},
		{`locale eq null`, "Bob CAROL.Smith dörte ÉMILE frank grace heidi"},
	}
}

// groupFilterCases run over the fixture's groups: Engineering, engineering, Sales, Empty.
func groupFilterCases() []filterCase {
	return []filterCase{
		{`displayName eq "Engineering"`, "Engineering engineering"},
		{`displayName eq "ENGINEERING" and members pr`, "Engineering engineering"},
		{`displayName ne "sales"`, "Engineering engineering Empty"},
		{`displayName sw "e"`, "Engineering engineering Empty"},
		{`displayName eq "engineering" and members.value eq "{doerte}"`, "engineering"},
		{`members.value eq "{alice}"`, "Engineering"},
		{`members[value eq "{carol}"]`, "Sales"},
		{`members[value eq "{alice}" or value eq "{doerte}"]`, "Engineering engineering"},
		{`members.value eq "{alice}" or members.value eq "{emile}"`, "Engineering Sales"},
		{`members eq "{grace}"`, "Engineering"},
		{`members.value eq "{ALICE}"`, ""},
		{`members pr`, "Engineering engineering Sales"},
		{`not (members pr)`, "Empty"},
		{`members.display eq "DÖRTE"`, "engineering"},
		{`members.display co "é"`, "Sales"},
		{`members[display sw "c" and type eq "User"]`, "Sales"},
		{`members.type eq "User"`, "Engineering engineering Sales"},
		{`schemas eq "urn:ietf:params:scim:schemas:core:2.0:Group"`, "Engineering engineering Sales Empty"},
		{`schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"`, ""},
		{`externalId eq "G-ENG"`, "Engineering"},
		{`externalId eq "g-eng"`, ""},
		{`externalId pr`, "Engineering Sales"},
		{`id eq "{g:sales}"`, "Sales"},
		{`id eq "{g:eng}" or id eq "{g:empty}"`, "Engineering Empty"},
		{`meta.created gt "2024-02-02T00:00:00Z"`, "Sales Empty"},
		{`meta.created lt "2024-02-02T01:00:00+01:00"`, "Engineering"},
		{`meta.created le "2024-02-02T01:00:00+01:00"`, "Engineering engineering"},
	}
}

// checkUserFilter lists the users matching f in acme, whole and as the page at StartIndex 2
// of Count 2, and compares both with want.
func checkUserFilter(t *testing.T, b store.Backend, f filter.Expr, want []string) {
	t.Helper()
	want = append([]string{}, want...)
	p, err := b.Users.List(ctx(), acme, store.Query{Filter: f, Count: -1})
	require.NoError(t, err)
	assert.Equal(t, want, userNames(p.Resources))
	assert.Equal(t, len(want), p.TotalResults, "TotalResults")
	p, err = b.Users.List(ctx(), acme, store.Query{Filter: f, StartIndex: 2, Count: 2})
	require.NoError(t, err)
	assert.Equal(t, want[min(1, len(want)):min(3, len(want))], userNames(p.Resources), "StartIndex 2, Count 2")
	assert.Equal(t, len(want), p.TotalResults, "TotalResults of StartIndex 2, Count 2")
}

// checkGroupFilter is checkUserFilter for groups.
func checkGroupFilter(t *testing.T, b store.Backend, f filter.Expr, want []string) {
	t.Helper()
	want = append([]string{}, want...)
	p, err := b.Groups.List(ctx(), acme, store.Query{Filter: f, Count: -1})
	require.NoError(t, err)
	assert.Equal(t, want, groupNames(p.Resources))
	assert.Equal(t, len(want), p.TotalResults, "TotalResults")
	p, err = b.Groups.List(ctx(), acme, store.Query{Filter: f, StartIndex: 2, Count: 2})
	require.NoError(t, err)
	assert.Equal(t, want[min(1, len(want)):min(3, len(want))], groupNames(p.Resources), "StartIndex 2, Count 2")
	assert.Equal(t, len(want), p.TotalResults, "TotalResults of StartIndex 2, Count 2")
}

// Users.List keeps the users a filter matches, in creation order; one case per subtest, all on
// one fixture.
func testFilterUsers(t *testing.T, b store.Backend) {
	ids := loadFixture(t, b)
	for _, c := range userFilterCases() {
		t.Run(c.filter, func(t *testing.T) {
			checkUserFilter(t, b, parseUsers(t, ids.Replace(c.filter)), strings.Fields(c.want))
		})
	}
}

// Groups.List keeps the groups a filter matches, in creation order.
func testFilterGroups(t *testing.T, b store.Backend) {
	ids := loadFixture(t, b)
	for _, c := range groupFilterCases() {
		t.Run(c.filter, func(t *testing.T) {
			checkGroupFilter(t, b, parseGroups(t, ids.Replace(c.filter)), strings.Fields(c.want))
		})
	}
}

// Filters see every write: renames (of users and of groups), membership changes, deletes and
// changed attributes, so whatever a backend indexes follows.
func testFilterAfterWrites(t *testing.T, b store.Backend) {
	ids := loadFixture(t, b)
	users := func(f string) filter.Expr { return parseUsers(t, ids.Replace(f)) }
	groups := func(f string) filter.Expr { return parseGroups(t, ids.Replace(f)) }
	id := func(key string) string { return ids.Replace("{" + key + "}") }
	updateUser := func(key string, fn func(*store.User)) {
		_, err := b.Users.Update(ctx(), acme, id(key), func(u *store.User) error { fn(u); return nil })
		require.NoError(t, err, "updating %s", key)
	}
	updateGroup := func(key string, fn func(*store.Group)) {
		_, err := b.Groups.Update(ctx(), acme, id(key), func(g *store.Group) error { fn(g); return nil })
		require.NoError(t, err, "updating %s", key)
	}

	updateUser("alice", func(u *store.User) { u.UserName = "Alicia"; u.ExternalID = "EXT-1b"; u.Emails = nil })
	updateUser("frank", func(u *store.User) { u.Active = true; u.Title = "Intern" })
	checkUserFilter(t, b, users(`userName eq "alice"`), nil)
	checkUserFilter(t, b, users(`userName eq "ALICIA"`), []string{"Alicia"})
	checkUserFilter(t, b, users(`externalId eq "EXT-1"`), nil)
	checkUserFilter(t, b, users(`externalId eq "EXT-1b"`), []string{"Alicia"})
	checkUserFilter(t, b, users(`emails co "@home.example"`), []string{"grace"})
	checkUserFilter(t, b, users(`emails.value eq "alice@example.com"`), nil)
	checkUserFilter(t, b, users(`emails[type eq "home"].value eq "alice@home.example"`), nil)
	// An update that keeps the indexed values leaves the user found by them.
	checkUserFilter(t, b, users(`userName eq "FRANK" and externalId eq "EXT-6"`), []string{"frank"})

	// Emails change: the old value no longer finds the user, the new one does, and a value
	// two users share finds both.
	updateUser("grace", func(u *store.User) { u.Emails[0].Value = "GRACE@EXAMPLE.NET" })
	updateUser("doerte", func(u *store.User) { u.Emails = append(u.Emails, store.MultiValue{Value: "grace@example.net"}) })
	checkUserFilter(t, b, users(`emails.value eq "grace@example.com"`), nil)
	checkUserFilter(t, b, users(`emails.value eq "grace@example.net"`), []string{"dörte", "grace"})
	checkUserFilter(t, b, users(`emails[type eq "work"].value eq "grace@example.net"`), []string{"grace"})
	checkUserFilter(t, b, users(`emails.value eq "grace@navy.example"`), []string{"grace"})
	checkUserFilter(t, b, users(`active eq false`), []string{"CAROL.Smith"})
	checkUserFilter(t, b, users(`title eq null`), []string{"Bob", "heidi"})
	checkGroupFilter(t, b, groups(`members.display eq "alicia"`), []string{"Engineering"})
	checkGroupFilter(t, b, groups(`members.display eq "alice"`), nil)

	updateGroup("g:sales", func(g *store.Group) { g.DisplayName = "Revenue" })
	checkUserFilter(t, b, users(`groups.display eq "revenue"`), []string{"CAROL.Smith", "ÉMILE"})
	checkUserFilter(t, b, users(`groups.display eq "sales"`), nil)
	checkGroupFilter(t, b, groups(`displayName eq "sales"`), nil)

	updateGroup("g:eng", func(g *store.Group) {
		g.Members = []store.Member{{Value: id("alice")}, {Value: id("bob")}, {Value: id("heidi")}}
	})
	updateGroup("g:empty", func(g *store.Group) { g.Members = []store.Member{{Value: id("frank")}} })
	checkUserFilter(t, b, users(`groups.value eq "{g:eng}"`), []string{"Alicia", "Bob", "heidi"})
	checkUserFilter(t, b, users(`not (groups pr)`), []string{"grace"})
	checkGroupFilter(t, b, groups(`members.value eq "{grace}"`), nil)
	checkGroupFilter(t, b, groups(`not (members pr)`), nil)

	require.NoError(t, b.Users.Delete(ctx(), acme, id("bob")))
	require.NoError(t, b.Groups.Delete(ctx(), acme, id("g:eng2")))
	checkUserFilter(t, b, users(`groups.display eq "engineering"`), []string{"Alicia", "heidi"})
	checkUserFilter(t, b, users(`userName eq "bob" or externalId eq "ext-1"`), nil)
	checkUserFilter(t, b, users(`id eq "{bob}"`), nil)
	checkUserFilter(t, b, users(`emails.value eq "bob@example.org"`), nil)
	checkGroupFilter(t, b, groups(`members.value eq "{bob}"`), nil)
	checkGroupFilter(t, b, groups(`displayName eq "engineering"`), []string{"Engineering"})
	checkGroupFilter(t, b, groups(`id eq "{g:eng2}"`), nil)

	// A new user with the deleted one's userName is a different user, listed last.
	_, err := b.Users.Create(ctx(), acme, store.User{UserName: "BOB", ExternalID: "ext-1", Active: true})
	require.NoError(t, err)
	checkUserFilter(t, b, users(`userName eq "bob" or externalId eq "ext-1"`), []string{"BOB"})
	checkUserFilter(t, b, users(`active eq true`), []string{"Alicia", "dörte", "ÉMILE", "frank", "grace", "heidi", "BOB"})
	checkGroupFilter(t, b, groups(`members.value eq "{bob}"`), nil)
}
