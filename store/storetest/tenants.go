package storetest

import (
	"fmt"
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
		{"ListPages", testTenantListPages},
		{"ListAfterMissingID", testTenantListAfterMissingID},
		{"ListAfterDeletedID", testTenantListAfterDeletedID},
		{"ListWalkUnderChanges", testTenantListWalkUnderChanges},
		{"ListLimitInvalid", testTenantListLimitInvalid},
		{"ListMaxTenantPage", testTenantListMaxTenantPage},
		{"Count", testTenantCount},
		{"DeleteGet", testTenantDeleteGet},
		{"DeleteNotFound", testTenantDeleteNotFound},
		{"DeleteRemovesUsersAndGroups", testTenantDeleteRemovesUsersAndGroups},
		{"DeleteRemovesClients", testTenantDeleteRemovesClients},
		{"DeleteRemovesSigningKeys", testTenantDeleteRemovesSigningKeys},
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
	ts, err := b.Tenants.List(ctx(), "", store.MaxTenantPage)
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
	ts, err := b.Tenants.List(ctx(), "", store.MaxTenantPage)
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

// List of an empty store is an empty page, not an error, whatever after and limit are.
func testTenantListEmpty(t *testing.T, b store.Backend) {
	for _, after := range []string{"", "acme", "~"} {
		for _, limit := range []int{1, 100, store.MaxTenantPage} {
			ts, err := b.Tenants.List(ctx(), after, limit)
			require.NoError(t, err, "List(%q, %d)", after, limit)
			assert.Empty(t, ts, "List(%q, %d)", after, limit)
		}
	}
}

// tenantOrder are tenant ids in an order of creation that is not theirs, and sortedTenants the
// same ids ordered by id (Go string order: bytes).
var (
	tenantOrder   = []string{"m", "ab", "z", "a_b", "b", "a-c", "a0", "b-1", "9"}
	sortedTenants = []string{"9", "a-c", "a0", "a_b", "ab", "b", "b-1", "m", "z"}
)

// tenantIDs are the ids of ts, in their order.
func tenantIDs(ts []store.Tenant) []string {
	ids := []string{}
	for _, tn := range ts {
		ids = append(ids, tn.ID)
	}
	return ids
}

// listIDs is List(after, limit) as ids.
func listIDs(t *testing.T, b store.Backend, after string, limit int) []string {
	t.Helper()
	ts, err := b.Tenants.List(ctx(), after, limit)
	require.NoError(t, err, "Tenants.List(%q, %d)", after, limit)
	require.LessOrEqual(t, len(ts), limit, "Tenants.List(%q, %d) returned more than limit", after, limit)
	return tenantIDs(ts)
}

// List returns the tenants ordered by id (Go string order: bytes), with their attributes;
// after "" starts at the first.
func testTenantListOrderedByID(t *testing.T, b store.Backend) {
	for _, id := range tenantOrder {
		require.NoError(t, b.Tenants.Create(ctx(), store.Tenant{ID: id, DisplayName: "T " + id}))
	}
	ts, err := b.Tenants.List(ctx(), "", store.MaxTenantPage)
	require.NoError(t, err)
	for _, tn := range ts {
		assert.Equal(t, "T "+tn.ID, tn.DisplayName)
	}
	assert.Equal(t, sortedTenants, tenantIDs(ts))
}

// List returns at most limit tenants, those whose id orders after after (not after itself); a
// page shorter than limit is the last, and passing each page's last id as after walks every
// tenant once.
func testTenantListPages(t *testing.T, b store.Backend) {
	for _, id := range tenantOrder {
		mustTenant(t, b, id)
	}
	for _, limit := range []int{1, 2, 4, len(sortedTenants) - 1, len(sortedTenants), len(sortedTenants) + 1} {
		var walked []string
		after, pages := "", 0
		for {
			page := listIDs(t, b, after, limit)
			pages++
			walked = append(walked, page...)
			if len(page) < limit {
				break
			}
			require.Less(t, pages, 20, "the walk of limit %d does not end", limit)
			after = page[len(page)-1]
		}
		assert.Equal(t, sortedTenants, walked, "walk by pages of %d", limit)
		assert.Equal(t, len(sortedTenants)/limit+1, pages, "pages of %d, the last one short", limit)
	}
	assert.Equal(t, []string{"a_b", "ab"}, listIDs(t, b, "a0", 2), "after an existing id starts after it")
	assert.Empty(t, listIDs(t, b, "z", 5), "after the last id")
}

// List: after need not name a tenant; the page starts with the first id that orders after it.
func testTenantListAfterMissingID(t *testing.T, b store.Backend) {
	for _, id := range tenantOrder {
		mustTenant(t, b, id)
	}
	for _, c := range []struct {
		after string
		want  []string
	}{
		{"0", []string{"9", "a-c", "a0"}},
		{"a", []string{"a-c", "a0", "a_b"}},
		{"a1", []string{"a_b", "ab", "b"}},
		{"ACME", []string{"a-c", "a0", "a_b"}}, // not a valid id: upper case orders before lower
		{"b-0", []string{"b-1", "m", "z"}},
		{"y", []string{"z"}},
		{"za", []string{}},
		{"~", []string{}},
	} {
		assert.Equal(t, c.want, listIDs(t, b, c.after, 3), "List(%q, 3)", c.after)
	}
}

// List: a deleted tenant's id works as after, and the deleted tenant is listed no more.
func testTenantListAfterDeletedID(t *testing.T, b store.Backend) {
	for _, id := range tenantOrder {
		mustTenant(t, b, id)
	}
	first := listIDs(t, b, "", 3)
	require.Equal(t, []string{"9", "a-c", "a0"}, first)
	require.NoError(t, b.Tenants.Delete(ctx(), "a0"))
	assert.Equal(t, []string{"a_b", "ab", "b"}, listIDs(t, b, "a0", 3), "the page after the deleted cursor")
	require.NoError(t, b.Tenants.Delete(ctx(), "ab"))
	assert.Equal(t, []string{"9", "a-c", "a_b", "b", "b-1", "m", "z"}, listIDs(t, b, "", store.MaxTenantPage))
}

// List: a walk neither skips nor repeats a tenant that existed throughout it, whatever was
// created or deleted between its pages.
func testTenantListWalkUnderChanges(t *testing.T, b store.Backend) {
	var stay []string
	for i := range 30 {
		id := fmt.Sprintf("t%02d", 2*i)
		mustTenant(t, b, id)
		stay = append(stay, id)
	}
	var gone []string
	for i := range 10 {
		id := fmt.Sprintf("t%02d-gone", 6*i)
		mustTenant(t, b, id)
		gone = append(gone, id)
	}
	seen := map[string]int{}
	after, step := "", 0
	for {
		page := listIDs(t, b, after, 4)
		for _, id := range page {
			seen[id]++
		}
		if len(page) < 4 {
			break
		}
		after = page[len(page)-1]
		// Between pages: a tenant is created before and after the cursor, and one that was
		// there at the start goes.
		mustTenant(t, b, fmt.Sprintf("t%02d-new", 2*step+1))
		mustTenant(t, b, fmt.Sprintf("u%02d", step))
		if step < len(gone) {
			require.NoError(t, b.Tenants.Delete(ctx(), gone[step]))
		}
		step++
		require.Less(t, step, 100, "the walk does not end")
	}
	for _, id := range stay {
		assert.Equal(t, 1, seen[id], "tenant %s, there throughout the walk, seen %d times", id, seen[id])
	}
	for id, n := range seen {
		assert.Equal(t, 1, n, "tenant %s seen %d times", id, n)
	}
}

// List: ErrInvalid if limit is below 1 or above MaxTenantPage.
func testTenantListLimitInvalid(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, limit := range []int{0, -1, -100, store.MaxTenantPage + 1, 1 << 30} {
		ts, err := b.Tenants.List(ctx(), "", limit)
		assert.ErrorIs(t, err, store.ErrInvalid, "List(\"\", %d)", limit)
		assert.Empty(t, ts, "List(\"\", %d)", limit)
	}
	assert.Equal(t, []string{acme}, listIDs(t, b, "", 1), "limit 1")
	assert.Equal(t, []string{acme}, listIDs(t, b, "", store.MaxTenantPage), "limit MaxTenantPage")
}

// List returns MaxTenantPage tenants when more follow, and the rest on the next page.
func testTenantListMaxTenantPage(t *testing.T, b store.Backend) {
	n := store.MaxTenantPage + 2
	for i := range n {
		require.NoError(t, b.Tenants.Create(ctx(), store.Tenant{ID: fmt.Sprintf("t%05d", n-1-i)}))
	}
	page := listIDs(t, b, "", store.MaxTenantPage)
	require.Len(t, page, store.MaxTenantPage)
	assert.Equal(t, "t00000", page[0])
	assert.Equal(t, fmt.Sprintf("t%05d", store.MaxTenantPage-1), page[len(page)-1])
	assert.Equal(t, []string{fmt.Sprintf("t%05d", n-2), fmt.Sprintf("t%05d", n-1)}, listIDs(t, b, page[len(page)-1], store.MaxTenantPage))
	count, err := b.Tenants.Count(ctx())
	require.NoError(t, err)
	assert.Equal(t, n, count)
}

// Count returns the number of tenants: 0 on an empty store; creates add one, deletes take one
// away, and failed creates and deletes change nothing.
func testTenantCount(t *testing.T, b store.Backend) {
	count := func() int {
		t.Helper()
		n, err := b.Tenants.Count(ctx())
		require.NoError(t, err)
		return n
	}
	assert.Equal(t, 0, count(), "an empty store")
	for _, id := range tenantOrder {
		mustTenant(t, b, id)
	}
	assert.Equal(t, len(tenantOrder), count())
	require.ErrorIs(t, b.Tenants.Create(ctx(), store.Tenant{ID: "m"}), store.ErrConflict)
	require.ErrorIs(t, b.Tenants.Create(ctx(), store.Tenant{ID: "Bad"}), store.ErrInvalid)
	assert.Equal(t, len(tenantOrder), count(), "after failed creates")
	require.NoError(t, b.Tenants.Delete(ctx(), "m"))
	require.ErrorIs(t, b.Tenants.Delete(ctx(), "m"), store.ErrNotFound)
	assert.Equal(t, len(tenantOrder)-1, count(), "after a delete")
	mustUser(t, b, "z", "ann")
	assert.Equal(t, len(tenantOrder)-1, count(), "users are not tenants")
}

// Delete removes the tenant: Get reports ErrNotFound, and so does a second Delete.
func testTenantDeleteGet(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	require.NoError(t, b.Tenants.Delete(ctx(), acme))
	_, err := b.Tenants.Get(ctx(), acme)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorIs(t, b.Tenants.Delete(ctx(), acme), store.ErrNotFound)
	ts, err := b.Tenants.List(ctx(), "", store.MaxTenantPage)
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

// Delete removes the tenant's signing keys, and no other tenant's or shared key.
func testTenantDeleteRemovesSigningKeys(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	for i, owner := range []string{acme, acme, globex, ""} {
		k := newSigningKey(fmt.Sprintf("k%d", i), 1+i)
		k.Tenant = owner
		mustSigningKey(t, b, k)
	}
	require.NoError(t, b.Tenants.Delete(ctx(), acme))
	assert.Empty(t, tenantSigningKeys(t, b, acme))
	assert.Len(t, tenantSigningKeys(t, b, globex), 1)
	assert.Len(t, tenantSigningKeys(t, b, ""), 1)
	assert.Equal(t, []string{globex}, signingKeyTenants(t, b, "", 10))
}
