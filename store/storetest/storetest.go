package storetest

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// test is one subtest: run gets a fresh, empty backend.
type test struct {
	name string
	run  func(t *testing.T, b store.Backend)
}

// testNeeds names, by "Suite/test", the stores a test uses beyond its suite's (store.Backend's
// field names): it is skipped, naming them, on a backend without them.
func testNeeds() map[string][]string {
	return map[string][]string{
		"Tenants/Count":                               {"Users"},
		"Tenants/DeleteKeepsOtherTenants":             {"Users", "Groups"},
		"Tenants/DeleteRemovesUsersAndGroups":         {"Users", "Groups"},
		"Tenants/DeleteRemovesClients":                {"Clients"},
		"Tenants/DeleteRemovesSigningKeys":            {"SigningKeys"},
		"TenantLook/UpdateKeepsUsers":                 {"Users"},
		"Users/CreateIgnoresGroups":                   {"Groups"},
		"Users/DeleteRemovesMemberships":              {"Groups"},
		"Users/GetGroupsFromMemberships":              {"Groups"},
		"Users/GetReturnsCopy":                        {"Groups"},
		"Users/UpdateIgnoresGroups":                   {"Groups"},
		"GroupPatch/Events":                           {"Events"},
		"Clients/DeleteKeepsCodes":                    {"Codes"},
		"Clients/GetNotFound":                         {"Users"},
		"Events/APIKeysInEachTenant":                  {"APIKeys"},
		"Events/ClientLifecycle":                      {"Clients"},
		"Events/UnlockIsAnEvent":                      {"Pictures"},
		"Events/PasskeyRemovedIsAnEvent":              {"Passkeys"},
		"Webhooks/CreateStartsAtTheEndOfTheLog":       {"Users"},
		"Text/KeysNotTextAreNotFound":                 {"Clients", "Interactions"},
		"Concurrency/CreateSameAPIKeyHash":            {"APIKeys"},
		"Concurrency/TouchKeepsLatest":                {"APIKeys"},
		"Concurrency/ClientUpdatesAllTakeEffect":      {"Clients"},
		"Concurrency/CreateSameClientID":              {"Clients"},
		"Concurrency/CodeConsumedOnce20":              {"Codes"},
		"Concurrency/CodeConsumedOnce200":             {"Codes"},
		"Concurrency/CodesConsumedOnceEach":           {"Codes"},
		"Concurrency/CreateSameCodeHash":              {"Codes"},
		"Concurrency/InteractionTakenOnce":            {"Interactions"},
		"Concurrency/InteractionUpdatesAllTakeEffect": {"Interactions"},
		"Concurrency/CreateSameInteractionID":         {"Interactions"},
		"Concurrency/PictureFailuresCountedOnce":      {"Pictures"},
		"Concurrency/PictureCreateOnce":               {"Pictures"},
		"Concurrency/PictureFamiliarNetworksBounded":  {"Pictures"},
		"Concurrency/PushedRequestConsumedOnce":       {"Pushed"},
		"Concurrency/PasskeyCreateOnce":               {"Passkeys"},
		"Concurrency/PasskeysPerUserBounded":          {"Passkeys"},
		"Concurrency/PasskeyUseOnce":                  {"Passkeys"},
	}
}

// Suite is one suite of the conformance suite: the subtests named Name/…, which check the
// contract of the store Stores[0] and need the others too.
type Suite struct {
	Name string
	// Stores are the store.Backend fields the suite uses, the store it checks first.
	Stores []string
}

// suite is a Suite with its tests.
type suite struct {
	Suite
	tests []test
}

