package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// The values of host-defined extension schemas (store.Extensions) and unique values
// (store.UniqueValue): a store keeps extension values as given, without their definitions, and
// filters them as filter.Match would with the definitions of the resource type the filter was
// parsed against.

func extensionTests() []test {
	return []test{
		{"UserValuesStoredAndRead", testExtensionUserValues},
		{"UserFilters", testExtensionUserFilters},
		{"UserFiltersAfterWrites", testExtensionFiltersAfterWrites},
		{"GroupValues", testExtensionGroupValues},
		{"UniqueUserValues", testUniqueUserValues},
		{"UniqueGroupValues", testUniqueGroupValues},
		{"ConcurrentCreatesOfOneUniqueValue", testConcurrentUniqueCreates},
		{"ConcurrentUpdatesToOneUniqueValue", testConcurrentUniqueUpdates},
		{"ConcurrentGroupPatchesToOneUniqueValue", testConcurrentUniqueGroupPatches},
	}
}

// extUserURN is the extension of Users the tests define. Some of its attributes are named as
// core attributes are (externalId, userName, emails with value), which a backend's shortcuts for
// the core ones must not confuse with them.
const extUserURN = "urn:example:params:scim:schemas:extension:Store:2.0:User"

// extGroupURN is the extension of Groups the tests define.
const extGroupURN = "urn:example:params:scim:schemas:extension:Store:2.0:Group"

// extUserType is schema.User() with extUserURN.
func extUserType(t *testing.T) *schema.ResourceType {
	t.Helper()
	rt, err := schema.User().WithExtensions(schema.Extension{Schema: &schema.Schema{ID: extUserURN, Name: "Store", Attributes: []*schema.Attribute{
		{Name: "externalId", Type: schema.String, CaseExact: true},
		{Name: "userName", Type: schema.String},
		{Name: "tags", Type: schema.String, MultiValued: true},
		{Name: "badge", Type: schema.Integer},
		{Name: "remote", Type: schema.Boolean},
		{Name: "hired", Type: schema.DateTime},
		{Name: "manager", Type: schema.Complex, SubAttributes: []*schema.Attribute{
			{Name: "value", Type: schema.String, CaseExact: true},
			{Name: "displayName", Type: schema.String},
		}},
		{Name: "emails", Type: schema.Complex, MultiValued: true, SubAttributes: []*schema.Attribute{
			{Name: "value", Type: schema.String},
			{Name: "type", Type: schema.String},
		}},
	}}})
	require.NoError(t, err)
	return rt
}

// extGroupType is schema.Group() with extGroupURN.
func extGroupType(t *testing.T) *schema.ResourceType {
	t.Helper()
	rt, err := schema.Group().WithExtensions(schema.Extension{Schema: &schema.Schema{ID: extGroupURN, Name: "Store", Attributes: []*schema.Attribute{
		{Name: "displayName", Type: schema.String},
		{Name: "codes", Type: schema.String, MultiValued: true, CaseExact: true},
	}}})
	require.NoError(t, err)
	return rt
}

func parseWith(t *testing.T, rt *schema.ResourceType, s string) filter.Expr {
	t.Helper()
	e, err := filter.Parse(s, rt)
	require.NoError(t, err, "filter.Parse(%q)", s)
	return e
}

// annExtensions are the extension values of the user "ann" of extensionFixture.
func annExtensions() store.Extensions {
	return store.Extensions{extUserURN: {
		"externalId": "X-1",
		"userName":   "Shadow",
		"tags":       []any{"red", "Blue"},
		"badge":      7.0,
		"remote":     true,
		"hired":      "2024-05-01T09:00:00Z",
		"manager":    map[string]any{"value": "M-1", "displayName": "Maud"},
		"emails": []any{
			map[string]any{"value": "ann@ext.example", "type": "work"},
			map[string]any{"value": "ann@home.example", "type": "home"},
		},
	}}
}

