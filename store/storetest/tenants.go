package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func tenantTests() []test {
	return []test{
		{"CreateGet", testTenantCreateGet},
		{"CreateValidIDs", testTenantCreateValidIDs},
		{"CreateInvalidID", testTenantCreateInvalidID},
		{"CreateDuplicate", testTenantCreateDuplicate},
		{"GetNotFound", testTenantGetNotFound},
		{"ListEmpty", testTenantListEmpty},
		{"ListOrderedByID", testTenantListOrderedByID},
		{"DeleteGet", testTenantDeleteGet},
		{"DeleteNotFound", testTenantDeleteNotFound},
		{"DeleteRemovesUsersAndGroups", testTenantDeleteRemovesUsersAndGroups},
		{"DeleteRemovesClients", testTenantDeleteRemovesClients},
		{"DeleteKeepsOtherTenants", testTenantDeleteKeepsOtherTenants},
	}
}

// Create stores t; Get returns it.
func testTenantCreateGet(t *testing.T, b store.Backend) {
	want := store.Tenant{ID: acme, DisplayName: "Acme Corp. – Zürich", Created: day(3, 4, 5*time.Hour)}
	require.NoError(t, b.Tenants.Create(ctx(), want))
	got, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, want.ID, got.ID)
	assert.Equal(t, want.DisplayName, got.DisplayName)
	assert.True(t, want.Created.Equal(got.Created), "Created: want %v, got %v", want.Created, got.Created)
}

// Tenant.ID: 1 to 63 characters from a-z, 0-9, '-' and '_', starting with a letter or digit.
func testTenantCreateValidIDs(t *testing.T, b store.Backend) {
	for _, id := range []string{"a", "0", "9lives", "a-b_c", "a-", "a_", strings.Repeat("z", 63)} {
		require.NoError(t, b.Tenants.Create(ctx(), store.Tenant{ID: id}), "Tenants.Create(%q)", id)
		got, err := b.Tenants.Get(ctx(), id)
		require.NoError(t, err, "Tenants.Get(%q)", id)
		assert.Equal(t, id, got.ID)
	}
}

// Create: ErrInvalid if t.ID is not a valid tenant id; nothing is stored.
func testTenantCreateInvalidID(t *testing.T, b store.Backend) {
	for _, id := range []string{
		"", "Acme", "ACME", "acmE", "-acme", "_acme", "ac me", "acme!", "acme.com", "acme/x",
		"acmé", strings.Repeat("a", 64), " acme", "acme\n",
	} {
		err := b.Tenants.Create(ctx(), store.Tenant{ID: id})
		assert.ErrorIs(t, err, store.ErrInvalid, "Tenants.Create(%q)", id)
	}
	ts, err := b.Tenants.List(ctx())
	require.NoError(t, err)
	assert.Empty(t, ts, "invalid tenants must not be stored")
}

// Create: ErrConflict if a tenant with that id exists; the first is kept.
func testTenantCreateDuplicate(t *testing.T, b store.Backend) {
	require.NoError(t, b.Tenants.Create(ctx(), store.Tenant{ID: acme, DisplayName: "first"}))
	err := b.Tenants.Create(ctx(), store.Tenant{ID: acme, DisplayName: "second"})
	require.ErrorIs(t, err, store.ErrConflict)
	got, err := b.Tenants.Get(ctx(), acme)
	require.NoError(t, err)
	assert.Equal(t, "first", got.DisplayName)
	ts, err := b.Tenants.List(ctx())
	require.NoError(t, err)
	assert.Len(t, ts, 1)
}

// Get: ErrNotFound if it does not exist.
func testTenantGetNotFound(t *testing.T, b store.Backend) {
	_, err := b.Tenants.Get(ctx(), acme)
	require.ErrorIs(t, err, store.ErrNotFound)
	mustTenant(t, b, acme)
	_, err = b.Tenants.Get(ctx(), globex)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = b.Tenants.Get(ctx(), "ACME")
	require.ErrorIs(t, err, store.ErrNotFound, "tenant ids are not case-insensitive")
}

// List of an empty store is empty, not an error.
func testTenantListEmpty(t *testing.T, b store.Backend) {
	ts, err := b.Tenants.List(ctx())
	require.NoError(t, err)
	assert.Empty(t, ts)
}

// List returns every tenant, ordered by id (Go string order: bytes).
func testTenantListOrderedByID(t *testing.T, b store.Backend) {
	for _, id := range []string{"m", "ab", "z", "a_b", "b", "a-c", "a0", "b-1", "9"} {
		require.NoError(t, b.Tenants.Create(ctx(), store.Tenant{ID: id, DisplayName: "T " + id}))
	}
	ts, err := b.Tenants.List(ctx())
	require.NoError(t, err)
	var ids []string
	for _, tn := range ts {
		ids = append(ids, tn.ID)
		assert.Equal(t, "T "+tn.ID, tn.DisplayName)
	}
	assert.Equal(t, []string{"9", "a-c", "a0", "a_b", "ab", "b", "b-1", "m", "z"}, ids)
}

