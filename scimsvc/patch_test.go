package scimsvc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// patchFixture is what every PATCH test starts from: in acme, bob and cy, and ann with a full
// profile (a primary work email and a home one, a work phone, the enterprise extension with bob
// as manager); group Staff with members ann, bob and cy.
type patchFixture struct {
	ann, bob, cy, staff string
	created             time.Time
}

func (e *env) patchFixture() patchFixture {
	e.t.Helper()
	bob := e.seedUser("acme", store.User{UserName: "bob@example.com", Active: true})
	cy := e.seedUser("acme", store.User{UserName: "cy@example.com", Active: true})
	ann := e.seedUser("acme", store.User{
		UserName: "ann@example.com", ExternalID: "ext-ann", DisplayName: "Ann Lee", Title: "Engineer", Active: true,
		Name: store.Name{GivenName: "Ann", FamilyName: "Lee"},
		Emails: []store.MultiValue{
			{Value: "ann@example.com", Type: "work", Primary: true},
			{Value: "ann@home.example", Type: "home"},
		},
		PhoneNumbers: []store.MultiValue{{Value: "+1 555 0100", Type: "work"}},
		Enterprise:   store.EnterpriseUser{Department: "R&D", CostCenter: "CC1", Manager: store.Manager{Value: bob.ID}},
	})
	staff := e.seedGroup("acme", store.Group{DisplayName: "Staff", ExternalID: "ext-staff",
		Members: []store.Member{{Value: ann.ID}, {Value: bob.ID}, {Value: cy.ID}}})
	return patchFixture{ann: ann.ID, bob: bob.ID, cy: cy.ID, staff: staff.ID, created: e.clock.Now()}
}

func (f patchFixture) replace(s string) string {
	return strings.NewReplacer("{ann}", f.ann, "{bob}", f.bob, "{cy}", f.cy, "{staff}", f.staff,
		"{BOB}", strings.ToUpper(f.bob)).Replace(s)
}

// patchCase is one PATCH request: its operations, and what it must do.
type patchCase struct {
	name string
	ops  []string // operation objects; {ann}, {bob}, {cy} and {staff} stand for the ids
	// body replaces the whole request body when set.
	body     string
	want     int    // 200 unless set
	scimType string // for an error
	// same: the operations change nothing, so lastModified stays.
	same bool
}

// runPatch sends c to path on a fresh fixture an hour after it was created, and checks what every
// PATCH must: an error changes nothing; a success answers the resource as a GET then sees it,
// with lastModified moved exactly when something changed.
func runPatch(t *testing.T, c patchCase, resource string) (*env, patchFixture, map[string]any) {
	t.Helper()
	e := newEnv(t)
	f := e.patchFixture()
	e.clock.Advance(time.Hour)
	body := c.body
	if body == "" {
		body = patchBody(c.ops...)
	}
	path := "/acme/" + resource
	before := e.snapshot()
	r := e.do("PATCH", f.replace(path), f.replace(body))
	if c.want != 0 && c.want != 200 {
		requireSCIMError(t, r, c.want, c.scimType)
		assert.Equal(t, before, e.snapshot(), "a failed PATCH must change nothing")
		return e, f, nil
	}
	require.Equal(t, 200, r.Status, "body: %s", r.Body)
	assert.NotContains(t, string(r.Body), "password")
	got := r.JSON(t)
	again := e.do("GET", f.replace(path), nil)
	require.Equal(t, 200, again.Status)
	assert.Equal(t, got, again.JSON(t), "the PATCH response is the resource as stored")
	meta, _ := got["meta"].(map[string]any)
	wantModified := e.clock.Now()
	if c.same {
		wantModified = f.created
	}
	assert.Equal(t, wantModified.Format(time.RFC3339), meta["lastModified"], "lastModified")
	assert.Equal(t, f.created.Format(time.RFC3339), meta["created"], "created")
	return e, f, got
}

func (e *env) storedUser(id string) *store.User {
	e.t.Helper()
	u, err := e.mem.Users().Get(context.Background(), "acme", id)
	require.NoError(e.t, err)
	return u
}

func (e *env) storedGroup(id string) *store.Group {
	e.t.Helper()
	g, err := e.mem.Groups().Get(context.Background(), "acme", id)
	require.NoError(e.t, err)
	return g
}

