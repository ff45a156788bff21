package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

func keysetTests() []test {
	return []test{
		{"WalkByNextMatchesStartIndex", testKeysetWalk},
		{"WalkBackByPrev", testKeysetWalkBack},
		{"FilteredWalk", testKeysetFiltered},
		{"PositionOfDeletedResource", testKeysetDeletedPosition},
		{"CountZeroAndNegative", testKeysetCounts},
		{"WalkUnderInterleavedWrites", testKeysetInterleaved},
		{"WalkUnderConcurrentWrites", testKeysetConcurrent},
		{"InvalidSortAndPosition", testKeysetInvalid},
	}
}

func sortTests() []test {
	return []test{
		{"UserNameCaseInsensitive", testSortUserName},
		{"MissingValuesLastTiesInCreationOrder", testSortFamilyName},
		{"MultiValuedByPrimaryElseFirst", testSortEmails},
		{"DateTimeAndBoolean", testSortTimesAndBooleans},
		{"WithFilterAndStartIndex", testSortFilterStartIndex},
		{"KeysetWalkOfEverySort", testSortKeysetWalks},
		{"Groups", testSortGroups},
		{"OrderFollowsWrites", testSortFollowsWrites},
	}
}

// sortBy returns the Sort of a user attribute path.
func sortBy(t *testing.T, path string, desc bool) store.Sort {
	t.Helper()
	a, sub, err := schema.User().Lookup(path)
	require.NoError(t, err, "Lookup(%q)", path)
	return store.Sort{Attr: a, Sub: sub, Descending: desc}
}

// walk lists every page of q by Next, count at a time, and returns the userNames in order. It
// checks each page's TotalResults against total (unless negative), that only the last page
// lacks Next and that only the first lacks Prev.
func walk(t *testing.T, b store.Backend, q store.Query, count, total int) []string {
	t.Helper()
	q.Count, q.StartIndex, q.After, q.Before = count, 1, nil, nil
	var got []string
	for i := 0; ; i++ {
		require.Less(t, i, 1000, "the walk does not end")
		p, err := b.Users.List(ctx(), acme, q)
		require.NoError(t, err)
		if total >= 0 {
			assert.Equal(t, total, p.TotalResults, "TotalResults of page %d", i)
		}
		assert.Equal(t, i == 0, p.Prev == nil && len(p.Resources) > 0 || i == 0 && len(p.Resources) == 0, "Prev of page %d", i)
		got = append(got, userNames(p.Resources)...)
		if p.Next == nil {
			return got
		}
		assert.Len(t, p.Resources, count, "a page with Next is full")
		q.After = p.Next
	}
}

// A walk by Next, from the first page to one without Next, lists what StartIndex paging lists,
// in every page size.
func testKeysetWalk(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	for _, count := range []int{1, 4, 7, 25, 26, 100} {
		assert.Equal(t, names, walk(t, b, store.Query{}, count, 25), "Count %d", count)
	}
	first, err := b.Users.List(ctx(), acme, store.Query{Count: 25})
	require.NoError(t, err)
	assert.Nil(t, first.Next, "a page that ends the list has no Next")
	assert.Nil(t, first.Prev)
	mid, err := b.Users.List(ctx(), acme, store.Query{StartIndex: 11, Count: 5})
	require.NoError(t, err)
	require.NotNil(t, mid.Prev, "a page from StartIndex 11 has Prev")
	require.NotNil(t, mid.Next)
	after, err := b.Users.List(ctx(), acme, store.Query{After: mid.Next, Count: 5})
	require.NoError(t, err)
	assert.Equal(t, names[15:20], userNames(after.Resources), "After a StartIndex page's Next")
	before, err := b.Users.List(ctx(), acme, store.Query{Before: mid.Prev, Count: 5})
	require.NoError(t, err)
	assert.Equal(t, names[5:10], userNames(before.Resources), "Before a StartIndex page's Prev")
}

