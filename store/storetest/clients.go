package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func clientTests() []test {
	return []test{
		{"CreateGet", testClientCreateGet},
		{"CreateGeneratesID", testClientCreateGeneratesID},
		{"CreateUnknownTenant", testClientCreateUnknownTenant},
		{"CreateNoRedirectURI", testClientCreateNoRedirectURI},
		{"CreateIDConflict", testClientCreateIDConflict},
		{"OtherTenantNotFound", testClientOtherTenantNotFound},
		{"GetNotFound", testClientGetNotFound},
		{"ReturnsCopies", testClientReturnsCopies},
		{"ListCreationOrder", testClientListCreationOrder},
		{"ListUnknownTenant", testClientListUnknownTenant},
		{"UpdateStoresWhatFnLeaves", testClientUpdateStores},
		{"UpdateFnErrorStoresNothing", testClientUpdateFnError},
		{"UpdateFnGetsCopy", testClientUpdateFnGetsCopy},
		{"UpdateNotFound", testClientUpdateNotFound},
		{"UpdateChangedID", testClientUpdateChangedID},
		{"UpdateChangedTenant", testClientUpdateChangedTenant},
		{"UpdateRemovedRedirectURIs", testClientUpdateRemovedRedirectURIs},
		{"DeleteGet", testClientDeleteGet},
		{"DeleteNotFound", testClientDeleteNotFound},
		{"DeleteKeepsCodes", testClientDeleteKeepsCodes},
		{"RequirePARKept", testClientRequirePAR},
		{"IDTokenAlgAndAccessTokenKept", testClientIDTokenAlgAccessToken},
	}
}

// newClient returns a client of tenant with one redirect URI per path given (or one when none
// is).
func newClient(tenant, id, name string, paths ...string) store.Client {
	if len(paths) == 0 {
		paths = []string{"/callback"}
	}
	var uris []string
	for _, p := range paths {
		uris = append(uris, "https://"+name+".example.com"+p)
	}
	return store.Client{
		ID:            id,
		Tenant:        tenant,
		Name:          name,
		Description:   "the " + name + " application",
		RedirectURIs:  uris,
		SecretHash:    secretHash("secret_" + name),
		Created:       day(5, 1, 8*time.Hour),
		SecretRotated: day(5, 1, 8*time.Hour),
	}
}

// normClient compares clients whatever a backend's choice of time zone. Its result shares no
// memory with c, so a later change to c does not change it.
func normClient(c store.Client) store.Client {
	c.RedirectURIs = nilIfEmpty(slices.Clone(c.RedirectURIs))
	c.Created = normTime(c.Created)
	c.SecretRotated = normTime(c.SecretRotated)
	return c
}

func mustClient(t *testing.T, b store.Backend, c store.Client) *store.Client {
	t.Helper()
	got, err := b.Clients.Create(ctx(), c)
	require.NoError(t, err, "Clients.Create(%q, %q)", c.Tenant, c.ID)
	require.NotNil(t, got, "Clients.Create(%q, %q) returned nil", c.Tenant, c.ID)
	return got
}

func mustGetClient(t *testing.T, b store.Backend, tenant, id string) *store.Client {
	t.Helper()
	c, err := b.Clients.Get(ctx(), tenant, id)
	require.NoError(t, err, "Clients.Get(%q, %q)", tenant, id)
	require.NotNil(t, c)
	return c
}

// allClients lists the tenant's clients.
func allClients(t *testing.T, b store.Backend, tenant string) []store.Client {
	t.Helper()
	cs, err := b.Clients.List(ctx(), tenant)
	require.NoError(t, err, "Clients.List(%q)", tenant)
	return cs
}

func clientNames(cs []store.Client) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// Create stores c and returns it as stored; Get returns it, every field kept.
func testClientCreateGet(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newClient(acme, "", "shop")
	in.RedirectURIs = []string{"https://shop.example.com/callback", "https://shop.example.com/cb?x=1", "http://127.0.0.1:8080/Callback"}
	in.Name = "Shop – Zürich"
	in.Created = time.Date(2024, 5, 1, 10, 0, 0, 0, time.FixedZone("UTC+2", 2*3600))
	in.SecretRotated = day(6, 1, 0)
	created := mustClient(t, b, in)
	require.NotEmpty(t, created.ID)
	in.ID = created.ID
	assert.Equal(t, normClient(in), normClient(*created), "Create's result")
	assert.Equal(t, normClient(in), normClient(*mustGetClient(t, b, acme, created.ID)), "Get after Create")
}

