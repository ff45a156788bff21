package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func userTests() []test {
	return []test{
		{"CreateGet", testUserCreateGet},
		{"CreateGeneratesID", testUserCreateGeneratesID},
		{"CreateKeepsCallerID", testUserCreateKeepsCallerID},
		{"CreateIDConflict", testUserCreateIDConflict},
		{"CreateUnknownTenant", testUserCreateUnknownTenant},
		{"CreateEmptyUserName", testUserCreateEmptyUserName},
		{"CreateUserNameConflict", testUserCreateUserNameConflict},
		{"CreateIgnoresGroups", testUserCreateIgnoresGroups},
		{"CreateCopiesInput", testUserCreateCopiesInput},
		{"SameUserNameInTwoTenants", testUserSameUserNameInTwoTenants},
		{"OtherTenantNotFound", testUserOtherTenantNotFound},
		{"GetNotFound", testUserGetNotFound},
		{"GetReturnsCopy", testUserGetReturnsCopy},
		{"GetGroupsFromMemberships", testUserGroupsFromMemberships},
		{"UpdateStoresWhatFnLeaves", testUserUpdateStores},
		{"UpdateFnErrorStoresNothing", testUserUpdateFnError},
		{"UpdateFnGetsCopy", testUserUpdateFnGetsCopy},
		{"UpdateNotFound", testUserUpdateNotFound},
		{"UpdateRenameConflict", testUserUpdateRenameConflict},
		{"UpdateRenameOwnCase", testUserUpdateRenameOwnCase},
		{"UpdateRenameFreesOldName", testUserUpdateRenameFreesOldName},
		{"UpdateChangedID", testUserUpdateChangedID},
		{"UpdateEmptyUserName", testUserUpdateEmptyUserName},
		{"UpdateIgnoresGroups", testUserUpdateIgnoresGroups},
		{"DeleteGet", testUserDeleteGet},
		{"DeleteNotFound", testUserDeleteNotFound},
		{"DeleteFreesUserName", testUserDeleteFreesUserName},
		{"DeleteRemovesMemberships", testUserDeleteRemovesMemberships},
		{"ListUnknownTenant", testUserListUnknownTenant},
		{"ListEmptyTenant", testUserListEmptyTenant},
	}
}

// richUser is a user with every attribute set.
func richUser(userName string) store.User {
	return store.User{
		ExternalID:        "Ext-" + userName,
		UserName:          userName,
		Active:            true,
		DisplayName:       "Ann Ö'Neil",
		NickName:          "Annie",
		ProfileURL:        "https://example.com/u/" + userName,
		Title:             "Directrice générale",
		UserType:          "Employee",
		PreferredLanguage: "fr-CH",
		Locale:            "fr-CH",
		Timezone:          "Europe/Zurich",
		Name: store.Name{
			Formatted: "Dr. Ann Marie Ö'Neil III", FamilyName: "Ö'Neil", GivenName: "Ann",
			MiddleName: "Marie", HonorificPrefix: "Dr.", HonorificSuffix: "III",
		},
		Emails: []store.MultiValue{
			{Value: userName + "@example.com", Display: "Work", Type: "work", Primary: true},
			{Value: userName + "@home.example", Type: "home"},
		},
		PhoneNumbers: []store.MultiValue{{Value: "+41 44 000 00 00", Type: "work"}, {Value: "+41 79 000 00 00", Type: "mobile", Primary: true}},
		Roles:        []store.MultiValue{{Value: "admin", Display: "Administrator", Type: "builtin", Primary: true}},
		Ims:          []store.MultiValue{{Value: userName + "@xmpp.example", Type: "xmpp"}, {Value: userName + ".skype", Display: "Skype", Type: "skype", Primary: true}},
		Photos: []store.MultiValue{
			{Value: "https://photos.example.com/" + userName + ".jpg", Type: "photo", Primary: true},
			{Value: "https://photos.example.com/" + userName + "-thumb.jpg", Display: "Small", Type: "thumbnail"},
		},
		Entitlements:     []store.MultiValue{{Value: "vpn", Display: "VPN", Type: "network", Primary: true}, {Value: "wiki"}},
		X509Certificates: []store.MultiValue{{Value: "MIIDQTCCAimgAwIBAgITBmyf", Display: "Signing", Type: "signing", Primary: true}},
		Addresses: []store.Address{{
			Formatted: "Bahnhofstrasse 1\n8001 Zürich", StreetAddress: "Bahnhofstrasse 1", Locality: "Zürich",
			Region: "ZH", PostalCode: "8001", Country: "CH", Type: "work", Primary: true,
		}},
		Enterprise: store.EnterpriseUser{
			EmployeeNumber: "007", CostCenter: "CC-1", Organization: "Acme", Division: "HQ", Department: "Board",
			Manager: store.Manager{Value: "user_manager", Ref: "https://example.com/Users/user_manager", DisplayName: "Boss"},
		},
		Meta: store.Meta{Created: day(1, 2, 3*time.Hour+4*time.Minute+5*time.Second), LastModified: day(6, 7, 8*time.Hour)},
	}
}