// Pages asked for by Before walk back to the first page, which has no Prev.
func testKeysetWalkBack(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	for _, s := range []store.Sort{{}, sortBy(t, "userName", false), sortBy(t, "userName", true)} {
		all, err := b.Users.List(ctx(), acme, store.Query{Sort: s, Count: -1})
		require.NoError(t, err)
		want := userNames(all.Resources)
		require.Len(t, want, len(names))
		// The last page by StartIndex, then back.
		p, err := b.Users.List(ctx(), acme, store.Query{Sort: s, StartIndex: 22, Count: 4})
		require.NoError(t, err)
		require.Equal(t, want[21:], userNames(p.Resources))
		got := userNames(p.Resources)
		for i := 0; p.Prev != nil; i++ {
			require.Less(t, i, 100)
			next := p.Next
			p, err = b.Users.List(ctx(), acme, store.Query{Sort: s, Before: p.Prev, Count: 4})
			require.NoError(t, err)
			assert.Equal(t, 25, p.TotalResults)
			require.NotNil(t, p.Next, "a page read by Before has Next")
			got = append(userNames(p.Resources), got...)
			if next != nil || len(got) > 4 {
				again, err := b.Users.List(ctx(), acme, store.Query{Sort: s, After: p.Next, Count: 4})
				require.NoError(t, err)
				assert.Equal(t, got[len(p.Resources):len(p.Resources)+len(again.Resources)], userNames(again.Resources),
					"After the Next of a Before page is the page read before")
			}
		}
		assert.Equal(t, want, got, "sort %q descending %v", s.Path(), s.Descending)
		assert.Len(t, p.Resources, 1, "the first page read back holds what is left")
	}
}

// A walk of a filtered list lists the matches once each, and TotalResults counts them all.
func testKeysetFiltered(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	var active []string
	for i, n := range names {
		if i%3 != 0 {
			active = append(active, n)
		}
	}
	f := parseUsers(t, `active eq true`)
	assert.Equal(t, active, walk(t, b, store.Query{Filter: f}, 4, len(active)))
	f = parseUsers(t, `userName sw "u1" or userName eq "u03"`)
	var want []string
	for _, n := range names {
		if n == "u03" || n[:2] == "u1" {
			want = append(want, n)
		}
	}
	assert.Equal(t, want, walk(t, b, store.Query{Filter: f}, 3, len(want)))
	slices.Sort(want)
	assert.Equal(t, want, walk(t, b, store.Query{Filter: f, Sort: sortBy(t, "userName", false)}, 3, len(want)))
}

// A position stays good when its resource is deleted: the next page starts after where it stood.
func testKeysetDeletedPosition(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	for _, s := range []store.Sort{{}, sortBy(t, "userName", false)} {
		all, err := b.Users.List(ctx(), acme, store.Query{Sort: s, Count: -1})
		require.NoError(t, err)
		want := userNames(all.Resources)
		p, err := b.Users.List(ctx(), acme, store.Query{Sort: s, Count: 5})
		require.NoError(t, err)
		require.NotNil(t, p.Next)
		require.NoError(t, b.Users.Delete(ctx(), acme, p.Resources[4].ID))
		next, err := b.Users.List(ctx(), acme, store.Query{Sort: s, After: p.Next, Count: 5})
		require.NoError(t, err)
		assert.Equal(t, want[5:10], userNames(next.Resources))
		assert.Equal(t, len(want)-1, next.TotalResults)
		// Put a user back under the deleted one's name, for the next sort.
		_, err = b.Users.Create(ctx(), acme, store.User{UserName: p.Resources[4].UserName})
		require.NoError(t, err)
	}
	_ = names
}

