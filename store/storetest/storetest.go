package storetest

import (
	"cmp"
	"context"
	"slices"
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

// Run runs the conformance suite against the backends newBackend returns. newBackend is called
// once per subtest, possibly from parallel subtests, and must return an empty backend that shares
// nothing with any other; every field of the Backend must be set.
func Run(t *testing.T, newBackend func(t *testing.T) store.Backend) {
	t.Helper()
	if newBackend == nil {
		t.Fatal("storetest.Run: newBackend is nil")
	}
	if !t.Run("Backend", func(t *testing.T) { checkBackend(t, newBackend(t)) }) {
		t.Fatal("storetest.Run: newBackend must return a Backend with every field set; the suite did not run")
	}
	suites := []struct {
		name  string
		tests []test
	}{
		{"Tenants", tenantTests()},
		{"TenantLook", tenantLookTests()},
		{"Users", userTests()},
		{"Groups", groupTests()},
		{"GroupPatch", groupPatchTests()},
		{"Meta", metaTests()},
		{"Versions", versionTests()},
		{"APIKeys", apiKeyTests()},
		{"Clients", clientTests()},
		{"Codes", codeTests()},
		{"Interactions", interactionTests()},
		{"PushedRequests", pushedTests()},
		{"AccessTokens", accessTokenTests()},
		{"Pictures", pictureTests()},
		{"SigningKeys", signingKeyTests()},
		{"Paging", pagingTests()},
		{"Keyset", keysetTests()},
		{"Sort", sortTests()},
		{"Filters", filterTests()},
		{"Concurrency", concurrencyTests()},
		{"Events", eventTests()},
		{"Webhooks", webhookTests()},
		{"WebhooksDue", webhookDueTests()},
		{"Text", textTests()},
		{"Extensions", extensionTests()},
	}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) {
			for _, tc := range s.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					b := newBackend(t)
					checkBackend(t, b)
					tc.run(t, b)
				})
			}
		})
	}
}

// checkBackend fails the test when a field of b is nil.
func checkBackend(t *testing.T, b store.Backend) {
	t.Helper()
	for _, f := range []struct {
		name string
		nil  bool
	}{
		{"Tenants", b.Tenants == nil},
		{"Users", b.Users == nil},
		{"Groups", b.Groups == nil},
		{"APIKeys", b.APIKeys == nil},
		{"Clients", b.Clients == nil},
		{"Codes", b.Codes == nil},
		{"Interactions", b.Interactions == nil},
		{"Pushed", b.Pushed == nil},
		{"AccessTokens", b.AccessTokens == nil},
		{"Pictures", b.Pictures == nil},
		{"SigningKeys", b.SigningKeys == nil},
		{"Events", b.Events == nil},
		{"Webhooks", b.Webhooks == nil},
	} {
		if f.nil {
			t.Errorf("storetest: newBackend returned a store.Backend whose %s is nil", f.name)
		}
	}
	if t.Failed() {
		t.FailNow()
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
