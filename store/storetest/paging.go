package storetest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
)

func pagingTests() []test {
	return []test{
		{"StableAcrossPages", testPagingStable},
		{"StableAcrossFilteredPages", testPagingStableFiltered},
		{"StartIndexBelowOne", testPagingStartIndexBelowOne},
		{"StartIndexPastEnd", testPagingStartIndexPastEnd},
		{"CountZeroReturnsOnlyTotal", testPagingCountZero},
		{"NegativeCountReturnsRest", testPagingNegativeCount},
		{"CountPastEnd", testPagingCountPastEnd},
		{"NilFilterKeepsAll", testPagingNilFilter},
		{"CreationOrderNotIDOrder", testPagingCreationOrderNotIDOrder},
		{"OrderAfterUpdate", testPagingOrderAfterUpdate},
		{"OrderAfterDelete", testPagingOrderAfterDelete},
	}
}

// pagingUsers creates 25 users in acme whose userNames are not in creation order (u00, u07, u14,
// …); every third is inactive. It returns the userNames in creation order.
func pagingUsers(t *testing.T, b store.Backend) []string {
	t.Helper()
	mustTenant(t, b, acme)
	var names []string
	for i := range 25 {
		name := fmt.Sprintf("u%02d", i*7%25)
		_, err := b.Users.Create(ctx(), acme, store.User{UserName: name, Active: i%3 != 0})
		require.NoError(t, err)
		names = append(names, name)
	}
	return names
}

// page lists one page and returns its userNames and TotalResults.
func page(t *testing.T, b store.Backend, f filter.Expr, start, count int) ([]string, int) {
	t.Helper()
	p, err := b.Users.List(ctx(), acme, store.Query{Filter: f, StartIndex: start, Count: count})
	require.NoError(t, err, "Users.List(StartIndex %d, Count %d)", start, count)
	return userNames(p.Resources), p.TotalResults
}

// Paging through an unchanged tenant with startIndex neither skips nor repeats a user, and
// every page reports the total.
func testPagingStable(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	all, total := page(t, b, nil, 1, -1)
	require.Equal(t, names, all, "List is in creation order")
	assert.Equal(t, 25, total)
	var got []string
	for start := 1; start <= 25; start += 7 {
		p, total := page(t, b, nil, start, 7)
		assert.Equal(t, 25, total, "TotalResults of the page at %d", start)
		assert.Len(t, p, min(7, 26-start), "page at %d", start)
		got = append(got, p...)
	}
	assert.Equal(t, names, got)
}

// Paging through a filtered list neither skips nor repeats; TotalResults counts all matches.
func testPagingStableFiltered(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	var active []string
	for i, n := range names {
		if i%3 != 0 {
			active = append(active, n)
		}
	}
	f := parseUsers(t, `active eq true`)
	var got []string
	for start := 1; start <= len(active); start += 7 {
		p, total := page(t, b, f, start, 7)
		assert.Equal(t, len(active), total, "TotalResults of the page at %d", start)
		got = append(got, p...)
	}
	assert.Equal(t, active, got)

	// A filter whose matches are spread: every user with a 1 in its name.
	f = parseUsers(t, `userName co "1"`)
	var want []string
	for _, n := range names {
		if n[1] == '1' || n[2] == '1' {
			want = append(want, n)
		}
	}
	got = nil
	for start := 1; start <= len(want); start += 3 {
		p, total := page(t, b, f, start, 3)
		assert.Equal(t, len(want), total)
		got = append(got, p...)
	}
	assert.Equal(t, want, got)
}

// StartIndex below 1 means 1.
func testPagingStartIndexBelowOne(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	for _, start := range []int{0, -1, -100} {
		p, total := page(t, b, nil, start, 5)
		assert.Equal(t, names[:5], p, "StartIndex %d", start)
		assert.Equal(t, 25, total, "StartIndex %d", start)
	}
	p, total := page(t, b, nil, 0, -1)
	assert.Equal(t, names, p, "StartIndex 0, Count -1")
	assert.Equal(t, 25, total)
}

// A StartIndex past the end returns no resources but the right TotalResults.
func testPagingStartIndexPastEnd(t *testing.T, b store.Backend) {
	pagingUsers(t, b)
	for _, start := range []int{26, 27, 1000} {
		p, total := page(t, b, nil, start, 10)
		assert.Empty(t, p, "StartIndex %d", start)
		assert.Equal(t, 25, total, "StartIndex %d", start)
	}
	p, total := page(t, b, nil, 26, -1)
	assert.Empty(t, p, "StartIndex 26, Count -1")
	assert.Equal(t, 25, total)
	inactive := parseUsers(t, `active eq false`) // 9 matches
	p, total = page(t, b, inactive, 10, 10)
	assert.Empty(t, p, "filtered, StartIndex 10")
	assert.Equal(t, 9, total)
	p, total = page(t, b, inactive, 10, 1)
	assert.Empty(t, p, "filtered, StartIndex 10, Count 1")
	assert.Equal(t, 9, total)
	p, total = page(t, b, inactive, 9, 10)
	assert.Len(t, p, 1, "filtered, StartIndex 9: the last match")
	assert.Equal(t, 9, total)
}