// extensionFixture creates, in acme, ann (core externalId "core-1", email ann@core.example,
// annExtensions), bob (core externalId "X-1" and email ann@ext.example, the values ann has in
// the extension; extension tags ["green"], badge 8, an emails element without value), cy (no
// extension values) and dee (an enterprise value, extension tags ["grey"]), and returns their
// ids by userName.
func extensionFixture(t *testing.T, b store.Backend) map[string]string {
	t.Helper()
	mustTenant(t, b, acme)
	ids := map[string]string{}
	for _, u := range []store.User{
		{UserName: "ann", Active: true, ExternalID: "core-1", Emails: []store.MultiValue{{Value: "ann@core.example"}}, Extensions: annExtensions()},
		{UserName: "bob", Active: true, ExternalID: "X-1", Emails: []store.MultiValue{{Value: "ann@ext.example", Type: "work"}},
			Extensions: store.Extensions{extUserURN: {"tags": []any{"green"}, "badge": 8.0, "emails": []any{map[string]any{"type": "work"}}}}},
		{UserName: "cy", Active: true},
		{UserName: "dee", Active: true, Enterprise: store.EnterpriseUser{Department: "R&D"}, Extensions: store.Extensions{extUserURN: {"tags": []any{"grey"}}}},
	} {
		got, err := b.Users.Create(ctx(), acme, u)
		require.NoError(t, err, "Users.Create(%q)", u.UserName)
		ids[u.UserName] = got.ID
	}
	return ids
}