// Delete removes the tenant: Get reports ErrNotFound, and so does a second Delete.
func testTenantDeleteGet(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	require.NoError(t, b.Tenants.Delete(ctx(), acme))
	_, err := b.Tenants.Get(ctx(), acme)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorIs(t, b.Tenants.Delete(ctx(), acme), store.ErrNotFound)
	ts, err := b.Tenants.List(ctx())
	require.NoError(t, err)
	require.Len(t, ts, 1)
	assert.Equal(t, globex, ts[0].ID)
}

// Delete: ErrNotFound if it does not exist.
func testTenantDeleteNotFound(t *testing.T, b store.Backend) {
	require.ErrorIs(t, b.Tenants.Delete(ctx(), acme), store.ErrNotFound)
	mustTenant(t, b, acme)
	require.ErrorIs(t, b.Tenants.Delete(ctx(), globex), store.ErrNotFound)
}

// Delete removes the tenant with all its users and groups: they are not found, the tenant's
// lists report ErrNotFound, and a tenant created again with the same id starts empty.
func testTenantDeleteRemovesUsersAndGroups(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann := mustUser(t, b, acme, "ann")
	g := mustGroup(t, b, acme, "Staff", ann.ID)
	require.NoError(t, b.Tenants.Delete(ctx(), acme))

	_, err := b.Users.Get(ctx(), acme, ann.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Users.Get after the tenant's Delete")
	_, err = b.Groups.Get(ctx(), acme, g.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Groups.Get after the tenant's Delete")
	_, err = b.Users.List(ctx(), acme, store.Query{Count: -1})
	require.ErrorIs(t, err, store.ErrNotFound, "Users.List after the tenant's Delete")
	_, err = b.Groups.List(ctx(), acme, store.Query{Count: -1})
	require.ErrorIs(t, err, store.ErrNotFound, "Groups.List after the tenant's Delete")
	_, err = b.Users.Create(ctx(), acme, store.User{UserName: "bob"})
	require.ErrorIs(t, err, store.ErrNotFound, "Users.Create after the tenant's Delete")

	mustTenant(t, b, acme)
	assert.Empty(t, allUsers(t, b, acme), "a recreated tenant has no users")
	assert.Empty(t, allGroups(t, b, acme), "a recreated tenant has no groups")
	_, err = b.Users.Get(ctx(), acme, ann.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Users.Get of a user of the deleted tenant")
	_, err = b.Groups.Get(ctx(), acme, g.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Groups.Get of a group of the deleted tenant")
	again := mustUser(t, b, acme, "ANN") // the userName is free again
	assert.Equal(t, "ANN", again.UserName)
}

// Delete of one tenant leaves the others' users and groups alone.
func testTenantDeleteKeepsOtherTenants(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	mustUser(t, b, acme, "ann")
	bob := mustUser(t, b, globex, "bob")
	g := mustGroup(t, b, globex, "Staff", bob.ID)
	require.NoError(t, b.Tenants.Delete(ctx(), acme))

	assert.Equal(t, []string{"bob"}, userNames(allUsers(t, b, globex)))
	got := mustGetGroup(t, b, globex, g.ID)
	assert.Equal(t, []string{bob.ID}, memberValues(got))
	assert.Equal(t, []string{g.ID}, groupRefValues(mustGetUser(t, b, globex, bob.ID)))
}

// Delete removes the tenant with all its clients: they are not found, the tenant's client list
// reports ErrNotFound, a tenant created again with the same id starts without clients, and the
// other tenants' clients stay.
func testTenantDeleteRemovesClients(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	shop := mustClient(t, b, newClient(acme, "", "shop"))
	blog := mustClient(t, b, newClient(globex, "", "blog"))
	require.NoError(t, b.Tenants.Delete(ctx(), acme))

	_, err := b.Clients.Get(ctx(), acme, shop.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Clients.Get after the tenant's Delete")
	_, err = b.Clients.List(ctx(), acme)
	require.ErrorIs(t, err, store.ErrNotFound, "Clients.List after the tenant's Delete")
	_, err = b.Clients.Update(ctx(), acme, shop.ID, func(c *store.Client) error { c.Name = "x"; return nil })
	require.ErrorIs(t, err, store.ErrNotFound, "Clients.Update after the tenant's Delete")
	require.ErrorIs(t, b.Clients.Delete(ctx(), acme, shop.ID), store.ErrNotFound, "Clients.Delete after the tenant's Delete")

	mustTenant(t, b, acme)
	assert.Empty(t, allClients(t, b, acme), "a recreated tenant has no clients")
	_, err = b.Clients.Get(ctx(), acme, shop.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Clients.Get of a client of the deleted tenant")
	again := mustClient(t, b, newClient(acme, shop.ID, "shop again"))
	assert.Equal(t, shop.ID, again.ID, "the deleted client's id is free again")

	assert.Equal(t, normClient(*blog), normClient(*mustGetClient(t, b, globex, blog.ID)), "the other tenant's client")
	assert.Equal(t, []string{"blog"}, clientNames(allClients(t, b, globex)))
}