// Create: an empty c.ID gets a new id (NewID("client")); a caller's id is kept.
func testClientCreateGeneratesID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	seen := map[string]bool{}
	for _, name := range []string{"a", "b", "c"} {
		c := mustClient(t, b, newClient(acme, "", name))
		assert.True(t, strings.HasPrefix(c.ID, "client_"), "generated id %q has no prefix client_", c.ID)
		assert.Len(t, c.ID, len("client_")+26, "generated id %q", c.ID)
		assert.False(t, seen[c.ID], "generated id %q twice", c.ID)
		seen[c.ID] = true
		assert.Equal(t, name, mustGetClient(t, b, acme, c.ID).Name)
	}
	c := mustClient(t, b, newClient(acme, "client_fromcaller", "mine"))
	assert.Equal(t, "client_fromcaller", c.ID)
	assert.Equal(t, "mine", mustGetClient(t, b, acme, "client_fromcaller").Name)
}

// Create: ErrNotFound if c.Tenant does not exist (never created, deleted, or empty).
func testClientCreateUnknownTenant(t *testing.T, b store.Backend) {
	_, err := b.Clients.Create(ctx(), newClient(acme, "", "shop"))
	require.ErrorIs(t, err, store.ErrNotFound, "unknown tenant")
	mustTenant(t, b, globex)
	_, err = b.Clients.Create(ctx(), newClient(acme, "", "shop"))
	require.ErrorIs(t, err, store.ErrNotFound, "unknown tenant")
	_, err = b.Clients.Create(ctx(), newClient("", "", "shop"))
	require.ErrorIs(t, err, store.ErrNotFound, "empty tenant")
	mustTenant(t, b, acme)
	require.NoError(t, b.Tenants.Delete(ctx(), acme))
	_, err = b.Clients.Create(ctx(), newClient(acme, "", "shop"))
	require.ErrorIs(t, err, store.ErrNotFound, "deleted tenant")
	assert.Empty(t, allClients(t, b, globex))
}

// Create: ErrInvalid if c has no redirect URI; nothing is stored.
func testClientCreateNoRedirectURI(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, uris := range [][]string{nil, {}} {
		c := newClient(acme, "client_1", "shop")
		c.RedirectURIs = uris
		_, err := b.Clients.Create(ctx(), c)
		require.ErrorIs(t, err, store.ErrInvalid, "RedirectURIs %#v", uris)
	}
	assert.Empty(t, allClients(t, b, acme))
	_, err := b.Clients.Get(ctx(), acme, "client_1")
	require.ErrorIs(t, err, store.ErrNotFound)
}

// Create: ErrConflict if the id is taken; the first client is kept.
func testClientCreateIDConflict(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	first := newClient(acme, "client_1", "first")
	mustClient(t, b, first)
	_, err := b.Clients.Create(ctx(), newClient(acme, "client_1", "second"))
	require.ErrorIs(t, err, store.ErrConflict)
	assert.Equal(t, normClient(first), normClient(*mustGetClient(t, b, acme, "client_1")))
	assert.Equal(t, []string{"first"}, clientNames(allClients(t, b, acme)))
}

// A client belongs to one tenant; a client id of another tenant is not found: Get, Update,
// Delete, and the other tenant's List.
func testClientOtherTenantNotFound(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	c := mustClient(t, b, newClient(acme, "", "shop"))
	assert.Equal(t, acme, c.Tenant)
	_, err := b.Clients.Get(ctx(), globex, c.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "Get")
	_, err = b.Clients.Update(ctx(), globex, c.ID, func(c *store.Client) error {
		c.Name = "changed"
		return nil
	})
	require.ErrorIs(t, err, store.ErrNotFound, "Update")
	require.ErrorIs(t, b.Clients.Delete(ctx(), globex, c.ID), store.ErrNotFound, "Delete")
	assert.Empty(t, allClients(t, b, globex), "the other tenant's List")
	got := mustGetClient(t, b, acme, c.ID)
	assert.Equal(t, "shop", got.Name)
	assert.Equal(t, acme, got.Tenant)
}