// suites returns the conformance suite, in the order Run runs it.
func suites() []suite {
	return []suite{
		{Suite{"Tenants", []string{"Tenants"}}, tenantTests()},
		{Suite{"TenantLook", []string{"Tenants"}}, tenantLookTests()},
		{Suite{"Users", []string{"Users", "Tenants"}}, userTests()},
		{Suite{"Groups", []string{"Groups", "Tenants", "Users"}}, groupTests()},
		{Suite{"GroupPatch", []string{"Groups", "Tenants", "Users"}}, groupPatchTests()},
		{Suite{"Meta", []string{"Users", "Tenants", "Groups"}}, metaTests()},
		{Suite{"Versions", []string{"Users", "Tenants", "Groups"}}, versionTests()},
		{Suite{"APIKeys", []string{"APIKeys"}}, apiKeyTests()},
		{Suite{"Clients", []string{"Clients", "Tenants"}}, clientTests()},
		{Suite{"Codes", []string{"Codes", "Tenants"}}, codeTests()},
		{Suite{"Interactions", []string{"Interactions", "Tenants"}}, interactionTests()},
		{Suite{"PushedRequests", []string{"Pushed", "Tenants"}}, pushedTests()},
		{Suite{"AccessTokens", []string{"AccessTokens", "Tenants"}}, accessTokenTests()},
		{Suite{"Pictures", []string{"Pictures", "Tenants", "Users"}}, pictureTests()},
		{Suite{"Passkeys", []string{"Passkeys", "Tenants", "Users"}}, passkeyTests()},
		{Suite{"SigningKeys", []string{"SigningKeys"}}, signingKeyTests()},
		{Suite{"Paging", []string{"Users", "Tenants"}}, pagingTests()},
		{Suite{"Keyset", []string{"Users", "Tenants", "Groups"}}, keysetTests()},
		{Suite{"Sort", []string{"Users", "Tenants", "Groups"}}, sortTests()},
		{Suite{"Filters", []string{"Users", "Tenants", "Groups"}}, filterTests()},
		{Suite{"Concurrency", []string{"Tenants", "Users", "Groups"}}, concurrencyTests()},
		{Suite{"Events", []string{"Events", "Tenants", "Users", "Groups"}}, eventTests()},
		{Suite{"Webhooks", []string{"Webhooks", "Tenants", "Events"}}, webhookTests()},
		{Suite{"WebhooksDue", []string{"Webhooks", "Tenants", "Events", "Users"}}, webhookDueTests()},
		{Suite{"Text", []string{"Users", "Tenants", "Groups"}}, textTests()},
		{Suite{"Extensions", []string{"Users", "Tenants", "Groups"}}, extensionTests()},
	}
}

// Suites returns the suites Run runs, in order, each with the stores it needs: the list a host
// reads to know which suites its backend will run.
func Suites() []Suite {
	var out []Suite
	for _, s := range suites() {
		out = append(out, Suite{Name: s.Name, Stores: slices.Clone(s.Stores)})
	}
	return out
}

// Run runs the conformance suite against the backends newBackend returns. newBackend is called
// once per subtest, possibly from parallel subtests, and must return an empty backend that shares
// nothing with any other; every one must hold the same stores.
//
// A backend need not hold every store: a host that brings its own storage for its directory
// (Tenants, Users, Groups, APIKeys) and leaves the rest to visid's stores runs the suites of the
// stores it holds. The suite of a store it does not hold is skipped, naming the store; a suite,
// or a test, that needs a store besides its own (users need tenants) is skipped naming the store
// it misses. A backend that holds no store at all is an error.
func Run(t *testing.T, newBackend func(t *testing.T) store.Backend) {
	t.Helper()
	if newBackend == nil {
		t.Fatal("storetest.Run: newBackend is nil")
	}
	// The stores newBackend's backends hold, read from one of them here rather than in a
	// subtest, which -run could leave out.
	has := held(newBackend(t))
	if len(has) == 0 {
		t.Fatal("storetest.Run: newBackend returned a store.Backend that holds no store; the suite did not run")
	}
	needs := testNeeds()
	for _, s := range suites() {
		t.Run(s.Name, func(t *testing.T) {
			if own := s.Stores[0]; !has[own] {
				t.Skipf("storetest: the backend holds no %s", own)
			}
			if m := missing(has, s.Stores[1:]); len(m) > 0 {
				t.Skipf("storetest: the %s suite needs the backend's %s too, which it does not hold", s.Name, strings.Join(m, " and "))
			}
			for _, tc := range s.tests {
				t.Run(tc.name, func(t *testing.T) {
					if m := missing(has, needs[s.Name+"/"+tc.name]); len(m) > 0 {
						t.Skipf("storetest: this test needs the backend's %s too, which it does not hold", strings.Join(m, " and "))
					}
					t.Parallel()
					b := newBackend(t)
					checkBackend(t, b, has)
					tc.run(t, b)
				})
			}
		})
	}
}