// Create stores u and returns it as stored; Get returns every attribute as it was created.
func testUserCreateGet(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := richUser("ann")
	created, err := b.Users.Create(ctx(), acme, in)
	require.NoError(t, err)
	require.NotNil(t, created)
	require.NotEmpty(t, created.ID)
	in.ID = created.ID
	assert.Equal(t, normUser(in), withoutGroups(*created), "Create's result")
	got := mustGetUser(t, b, acme, created.ID)
	assert.Equal(t, normUser(in), normUser(*got), "Get after Create")
	assert.Empty(t, got.Groups, "a new user is in no group")
}

// Create: an empty u.ID gets a new id (NewID("user")): "user_" and 26 characters, distinct.
func testUserCreateGeneratesID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	seen := map[string]bool{}
	for i, tenant := range []string{acme, acme, acme, globex} {
		u := mustUser(t, b, tenant, "user"+string(rune('a'+i)))
		assert.True(t, strings.HasPrefix(u.ID, "user_"), "generated id %q has no prefix user_", u.ID)
		assert.Len(t, u.ID, len("user_")+26, "generated id %q", u.ID)
		assert.False(t, seen[u.ID], "generated id %q twice", u.ID)
		seen[u.ID] = true
		assert.Equal(t, u.ID, mustGetUser(t, b, tenant, u.ID).ID)
	}
}

// Create keeps an id the caller set.
func testUserCreateKeepsCallerID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u, err := b.Users.Create(ctx(), acme, store.User{ID: "user_fromcaller", UserName: "ann"})
	require.NoError(t, err)
	assert.Equal(t, "user_fromcaller", u.ID)
	assert.Equal(t, "ann", mustGetUser(t, b, acme, "user_fromcaller").UserName)
}

// Create: ErrConflict if the id is taken in the tenant; nothing changes.
func testUserCreateIDConflict(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	_, err := b.Users.Create(ctx(), acme, store.User{ID: "user_1", UserName: "ann"})
	require.NoError(t, err)
	_, err = b.Users.Create(ctx(), acme, store.User{ID: "user_1", UserName: "bob"})
	require.ErrorIs(t, err, store.ErrConflict)
	assert.Equal(t, "ann", mustGetUser(t, b, acme, "user_1").UserName)
	assert.Equal(t, []string{"ann"}, userNames(allUsers(t, b, acme)))
}

// Create: ErrNotFound if the tenant does not exist.
func testUserCreateUnknownTenant(t *testing.T, b store.Backend) {
	_, err := b.Users.Create(ctx(), acme, store.User{UserName: "ann"})
	require.ErrorIs(t, err, store.ErrNotFound)
	mustTenant(t, b, globex)
	_, err = b.Users.Create(ctx(), acme, store.User{UserName: "ann"})
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Empty(t, allUsers(t, b, globex))
}

// Create: ErrInvalid if u.UserName is empty.
func testUserCreateEmptyUserName(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	_, err := b.Users.Create(ctx(), acme, store.User{DisplayName: "nameless", Active: true})
	require.ErrorIs(t, err, store.ErrInvalid)
	assert.Empty(t, allUsers(t, b, acme))
}

// Create: ErrConflict if the userName, compared case-insensitively (schema.Fold), is taken in
// the tenant; nothing is stored.
func testUserCreateUserNameConflict(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, c := range []struct{ first, again string }{
		{"ann", "ann"},
		{"bob", "BOB"},
		{"Carol.Smith@Example.COM", "carol.smith@example.com"},
		{"ærøskøbing", "ÆRØSKØBING"},
		{"émile", "Émile"},
		{"kelvin", "\u212Aelvin"}, // KELVIN SIGN folds to k
		{"straße", "STRAßE"},
	} {
		first := mustUser(t, b, acme, c.first)
		_, err := b.Users.Create(ctx(), acme, store.User{UserName: c.again, DisplayName: "second"})
		require.ErrorIs(t, err, store.ErrConflict, "Create(%q) after Create(%q)", c.again, c.first)
		got := mustGetUser(t, b, acme, first.ID)
		assert.Equal(t, c.first, got.UserName)
		assert.Empty(t, got.DisplayName, "the conflicting Create changed the first user")
	}
	assert.Equal(t, []string{"ann", "bob", "Carol.Smith@Example.COM", "ærøskøbing", "émile", "kelvin", "straße"},
		userNames(allUsers(t, b, acme)))
}