// Get: ErrNotFound if the tenant or the client does not exist.
func testClientGetNotFound(t *testing.T, b store.Backend) {
	_, err := b.Clients.Get(ctx(), acme, "client_missing")
	require.ErrorIs(t, err, store.ErrNotFound, "unknown tenant")
	mustTenant(t, b, acme)
	c := mustClient(t, b, newClient(acme, "", "shop"))
	_, err = b.Clients.Get(ctx(), acme, "client_missing")
	require.ErrorIs(t, err, store.ErrNotFound, "unknown client")
	_, err = b.Clients.Get(ctx(), acme, strings.ToUpper(c.ID))
	require.ErrorIs(t, err, store.ErrNotFound, "ids are case-sensitive")
	_, err = b.Clients.Get(ctx(), acme, "")
	require.ErrorIs(t, err, store.ErrNotFound, "empty id")
	ann := mustUser(t, b, acme, "ann")
	_, err = b.Clients.Get(ctx(), acme, ann.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "a user's id")
}

// The store keeps its own copy of a client: changing the redirect URIs of the client passed to
// Create, or of one that Create, Get, List or Update returned, does not change the store.
func testClientReturnsCopies(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	in := newClient(acme, "client_1", "shop", "/a", "/b")
	want := normClient(in)
	created := mustClient(t, b, in)
	mutate := func(c *store.Client) {
		require.Len(t, c.RedirectURIs, 2)
		c.RedirectURIs[0] = "https://evil.example/cb"
		c.RedirectURIs = append(c.RedirectURIs[:1], "https://evil.example/appended")
		c.SecretHash[0] ^= 0xff
		c.Name = "changed"
	}
	mutate(&in)
	assert.Equal(t, want, normClient(*mustGetClient(t, b, acme, want.ID)), "after changing Create's argument")
	mutate(created)
	assert.Equal(t, want, normClient(*mustGetClient(t, b, acme, want.ID)), "after changing Create's result")
	mutate(mustGetClient(t, b, acme, want.ID))
	assert.Equal(t, want, normClient(*mustGetClient(t, b, acme, want.ID)), "after changing Get's result")
	list := allClients(t, b, acme)
	require.Len(t, list, 1)
	mutate(&list[0])
	assert.Equal(t, want, normClient(*mustGetClient(t, b, acme, want.ID)), "after changing List's result")
	updated, err := b.Clients.Update(ctx(), acme, want.ID, func(*store.Client) error { return nil })
	require.NoError(t, err)
	mutate(updated)
	assert.Equal(t, want, normClient(*mustGetClient(t, b, acme, want.ID)), "after changing Update's result")
}

// List returns the tenant's clients in creation order, not in id or name order.
func testClientListCreationOrder(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	assert.Empty(t, allClients(t, b, acme), "a tenant without clients")
	for _, c := range []store.Client{
		newClient(acme, "client_c", "b"), newClient(acme, "client_a", "c"), newClient(acme, "client_b", "a"),
	} {
		mustClient(t, b, c)
	}
	mustClient(t, b, newClient(globex, "", "other tenant"))
	mustClient(t, b, newClient(acme, "", "0"))
	assert.Equal(t, []string{"b", "c", "a", "0"}, clientNames(allClients(t, b, acme)))
	_, err := b.Clients.Update(ctx(), acme, "client_c", func(c *store.Client) error { c.Name = "z"; return nil })
	require.NoError(t, err)
	require.NoError(t, b.Clients.Delete(ctx(), acme, "client_a"))
	mustClient(t, b, newClient(acme, "", "last"))
	list := allClients(t, b, acme)
	assert.Equal(t, []string{"z", "a", "0", "last"}, clientNames(list), "after an update, a delete and a create")
	require.Len(t, list, 4)
	assert.Equal(t, normClient(newClient(acme, "client_b", "a")), normClient(list[1]))
	assert.Equal(t, []string{"other tenant"}, clientNames(allClients(t, b, globex)))
}