// held returns the names of the stores b holds.
func held(b store.Backend) map[string]bool {
	has := map[string]bool{}
	for name, ok := range map[string]bool{
		"Tenants": b.Tenants != nil, "Users": b.Users != nil, "Groups": b.Groups != nil, "APIKeys": b.APIKeys != nil,
		"Clients": b.Clients != nil, "Codes": b.Codes != nil, "Interactions": b.Interactions != nil,
		"Pushed": b.Pushed != nil, "AccessTokens": b.AccessTokens != nil, "Pictures": b.Pictures != nil,
		"Passkeys": b.Passkeys != nil, "SigningKeys": b.SigningKeys != nil, "Events": b.Events != nil, "Webhooks": b.Webhooks != nil,
	} {
		if ok {
			has[name] = true
		}
	}
	return has
}

// missing returns the stores of needs that has lacks.
func missing(has map[string]bool, needs []string) []string {
	var out []string
	for _, n := range needs {
		if !has[n] {
			out = append(out, n)
		}
	}
	return out
}

// checkBackend fails the test when b holds other stores than the first backend did.
func checkBackend(t *testing.T, b store.Backend, has map[string]bool) {
	t.Helper()
	if got := held(b); !maps.Equal(got, has) {
		t.Fatalf("storetest: newBackend returned backends that hold different stores: %v, then %v",
			slices.Sorted(maps.Keys(has)), slices.Sorted(maps.Keys(got)))
	}
}

// Tenant ids the tests use.
const (
	acme   = "acme"
	globex = "globex"
)

func ctx() context.Context { return context.Background() }

// day returns midnight UTC of the given day of 2024, plus extra.
func day(month time.Month, d int, extra time.Duration) time.Time {
	return time.Date(2024, month, d, 0, 0, 0, 0, time.UTC).Add(extra)
}

func mustTenant(t *testing.T, b store.Backend, id string) {
	t.Helper()
	require.NoError(t, b.Tenants.Create(ctx(), store.Tenant{ID: id, DisplayName: "Tenant " + id, Created: day(1, 1, 0)}),
		"Tenants.Create(%q)", id)
}

// mustUser creates an active user with the given userName and returns it as stored.
func mustUser(t *testing.T, b store.Backend, tenant, userName string) *store.User {
	t.Helper()
	u, err := b.Users.Create(ctx(), tenant, store.User{UserName: userName, Active: true})
	require.NoError(t, err, "Users.Create(%q, %q)", tenant, userName)
	require.NotNil(t, u, "Users.Create(%q, %q) returned nil", tenant, userName)
	return u
}

// mustGroup creates a group with the given members (user ids) and returns it as stored.
func mustGroup(t *testing.T, b store.Backend, tenant, displayName string, members ...string) *store.Group {
	t.Helper()
	g, err := b.Groups.Create(ctx(), tenant, store.Group{DisplayName: displayName, Members: memberList(members...)})
	require.NoError(t, err, "Groups.Create(%q, %q)", tenant, displayName)
	require.NotNil(t, g, "Groups.Create(%q, %q) returned nil", tenant, displayName)
	return g
}

func memberList(ids ...string) []store.Member {
	var ms []store.Member
	for _, id := range ids {
		ms = append(ms, store.Member{Value: id})
	}
	return ms
}

func mustGetUser(t *testing.T, b store.Backend, tenant, id string) *store.User {
	t.Helper()
	u, err := b.Users.Get(ctx(), tenant, id)
	require.NoError(t, err, "Users.Get(%q, %q)", tenant, id)
	require.NotNil(t, u)
	return u
}

func mustGetGroup(t *testing.T, b store.Backend, tenant, id string) *store.Group {
	t.Helper()
	g, err := b.Groups.Get(ctx(), tenant, id)
	require.NoError(t, err, "Groups.Get(%q, %q)", tenant, id)
	require.NotNil(t, g)
	return g
}