func memberIDs(g *store.Group) []string {
	var out []string
	for _, m := range g.Members {
		out = append(out, m.Value)
	}
	return out
}

func TestPatchUser(t *testing.T) {
	annWork := store.MultiValue{Value: "ann@example.com", Type: "work", Primary: true}
	annHome := store.MultiValue{Value: "ann@home.example", Type: "home"}
	tests := []struct {
		patchCase
		check func(t *testing.T, f patchFixture, u *store.User, body map[string]any)
	}{
		// add, replace, remove in any capitalisation
		{patchCase: patchCase{name: "add", ops: []string{`{"op":"add","path":"nickName","value":"Annie"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, body map[string]any) {
				assert.Equal(t, "Annie", u.NickName)
				assert.Equal(t, "Annie", body["nickName"])
			}},
		{patchCase: patchCase{name: "Add", ops: []string{`{"op":"Add","path":"nickName","value":"Annie"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "Annie", u.NickName)
			}},
		{patchCase: patchCase{name: "ADD", ops: []string{`{"op":"ADD","path":"nickName","value":"Annie"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "Annie", u.NickName)
			}},
		{patchCase: patchCase{name: "replace", ops: []string{`{"op":"replace","path":"title","value":"CTO"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) { assert.Equal(t, "CTO", u.Title) }},
		{patchCase: patchCase{name: "Replace", ops: []string{`{"op":"Replace","path":"title","value":"CTO"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) { assert.Equal(t, "CTO", u.Title) }},
		{patchCase: patchCase{name: "rEpLaCe", ops: []string{`{"op":"rEpLaCe","path":"title","value":"CTO"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) { assert.Equal(t, "CTO", u.Title) }},
		{patchCase: patchCase{name: "remove", ops: []string{`{"op":"remove","path":"title"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, body map[string]any) {
				assert.Empty(t, u.Title)
				assert.NotContains(t, body, "title")
			}},
		{patchCase: patchCase{name: "Remove", ops: []string{`{"op":"Remove","path":"title"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) { assert.Empty(t, u.Title) }},
		{patchCase: patchCase{name: "REMOVE", ops: []string{`{"op":"REMOVE","path":"title"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) { assert.Empty(t, u.Title) }},
		{patchCase: patchCase{name: "member names in any case", body: `{"SCHEMAS":["` + patchSchema + `"],"operations":[{"OP":"Replace","PATH":"title","VALUE":"CTO"}]}`},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) { assert.Equal(t, "CTO", u.Title) }},
		{patchCase: patchCase{name: "attribute names in any case", ops: []string{`{"op":"replace","path":"DISPLAYNAME","value":"A. Lee"}`, `{"op":"replace","path":"Name.GIVENNAME","value":"A."}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "A. Lee", u.DisplayName)
				assert.Equal(t, "A.", u.Name.GivenName)
			}},
		{patchCase: patchCase{name: "replace with null removes", ops: []string{`{"op":"replace","path":"title","value":null}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) { assert.Empty(t, u.Title) }},

		// sub-attribute paths
		{patchCase: patchCase{name: "replace sub-attribute", ops: []string{`{"op":"replace","path":"name.givenName","value":"Annie"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, store.Name{GivenName: "Annie", FamilyName: "Lee"}, u.Name)
			}},
		{patchCase: patchCase{name: "add sub-attribute", ops: []string{`{"op":"add","path":"name.middleName","value":"Q"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, store.Name{GivenName: "Ann", MiddleName: "Q", FamilyName: "Lee"}, u.Name)
			}},
		{patchCase: patchCase{name: "remove sub-attribute", ops: []string{`{"op":"remove","path":"name.familyName"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, store.Name{GivenName: "Ann"}, u.Name)
			}},
		{patchCase: patchCase{name: "replace complex attribute merges its sub-attributes", ops: []string{`{"op":"replace","path":"name","value":{"givenName":"Annie","formatted":"Annie Lee"}}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, store.Name{GivenName: "Annie", FamilyName: "Lee", Formatted: "Annie Lee"}, u.Name)
			}},
		{patchCase: patchCase{name: "remove complex attribute", ops: []string{`{"op":"remove","path":"name"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, body map[string]any) {
				assert.Equal(t, store.Name{}, u.Name)
				assert.NotContains(t, body, "name")
			}},
		{patchCase: patchCase{name: "sub-attribute of every value", ops: []string{`{"op":"replace","path":"emails.display","value":"Ann"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				require.Len(t, u.Emails, 2)
				assert.Equal(t, "Ann", u.Emails[0].Display)
				assert.Equal(t, "Ann", u.Emails[1].Display)
			}},

		// extension URN paths
		{patchCase: patchCase{name: "replace extension attribute", ops: []string{`{"op":"replace","path":"` + enterpriseNS + `:department","value":"Sales"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, body map[string]any) {
				assert.Equal(t, "Sales", u.Enterprise.Department)
				assert.Equal(t, "CC1", u.Enterprise.CostCenter)
				ext, _ := body[enterpriseNS].(map[string]any)
				assert.Equal(t, "Sales", ext["department"])
			}},
		{patchCase: patchCase{name: "add extension attribute", ops: []string{`{"op":"Add","path":"` + enterpriseNS + `:employeeNumber","value":"701984"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "701984", u.Enterprise.EmployeeNumber)
			}},
		{patchCase: patchCase{name: "extension URN in another case", ops: []string{`{"op":"replace","path":"` + strings.ToUpper(enterpriseNS) + `:Department","value":"Sales"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "Sales", u.Enterprise.Department)
			}},
		{patchCase: patchCase{name: "remove extension attribute", ops: []string{`{"op":"remove","path":"` + enterpriseNS + `:department"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Empty(t, u.Enterprise.Department)
				assert.Equal(t, "CC1", u.Enterprise.CostCenter)
			}},
		{patchCase: patchCase{name: "manager as a bare id", ops: []string{`{"op":"Add","path":"` + enterpriseNS + `:manager","value":"{cy}"}`}},
			check: func(t *testing.T, f patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, f.cy, u.Enterprise.Manager.Value)
			}},
		{patchCase: patchCase{name: "manager as an object", ops: []string{`{"op":"replace","path":"` + enterpriseNS + `:manager","value":{"value":"{cy}"}}`}},
			check: func(t *testing.T, f patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, f.cy, u.Enterprise.Manager.Value)
			}},
		{patchCase: patchCase{name: "manager.value", ops: []string{`{"op":"replace","path":"` + enterpriseNS + `:manager.value","value":"{cy}"}`}},
			check: func(t *testing.T, f patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, f.cy, u.Enterprise.Manager.Value)
			}},
		{patchCase: patchCase{name: "remove manager", ops: []string{`{"op":"remove","path":"` + enterpriseNS + `:manager"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, store.Manager{}, u.Enterprise.Manager)
			}},
		{patchCase: patchCase{name: "removing the whole extension drops its schema", ops: []string{
			`{"op":"remove","path":"` + enterpriseNS + `:department"}`,
			`{"op":"remove","path":"` + enterpriseNS + `:costCenter"}`,
			`{"op":"remove","path":"` + enterpriseNS + `:manager"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, body map[string]any) {
				assert.Equal(t, store.EnterpriseUser{}, u.Enterprise)
				assert.Equal(t, []any{userSchema}, body["schemas"])
				assert.NotContains(t, body, enterpriseNS)
			}},
		{patchCase: patchCase{name: "core URN path", ops: []string{`{"op":"replace","path":"` + userSchema + `:displayName","value":"A. Lee"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "A. Lee", u.DisplayName)
			}},
		{patchCase: patchCase{name: "core URN sub-attribute path", ops: []string{`{"op":"replace","path":"` + userSchema + `:name.familyName","value":"Li"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "Li", u.Name.FamilyName)
			}},

		// value filters
		{patchCase: patchCase{name: "filter with .sub: replace", ops: []string{`{"op":"replace","path":"emails[type eq \"work\"].value","value":"ann@new.example"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{{Value: "ann@new.example", Type: "work", Primary: true}, annHome}, u.Emails)
			}},
		{patchCase: patchCase{name: "filter with .sub: add", ops: []string{`{"op":"add","path":"emails[type eq \"home\"].display","value":"Home"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{annWork, {Value: "ann@home.example", Type: "home", Display: "Home"}}, u.Emails)
			}},
		{patchCase: patchCase{name: "filter with .sub: remove", ops: []string{`{"op":"remove","path":"phoneNumbers[type eq \"work\"].type"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{{Value: "+1 555 0100"}}, u.PhoneNumbers)
			}},
		{patchCase: patchCase{name: "filter with .sub and no match adds a value", ops: []string{`{"op":"Add","path":"phoneNumbers[type eq \"mobile\"].value","value":"+1 555 0199"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{{Value: "+1 555 0100", Type: "work"}, {Value: "+1 555 0199", Type: "mobile"}}, u.PhoneNumbers)
			}},
		{patchCase: patchCase{name: "filter with .sub and no match, replace, adds a value", ops: []string{`{"op":"Replace","path":"addresses[type eq \"work\"].locality","value":"Oslo"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.Address{{Type: "work", Locality: "Oslo"}}, u.Addresses)
			}},
		{patchCase: patchCase{name: "filter without .sub: replace the value", ops: []string{`{"op":"replace","path":"emails[type eq \"home\"]","value":{"value":"ann@other.example","type":"other"}}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{annWork, {Value: "ann@other.example", Type: "other"}}, u.Emails)
			}},
		{patchCase: patchCase{name: "filter without .sub: add merges into the value", ops: []string{`{"op":"add","path":"emails[type eq \"home\"]","value":{"display":"Home"}}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{annWork, {Value: "ann@home.example", Type: "home", Display: "Home"}}, u.Emails)
			}},
		{patchCase: patchCase{name: "filter without .sub: remove", ops: []string{`{"op":"remove","path":"emails[type eq \"home\"]"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{annWork}, u.Emails)
			}},
		{patchCase: patchCase{name: "filter compares emails.value case-insensitively", ops: []string{`{"op":"replace","path":"emails[value eq \"ANN@HOME.EXAMPLE\"].type","value":"other"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{annWork, {Value: "ann@home.example", Type: "other"}}, u.Emails)
			}},
		{patchCase: patchCase{name: "filter with and", ops: []string{`{"op":"replace","path":"emails[type eq \"work\" and primary eq true].value","value":"a@example.com"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "a@example.com", u.Emails[0].Value)
				assert.True(t, u.Emails[0].Primary)
			}},
		{patchCase: patchCase{name: "filter with or", ops: []string{`{"op":"replace","path":"emails[type eq \"home\" or type eq \"other\"].display","value":"Private"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{annWork, {Value: "ann@home.example", Type: "home", Display: "Private"}}, u.Emails)
			}},
		{patchCase: patchCase{name: "URN-qualified filter path", ops: []string{`{"op":"replace","path":"` + userSchema + `:emails[type eq \"work\"].value","value":"a@example.com"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "a@example.com", u.Emails[0].Value)
			}},

		// pathless add and replace
		{patchCase: patchCase{name: "pathless replace with dotted keys", ops: []string{`{"op":"replace","value":{"name.givenName":"Annie","name.familyName":"Li","displayName":"Annie Li"}}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, store.Name{GivenName: "Annie", FamilyName: "Li"}, u.Name)
				assert.Equal(t, "Annie Li", u.DisplayName)
			}},
		{patchCase: patchCase{name: "pathless replace with URN-qualified keys", ops: []string{`{"op":"Replace","value":{"` + enterpriseNS + `:department":"Sales","` + userSchema + `:title":"CTO","` + enterpriseNS + `:manager.value":"{cy}"}}`}},
			check: func(t *testing.T, f patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "Sales", u.Enterprise.Department)
				assert.Equal(t, "CC1", u.Enterprise.CostCenter)
				assert.Equal(t, f.cy, u.Enterprise.Manager.Value)
				assert.Equal(t, "CTO", u.Title)
			}},
		{patchCase: patchCase{name: "pathless replace with an extension object", ops: []string{`{"op":"replace","value":{"` + enterpriseNS + `":{"department":"Sales","division":"North"}}}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "Sales", u.Enterprise.Department)
				assert.Equal(t, "North", u.Enterprise.Division)
				assert.Equal(t, "CC1", u.Enterprise.CostCenter)
			}},
		{patchCase: patchCase{name: "pathless replace ignores id and read-only attributes", ops: []string{`{"op":"replace","value":{"id":"user_mine","active":false,"meta":{"created":"2001-01-01T00:00:00Z"},"groups":[{"value":"{staff}"}]}}`}},
			check: func(t *testing.T, f patchFixture, u *store.User, body map[string]any) {
				assert.Equal(t, f.ann, u.ID)
				assert.Equal(t, f.ann, body["id"])
				assert.False(t, u.Active)
				assert.Equal(t, f.created, u.Meta.Created.UTC())
			}},
		{patchCase: patchCase{name: "pathless add appends to a multi-valued attribute", ops: []string{`{"op":"add","value":{"emails":[{"value":"ann@other.example","type":"other"}],"nickName":"Annie"}}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{annWork, annHome, {Value: "ann@other.example", Type: "other"}}, u.Emails)
				assert.Equal(t, "Annie", u.NickName)
			}},
		{patchCase: patchCase{name: "pathless replace replaces a multi-valued attribute", ops: []string{`{"op":"replace","value":{"emails":[{"value":"only@example.com","type":"work","primary":true}]}}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{{Value: "only@example.com", Type: "work", Primary: true}}, u.Emails)
			}},
		{patchCase: patchCase{name: "pathless add merges a complex attribute", ops: []string{`{"op":"add","value":{"name":{"middleName":"Q"}}}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, store.Name{GivenName: "Ann", MiddleName: "Q", FamilyName: "Lee"}, u.Name)
			}},

		// string booleans
		{patchCase: patchCase{name: "active False", ops: []string{`{"op":"Replace","path":"active","value":"False"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, body map[string]any) {
				assert.False(t, u.Active)
				assert.Equal(t, false, body["active"])
			}},
		{patchCase: patchCase{name: "active TRUE", ops: []string{`{"op":"replace","path":"active","value":"false"}`, `{"op":"replace","path":"active","value":"TRUE"}`}, same: true},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) { assert.True(t, u.Active) }},
		{patchCase: patchCase{name: "pathless active as a string", ops: []string{`{"op":"replace","value":{"active":"false"}}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) { assert.False(t, u.Active) }},
		{patchCase: patchCase{name: "primary as a string", ops: []string{`{"op":"replace","path":"emails[type eq \"home\"].primary","value":"True"}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{{Value: "ann@example.com", Type: "work"}, {Value: "ann@home.example", Type: "home", Primary: true}}, u.Emails)
			}},

		// idempotence
		{patchCase: patchCase{name: "adding an email already there adds nothing", ops: []string{`{"op":"add","path":"emails","value":[{"value":"ann@home.example","type":"home"}]}`}, same: true},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{annWork, annHome}, u.Emails)
			}},
		{patchCase: patchCase{name: "adding an email twice adds it once", ops: []string{
			`{"op":"add","path":"emails","value":[{"value":"ann@other.example","type":"other"}]}`,
			`{"op":"add","path":"emails","value":[{"value":"ann@other.example","type":"other"}]}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{annWork, annHome, {Value: "ann@other.example", Type: "other"}}, u.Emails)
			}},
		{patchCase: patchCase{name: "setting a value it has is no change", ops: []string{`{"op":"replace","path":"displayName","value":"Ann Lee"}`, `{"op":"replace","value":{"title":"Engineer"}}`}, same: true},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, "Ann Lee", u.DisplayName)
			}},

		// remove of what is absent
		{patchCase: patchCase{name: "remove absent attribute", ops: []string{`{"op":"remove","path":"nickName"}`}, same: true},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) { assert.Empty(t, u.NickName) }},
		{patchCase: patchCase{name: "remove absent sub-attribute", ops: []string{`{"op":"remove","path":"name.middleName"}`}, same: true}},
		{patchCase: patchCase{name: "remove absent extension attribute", ops: []string{`{"op":"remove","path":"` + enterpriseNS + `:employeeNumber"}`}, same: true}},
		{patchCase: patchCase{name: "remove with a filter matching nothing", ops: []string{`{"op":"remove","path":"emails[type eq \"fax\"]"}`}, same: true},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{annWork, annHome}, u.Emails)
			}},
		{patchCase: patchCase{name: "remove absent multi-valued attribute", ops: []string{`{"op":"remove","path":"addresses"}`}, same: true}},

		// primary
		{patchCase: patchCase{name: "adding a primary email clears the old primary", ops: []string{`{"op":"add","path":"emails","value":[{"value":"ann@new.example","type":"other","primary":true}]}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{{Value: "ann@example.com", Type: "work"}, annHome, {Value: "ann@new.example", Type: "other", Primary: true}}, u.Emails)
			}},
		{patchCase: patchCase{name: "pathless add of a primary email clears the old primary", ops: []string{`{"op":"add","value":{"emails":[{"value":"ann@new.example","primary":"true"}]}}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{{Value: "ann@example.com", Type: "work"}, annHome, {Value: "ann@new.example", Primary: true}}, u.Emails)
			}},
		{patchCase: patchCase{name: "replace .primary true by filter moves the primary", ops: []string{`{"op":"replace","path":"emails[type eq \"home\"].primary","value":true}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, body map[string]any) {
				assert.Equal(t, []store.MultiValue{{Value: "ann@example.com", Type: "work"}, {Value: "ann@home.example", Type: "home", Primary: true}}, u.Emails)
				emails, _ := body["emails"].([]any)
				require.Len(t, emails, 2)
				assert.NotContains(t, emails[0], "primary")
				assert.Equal(t, true, emails[1].(map[string]any)["primary"])
			}},
		{patchCase: patchCase{name: "primary false clears it", ops: []string{`{"op":"replace","path":"emails[type eq \"work\"].primary","value":false}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, _ map[string]any) {
				assert.Equal(t, []store.MultiValue{{Value: "ann@example.com", Type: "work"}, annHome}, u.Emails)
			}},

		// atomicity: the second operation fails, so the first is not applied
		{patchCase: patchCase{name: "atomic: mutability in the second op", ops: []string{`{"op":"replace","path":"displayName","value":"Changed"}`, `{"op":"replace","path":"id","value":"user_mine"}`},
			want: 400, scimType: "mutability"}},
		{patchCase: patchCase{name: "atomic: no target in the second op", ops: []string{`{"op":"add","path":"emails","value":[{"value":"x@example.com"}]}`, `{"op":"remove"}`},
			want: 400, scimType: "noTarget"}},
		{patchCase: patchCase{name: "atomic: bad value in the second op", ops: []string{`{"op":"replace","path":"title","value":"CTO"}`, `{"op":"replace","path":"active","value":"maybe"}`},
			want: 400, scimType: "invalidValue"}},
		{patchCase: patchCase{name: "atomic: bad path in the second op", ops: []string{`{"op":"replace","path":"title","value":"CTO"}`, `{"op":"replace","path":"emails[type eq]","value":"x"}`},
			want: 400, scimType: "invalidPath"}},
		{patchCase: patchCase{name: "atomic: unknown op second", ops: []string{`{"op":"replace","path":"title","value":"CTO"}`, `{"op":"copy","path":"title"}`},
			want: 400, scimType: "invalidSyntax"}},
		{patchCase: patchCase{name: "atomic: rename onto a taken userName", ops: []string{`{"op":"replace","path":"title","value":"CTO"}`, `{"op":"replace","path":"userName","value":"BOB@example.com"}`},
			want: 409, scimType: "uniqueness"}},

		// password
		{patchCase: patchCase{name: "password by path is accepted and never returned", ops: []string{`{"op":"replace","path":"password","value":"S3cret-pw!"}`}, same: true},
			check: func(t *testing.T, _ patchFixture, _ *store.User, body map[string]any) {
				raw, _ := json.Marshal(body)
				assert.NotContains(t, string(raw), "S3cret-pw!")
			}},
		{patchCase: patchCase{name: "password pathless is accepted and never returned", ops: []string{`{"op":"add","value":{"password":"S3cret-pw!","nickName":"Annie"}}`}},
			check: func(t *testing.T, _ patchFixture, u *store.User, body map[string]any) {
				raw, _ := json.Marshal(body)
				assert.NotContains(t, string(raw), "S3cret-pw!")
				assert.Equal(t, "Annie", u.NickName)
			}},
		{patchCase: patchCase{name: "password with core URN", ops: []string{`{"op":"Replace","path":"` + userSchema + `:password","value":"S3cret-pw!"}`}, same: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f, body := runPatch(t, tt.patchCase, "Users/{ann}")
			if body == nil {
				return
			}
			u := e.storedUser(f.ann)
			if tt.check != nil {
				tt.check(t, f, u, body)
			}
			raw := e.do("GET", "/acme/Users/"+f.ann, nil).Body
			assert.NotContains(t, string(raw), "S3cret-pw!")
			assert.NotContains(t, string(raw), "password")
		})
	}
}

func TestPatchGroup(t *testing.T) {
	tests := []struct {
		patchCase
		check func(t *testing.T, f patchFixture, g *store.Group, body map[string]any)
	}{
		{patchCase: patchCase{name: "replace displayName", ops: []string{`{"op":"Replace","path":"displayName","value":"Everyone"}`}},
			check: func(t *testing.T, _ patchFixture, g *store.Group, body map[string]any) {
				assert.Equal(t, "Everyone", g.DisplayName)
				assert.Equal(t, "Everyone", body["displayName"])
			}},
		{patchCase: patchCase{name: "replace externalId", ops: []string{`{"op":"replace","path":"externalId","value":"ext-2"}`}},
			check: func(t *testing.T, _ patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, "ext-2", g.ExternalID)
			}},
		{patchCase: patchCase{name: "pathless replace ignores id", ops: []string{`{"op":"replace","value":{"id":"{staff}","displayName":"Everyone"}}`}},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, "Everyone", g.DisplayName)
				assert.Equal(t, f.staff, g.ID)
			}},
		{patchCase: patchCase{name: "pathless replace ignores another id", ops: []string{`{"op":"replace","value":{"id":"group_mine","displayName":"Everyone"}}`}},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) { assert.Equal(t, f.staff, g.ID) }},
		{patchCase: patchCase{name: "pathless replace of members replaces them", ops: []string{`{"op":"replace","value":{"members":[{"value":"{cy}","display":"cy@example.com"}]}}`}},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, []string{f.cy}, memberIDs(g))
			}},
		{patchCase: patchCase{name: "replace members by path", ops: []string{`{"op":"replace","path":"members","value":[{"value":"{bob}"}]}`}},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, []string{f.bob}, memberIDs(g))
			}},
		{patchCase: patchCase{name: "replace members with an empty array removes all", ops: []string{`{"op":"replace","path":"members","value":[]}`}},
			check: func(t *testing.T, _ patchFixture, g *store.Group, body map[string]any) {
				assert.Empty(t, g.Members)
				assert.NotContains(t, body, "members")
			}},
		{patchCase: patchCase{name: "remove members removes all", ops: []string{`{"op":"remove","path":"members"}`}},
			check: func(t *testing.T, _ patchFixture, g *store.Group, _ map[string]any) { assert.Empty(t, g.Members) }},
		{patchCase: patchCase{name: "remove members with a value array removes only those", ops: []string{`{"op":"Remove","path":"members","value":[{"value":"{ann}"},{"value":"{cy}"}]}`}},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, []string{f.bob}, memberIDs(g))
			}},
		{patchCase: patchCase{name: "remove members with a value array of absent ids", ops: []string{`{"op":"remove","path":"members","value":[{"value":"user_nosuch"}]}`}, same: true},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, []string{f.ann, f.bob, f.cy}, memberIDs(g))
			}},
		{patchCase: patchCase{name: "remove member by filter", ops: []string{`{"op":"remove","path":"members[value eq \"{bob}\"]"}`}},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, []string{f.ann, f.cy}, memberIDs(g))
			}},
		{patchCase: patchCase{name: "remove member by filter matching nothing", ops: []string{`{"op":"remove","path":"members[value eq \"user_nosuch\"]"}`}, same: true}},
		{patchCase: patchCase{name: "member value filter is case-exact", ops: []string{`{"op":"remove","path":"members[value eq \"{BOB}\"]"}`}, same: true}},
		{patchCase: patchCase{name: "remove then add in one request", ops: []string{
			`{"op":"remove","path":"members","value":[{"value":"{ann}"},{"value":"{bob}"},{"value":"{cy}"}]}`,
			`{"op":"add","path":"members","value":[{"value":"{bob}"}]}`}},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, []string{f.bob}, memberIDs(g))
			}},
		{patchCase: patchCase{name: "adding a member already there adds nothing", ops: []string{`{"op":"add","path":"members","value":[{"value":"{ann}"}]}`}, same: true},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, []string{f.ann, f.bob, f.cy}, memberIDs(g))
			}},
		{patchCase: patchCase{name: "adding a member with display already there adds nothing", ops: []string{`{"op":"Add","path":"members","value":[{"value":"{ann}","display":"Ann"}]}`}, same: true},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, []string{f.ann, f.bob, f.cy}, memberIDs(g))
			}},
		{patchCase: patchCase{name: "adding a member twice in one request adds it once", ops: []string{
			`{"op":"remove","path":"members","value":[{"value":"{cy}"}]}`,
			`{"op":"add","path":"members","value":[{"value":"{cy}"},{"value":"{cy}"}]}`,
			`{"op":"add","path":"members","value":[{"value":"{cy}"}]}`}, same: true},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, []string{f.ann, f.bob, f.cy}, memberIDs(g))
			}},
		{patchCase: patchCase{name: "pathless add of members", ops: []string{
			`{"op":"remove","path":"members"}`,
			`{"op":"add","value":{"members":[{"value":"{cy}"},{"value":"{ann}"}]}}`}},
			check: func(t *testing.T, f patchFixture, g *store.Group, body map[string]any) {
				assert.Equal(t, []string{f.cy, f.ann}, memberIDs(g))
				members, _ := body["members"].([]any)
				require.Len(t, members, 2)
				m := members[0].(map[string]any)
				assert.Equal(t, f.cy, m["value"])
				assert.Equal(t, "cy@example.com", m["display"])
				assert.Equal(t, testBase+"/acme/Users/"+f.cy, m["$ref"])
			}},
		{patchCase: patchCase{name: "members with URN path", ops: []string{`{"op":"remove","path":"` + groupSchema + `:members[value eq \"{ann}\"]"}`}},
			check: func(t *testing.T, f patchFixture, g *store.Group, _ map[string]any) {
				assert.Equal(t, []string{f.bob, f.cy}, memberIDs(g))
			}},

		{patchCase: patchCase{name: "atomic: unknown member in the second op", ops: []string{`{"op":"replace","path":"displayName","value":"Changed"}`, `{"op":"add","path":"members","value":[{"value":"user_nosuch"}]}`},
			want: 400, scimType: "invalidValue"}},
		{patchCase: patchCase{name: "atomic: member value is immutable", ops: []string{`{"op":"remove","path":"members[value eq \"{ann}\"]"}`, `{"op":"replace","path":"members[value eq \"{bob}\"].value","value":"{ann}"}`},
			want: 400, scimType: "mutability"}},
		{patchCase: patchCase{name: "atomic: displayName removed", ops: []string{`{"op":"add","path":"members","value":[{"value":"{cy}"}]}`, `{"op":"remove","path":"displayName"}`},
			want: 400, scimType: "invalidValue"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f, body := runPatch(t, tt.patchCase, "Groups/{staff}")
			if body == nil || tt.check == nil {
				return
			}
			tt.check(t, f, e.storedGroup(f.staff), body)
		})
	}
}