// Create: u.Groups is ignored.
func testUserCreateIgnoresGroups(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	g := mustGroup(t, b, acme, "Staff")
	u, err := b.Users.Create(ctx(), acme, store.User{
		UserName: "ann",
		Groups:   []store.GroupRef{{Value: g.ID, Display: "Staff", Type: "direct"}},
	})
	require.NoError(t, err)
	assert.Empty(t, u.Groups, "Create's result")
	assert.Empty(t, mustGetUser(t, b, acme, u.ID).Groups, "Get")
	assert.Empty(t, mustGetGroup(t, b, acme, g.ID).Members, "the group gained a member from User.Groups")
}

// Create stores u as it is at the call: changing the caller's slices, or the returned user's,
// afterwards does not change the stored user.
func testUserCreateCopiesInput(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := richUser("ann")
	want := normUser(richUser("ann"))
	created, err := b.Users.Create(ctx(), acme, in)
	require.NoError(t, err)
	want.ID = created.ID
	require.Equal(t, want, withoutGroups(*created), "Create's result")
	in.Emails[0].Value = "changed@example.com"
	in.Roles[0].Value = "changed"
	in.Addresses[0].Locality = "changed"
	in.X509Certificates[0].Value = "changed"
	created.Emails[1].Value = "changed@example.com"
	created.PhoneNumbers[0].Value = "changed"
	created.Roles = append(created.Roles[:0], store.MultiValue{Value: "changed"})
	assert.Equal(t, want, normUser(*mustGetUser(t, b, acme, want.ID)))
}

// The same userName may exist in two tenants.
func testUserSameUserNameInTwoTenants(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	a := mustUser(t, b, acme, "ann")
	g := mustUser(t, b, globex, "ANN")
	assert.NotEqual(t, a.ID, g.ID)
	assert.Equal(t, []string{"ann"}, userNames(allUsers(t, b, acme)))
	assert.Equal(t, []string{"ANN"}, userNames(allUsers(t, b, globex)))
	// Renaming in one tenant is checked against that tenant only.
	_, err := b.Users.Update(ctx(), globex, g.ID, func(u *store.User) error { u.UserName = "Ann"; return nil })
	require.NoError(t, err)
}

// A user id of another tenant is not found: Get, Update, Delete and List.
func testUserOtherTenantNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	ann := mustUser(t, b, acme, "ann")
	mustUser(t, b, globex, "bob")

	_, err := b.Users.Get(ctx(), globex, ann.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Get")
	_, err = b.Users.Update(ctx(), globex, ann.ID, func(u *store.User) error { u.DisplayName = "x"; return nil })
	require.ErrorIs(t, err, store.ErrNotFound, "Update")
	require.ErrorIs(t, b.Users.Delete(ctx(), globex, ann.ID), store.ErrNotFound, "Delete")
	p, err := b.Users.List(ctx(), globex, store.Query{Filter: parseUsers(t, `id eq "`+ann.ID+`"`), Count: -1})
	require.NoError(t, err)
	assert.Empty(t, p.Resources, "List by id in the other tenant")
	assert.Zero(t, p.TotalResults)
	assert.Equal(t, []string{"bob"}, userNames(allUsers(t, b, globex)))

	got := mustGetUser(t, b, acme, ann.ID)
	assert.Equal(t, "ann", got.UserName)
	assert.Empty(t, got.DisplayName, "the other tenant's Update changed the user")
}

// Get: ErrNotFound if the tenant or the user does not exist.
func testUserGetNotFound(t *testing.T, b store.Backend) {
	_, err := b.Users.Get(ctx(), acme, "user_missing")
	require.ErrorIs(t, err, store.ErrNotFound, "unknown tenant")
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	_, err = b.Users.Get(ctx(), acme, "user_missing")
	require.ErrorIs(t, err, store.ErrNotFound, "unknown user")
	_, err = b.Users.Get(ctx(), acme, strings.ToUpper(ann.ID))
	require.ErrorIs(t, err, store.ErrNotFound, "ids are case-sensitive")
	_, err = b.Users.Get(ctx(), acme, "")
	require.ErrorIs(t, err, store.ErrNotFound, "empty id")
}