// List: ErrNotFound if the tenant does not exist.
func testClientListUnknownTenant(t *testing.T, b store.Backend) {
	_, err := b.Clients.List(ctx(), acme)
	require.ErrorIs(t, err, store.ErrNotFound)
	mustTenant(t, b, globex)
	mustClient(t, b, newClient(globex, "", "shop"))
	_, err = b.Clients.List(ctx(), acme)
	require.ErrorIs(t, err, store.ErrNotFound)
}

// Update reads the client, calls fn with it, stores what fn leaves (a rotated secret, new
// redirect URIs) and returns the client as stored.
func testClientUpdateStores(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustClient(t, b, newClient(acme, "client_other", "other"))
	c := mustClient(t, b, newClient(acme, "", "shop", "/a", "/b"))
	var seen store.Client
	rotated := day(7, 1, 12*time.Hour)
	got, err := b.Clients.Update(ctx(), acme, c.ID, func(c *store.Client) error {
		seen = *c
		seen.RedirectURIs = append([]string(nil), c.RedirectURIs...)
		c.SecretHash = secretHash("secret_new")
		c.SecretRotated = rotated
		c.RedirectURIs = []string{"https://shop.example.com/b", "https://shop.example.com/c"}
		c.Name = "Shop 2"
		c.Description = ""
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, normClient(*c), normClient(seen), "fn is called with the stored client")
	want := *c
	want.SecretHash = secretHash("secret_new")
	want.SecretRotated = rotated
	want.RedirectURIs = []string{"https://shop.example.com/b", "https://shop.example.com/c"}
	want.Name = "Shop 2"
	want.Description = ""
	require.NotNil(t, got)
	assert.Equal(t, normClient(want), normClient(*got), "Update's result")
	assert.Equal(t, normClient(want), normClient(*mustGetClient(t, b, acme, c.ID)), "Get after Update")
	assert.Equal(t, "other", mustGetClient(t, b, acme, "client_other").Name, "the other client")
}

// Update: if fn returns an error nothing is stored and Update returns it as it is.
func testClientUpdateFnError(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := mustClient(t, b, newClient(acme, "", "shop"))
	want := normClient(*c)
	errStop := errors.New("stop")
	_, err := b.Clients.Update(ctx(), acme, c.ID, func(c *store.Client) error {
		c.SecretHash = secretHash("secret_new")
		c.RedirectURIs = append(c.RedirectURIs, "https://evil.example/cb")
		return errStop
	})
	require.True(t, err == errStop, "Update returned %v (%T), want fn's error itself", err, err)
	assert.Equal(t, want, normClient(*mustGetClient(t, b, acme, c.ID)))
}

// Update calls fn with a copy: changing the redirect URIs in place and then failing leaves the
// stored client unchanged; fn's client is not the stored value after a successful Update.
func testClientUpdateFnGetsCopy(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := mustClient(t, b, newClient(acme, "", "shop"))
	want := normClient(*c)
	errStop := errors.New("stop")
	_, err := b.Clients.Update(ctx(), acme, c.ID, func(c *store.Client) error {
		c.RedirectURIs[0] = "https://evil.example/cb"
		return errStop
	})
	require.True(t, err == errStop, "Update returned %v, want fn's error", err)
	assert.Equal(t, want, normClient(*mustGetClient(t, b, acme, c.ID)), "after a failed fn")

	var kept *store.Client
	_, err = b.Clients.Update(ctx(), acme, c.ID, func(c *store.Client) error {
		kept = c
		c.Description = "x"
		return nil
	})
	require.NoError(t, err)
	want.Description = "x"
	kept.RedirectURIs[0] = "https://evil.example/cb"
	kept.Name = "changed"
	assert.Equal(t, want, normClient(*mustGetClient(t, b, acme, c.ID)), "after changing fn's client")
}

// Update: ErrNotFound if the client (or its tenant) does not exist; fn is not called.
func testClientUpdateNotFound(t *testing.T, b store.Backend) {
	called := false
	fn := func(c *store.Client) error { called = true; c.Name = "x"; return nil }
	_, err := b.Clients.Update(ctx(), acme, "client_missing", fn)
	require.ErrorIs(t, err, store.ErrNotFound, "unknown tenant")
	mustTenant(t, b, acme)
	_, err = b.Clients.Update(ctx(), acme, "client_missing", fn)
	require.ErrorIs(t, err, store.ErrNotFound, "unknown client")
	c := mustClient(t, b, newClient(acme, "", "shop"))
	require.NoError(t, b.Clients.Delete(ctx(), acme, c.ID))
	_, err = b.Clients.Update(ctx(), acme, c.ID, fn)
	require.ErrorIs(t, err, store.ErrNotFound, "deleted client")
	assert.False(t, called, "fn was called")
	assert.Empty(t, allClients(t, b, acme))
}

// Update: ErrInvalid if fn changed the id; nothing is stored.
func testClientUpdateChangedID(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := mustClient(t, b, newClient(acme, "", "shop"))
	for _, id := range []string{"client_other", "", strings.ToUpper(c.ID)} {
		_, err := b.Clients.Update(ctx(), acme, c.ID, func(c *store.Client) error {
			c.ID = id
			c.Name = "changed"
			return nil
		})
		require.ErrorIs(t, err, store.ErrInvalid, "id changed to %q", id)
	}
	assert.Equal(t, normClient(*c), normClient(*mustGetClient(t, b, acme, c.ID)))
	_, err := b.Clients.Get(ctx(), acme, "client_other")
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, []string{"shop"}, clientNames(allClients(t, b, acme)))
}