// TestUnchangedWriteKeepsLastModified: a PUT or PATCH that changes nothing (a client's retry)
// leaves lastModified where it was, and one that changes something moves it.
func TestUnchangedWriteKeepsLastModified(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		changed                  bool
	}{
		{name: "PUT user as it is", method: "PUT", path: "/acme/Users/{bob}",
			body: `{"schemas":["` + userSchema + `"],"userName":"bob@example.com","active":true}`},
		{name: "PUT user changed", method: "PUT", path: "/acme/Users/{bob}",
			body: `{"schemas":["` + userSchema + `"],"userName":"bob@example.com","active":false}`, changed: true},
		{name: "PUT group as it is", method: "PUT", path: "/acme/Groups/{staff}",
			body: `{"schemas":["` + groupSchema + `"],"displayName":"Staff","externalId":"ext-staff","members":[{"value":"{ann}"},{"value":"{bob}"},{"value":"{cy}"}]}`},
		{name: "PUT group changed", method: "PUT", path: "/acme/Groups/{staff}",
			body: `{"schemas":["` + groupSchema + `"],"displayName":"Staff","externalId":"ext-staff","members":[{"value":"{ann}"}]}`, changed: true},
		{name: "PATCH group to what it is", method: "PATCH", path: "/acme/Groups/{staff}",
			body: patchBody(`{"op":"replace","path":"displayName","value":"Staff"}`)},
		{name: "PATCH group changed", method: "PATCH", path: "/acme/Groups/{staff}",
			body: patchBody(`{"op":"replace","path":"displayName","value":"Everyone"}`), changed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			f := e.patchFixture()
			e.clock.Advance(time.Hour)
			r := e.do(tt.method, f.replace(tt.path), f.replace(tt.body))
			require.Equal(t, 200, r.Status, "body: %s", r.Body)
			want := f.created
			if tt.changed {
				want = e.clock.Now()
			}
			meta, _ := r.JSON(t)["meta"].(map[string]any)
			assert.Equal(t, want.Format(time.RFC3339), meta["lastModified"])
		})
	}
}
