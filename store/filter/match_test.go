package filter_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

const (
	userID    = "2819c223-7f76-453a-919d-413861904646"
	otherID   = "902c246b-6245-4190-8e05-00816be7344a"
	groupID   = "e9e30dba-f08f-4109-8486-d5c6a331660a"
	managerID = "26118915-6090-4610-87e4-49d8ca9f808d"
)

// testUser is Barbara Jensen of RFC 7643 §8.2, with a few changes to exercise folding.
func testUser() *store.User {
	return &store.User{
		ID:          userID,
		ExternalID:  "BJensen",
		UserName:    "bjensen",
		Active:      true,
		DisplayName: "Babs Jensen",
		NickName:    "\u212Aate", // KELVIN SIGN, which folds to k
		Title:       "Tour Guide",
		Timezone:    "America/Los_Angeles",
		// ProfileURL and Locale are empty: absent.
		Name: store.Name{Formatted: "Ms. Érin Jensen", FamilyName: "Jensen", GivenName: "ÉRIN"},
		Emails: []store.MultiValue{
			{Value: "bjensen@example.com", Type: "work", Primary: true},
			{Value: "babs@jensen.org", Type: "home"},
		},
		PhoneNumbers: []store.MultiValue{},   // empty: absent
		Roles:        []store.MultiValue{{}}, // one value with nothing set: absent
		Addresses:    []store.Address{{Locality: "Hollywood", Type: "work"}},
		Groups:       []store.GroupRef{{Value: groupID, Display: "Tour Guides", Type: "direct"}},
		Enterprise: store.EnterpriseUser{
			EmployeeNumber: "701984",
			Department:     "Tour Operations",
			Manager:        store.Manager{Value: managerID, DisplayName: "John Smith"},
		},
		Meta: store.Meta{
			Created:      time.Date(2010, 1, 23, 4, 56, 22, 0, time.UTC),
			LastModified: time.Date(2011, 5, 13, 4, 42, 34, 0, time.UTC),
		},
	}
}

func testGroup() *store.Group {
	return &store.Group{
		ID:          groupID,
		ExternalID:  "tour-guides",
		DisplayName: "Tour Guides",
		Members: []store.Member{
			{Value: userID, Display: "bjensen", Type: "User"},
			{Value: otherID, Display: "jsmith", Type: "User"},
		},
		Meta: store.Meta{Created: time.Date(2010, 1, 23, 4, 56, 22, 0, time.UTC)},
	}
}

// widget is a resource of the widgets type: single-valued attributes by name.
type widget map[string]filter.Value

func (w widget) FilterValue(a, _ *schema.Attribute, i int) (filter.Value, bool) {
	return w[a.Name], i == 0
}

func testWidget() widget {
	return widget{
		"weight":   filter.NumberValue(0.75),
		"count":    filter.NumberValue(42),
		"label":    filter.StringValue("Bolt"),
		"checksum": filter.StringValue("AAEC"),
	}
}

// matchCase is a filter and whether it matches the test resource of its type (testUser,
// testGroup or testWidget) and an empty one.
type matchCase struct {
	rt          string // "User" (the default), "Group" or "Widget"
	filter      string
	full, empty bool
}