// Users.Create keeps extension values as given (every JSON shape: strings, numbers, booleans,
// complex, multi-valued simple and complex), Get and List return them, Update replaces and
// removes them.
func testExtensionUserValues(t *testing.T, b store.Backend) {
	ids := extensionFixture(t, b)
	assert.Equal(t, annExtensions(), mustGetUser(t, b, acme, ids["ann"]).Extensions)
	assert.Nil(t, mustGetUser(t, b, acme, ids["cy"]).Extensions)
	for _, u := range allUsers(t, b, acme) {
		if u.UserName == "ann" {
			assert.Equal(t, annExtensions(), u.Extensions, "List")
		}
	}

	changed := annExtensions()
	changed[extUserURN]["tags"] = []any{"yellow"}
	delete(changed[extUserURN], "manager")
	got, err := b.Users.Update(ctx(), acme, ids["ann"], func(u *store.User) error {
		u.Extensions = changed.Clone()
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, changed, got.Extensions)
	assert.Equal(t, changed, mustGetUser(t, b, acme, ids["ann"]).Extensions)

	_, err = b.Users.Update(ctx(), acme, ids["ann"], func(u *store.User) error {
		u.Extensions = nil
		return nil
	})
	require.NoError(t, err)
	assert.Nil(t, mustGetUser(t, b, acme, ids["ann"]).Extensions)
	assert.Equal(t, "core-1", mustGetUser(t, b, acme, ids["ann"]).ExternalID)
}

// extensionFilterCases are filters over extensionFixture and the userNames they match.
func extensionFilterCases() []filterCase {
	x := extUserURN + ":"
	return []filterCase{
		// An extension attribute named as a core one is the extension's, and the core one is
		// the core's, whatever a backend indexes.
		{x + `externalId eq "X-1"`, "ann"},
		{`externalId eq "X-1"`, "bob"},
		{x + `externalId eq "x-1"`, ""}, // caseExact
		{x + `externalId eq "core-1"`, ""},
		{x + `userName eq "shadow"`, "ann"},
		{`userName eq "shadow"`, ""},
		{x + `emails.value eq "ann@ext.example"`, "ann"},
		{`emails.value eq "ann@ext.example"`, "bob"},
		{x + `emails.value eq "ann@core.example"`, ""},
		{`emails[type eq "work"].value eq "ann@ext.example"`, "bob"},
		{x + `emails[type eq "work"].value eq "ann@ext.example"`, "ann"},
		// Value paths of a multi-valued complex extension attribute: one element holds both.
		{x + `emails[type eq "work" and value eq "ann@ext.example"]`, "ann"},
		{x + `emails[type eq "home" and value eq "ann@ext.example"]`, ""},
		{x + `emails[type eq "work" and not (value pr)]`, "bob"},
		{x + `emails pr`, "ann bob"},
		// A multi-valued simple attribute: any value (caseExact false).
		{x + `tags eq "blue"`, "ann"},
		{x + `tags eq "green"`, "bob"},
		{x + `tags sw "r"`, "ann"},
		{x + `tags pr`, "ann bob dee"},
		{`not (` + x + `tags pr)`, "cy"},
		{x + `tags ne "red"`, "ann bob dee"},
		// Simple and complex.
		{x + `badge gt 7`, "bob"},
		{x + `badge le 8 and ` + x + `remote eq true`, "ann"},
		{x + `hired lt "2025-01-01T00:00:00Z"`, "ann"},
		{x + `manager.value eq "M-1"`, "ann"},
		{x + `manager.value eq "m-1"`, ""},
		{x + `manager.displayName eq "maud"`, "ann"},
		{x + `manager pr`, "ann"},
		{`not (` + x + `manager pr)`, "bob cy dee"},
		{x + `emails[value eq "ann@home.example"] and ` + x + `tags eq "red"`, "ann"},
		{x + `tags eq "green" or ` + x + `userName pr`, "ann bob"},
		// schemas lists the extensions a user has values of.
		{`schemas eq "` + extUserURN + `"`, "ann bob dee"},
		{`schemas eq "` + schema.EnterpriseUserURN + `"`, "dee"},
		{`schemas eq "` + schema.EnterpriseUserURN + `" and schemas eq "` + extUserURN + `"`, "dee"},
		{`not (schemas eq "` + extUserURN + `")`, "cy"},
	}
}

// Users.List filters extension values: simple, complex, multi-valued simple and complex with
// value paths; attributes named as core ones stay apart from the core ones.
func testExtensionUserFilters(t *testing.T, b store.Backend) {
	extensionFixture(t, b)
	rt := extUserType(t)
	for _, c := range extensionFilterCases() {
		t.Run(c.filter, func(t *testing.T) {
			checkUserFilter(t, b, parseWith(t, rt, c.filter), strings.Fields(c.want))
		})
	}
}

// Filters follow updates and removals of extension values.
func testExtensionFiltersAfterWrites(t *testing.T, b store.Backend) {
	ids := extensionFixture(t, b)
	rt := extUserType(t)
	x := extUserURN + ":"
	check := func(f string, want ...string) {
		t.Helper()
		checkUserFilter(t, b, parseWith(t, rt, f), want)
	}
	_, err := b.Users.Update(ctx(), acme, ids["ann"], func(u *store.User) error {
		u.Extensions[extUserURN]["tags"] = []any{"yellow"}
		u.Extensions[extUserURN]["emails"] = []any{map[string]any{"value": "ann@new.example", "type": "work"}}
		return nil
	})
	require.NoError(t, err)
	check(x+`tags eq "red"`, []string{}...)
	check(x+`tags eq "yellow"`, "ann")
	check(x+`emails[type eq "home"]`, []string{}...)
	check(x+`emails[type eq "work"].value eq "ann@new.example"`, "ann")
	_, err = b.Users.Update(ctx(), acme, ids["cy"], func(u *store.User) error {
		u.Extensions = store.Extensions{extUserURN: {"externalId": "X-1"}}
		return nil
	})
	require.NoError(t, err)
	check(x+`externalId eq "X-1"`, "ann", "cy")
	_, err = b.Users.Update(ctx(), acme, ids["ann"], func(u *store.User) error {
		u.Extensions = nil
		return nil
	})
	require.NoError(t, err)
	check(x+`externalId eq "X-1"`, "cy")
	check(x+`tags pr`, "bob", "dee")
	check(`externalId eq "X-1"`, "bob")
	require.NoError(t, b.Users.Delete(ctx(), acme, ids["cy"]))
	check(x+`externalId pr`, []string{}...)
}

// Groups keep extension values through Create, Update and Patch, and filter them.
func testExtensionGroupValues(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	rt := extGroupType(t)
	x := extGroupURN + ":"
	ops, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Ops", Extensions: store.Extensions{extGroupURN: {"displayName": "Shadow", "codes": []any{"A", "B"}}}})
	require.NoError(t, err)
	_, err = b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Shadow"})
	require.NoError(t, err)
	assert.Equal(t, store.Extensions{extGroupURN: {"displayName": "Shadow", "codes": []any{"A", "B"}}}, mustGetGroup(t, b, acme, ops.ID).Extensions)
	check := func(f string, want ...string) {
		t.Helper()
		checkGroupFilter(t, b, parseWith(t, rt, f), want)
	}
	check(x+`displayName eq "shadow"`, "Ops")
	check(`displayName eq "shadow"`, "Shadow")
	check(x+`codes eq "B"`, "Ops")
	check(x+`codes eq "b"`, []string{}...) // caseExact
	check(`schemas eq "`+extGroupURN+`"`, "Ops")

	_, err = b.Groups.Patch(ctx(), acme, ops.ID, store.GroupPatch{Attrs: func(g *store.Group) error {
		g.Extensions = store.Extensions{extGroupURN: {"codes": []any{"C"}}}
		return nil
	}})
	require.NoError(t, err)
	assert.Equal(t, store.Extensions{extGroupURN: {"codes": []any{"C"}}}, mustGetGroup(t, b, acme, ops.ID).Extensions)
	check(x+`codes eq "B"`, []string{}...)
	check(x+`codes eq "C"`, "Ops")
	check(x+`displayName pr`, []string{}...)

	_, err = b.Groups.Update(ctx(), acme, ops.ID, func(g *store.Group) error {
		g.Extensions = nil
		return nil
	})
	require.NoError(t, err)
	assert.Nil(t, mustGetGroup(t, b, acme, ops.ID).Extensions)
	check(x+`codes pr`, []string{}...)
	check(`schemas eq "`+extGroupURN+`"`, []string{}...)
}

func unique(attr, key string) []store.UniqueValue {
	return []store.UniqueValue{{Attr: attr, Key: key}}
}

// Users.Create and Users.Update refuse, with ErrConflict and nothing stored, a unique value
// another user of the tenant holds; the value is free again once its holder drops it or is
// deleted; another tenant, and groups, are apart; Get returns the values as given.
func testUniqueUserValues(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	const badge = extUserURN + ":badge"
	ann, err := b.Users.Create(ctx(), acme, store.User{UserName: "ann", Active: true, Unique: unique(badge, "7")})
	require.NoError(t, err)
	assert.Equal(t, unique(badge, "7"), ann.Unique)
	assert.Equal(t, unique(badge, "7"), mustGetUser(t, b, acme, ann.ID).Unique)

	_, err = b.Users.Create(ctx(), acme, store.User{UserName: "bob", Active: true, Unique: unique(badge, "7")})
	require.ErrorIs(t, err, store.ErrConflict)
	assert.Equal(t, []string{"ann"}, userNames(allUsers(t, b, acme)), "nothing stored")
	_, err = b.Users.Create(ctx(), globex, store.User{UserName: "bob", Active: true, Unique: unique(badge, "7")})
	require.NoError(t, err, "another tenant")
	_, err = b.Groups.Create(ctx(), acme, store.Group{DisplayName: "G", Unique: unique(badge, "7")})
	require.NoError(t, err, "a group")
	bob, err := b.Users.Create(ctx(), acme, store.User{UserName: "bob", Active: true, Unique: unique(badge, "8")})
	require.NoError(t, err)
	_, err = b.Users.Create(ctx(), acme, store.User{UserName: "cy", Active: true, Unique: unique(extUserURN+":other", "7")})
	require.NoError(t, err, "another attribute")

	_, err = b.Users.Update(ctx(), acme, bob.ID, func(u *store.User) error {
		u.Unique = unique(badge, "7")
		u.Title = "changed"
		return nil
	})
	require.ErrorIs(t, err, store.ErrConflict)
	got := mustGetUser(t, b, acme, bob.ID)
	assert.Equal(t, unique(badge, "8"), got.Unique, "nothing stored")
	assert.Empty(t, got.Title, "nothing stored")

	// An update that leaves the values as they are passes; one that drops a value frees it.
	_, err = b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error {
		u.Title = "kept"
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, unique(badge, "7"), mustGetUser(t, b, acme, ann.ID).Unique)
	_, err = b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error {
		u.Unique = unique(badge, "9")
		return nil
	})
	require.NoError(t, err)
	_, err = b.Users.Update(ctx(), acme, bob.ID, func(u *store.User) error {
		u.Unique = unique(badge, "7")
		return nil
	})
	require.NoError(t, err, "freed by its holder")
	require.NoError(t, b.Users.Delete(ctx(), acme, bob.ID))
	_, err = b.Users.Create(ctx(), acme, store.User{UserName: "dan", Active: true, Unique: unique(badge, "7")})
	require.NoError(t, err, "freed by deleting its holder")
}