// allUsers lists every user of the tenant.
func allUsers(t *testing.T, b store.Backend, tenant string) []store.User {
	t.Helper()
	p, err := b.Users.List(ctx(), tenant, store.Query{Count: -1})
	require.NoError(t, err, "Users.List(%q)", tenant)
	require.Equal(t, len(p.Resources), p.TotalResults, "Users.List(%q) with Count -1: TotalResults", tenant)
	return p.Resources
}

// allGroups lists every group of the tenant.
func allGroups(t *testing.T, b store.Backend, tenant string) []store.Group {
	t.Helper()
	p, err := b.Groups.List(ctx(), tenant, store.Query{Count: -1})
	require.NoError(t, err, "Groups.List(%q)", tenant)
	require.Equal(t, len(p.Resources), p.TotalResults, "Groups.List(%q) with Count -1: TotalResults", tenant)
	return p.Resources
}

func userNames(us []store.User) []string {
	out := []string{}
	for _, u := range us {
		out = append(out, u.UserName)
	}
	return out
}

func groupNames(gs []store.Group) []string {
	out := []string{}
	for _, g := range gs {
		out = append(out, g.DisplayName)
	}
	return out
}

func memberValues(g *store.Group) []string {
	out := []string{}
	for _, m := range g.Members {
		out = append(out, m.Value)
	}
	slices.Sort(out)
	return out
}

func groupRefValues(u *store.User) []string {
	out := []string{}
	for _, r := range u.Groups {
		out = append(out, r.Value)
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	return out
}

// normUser returns u in a form that compares equal whatever representation choices a backend
// makes that the contract leaves open: times in UTC, empty slices as nil, groups sorted by id.
func normUser(u store.User) store.User {
	u.Meta = normMeta(u.Meta)
	u.Emails = nilIfEmpty(u.Emails)
	u.PhoneNumbers = nilIfEmpty(u.PhoneNumbers)
	u.Roles = nilIfEmpty(u.Roles)
	u.Addresses = nilIfEmpty(u.Addresses)
	u.Ims = nilIfEmpty(u.Ims)
	u.Photos = nilIfEmpty(u.Photos)
	u.Entitlements = nilIfEmpty(u.Entitlements)
	u.X509Certificates = nilIfEmpty(u.X509Certificates)
	u.Groups = slices.SortedFunc(slices.Values(u.Groups), func(a, b store.GroupRef) int { return cmp.Compare(a.Value, b.Value) })
	u.Groups = nilIfEmpty(u.Groups)
	return u
}

// normGroup is normUser for groups: members sorted by id.
func normGroup(g store.Group) store.Group {
	g.Meta = normMeta(g.Meta)
	g.Members = slices.SortedFunc(slices.Values(g.Members), func(a, b store.Member) int { return cmp.Compare(a.Value, b.Value) })
	g.Members = nilIfEmpty(g.Members)
	return g
}

// withoutGroups is u without its derived groups, for comparing what a write returns with what a
// read returns.
func withoutGroups(u store.User) store.User {
	u.Groups = nil
	return normUser(u)
}

// withoutMemberDetails is g with only its members' values, for comparing what a write returns
// with what a read returns.
func withoutMemberDetails(g store.Group) store.Group {
	g.Members = slices.Clone(g.Members)
	for i := range g.Members {
		g.Members[i].Display, g.Members[i].Type = "", ""
	}
	return normGroup(g)
}

func normMeta(m store.Meta) store.Meta {
	return store.Meta{Created: normTime(m.Created), LastModified: normTime(m.LastModified)}
}

func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

// parseUsers parses a filter over users; the suite's filters are all valid.
func parseUsers(t *testing.T, s string) filter.Expr {
	t.Helper()
	e, err := filter.Parse(s, schema.User())
	require.NoError(t, err, "filter.Parse(%q, schema.User())", s)
	return e
}

// parseGroups parses a filter over groups.
func parseGroups(t *testing.T, s string) filter.Expr {
	t.Helper()
	e, err := filter.Parse(s, schema.Group())
	require.NoError(t, err, "filter.Parse(%q, schema.Group())", s)
	return e
}