func matchCases() []matchCase {
	return []matchCase{
		// userName is case-insensitive, externalId and id are caseExact.
		{"", `userName eq "bjensen"`, true, false},
		{"", `userName eq "BJENSEN"`, true, false},
		{"", `USERNAME EQ "BJensen"`, true, false},
		{"", `userName ne "bjensen"`, false, false},
		{"", `userName ne "other"`, true, false},
		{"", `userName co "JENS"`, true, false},
		{"", `userName sw "BJ"`, true, false},
		{"", `userName ew "SEN"`, true, false},
		{"", `userName co ""`, true, false},
		{"", `userName gt "BA"`, true, false},
		{"", `userName gt "bjensen"`, false, false},
		{"", `userName ge "BJENSEN"`, true, false},
		{"", `userName lt "C"`, true, false},
		{"", `userName le "b"`, false, false},
		{"", `externalId eq "BJensen"`, true, false},
		{"", `externalId eq "bjensen"`, false, false},
		{"", `externalId ne "bjensen"`, true, false},
		{"", `external_id sw "BJ"`, true, false},
		{"", `externalId sw "bj"`, false, false},
		{"", `externalId gt "b"`, false, false}, // 'B' < 'b'
		{"", `externalId lt "b"`, true, false},
		{"", `id eq "` + userID + `"`, true, false},
		{"", `id eq "2819C223-7F76-453A-919D-413861904646"`, false, false},
		{"", `title eq "tour guide"`, true, false},
		{"", `title co "UR G"`, true, false},
		{"", `title co "ur gx"`, false, false},
		{"", `title co "é"`, false, false},
		{"", `title sw "TOUR"`, true, false},
		{"", `title ew "guide"`, true, false},
		{"", `title ew "xguide"`, false, false},
		{"", `title ne "TOUR GUIDE"`, false, false},
		{"", `title ne "Tour Guid"`, true, false},
		{"", `title gt "tour"`, true, false},
		{"", `title gt "tour guide"`, false, false},
		{"", `title ge "TOUR GUIDF"`, false, false},
		{"", `title lt "TOUR GUIDES"`, true, false},
		{"", `title lt "Tour_Guide"`, true, false},
		{"", `title le "tour guide"`, true, false},

		// Folding beyond ASCII.
		{"", `name.givenName eq "érin"`, true, false},
		{"", `name.givenName eq "ÉRIN"`, true, false},
		{"", `name.givenName eq "\u00e9rin"`, true, false},
		{"", `name.givenName eq "erin"`, false, false},
		{"", `name.givenName sw "é"`, true, false},
		{"", `name.formatted co "ÉRIN J"`, true, false},
		{"", `nickName eq "kate"`, true, false},
		{"", `nickName eq "KATE"`, true, false},
		{"", `nickName eq "\u212Aate"`, true, false},
		{"", "nickName eq \"\u212AATE\"", true, false},
		{"", `nickName sw "k"`, true, false},

		// Dates compare as instants, whatever the offset they are written with.
		{"", `meta.created eq "2010-01-23T04:56:22Z"`, true, false},
		{"", `meta.created eq "2010-01-23T05:56:22+01:00"`, true, false},
		{"", `meta.created eq "2010-01-22T20:56:22-08:00"`, true, false},
		{"", `meta.created eq "2010-01-23T04:56:22.000Z"`, true, false},
		{"", `meta.created eq "2010-01-23T04:56:22.000000001Z"`, false, false},
		{"", `meta.created ne "2010-01-23T05:56:22+01:00"`, false, false},
		{"", `meta.created gt "2010-01-23T05:00:00+01:00"`, true, false},
		{"", `meta.created lt "2010-01-23T05:00:00+01:00"`, false, false},
		{"", `meta.created lt "2010-01-23T04:00:00-01:00"`, true, false}, // not as strings
		{"", `meta.lastModified gt "2011-05-13T04:42:34Z"`, false, false},
		{"", `meta.lastModified ge "2011-05-13T04:42:34Z"`, true, false},
		{"", `meta.lastModified le "2011-05-13T04:42:34.5Z"`, true, false},
		{"", `meta.created gt "0001-01-01T00:00:00Z"`, true, false},
		{"", `meta.created ne "0001-01-01T00:00:00Z"`, true, false},
		{"", `meta.created pr`, true, false},
		{"", `meta.created eq null`, false, true},

		// A multi-valued attribute matches when any of its values does.
		{"", `emails.value eq "babs@jensen.org"`, true, false},
		{"", `emails eq "BABS@JENSEN.ORG"`, true, false},
		{"", `emails co "jensen.org"`, true, false},
		{"", `emails.type eq "home"`, true, false},
		{"", `emails.type eq "other"`, false, false},
		{"", `emails.value ne "bjensen@example.com"`, true, false},
		{"", `emails.primary eq true`, true, false},
		{"", `emails.primary eq false`, true, false},

		// A value path binds its comparisons to one value; separate comparisons do not.
		{"", `emails.type eq "work" and emails.value co "jensen.org"`, true, false},
		{"", `emails[type eq "work" and value co "jensen.org"]`, false, false},
		{"", `emails[type eq "home" and value co "jensen.org"]`, true, false},
		{"", `emails[type eq "work" and primary eq true]`, true, false},
		{"", `emails[type eq "home" and primary eq true]`, false, false},
		{"", `emails[primary eq false]`, true, false},
		{"", `emails[not (type eq "work")]`, true, false},
		{"", `emails[value pr]`, true, false},
		{"", `emails[display pr]`, false, false},
		{"", `emails[display eq null]`, true, false},
		{"", `not (emails[type eq "other"])`, true, true},

		// So does Entra ID's form.
		{"", `emails[type eq "work"].value eq "bjensen@example.com"`, true, false},
		{"", `emails[type eq "work"].value eq "babs@jensen.org"`, false, false},
		{"", `emails[type eq "home"].value co "JENSEN"`, true, false},
		{"", `emails[type eq "work"].value pr`, true, false},
		{"", `emails[type eq "other"].value pr`, false, false},
		{"", `emails[type eq "other"].value eq null`, true, true},
		{"", `emails[type eq "work"].primary eq true`, true, false},
		{"", `emails[type eq "home"].primary eq true`, false, false},

		// An empty string, an empty list and a value with nothing set are absent; a boolean
		// false is a value.
		{"", `title pr`, true, false},
		{"", `profileUrl pr`, false, false},
		{"", `locale pr`, false, false},
		{"", `phoneNumbers pr`, false, false},
		{"", `phoneNumbers.value pr`, false, false},
		{"", `roles pr`, false, false},
		{"", `roles.value pr`, false, false},
		{"", `roles[value pr or type pr]`, false, false},
		{"", `name pr`, true, false},
		{"", `emails pr`, true, false},
		{"", `addresses pr`, true, false},
		{"", `groups pr`, true, false},
		{"", `active pr`, true, true},
		{"", `meta pr`, true, true}, // meta.resourceType is always there

		// eq null holds exactly when pr does not; ne null is pr.
		{"", `profileUrl eq null`, true, true},
		{"", `profileUrl ne null`, false, false},
		{"", `title eq null`, false, true},
		{"", `title ne null`, true, false},
		{"", `phoneNumbers eq null`, true, true},
		{"", `emails eq null`, false, true},
		{"", `name eq null`, false, true},
		{"", `active eq null`, false, false},
		{"", `manager eq null`, false, true},

		// An absent attribute has no value: every comparison but eq null is false, and not (…)
		// includes it.
		{"", `profileUrl ne "x"`, false, false},
		{"", `profileUrl eq ""`, false, false},
		{"", `profileUrl co ""`, false, false},
		{"", `profileUrl lt "zzz"`, false, false},
		{"", `not (profileUrl eq "x")`, true, true},
		{"", `not (profileUrl ne "x")`, true, true},
		{"", `not (userName eq "bjensen")`, false, true},
		{"", `phoneNumbers.value ne "x"`, false, false},
		{"", `not (phoneNumbers[type eq "work"])`, true, true},

		// The enterprise extension.
		{"", `department eq "tour operations"`, true, false},
		{"", entURN + `department sw "TOUR"`, true, false},
		{"", `employeeNumber eq "701984"`, true, false},
		{"", `costCenter pr`, false, false},
		{"", `manager.value eq "` + managerID + `"`, true, false},
		{"", `manager.value eq "26118915-6090-4610-87E4-49D8CA9F808D"`, false, false},
		{"", `manager eq "` + managerID + `"`, true, false},
		{"", `manager.displayName sw "john"`, true, false},
		{"", `manager pr`, true, false},
		{"", `manager.$ref pr`, false, false},
		{"", `not (department eq "Sales")`, true, true},

		// groups, derived from membership.
		{"", `groups.value eq "` + groupID + `"`, true, false},
		{"", `groups eq "` + groupID + `"`, true, false},
		{"", `groups.value eq "E9E30DBA-F08F-4109-8486-D5C6A331660A"`, false, false},
		{"", `groups[display eq "tour guides" and type eq "direct"]`, true, false},
		{"", `groups[type eq "indirect"]`, false, false},

		// Booleans.
		{"", `active eq true`, true, false},
		{"", `active eq "TRUE"`, true, false},
		{"", `active ne true`, false, true},
		{"", `active eq false`, false, true},
		{"", `active ne false`, true, false},

		{"", `addresses[type eq "work" and locality eq "hollywood"]`, true, false},
		{"", `addresses[type eq "home"]`, false, false},
		{"", `addresses.primary eq false`, true, false},

		// and binds tighter than or.
		{"", `userName eq "bjensen" and title pr`, true, false},
		{"", `userName eq "x" or title pr`, true, false},
		{"", `userName eq "x" and title pr`, false, false},
		{"", `title pr or userName eq "x" and locale pr`, true, false},
		{"", `(title pr or userName eq "x") and locale pr`, false, false},
		{"", `not (userName eq "x") and not (title pr)`, false, true},
		{"", `userName eq "x" or not (locale pr)`, true, true},

		{"", `meta.resourceType eq "User"`, true, true},
		{"", `meta.resourceType eq "user"`, false, false},

		// Groups.
		{"Group", `displayName eq "tour guides"`, true, false},
		{"Group", `members[value eq "` + userID + `"]`, true, false},
		{"Group", `members[value eq "2819C223-7F76-453A-919D-413861904646"]`, false, false},
		{"Group", `members eq "` + otherID + `"`, true, false},
		{"Group", `members.display eq "JSMITH"`, true, false},
		{"Group", `members[display eq "bjensen" and value eq "` + otherID + `"]`, false, false},
		{"Group", `members[type eq "User"].value eq "` + otherID + `"`, true, false},
		{"Group", `members pr`, true, false},
		{"Group", `members eq null`, false, true},
		{"Group", `not (members pr)`, false, true},
		{"Group", `meta.resourceType eq "Group"`, true, true},
		{"Group", `externalId eq "Tour-Guides"`, false, false},
		{"Group", `meta.created ge "2010-01-23T04:56:22Z"`, true, false},

		// Numbers.
		{"Widget", `count eq 42`, true, false},
		{"Widget", `count eq 4.2e1`, true, false},
		{"Widget", `count ne 42`, false, false},
		{"Widget", `count gt 41.5`, true, false},
		{"Widget", `count ge 42`, true, false},
		{"Widget", `count lt 42`, false, false},
		{"Widget", `count le 42`, true, false},
		{"Widget", `weight lt 1`, true, false},
		{"Widget", `weight gt -1`, true, false},
		{"Widget", `weight eq 0.75`, true, false},
		{"Widget", `weight pr`, true, false},
		{"Widget", `weight eq null`, false, true},
		{"Widget", `not (weight gt 1)`, true, true},
		{"Widget", `label eq "bolt"`, true, false},
		{"Widget", `checksum eq "AAEC"`, true, false},
	}
}