// Groups.Create, Groups.Update and Groups.Patch refuse a unique value another group holds.
func testUniqueGroupValues(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const code = extGroupURN + ":code"
	ops, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Ops", Unique: unique(code, "ops")})
	require.NoError(t, err)
	assert.Equal(t, unique(code, "ops"), mustGetGroup(t, b, acme, ops.ID).Unique)
	_, err = b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Ops2", Unique: unique(code, "ops")})
	require.ErrorIs(t, err, store.ErrConflict)
	assert.Equal(t, []string{"Ops"}, groupNames(allGroups(t, b, acme)), "nothing stored")
	dev, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: "Dev", Unique: unique(code, "dev")})
	require.NoError(t, err)
	_, err = b.Groups.Update(ctx(), acme, dev.ID, func(g *store.Group) error {
		g.Unique = unique(code, "ops")
		return nil
	})
	require.ErrorIs(t, err, store.ErrConflict)
	ann := mustUser(t, b, acme, "ann")
	_, err = b.Groups.Patch(ctx(), acme, dev.ID, store.GroupPatch{Add: []string{ann.ID}, Attrs: func(g *store.Group) error {
		g.Unique = unique(code, "ops")
		g.DisplayName = "Dev2"
		return nil
	}})
	require.ErrorIs(t, err, store.ErrConflict)
	got := mustGetGroup(t, b, acme, dev.ID)
	assert.Equal(t, unique(code, "dev"), got.Unique, "nothing stored")
	assert.Equal(t, "Dev", got.DisplayName, "nothing stored")
	assert.Empty(t, got.Members, "nothing stored")
	// A patch of members alone keeps the values.
	_, err = b.Groups.Patch(ctx(), acme, dev.ID, store.GroupPatch{Add: []string{ann.ID}})
	require.NoError(t, err)
	assert.Equal(t, unique(code, "dev"), mustGetGroup(t, b, acme, dev.ID).Unique)
	require.NoError(t, b.Groups.Delete(ctx(), acme, ops.ID))
	_, err = b.Groups.Patch(ctx(), acme, dev.ID, store.GroupPatch{Attrs: func(g *store.Group) error {
		g.Unique = unique(code, "ops")
		return nil
	}})
	require.NoError(t, err, "freed by deleting its holder")
}