// Get returns a copy: changing the returned user does not change the store.
func testUserGetReturnsCopy(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	created, err := b.Users.Create(ctx(), acme, richUser("ann"))
	require.NoError(t, err)
	mustGroup(t, b, acme, "Staff", created.ID)
	want := normUser(*mustGetUser(t, b, acme, created.ID))

	got := mustGetUser(t, b, acme, created.ID)
	require.Equal(t, normUser(richUser("ann")).Emails, got.Emails)
	require.Len(t, got.Groups, 1)
	got.UserName = "changed"
	got.Emails[0].Value = "changed@example.com"
	got.PhoneNumbers[1].Primary = false
	got.Roles = append(got.Roles[:0], store.MultiValue{Value: "changed"})
	got.Addresses[0].Country = "XX"
	got.Groups[0].Display = "changed"
	got.Enterprise.Manager.Value = "changed"
	assert.Equal(t, want, normUser(*mustGetUser(t, b, acme, created.ID)))
}

// Update stores what fn leaves and returns the user as stored.
func testUserUpdateStores(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	orig := mustUser(t, b, acme, "ann")
	want := richUser("Ann.Renamed")
	want.ID = orig.ID
	var seen store.User
	got, err := b.Users.Update(ctx(), acme, orig.ID, func(u *store.User) error {
		seen = *u
		*u = richUser("Ann.Renamed")
		u.ID = orig.ID
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, withoutGroups(*orig), withoutGroups(seen), "fn is called with the stored user")
	assert.Equal(t, normUser(want), withoutGroups(*got), "Update's result")
	assert.Equal(t, normUser(want), normUser(*mustGetUser(t, b, acme, orig.ID)), "Get after Update")

	// Clearing attributes is stored too.
	got, err = b.Users.Update(ctx(), acme, orig.ID, func(u *store.User) error {
		u.Emails, u.Roles, u.Title, u.Active = nil, nil, "", false
		u.Enterprise = store.EnterpriseUser{}
		return nil
	})
	require.NoError(t, err)
	want.Emails, want.Roles, want.Title, want.Active = nil, nil, "", false
	want.Enterprise = store.EnterpriseUser{}
	// fn changed the user and left lastModified: the store set it.
	assert.True(t, got.Meta.LastModified.After(want.Meta.LastModified), "lastModified %v", got.Meta.LastModified)
	want.Meta.LastModified = got.Meta.LastModified
	assert.Equal(t, normUser(want), withoutGroups(*got), "Update's result")
	assert.Equal(t, normUser(want), normUser(*mustGetUser(t, b, acme, orig.ID)), "Get after Update")
}

// Update: if fn returns an error, nothing is stored and Update returns that error as it is.
func testUserUpdateFnError(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	created, err := b.Users.Create(ctx(), acme, richUser("ann"))
	require.NoError(t, err)
	want := normUser(*mustGetUser(t, b, acme, created.ID))
	errStop := errors.New("stop")
	_, err = b.Users.Update(ctx(), acme, created.ID, func(u *store.User) error {
		u.UserName = "bob"
		u.DisplayName = "Bob"
		u.Active = false
		return errStop
	})
	require.True(t, err == errStop, "Update returned %v (%T), want fn's error itself", err, err)
	assert.Equal(t, want, normUser(*mustGetUser(t, b, acme, created.ID)))
	mustUser(t, b, acme, "bob") // the name fn tried is still free
}

// Update calls fn with a copy: changing the user's slices in fn and then failing leaves the
// stored user unchanged, and neither the user fn saw nor Update's result is the stored value.
func testUserUpdateFnGetsCopy(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	created, err := b.Users.Create(ctx(), acme, richUser("ann"))
	require.NoError(t, err)
	want := normUser(*mustGetUser(t, b, acme, created.ID))
	require.Equal(t, normUser(richUser("ann")).Emails, want.Emails)
	errStop := errors.New("stop")
	_, err = b.Users.Update(ctx(), acme, created.ID, func(u *store.User) error {
		u.Emails[0].Value = "changed@example.com"
		u.PhoneNumbers[0].Type = "changed"
		u.Roles[0].Primary = false
		u.Addresses[0].Locality = "changed"
		u.Name.GivenName = "changed"
		return errStop
	})
	require.True(t, err == errStop, "Update returned %v, want fn's error", err)
	assert.Equal(t, want, normUser(*mustGetUser(t, b, acme, created.ID)), "after a failed fn")

	var kept *store.User
	got, err := b.Users.Update(ctx(), acme, created.ID, func(u *store.User) error {
		kept = u
		u.NickName = "Nan"
		return nil
	})
	require.NoError(t, err)
	want.NickName = "Nan"
	require.False(t, got.Meta.LastModified.Before(want.Meta.LastModified), "lastModified %v", got.Meta.LastModified)
	want.Meta.LastModified = got.Meta.LastModified
	require.Equal(t, want, withoutGroups(*got), "Update's result")
	kept.Emails[0].Value = "changed-later@example.com"
	got.Emails[1].Value = "changed-later@example.com"
	got.Roles[0].Value = "changed-later"
	assert.Equal(t, want, normUser(*mustGetUser(t, b, acme, created.ID)), "after changing fn's user and the result")
}

// Update: ErrNotFound if the user (or the tenant) does not exist.
func testUserUpdateNotFound(t *testing.T, b store.Backend) {
	fn := func(u *store.User) error { u.DisplayName = "x"; return nil }
	_, err := b.Users.Update(ctx(), acme, "user_missing", fn)
	require.ErrorIs(t, err, store.ErrNotFound, "unknown tenant")
	mustTenant(t, b, acme)
	_, err = b.Users.Update(ctx(), acme, "user_missing", fn)
	require.ErrorIs(t, err, store.ErrNotFound, "unknown user")
	ann := mustUser(t, b, acme, "ann")
	require.NoError(t, b.Users.Delete(ctx(), acme, ann.ID))
	_, err = b.Users.Update(ctx(), acme, ann.ID, fn)
	require.ErrorIs(t, err, store.ErrNotFound, "deleted user")
	assert.Empty(t, allUsers(t, b, acme))
}

// Update: ErrConflict if fn renamed the user to a userName taken in the tenant, compared
// case-insensitively; nothing is stored.
func testUserUpdateRenameConflict(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustUser(t, b, acme, "Ann")
	bob := mustUser(t, b, acme, "bob")
	for _, name := range []string{"Ann", "ann", "ANN", "aNn"} {
		_, err := b.Users.Update(ctx(), acme, bob.ID, func(u *store.User) error {
			u.UserName = name
			u.DisplayName = "changed"
			return nil
		})
		require.ErrorIs(t, err, store.ErrConflict, "rename to %q", name)
	}
	got := mustGetUser(t, b, acme, bob.ID)
	assert.Equal(t, "bob", got.UserName)
	assert.Empty(t, got.DisplayName)
	assert.Equal(t, []string{"Ann", "bob"}, userNames(allUsers(t, b, acme)))
	_, err := b.Users.Create(ctx(), acme, store.User{UserName: "BOB"})
	require.ErrorIs(t, err, store.ErrConflict, "bob still holds its name")
}

// Update may change the case of the user's own userName: it conflicts with no other user.
func testUserUpdateRenameOwnCase(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	got, err := b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error { u.UserName = "ANN"; return nil })
	require.NoError(t, err)
	assert.Equal(t, "ANN", got.UserName)
	assert.Equal(t, "ANN", mustGetUser(t, b, acme, ann.ID).UserName)
	_, err = b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error { u.Title = "unchanged name"; return nil })
	require.NoError(t, err, "an Update that keeps the userName")
	_, err = b.Users.Create(ctx(), acme, store.User{UserName: "Ann"})
	require.ErrorIs(t, err, store.ErrConflict)
}