// Update: ErrInvalid if fn changed the tenant, to one that exists or not; nothing is stored.
func testClientUpdateChangedTenant(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	c := mustClient(t, b, newClient(acme, "", "shop"))
	for _, tenant := range []string{globex, "", "initech", "ACME"} {
		_, err := b.Clients.Update(ctx(), acme, c.ID, func(c *store.Client) error {
			c.Tenant = tenant
			c.Name = "changed"
			return nil
		})
		require.ErrorIs(t, err, store.ErrInvalid, "tenant changed to %q", tenant)
	}
	assert.Equal(t, normClient(*c), normClient(*mustGetClient(t, b, acme, c.ID)))
	assert.Empty(t, allClients(t, b, globex))
}

// Update: ErrInvalid if fn removed every redirect URI; nothing is stored.
func testClientUpdateRemovedRedirectURIs(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := mustClient(t, b, newClient(acme, "", "shop", "/a", "/b"))
	for _, uris := range [][]string{nil, {}} {
		_, err := b.Clients.Update(ctx(), acme, c.ID, func(c *store.Client) error {
			c.RedirectURIs = uris
			c.Name = "changed"
			return nil
		})
		require.ErrorIs(t, err, store.ErrInvalid, "RedirectURIs %#v", uris)
	}
	assert.Equal(t, normClient(*c), normClient(*mustGetClient(t, b, acme, c.ID)))
	// Removing some is fine.
	got, err := b.Clients.Update(ctx(), acme, c.ID, func(c *store.Client) error {
		c.RedirectURIs = c.RedirectURIs[1:]
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"https://shop.example.com/b"}, got.RedirectURIs)
}

// Delete removes the client: Get reports ErrNotFound and List no longer has it; the tenant's
// other clients stay.
func testClientDeleteGet(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	shop := mustClient(t, b, newClient(acme, "", "shop"))
	blog := mustClient(t, b, newClient(acme, "", "blog"))
	require.NoError(t, b.Clients.Delete(ctx(), acme, shop.ID))
	_, err := b.Clients.Get(ctx(), acme, shop.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, []string{"blog"}, clientNames(allClients(t, b, acme)))
	assert.Equal(t, normClient(*blog), normClient(*mustGetClient(t, b, acme, blog.ID)))
	again := mustClient(t, b, newClient(acme, shop.ID, "shop again"))
	assert.Equal(t, shop.ID, again.ID, "a deleted client's id is free again")
}