// Count 0 after a position gives only the total; a negative Count gives all the rest, without Next.
func testKeysetCounts(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	p, err := b.Users.List(ctx(), acme, store.Query{Count: 10})
	require.NoError(t, err)
	require.NotNil(t, p.Next)
	zero, err := b.Users.List(ctx(), acme, store.Query{After: p.Next, Count: 0})
	require.NoError(t, err)
	assert.Empty(t, zero.Resources)
	assert.Equal(t, 25, zero.TotalResults)
	assert.Nil(t, zero.Next)
	rest, err := b.Users.List(ctx(), acme, store.Query{After: p.Next, Count: -1})
	require.NoError(t, err)
	assert.Equal(t, names[10:], userNames(rest.Resources))
	assert.Nil(t, rest.Next, "a negative Count reads to the end")
	before, err := b.Users.List(ctx(), acme, store.Query{Before: p.Next, Count: -1})
	require.NoError(t, err)
	assert.Equal(t, names[:9], userNames(before.Resources))
	assert.Nil(t, before.Prev)
}

// walkers are the orders the write tests walk in.
func walkers(t *testing.T) []store.Sort {
	return []store.Sort{{}, sortBy(t, "userName", false), sortBy(t, "userName", true), sortBy(t, "name.familyName", false),
		sortBy(t, "emails.value", true)}
}

// stableUser creates a user whose userName, familyName and email sort in an order unrelated to
// creation order.
func sortedUser(t *testing.T, b store.Backend, name string) *store.User {
	t.Helper()
	u, err := b.Users.Create(ctx(), acme, store.User{UserName: name, Name: store.Name{FamilyName: "F" + name[len(name)-2:]},
		Emails: []store.MultiValue{{Value: name + "@example.com"}}})
	require.NoError(t, err)
	return u
}

// A walk interleaved with creates and deletes (between its pages, on both sides of where it
// stands) lists every user that existed throughout it exactly once, and no user twice.
func testKeysetInterleaved(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, s := range walkers(t) {
		t.Run(s.Path()+fmt.Sprint(s.Descending), func(t *testing.T) {
			prefix := fmt.Sprintf("w%s%v-", s.Path(), s.Descending)
			stay := map[string]bool{}
			var doomed []string
			for i := range 40 {
				u := sortedUser(t, b, fmt.Sprintf("%s%02d", prefix, i*17%40))
				if i%4 == 1 {
					doomed = append(doomed, u.ID)
				} else {
					stay[u.UserName] = true
				}
			}
			q := store.Query{Sort: s, Count: 6, Filter: parseUsers(t, fmt.Sprintf(`userName sw %q`, prefix))}
			seen := map[string]int{}
			for i := 0; ; i++ {
				require.Less(t, i, 100)
				p, err := b.Users.List(ctx(), acme, q)
				require.NoError(t, err)
				for _, u := range p.Resources {
					seen[u.UserName]++
				}
				// Writes on both sides of the position: names that sort first and last.
				sortedUser(t, b, fmt.Sprintf("%s%02d-newA%d", prefix, 39-i%40, i))
				sortedUser(t, b, fmt.Sprintf("%s00-newB%d", prefix, i))
				for range 2 {
					if len(doomed) > 0 {
						require.NoError(t, b.Users.Delete(ctx(), acme, doomed[0]))
						doomed = doomed[1:]
					}
				}
				if p.Next == nil {
					break
				}
				q.After = p.Next
			}
			for name := range stay {
				assert.Equal(t, 1, seen[name], "%s, which existed throughout the walk", name)
			}
			for name, n := range seen {
				assert.LessOrEqual(t, n, 1, "%s listed twice", name)
			}
		})
	}
}