func TestMatch(t *testing.T) {
	widgetType := widgets()
	resources := map[string][2]filter.Resource{
		"":       {testUser(), &store.User{}},
		"Group":  {testGroup(), &store.Group{}},
		"Widget": {testWidget(), widget{}},
	}
	for _, tt := range matchCases() {
		t.Run(tt.rt+"/"+tt.filter, func(t *testing.T) {
			e, err := filter.Parse(tt.filter, parseCase{rt: tt.rt}.resourceType(widgetType))
			require.NoError(t, err)
			full, empty := resources[tt.rt][0], resources[tt.rt][1]
			assert.Equal(t, tt.full, filter.Match(e, full), "populated resource")
			assert.Equal(t, tt.empty, filter.Match(e, empty), "empty resource")
			assert.Equal(t, !tt.full, filter.Match(&filter.Not{X: e}, full), "not (…) on the populated resource")
		})
	}
}

// TestMatchTimeOnlyForDateTime checks that a Resource reporting a time for an attribute that is
// not a dateTime never matches a comparison on it.
func TestMatchTimeOnlyForDateTime(t *testing.T) {
	e, err := filter.Parse(`label ne "x"`, widgets())
	require.NoError(t, err)
	assert.False(t, filter.Match(e, widget{"label": filter.TimeValue(time.Now())}))
}

func TestValueConstructors(t *testing.T) {
	assert.Equal(t, filter.Value{}, filter.StringValue(""))
	assert.Equal(t, filter.Value{Kind: filter.KindString, Str: "x"}, filter.StringValue("x"))
	assert.Equal(t, filter.Value{Kind: filter.KindBool}, filter.BoolValue(false))
	assert.Equal(t, filter.Value{Kind: filter.KindNumber}, filter.NumberValue(0))
	assert.Equal(t, filter.Value{}, filter.TimeValue(time.Time{}))
	now := time.Now()
	assert.Equal(t, filter.Value{Kind: filter.KindTime, Time: now}, filter.TimeValue(now))
	assert.Equal(t, filter.Value{}, filter.ComplexValue(false))
	assert.Equal(t, filter.Value{Kind: filter.KindComplex}, filter.ComplexValue(true))
	assert.Equal(t, filter.Absent, filter.Value{}.Kind)
}