// Of 20 concurrent Users.Create of one unique value exactly one succeeds.
func testConcurrentUniqueCreates(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 20
	errs := parallel(n, func(i int) error {
		_, err := b.Users.Create(ctx(), acme, store.User{UserName: fmt.Sprintf("user%02d", i), Active: true, Unique: unique(extUserURN+":badge", "7")})
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	assert.Equal(t, []string{fmt.Sprintf("user%02d", winner)}, userNames(allUsers(t, b, acme)))
}

// Of 20 concurrent Users.Update of different users to one unique value exactly one succeeds.
func testConcurrentUniqueUpdates(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 20
	var ids []string
	for i := range n {
		ids = append(ids, mustUser(t, b, acme, fmt.Sprintf("user%02d", i)).ID)
	}
	errs := parallel(n, func(i int) error {
		_, err := b.Users.Update(ctx(), acme, ids[i], func(u *store.User) error {
			u.Unique = unique(extUserURN+":badge", "7")
			return nil
		})
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	for i, id := range ids {
		if i == winner {
			assert.Equal(t, unique(extUserURN+":badge", "7"), mustGetUser(t, b, acme, id).Unique)
		} else {
			assert.Nil(t, mustGetUser(t, b, acme, id).Unique, "user %d", i)
		}
	}
}

// Of 20 concurrent Groups.Patch of different groups to one unique value exactly one succeeds.
func testConcurrentUniqueGroupPatches(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	const n = 20
	var ids []string
	for i := range n {
		ids = append(ids, mustGroup(t, b, acme, fmt.Sprintf("group%02d", i)).ID)
	}
	errs := parallel(n, func(i int) error {
		_, err := b.Groups.Patch(ctx(), acme, ids[i], store.GroupPatch{Attrs: func(g *store.Group) error {
			g.Unique = unique(extGroupURN+":code", "x")
			return nil
		}})
		return err
	})
	winner := exactlyOneWins(t, errs, store.ErrConflict)
	for i, id := range ids {
		if i != winner {
			assert.Nil(t, mustGetGroup(t, b, acme, id).Unique, "group %d", i)
		}
	}
}