// Delete: ErrNotFound if it does not exist, so a repeated Delete reports ErrNotFound.
func testClientDeleteNotFound(t *testing.T, b store.Backend) {
	require.ErrorIs(t, b.Clients.Delete(ctx(), acme, "client_missing"), store.ErrNotFound, "unknown tenant")
	mustTenant(t, b, acme)
	require.ErrorIs(t, b.Clients.Delete(ctx(), acme, "client_missing"), store.ErrNotFound, "unknown client")
	c := mustClient(t, b, newClient(acme, "", "shop"))
	require.NoError(t, b.Clients.Delete(ctx(), acme, c.ID))
	require.ErrorIs(t, b.Clients.Delete(ctx(), acme, c.ID), store.ErrNotFound, "repeated Delete")
}

// Delete: codes already issued to the client stay until they expire.
func testClientDeleteKeepsCodes(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := mustClient(t, b, newClient(acme, "", "shop"))
	code := newCode(acme, c.ID, "code_1")
	require.NoError(t, b.Codes.Create(ctx(), code))
	require.NoError(t, b.Clients.Delete(ctx(), acme, c.ID))
	got, err := b.Codes.Consume(ctx(), code.Hash)
	require.NoError(t, err, "Consume of a code of a deleted client")
	assert.Equal(t, normCode(code), normCode(*got))
}

// RequirePAR is kept by Create, Get, List and Update like every other field.
func testClientRequirePAR(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	strict := newClient(acme, "client_strict", "strict")
	strict.RequirePAR = true
	mustClient(t, b, strict)
	mustClient(t, b, newClient(acme, "client_plain", "plain"))
	assert.True(t, mustGetClient(t, b, acme, "client_strict").RequirePAR, "Create and Get")
	assert.False(t, mustGetClient(t, b, acme, "client_plain").RequirePAR)
	list, err := b.Clients.List(ctx(), acme)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, []bool{true, false}, []bool{list[0].RequirePAR, list[1].RequirePAR}, "List")

	got, err := b.Clients.Update(ctx(), acme, "client_plain", func(c *store.Client) error {
		c.RequirePAR = true
		return nil
	})
	require.NoError(t, err)
	assert.True(t, got.RequirePAR, "Update stores what fn leaves")
	assert.True(t, mustGetClient(t, b, acme, "client_plain").RequirePAR)
	got, err = b.Clients.Update(ctx(), acme, "client_strict", func(c *store.Client) error {
		c.Name = "renamed"
		return nil
	})
	require.NoError(t, err)
	assert.True(t, got.RequirePAR, "an Update that does not touch it keeps it")
}

// IDTokenAlg and AccessToken are kept by Create, Get, List and Update like every other field.
func testClientIDTokenAlgAccessToken(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	rs := newClient(acme, "client_rs", "rs")
	rs.IDTokenAlg, rs.AccessToken = "RS256", true
	mustClient(t, b, rs)
	mustClient(t, b, newClient(acme, "client_plain", "plain"))
	got := mustGetClient(t, b, acme, "client_rs")
	assert.Equal(t, "RS256", got.IDTokenAlg, "Create and Get")
	assert.True(t, got.AccessToken, "Create and Get")
	plain := mustGetClient(t, b, acme, "client_plain")
	assert.Empty(t, plain.IDTokenAlg)
	assert.False(t, plain.AccessToken)
	list, err := b.Clients.List(ctx(), acme)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, []string{"RS256", ""}, []string{list[0].IDTokenAlg, list[1].IDTokenAlg}, "List")
	assert.Equal(t, []bool{true, false}, []bool{list[0].AccessToken, list[1].AccessToken}, "List")

	upd, err := b.Clients.Update(ctx(), acme, "client_plain", func(c *store.Client) error {
		c.IDTokenAlg, c.AccessToken = "ES256", true
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, "ES256", upd.IDTokenAlg, "Update stores what fn leaves")
	assert.True(t, upd.AccessToken)
	got = mustGetClient(t, b, acme, "client_plain")
	assert.Equal(t, "ES256", got.IDTokenAlg)
	assert.True(t, got.AccessToken)
	upd, err = b.Clients.Update(ctx(), acme, "client_rs", func(c *store.Client) error {
		c.Name = "renamed"
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, "RS256", upd.IDTokenAlg, "an Update that does not touch them keeps them")
	assert.True(t, upd.AccessToken)
}