// After a rename only the new userName is taken: the old one can be created again.
func testUserUpdateRenameFreesOldName(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	_, err := b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error { u.UserName = "anna"; return nil })
	require.NoError(t, err)
	_, err = b.Users.Create(ctx(), acme, store.User{UserName: "ANNA"})
	require.ErrorIs(t, err, store.ErrConflict, "the new name is taken")
	mustUser(t, b, acme, "Ann") // the old name is free
	assert.Equal(t, []string{"anna", "Ann"}, userNames(allUsers(t, b, acme)))
}

// Update: ErrInvalid if fn changed the id; nothing is stored.
func testUserUpdateChangedID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	for _, id := range []string{"user_other", "", strings.ToUpper(ann.ID)} {
		_, err := b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error {
			u.ID = id
			u.DisplayName = "changed"
			return nil
		})
		require.ErrorIs(t, err, store.ErrInvalid, "id changed to %q", id)
	}
	got := mustGetUser(t, b, acme, ann.ID)
	assert.Empty(t, got.DisplayName)
	_, err := b.Users.Get(ctx(), acme, "user_other")
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, []string{"ann"}, userNames(allUsers(t, b, acme)))
}

// Update: ErrInvalid if fn emptied the userName; nothing is stored.
func testUserUpdateEmptyUserName(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	_, err := b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error {
		u.UserName = ""
		u.DisplayName = "changed"
		return nil
	})
	require.ErrorIs(t, err, store.ErrInvalid)
	got := mustGetUser(t, b, acme, ann.ID)
	assert.Equal(t, "ann", got.UserName)
	assert.Empty(t, got.DisplayName)
	_, err = b.Users.Create(ctx(), acme, store.User{UserName: "Ann"})
	require.ErrorIs(t, err, store.ErrConflict, "the name is still taken")
}

