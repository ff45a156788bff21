package scimsvc

import (
	"context"
	"reflect"
	"testing"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// typedPatchUsers are the users a typedPatch is compared on: one with most single-valued
// attributes set, and one with none but its userName.
func typedPatchUsers() []store.User {
	return []store.User{
		{ID: "user_1", UserName: "ann@example.com", Active: true, ExternalID: "ext-1", DisplayName: "Ann Lee",
			NickName: "ann", Title: "Engineer", UserType: "Employee", PreferredLanguage: "en", Locale: "en-US",
			Timezone: "Europe/Berlin", ProfileURL: "https://example.com/ann",
			Name:       store.Name{GivenName: "Ann", FamilyName: "Lee", Formatted: "Ann Lee"},
			Emails:     []store.MultiValue{{Value: "ann@example.com", Type: "work", Primary: true}},
			Enterprise: store.EnterpriseUser{Department: "R&D", EmployeeNumber: "42"}},
		{ID: "user_2", UserName: "bo@example.com"},
	}
}

// checkTypedPatch fails the test when body is a typedPatch whose application to a user differs
// from the generic engine's (a tree, applyPatch, the user read back from the tree), or reports a
// change where there is none or none where there is one.
func checkTypedPatch(t *testing.T, body []byte) bool {
	t.Helper()
	rt := schema.User()
	ops, err := parsePatchBody(body, rt, filter.Limits{})
	if err != nil {
		return false
	}
	tp := parseTypedPatch(rt, ops)
	if tp == nil {
		return false
	}
	for _, base := range typedPatchUsers() {
		typed := base
		typed.Emails = append([]store.MultiValue(nil), base.Emails...)
		changed := tp.apply(&typed)

		tree := toTree(rt, &base)
		if err := applyPatch(context.Background(), rt, tree, ops, valueLimits{values: DefaultMaxMultiValued, members: DefaultMaxGroupMembers}); err != nil {
			t.Fatalf("%s: the typed path takes it, the generic engine refuses it: %v", body, err)
		}
		generic := userFromTree(tree)
		generic.ID, generic.Meta, generic.Groups = base.ID, base.Meta, base.Groups
		if len(generic.Emails) == 0 && len(typed.Emails) == 0 {
			generic.Emails = typed.Emails
		}
		if !reflect.DeepEqual(typed, generic) {
			t.Fatalf("%s on %s:\ntyped   %+v\ngeneric %+v", body, base.ID, typed, generic)
		}
		if want := !reflect.DeepEqual(generic, base); changed != want {
			t.Fatalf("%s on %s: the typed path says changed=%v, the generic engine %v", body, base.ID, changed, want)
		}
	}
	return true
}

// TestTypedPatchMatchesTheEngine: every provisioning PATCH body the typed path takes gives the
// user the generic engine gives.
func TestTypedPatchMatchesTheEngine(t *testing.T) {
	taken := 0
	for _, s := range append(typedPatchBodies, otherPatchBodies...) {
		if checkTypedPatch(t, []byte(s)) {
			taken++
		}
	}
	if taken == 0 {
		t.Fatal("no body took the typed path")
	}
}

// FuzzTypedPatch compares the typed path of PATCH with the generic engine on any body.
func FuzzTypedPatch(f *testing.F) {
	for _, s := range append(typedPatchBodies, otherPatchBodies...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkTypedPatch(t, []byte(s)) })
}