// Count 0 returns no resources, only the total.
func testPagingCountZero(t *testing.T, b store.Backend) {
	pagingUsers(t, b)
	for _, start := range []int{0, 1, 10, 100} {
		p, total := page(t, b, nil, start, 0)
		assert.Empty(t, p, "StartIndex %d", start)
		assert.Equal(t, 25, total, "StartIndex %d", start)
	}
	p, total := page(t, b, parseUsers(t, `active eq true`), 1, 0)
	assert.Empty(t, p)
	assert.Equal(t, 16, total)
	p, total = page(t, b, parseUsers(t, `userName eq "nobody"`), 1, 0)
	assert.Empty(t, p)
	assert.Zero(t, total)
}

// A negative Count returns all from StartIndex on.
func testPagingNegativeCount(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	for _, count := range []int{-1, -7, -1000} {
		p, total := page(t, b, nil, 20, count)
		assert.Equal(t, names[19:], p, "StartIndex 20, Count %d", count)
		assert.Equal(t, 25, total)
	}
	p, total := page(t, b, parseUsers(t, `active eq false`), 4, -1)
	var inactive []string
	for i, n := range names {
		if i%3 == 0 {
			inactive = append(inactive, n)
		}
	}
	assert.Equal(t, inactive[3:], p, "filtered, StartIndex 4, Count -1")
	assert.Equal(t, len(inactive), total)
}

// A Count that reaches past the end returns what is left.
func testPagingCountPastEnd(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	p, total := page(t, b, nil, 20, 10)
	assert.Equal(t, names[19:], p)
	assert.Equal(t, 25, total)
	p, total = page(t, b, nil, 25, 1)
	assert.Equal(t, names[24:], p)
	assert.Equal(t, 25, total)
	p, total = page(t, b, nil, 1, 1000)
	assert.Equal(t, names, p)
	assert.Equal(t, 25, total)
}

// A nil Filter keeps every user of the tenant, and only of the tenant.
func testPagingNilFilter(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	mustTenant(t, b, globex)
	mustUser(t, b, globex, "elsewhere")
	p, total := page(t, b, nil, 1, 100)
	assert.Equal(t, names, p)
	assert.Equal(t, 25, total)
}

// Listing order is creation order, whatever the ids and userNames.
func testPagingCreationOrderNotIDOrder(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, u := range []store.User{
		{ID: "user_zz", UserName: "b"}, {ID: "user_mm", UserName: "C"}, {ID: "user_aa", UserName: "a"},
		{ID: "user_00", UserName: "Z"}, {ID: "user_yy", UserName: "0"},
	} {
		_, err := b.Users.Create(ctx(), acme, u)
		require.NoError(t, err)
	}
	mustUser(t, b, acme, "generated")
	p, _ := page(t, b, nil, 1, -1)
	assert.Equal(t, []string{"b", "C", "a", "Z", "0", "generated"}, p)
	p, _ = page(t, b, nil, 2, 3)
	assert.Equal(t, []string{"C", "a", "Z"}, p)
	p, _ = page(t, b, parseUsers(t, `id ne "user_aa"`), 1, -1)
	assert.Equal(t, []string{"b", "C", "Z", "0", "generated"}, p, "filtered by id")
}

// An Update does not move a user in the listing order.
func testPagingOrderAfterUpdate(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	all := allUsers(t, b, acme)
	for _, i := range []int{0, 12, 24} {
		_, err := b.Users.Update(ctx(), acme, all[i].ID, func(u *store.User) error {
			u.UserName = "renamed-" + u.UserName
			u.DisplayName = "changed"
			u.Active = !u.Active
			u.Meta.LastModified = day(12, 31, 0)
			return nil
		})
		require.NoError(t, err)
		names[i] = "renamed-" + names[i]
	}
	p, _ := page(t, b, nil, 1, -1)
	assert.Equal(t, names, p)
	var got []string
	for start := 1; start <= 25; start += 7 {
		p, _ := page(t, b, nil, start, 7)
		got = append(got, p...)
	}
	assert.Equal(t, names, got, "pages after updates")
}

// A Delete leaves the others in order; a user created later comes last, even with the userName of
// a deleted one.
func testPagingOrderAfterDelete(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	all := allUsers(t, b, acme)
	var want []string
	for i, u := range all {
		if i%4 == 1 {
			require.NoError(t, b.Users.Delete(ctx(), acme, u.ID))
			continue
		}
		want = append(want, names[i])
	}
	mustUser(t, b, acme, names[1]) // deleted above
	mustUser(t, b, acme, "new")
	want = append(want, names[1], "new")
	p, total := page(t, b, nil, 1, -1)
	assert.Equal(t, want, p)
	assert.Equal(t, len(want), total)
	var got []string
	for start := 1; start <= len(want); start += 7 {
		p, _ := page(t, b, nil, start, 7)
		got = append(got, p...)
	}
	assert.Equal(t, want, got, "pages after deletes")
}
