package memstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/schema"
)

// TestIndexedEqualsScan checks the index planner against brute force: for random filters built
// from equalities the indexes answer, combined with ones they do not, List returns exactly the
// users that filter.Match keeps, in creation order, with the same total, through any paging.
func TestIndexedEqualsScan(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
	mem := memstore.New()
	require.NoError(t, mem.Tenants().Create(ctx, store.Tenant{ID: "t"}))
	users := mem.Users()
	names := []string{"ann", "Bob", "carol", "DAVE", "émile", "Ærø"}
	emails := []string{"a@x.test", "B@X.TEST", "c@y.test", "shared@z.test"}
	for i := range 60 {
		u := store.User{
			UserName:   fmt.Sprintf("%s%d", names[i%len(names)], i),
			ExternalID: fmt.Sprintf("ext-%d", i%7),
			Active:     r.IntN(2) == 0,
			Title:      []string{"", "Engineer", "Designer"}[r.IntN(3)],
		}
		for range r.IntN(3) {
			u.Emails = append(u.Emails, store.MultiValue{Value: emails[r.IntN(len(emails))], Type: []string{"work", "home"}[r.IntN(2)]})
		}
		_, err := users.Create(ctx, "t", u)
		require.NoError(t, err)
	}
	all, err := users.List(ctx, "t", store.Query{Count: -1})
	require.NoError(t, err)

	leaf := func() string {
		u := all.Resources[r.IntN(len(all.Resources))]
		switch r.IntN(9) {
		case 0:
			return fmt.Sprintf(`id eq %q`, u.ID)
		case 1:
			return fmt.Sprintf(`userName eq %q`, strings.ToUpper(u.UserName))
		case 2:
			return fmt.Sprintf(`externalId eq %q`, u.ExternalID)
		case 3:
			return fmt.Sprintf(`emails.value eq %q`, strings.ToUpper(emails[r.IntN(len(emails))]))
		case 4:
			return fmt.Sprintf(`emails[type eq "work"].value eq %q`, emails[r.IntN(len(emails))])
		case 5:
			return fmt.Sprintf(`emails[value eq %q]`, emails[r.IntN(len(emails))])
		case 6:
			return `active eq true`
		case 7:
			return `title co "eng"`
		}
		return `userName eq "nobody"`
	}
	var expr func(depth int) string
	expr = func(depth int) string {
		if depth == 0 || r.IntN(3) == 0 {
			return leaf()
		}
		switch r.IntN(3) {
		case 0:
			return "(" + expr(depth-1) + " and " + expr(depth-1) + ")"
		case 1:
			return "(" + expr(depth-1) + " or " + expr(depth-1) + ")"
		}
		return "not (" + expr(depth-1) + ")"
	}
	for range 1000 {
		src := expr(3)
		e, err := filter.Parse(src, schema.User())
		require.NoError(t, err, src)
		var want []string
		for i := range all.Resources {
			if filter.Match(e, &all.Resources[i]) {
				want = append(want, all.Resources[i].ID)
			}
		}
		start, count := 1+r.IntN(3), []int{-1, 0, 2, 100}[r.IntN(4)]
		page, err := users.List(ctx, "t", store.Query{Filter: e, StartIndex: start, Count: count})
		require.NoError(t, err, src)
		require.Equal(t, len(want), page.TotalResults, src)
		var got []string
		for _, u := range page.Resources {
			got = append(got, u.ID)
		}
		lo := min(start-1, len(want))
		hi := len(want)
		if count >= 0 {
			hi = min(lo+count, len(want))
		}
		require.Equal(t, nilIfEmpty(want[lo:hi]), nilIfEmpty(got), "%s (startIndex %d, count %d)", src, start, count)
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