// Update: changes fn makes to Groups are ignored.
func testUserUpdateIgnoresGroups(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	staff := mustGroup(t, b, acme, "Staff", ann.ID)
	other := mustGroup(t, b, acme, "Other")
	got, err := b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error {
		u.Groups = []store.GroupRef{{Value: other.ID, Display: "Other", Type: "direct"}}
		u.Title = "t"
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, "t", got.Title)
	for _, r := range got.Groups {
		assert.NotEqual(t, other.ID, r.Value, "Update's result lists the group fn added")
	}
	assert.Equal(t, []string{staff.ID}, groupRefValues(mustGetUser(t, b, acme, ann.ID)))
	assert.Empty(t, mustGetGroup(t, b, acme, other.ID).Members)

	_, err = b.Users.Update(ctx(), acme, ann.ID, func(u *store.User) error { u.Groups = nil; return nil })
	require.NoError(t, err)
	assert.Equal(t, []string{staff.ID}, groupRefValues(mustGetUser(t, b, acme, ann.ID)), "clearing Groups in fn")
	assert.Equal(t, []string{ann.ID}, memberValues(mustGetGroup(t, b, acme, staff.ID)))
}

// Delete removes the user: Get reports ErrNotFound and List no longer has it.
func testUserDeleteGet(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	mustUser(t, b, acme, "bob")
	require.NoError(t, b.Users.Delete(ctx(), acme, ann.ID))
	_, err := b.Users.Get(ctx(), acme, ann.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, []string{"bob"}, userNames(allUsers(t, b, acme)))
}

// Delete: ErrNotFound if the user does not exist, so a repeated Delete reports ErrNotFound.
func testUserDeleteNotFound(t *testing.T, b store.Backend) {
	require.ErrorIs(t, b.Users.Delete(ctx(), acme, "user_missing"), store.ErrNotFound, "unknown tenant")
	mustTenant(t, b, acme)
	require.ErrorIs(t, b.Users.Delete(ctx(), acme, "user_missing"), store.ErrNotFound, "unknown user")
	ann := mustUser(t, b, acme, "ann")
	require.NoError(t, b.Users.Delete(ctx(), acme, ann.ID))
	require.ErrorIs(t, b.Users.Delete(ctx(), acme, ann.ID), store.ErrNotFound, "repeated Delete")
}

// After Delete the userName is free again and the new user gets a new id.
func testUserDeleteFreesUserName(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	require.NoError(t, b.Users.Delete(ctx(), acme, ann.ID))
	again := mustUser(t, b, acme, "ANN")
	assert.NotEqual(t, ann.ID, again.ID)
	_, err := b.Users.Get(ctx(), acme, ann.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
}

// List: ErrNotFound if the tenant does not exist.
func testUserListUnknownTenant(t *testing.T, b store.Backend) {
	_, err := b.Users.List(ctx(), acme, store.Query{Count: -1})
	require.ErrorIs(t, err, store.ErrNotFound)
	mustTenant(t, b, globex)
	_, err = b.Users.List(ctx(), acme, store.Query{Filter: parseUsers(t, `userName eq "ann"`), Count: 10})
	require.ErrorIs(t, err, store.ErrNotFound)
}

// List of a tenant without users is an empty page.
func testUserListEmptyTenant(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	p, err := b.Users.List(ctx(), acme, store.Query{Count: -1})
	require.NoError(t, err)
	assert.Empty(t, p.Resources)
	assert.Zero(t, p.TotalResults)
}