// A walk while other goroutines create and delete users lists every user that existed
// throughout it exactly once, and no user twice.
func testKeysetConcurrent(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	stay := map[string]bool{}
	var doomed []string
	for i := range 120 {
		u := sortedUser(t, b, fmt.Sprintf("c%03d", i*37%120))
		if i%3 == 0 {
			doomed = append(doomed, u.ID)
		} else {
			stay[u.UserName] = true
		}
	}
	for _, s := range walkers(t) {
		t.Run(s.Path()+fmt.Sprint(s.Descending), func(t *testing.T) {
			stop := make(chan struct{})
			errs := make(chan error, 2)
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { // creates
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						errs <- nil
						return
					default:
					}
					name := fmt.Sprintf("c%03d-%s%v-%d", i*53%120, s.Path(), s.Descending, i)
					if _, err := b.Users.Create(ctx(), acme, store.User{UserName: name, Name: store.Name{FamilyName: name[:3]}}); err != nil {
						errs <- err
						return
					}
					time.Sleep(time.Millisecond)
				}
			}()
			dl := slices.Clone(doomed)
			go func() { // deletes
				defer wg.Done()
				for _, id := range dl {
					select {
					case <-stop:
						errs <- nil
						return
					default:
					}
					if err := b.Users.Delete(ctx(), acme, id); err != nil && !errors.Is(err, store.ErrNotFound) {
						errs <- err
						return
					}
					time.Sleep(2 * time.Millisecond)
				}
				errs <- nil
			}()
			seen := map[string]int{}
			q := store.Query{Sort: s, Count: 9}
			for i := 0; ; i++ {
				require.Less(t, i, 10000)
				p, err := b.Users.List(ctx(), acme, q)
				require.NoError(t, err)
				for _, u := range p.Resources {
					seen[u.UserName]++
				}
				if p.Next == nil {
					break
				}
				q.After = p.Next
			}
			close(stop)
			wg.Wait()
			for range 2 {
				require.NoError(t, <-errs)
			}
			for name := range stay {
				assert.Equal(t, 1, seen[name], "%s, which existed throughout the walk", name)
			}
			for name, n := range seen {
				assert.LessOrEqual(t, n, 1, "%s listed twice", name)
			}
		})
	}
}

// A sort by a complex attribute itself, or a position whose value does not fit the sort, is
// ErrInvalid.
func testKeysetInvalid(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustUser(t, b, acme, "a")
	emails, _, err := schema.User().Lookup("emails")
	require.NoError(t, err)
	_, err = b.Users.List(ctx(), acme, store.Query{Sort: store.Sort{Attr: emails}, Count: 10})
	assert.ErrorIs(t, err, store.ErrInvalid, "sort by emails")
	pw, _, err := schema.User().Lookup("password")
	if err == nil {
		_, err = b.Users.List(ctx(), acme, store.Query{Sort: store.Sort{Attr: pw}, Count: 10})
		assert.ErrorIs(t, err, store.ErrInvalid, "sort by password")
	}
	bad := &store.Position{Seq: 1, Value: filter.NumberValue(3)}
	_, err = b.Users.List(ctx(), acme, store.Query{Sort: sortBy(t, "userName", false), After: bad, Count: 10})
	assert.ErrorIs(t, err, store.ErrInvalid, "a number after a userName")
	_, err = b.Users.List(ctx(), acme, store.Query{After: &store.Position{Seq: 1, Value: filter.StringValue("x")}, Count: 10})
	assert.ErrorIs(t, err, store.ErrInvalid, "a value in creation order")
	_, err = b.Groups.List(ctx(), acme, store.Query{Sort: sortBy(t, "userName", false), Before: &store.Position{Seq: 1, Value: filter.BoolValue(true)}, Count: 10})
	assert.ErrorIs(t, err, store.ErrInvalid, "a boolean before a string")
}

// listSorted lists all users in s's order and returns their userNames.
func listSorted(t *testing.T, b store.Backend, s store.Sort) []string {
	t.Helper()
	p, err := b.Users.List(ctx(), acme, store.Query{Sort: s, Count: -1})
	require.NoError(t, err, "List sorted by %q", s.Path())
	return userNames(p.Resources)
}

// userName (caseExact false) sorts by its folded form, whatever the case it was written in.
func testSortUserName(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, n := range []string{"bob", "Alice", "carol", "ALAN", "Bea", "ñandú", "zed"} {
		mustUser(t, b, acme, n)
	}
	want := []string{"ALAN", "Alice", "Bea", "bob", "carol", "zed", "ñandú"}
	assert.Equal(t, want, listSorted(t, b, sortBy(t, "userName", false)))
	slices.Reverse(want)
	assert.Equal(t, want, listSorted(t, b, sortBy(t, "userName", true)))
}

// Users without the value come last in both directions; equal values keep creation order
// (reversed when descending).
func testSortFamilyName(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, u := range []struct{ name, family string }{
		{"u1", "smith"}, {"u2", ""}, {"u3", "Jones"}, {"u4", "Smith"}, {"u5", ""}, {"u6", "adams"},
	} {
		_, err := b.Users.Create(ctx(), acme, store.User{UserName: u.name, Name: store.Name{FamilyName: u.family}})
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"u6", "u3", "u1", "u4", "u2", "u5"}, listSorted(t, b, sortBy(t, "name.familyName", false)))
	assert.Equal(t, []string{"u4", "u1", "u3", "u6", "u5", "u2"}, listSorted(t, b, sortBy(t, "name.familyName", true)))
	// externalId is caseExact: "B" orders before "a".
	for _, u := range []struct{ name, ext string }{{"x1", "a"}, {"x2", "B"}} {
		_, err := b.Users.Create(ctx(), acme, store.User{UserName: u.name, ExternalID: u.ext})
		require.NoError(t, err)
	}
	got := listSorted(t, b, sortBy(t, "externalId", false))
	assert.Equal(t, []string{"x2", "x1"}, got[:2], "caseExact strings order by their bytes")
}

// A multi-valued attribute sorts by its primary element's value, or its first element's.
func testSortEmails(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, u := range []struct {
		name   string
		emails []store.MultiValue
	}{
		{"u1", []store.MultiValue{{Value: "d@x"}, {Value: "a@x"}}},                // d
		{"u2", []store.MultiValue{{Value: "z@x"}, {Value: "b@x", Primary: true}}}, // b
		{"u3", nil},
		{"u4", []store.MultiValue{{Type: "work"}, {Value: "C@x"}}}, // c: the first with a value
		{"u5", []store.MultiValue{{Value: "e@x", Primary: true}}},  // e
	} {
		_, err := b.Users.Create(ctx(), acme, store.User{UserName: u.name, Emails: u.emails})
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"u2", "u4", "u1", "u5", "u3"}, listSorted(t, b, sortBy(t, "emails.value", false)))
	assert.Equal(t, []string{"u5", "u1", "u4", "u2", "u3"}, listSorted(t, b, sortBy(t, "emails.value", true)))
	assert.Equal(t, []string{"u1", "u2", "u4", "u5", "u3"}, listSorted(t, b, sortBy(t, "emails.primary", false)),
		"the first element's primary, false before true")
}

// dateTimes sort by instant, booleans false first.
func testSortTimesAndBooleans(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, u := range []struct {
		name    string
		created time.Time
		active  bool
	}{
		{"u1", day(3, 1, 0), true}, {"u2", day(1, 1, 0), false}, {"u3", day(2, 1, time.Nanosecond), true},
		{"u4", day(2, 1, 0).In(time.FixedZone("x", 3600)), false},
	} {
		_, err := b.Users.Create(ctx(), acme, store.User{UserName: u.name, Active: u.active,
			Meta: store.Meta{Created: u.created, LastModified: u.created.Add(time.Hour)}})
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"u2", "u4", "u3", "u1"}, listSorted(t, b, sortBy(t, "meta.created", false)))
	assert.Equal(t, []string{"u1", "u3", "u4", "u2"}, listSorted(t, b, sortBy(t, "meta.lastModified", true)))
	assert.Equal(t, []string{"u2", "u4", "u1", "u3"}, listSorted(t, b, sortBy(t, "active", false)))
	assert.Equal(t, []string{"u3", "u1", "u4", "u2"}, listSorted(t, b, sortBy(t, "active", true)))
}

// A sort combines with a filter (TotalResults counts the matches) and StartIndex.
func testSortFilterStartIndex(t *testing.T, b store.Backend) {
	names := pagingUsers(t, b)
	var active []string
	for i, n := range names {
		if i%3 != 0 {
			active = append(active, n)
		}
	}
	slices.Sort(active)
	slices.Reverse(active)
	p, err := b.Users.List(ctx(), acme, store.Query{Filter: parseUsers(t, `active eq true`),
		Sort: sortBy(t, "userName", true), StartIndex: 4, Count: 5})
	require.NoError(t, err)
	assert.Equal(t, active[3:8], userNames(p.Resources))
	assert.Equal(t, len(active), p.TotalResults)
	require.NotNil(t, p.Next)
	next, err := b.Users.List(ctx(), acme, store.Query{Filter: parseUsers(t, `active eq true`),
		Sort: sortBy(t, "userName", true), After: p.Next, Count: 5})
	require.NoError(t, err)
	assert.Equal(t, active[8:13], userNames(next.Resources))
}

// For every sort the walkers use and more, a keyset walk lists what one page of all lists.
func testSortKeysetWalks(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for i := range 30 {
		u := store.User{UserName: fmt.Sprintf("k%02d", i*11%30), Active: i%2 == 0, Title: []string{"", "b", "a"}[i%3],
			Meta: store.Meta{Created: day(1, 1+i%5, 0)}}
		if i%4 != 0 {
			u.Emails = []store.MultiValue{{Value: fmt.Sprintf("%d@x", i%7)}, {Value: fmt.Sprintf("%d@y", i%3), Primary: i%2 == 1}}
		}
		_, err := b.Users.Create(ctx(), acme, u)
		require.NoError(t, err)
	}
	for _, path := range []string{"userName", "title", "emails.value", "emails.primary", "meta.created", "active", "name.familyName"} {
		for _, desc := range []bool{false, true} {
			s := sortBy(t, path, desc)
			all := listSorted(t, b, s)
			require.Len(t, all, 30)
			assert.Equal(t, all, walk(t, b, store.Query{Sort: s}, 4, 30), "%s descending %v", path, desc)
		}
	}
}

// Groups sort by displayName (folded) and by other attributes alike.
func testSortGroups(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for _, n := range []string{"b", "A", "c", "a"} {
		mustGroup(t, b, acme, n)
	}
	dn, _, err := schema.Group().Lookup("displayName")
	require.NoError(t, err)
	p, err := b.Groups.List(ctx(), acme, store.Query{Sort: store.Sort{Attr: dn}, Count: -1})
	require.NoError(t, err)
	assert.Equal(t, []string{"A", "a", "b", "c"}, groupNames(p.Resources))
	p, err = b.Groups.List(ctx(), acme, store.Query{Sort: store.Sort{Attr: dn, Descending: true}, Count: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"c", "b"}, groupNames(p.Resources))
	require.NotNil(t, p.Next)
	p, err = b.Groups.List(ctx(), acme, store.Query{Sort: store.Sort{Attr: dn, Descending: true}, After: p.Next, Count: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "A"}, groupNames(p.Resources))
	assert.Nil(t, p.Next)
}

// A sort orders by the values as they are now: after Updates change users' familyName, emails
// and lastModified (set by the update, or by its time), and after Patch and Update change
// groups (their lastModified), the lists and walks both ways order by the new values.
func testSortFollowsWrites(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ids := map[string]string{}
	for i, name := range []string{"u0", "u1", "u2", "u3", "u4"} {
		u, err := b.Users.Create(ctx(), acme, store.User{UserName: name, Name: store.Name{FamilyName: fmt.Sprintf("F%d", i)},
			Emails: []store.MultiValue{{Value: fmt.Sprintf("a%d@x", i), Primary: true}, {Value: fmt.Sprintf("b%d@x", 4-i)}},
			Meta:   store.Meta{Created: day(1, 1, 0), LastModified: day(1, 1+i, 0)}})
		require.NoError(t, err)
		ids[name] = u.ID
	}
	update := func(name string, fn func(u *store.User)) {
		t.Helper()
		_, err := b.Users.Update(ctx(), acme, ids[name], func(u *store.User) error { fn(u); return nil })
		require.NoError(t, err)
	}
	update("u0", func(u *store.User) { u.Name.FamilyName = "" })   // no familyName: last
	update("u3", func(u *store.User) { u.Name.FamilyName = "f0" }) // first
	update("u1", func(u *store.User) {                             // no primary: sorts by b3@x, now its first
		u.Emails = []store.MultiValue{{Value: u.Emails[1].Value}, {Value: u.Emails[0].Value}}
	})
	update("u4", func(u *store.User) { u.Emails[0].Primary, u.Emails[1].Primary = false, true })
	update("u2", func(u *store.User) { u.Title = "moved"; u.Meta.LastModified = day(2, 1, 0) })
	order := func(s store.Sort) {
		t.Helper()
		all := listSorted(t, b, s)
		require.Len(t, all, 5)
		assert.Equal(t, all, walk(t, b, store.Query{Sort: s}, 2, 5), "%s descending %v", s.Path(), s.Descending)
		// Back from the end by Prev.
		p, err := b.Users.List(ctx(), acme, store.Query{Sort: s, StartIndex: 4, Count: 2})
		require.NoError(t, err)
		require.NotNil(t, p.Prev)
		back, err := b.Users.List(ctx(), acme, store.Query{Sort: s, Before: p.Prev, Count: 2})
		require.NoError(t, err)
		assert.Equal(t, all[1:3], userNames(back.Resources), "%s descending %v, back by Prev", s.Path(), s.Descending)
	}
	assert.Equal(t, []string{"u3", "u1", "u2", "u4", "u0"}, listSorted(t, b, sortBy(t, "name.familyName", false)))
	assert.Equal(t, []string{"u4", "u2", "u1", "u3", "u0"}, listSorted(t, b, sortBy(t, "name.familyName", true)))
	assert.Equal(t, []string{"u0", "u2", "u3", "u4", "u1"}, listSorted(t, b, sortBy(t, "emails.value", false)),
		"a0@x, a2@x, a3@x, b0@x (primaries), b3@x (the first, none primary)")
	assert.Equal(t, []string{"u2", "u0", "u3", "u1", "u4"}, listSorted(t, b, sortBy(t, "meta.lastModified", false)),
		"the one lastModified set, then the others by the time of their update")
	for _, path := range []string{"name.familyName", "emails.value", "meta.lastModified", "meta.created"} {
		for _, desc := range []bool{false, true} {
			order(sortBy(t, path, desc))
		}
	}

	// Groups by lastModified: a patch that changes the members moves it, one that changes
	// nothing keeps it.
	var gids []string
	for i, name := range []string{"g0", "g1", "g2"} {
		g, err := b.Groups.Create(ctx(), acme, store.Group{DisplayName: name, Meta: store.Meta{Created: day(1, 1, 0), LastModified: day(1, 1+i, 0)}})
		require.NoError(t, err)
		gids = append(gids, g.ID)
	}
	_, err := b.Groups.Patch(ctx(), acme, gids[0], store.GroupPatch{Add: []string{ids["u1"]}, Modified: day(3, 1, 0)})
	require.NoError(t, err)
	_, err = b.Groups.Patch(ctx(), acme, gids[1], store.GroupPatch{Remove: []string{ids["u1"]}, Modified: day(4, 1, 0)})
	require.NoError(t, err)
	_, err = b.Groups.Update(ctx(), acme, gids[2], func(g *store.Group) error { g.Meta.LastModified = day(2, 1, 0); return nil })
	require.NoError(t, err)
	lm, sub, err := schema.Group().Lookup("meta.lastModified")
	require.NoError(t, err)
	for _, desc := range []bool{false, true} {
		want := []string{"g1", "g2", "g0"}
		if desc {
			slices.Reverse(want)
		}
		s := store.Sort{Attr: lm, Sub: sub, Descending: desc}
		p, err := b.Groups.List(ctx(), acme, store.Query{Sort: s, Count: 2})
		require.NoError(t, err)
		require.NotNil(t, p.Next)
		rest, err := b.Groups.List(ctx(), acme, store.Query{Sort: s, After: p.Next, Count: 2})
		require.NoError(t, err)
		assert.Equal(t, want, append(groupNames(p.Resources), groupNames(rest.Resources)...), "descending %v", desc)
	}
}
