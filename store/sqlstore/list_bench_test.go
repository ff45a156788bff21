package sqlstore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/schema"
)

// listBenchUsers is the size of the tenant BenchmarkSQLListDeepPage pages through: 10,000, or
// the number in VISID_BENCH_LIST_USERS (1000000 for the figures docs/scim.md quotes; building
// that set takes about a minute per dialect).
func listBenchUsers(b *testing.B) int {
	if s := os.Getenv("VISID_BENCH_LIST_USERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 {
			b.Fatalf("VISID_BENCH_LIST_USERS=%q: want a number of users, at least 100", s)
		}
		return n
	}
	return 10_000
}

// BenchmarkSQLListDeepPage reads a page of 100 users of an n-user tenant (listBenchUsers) at
// the start (first) and after 90% of the tenant, by keyset position (cursor, what a SCIM
// cursor asks for) and by StartIndex (index, an OFFSET), in creation order and sorted by each
// attribute that a column with an index serves: userName, name.familyName (1000 names shared
// by many users, missing for one in 10: the page after 90% is the first of those without one),
// emails.value (the primary one), meta.created and meta.lastModified (in an order unrelated to
// creation), ascending, and name.familyName descending. Each page also counts the tenant
// (totalResults), as a SCIM list does. A cursor page should cost about what the first page
// costs, however deep; an index page grows with its depth. It reports ms/op besides ns/op.
//
//	VISID_BENCH_LIST_USERS=100000 go test ./store/sqlstore -run '^$' -bench ListDeepPage -benchtime 20x
func BenchmarkSQLListDeepPage(b *testing.B) {
	ctx := context.Background()
	n := listBenchUsers(b)
	deep := n / 10 * 9 // the page after 90% of the users
	sorts := []store.Sort{{}}
	for _, path := range []string{"userName", "name.familyName", "emails.value", "meta.created", "meta.lastModified", "-name.familyName"} {
		desc := strings.HasPrefix(path, "-")
		attr, sub, err := schema.User().Lookup(strings.TrimPrefix(path, "-"))
		if err != nil {
			b.Fatal(err)
		}
		sorts = append(sorts, store.Sort{Attr: attr, Sub: sub, Descending: desc})
	}
	for _, d := range benchDialects {
		for _, sort := range sorts {
			order := "created"
			switch {
			case sort.Descending:
				order = sort.Path() + "-desc"
			case !sort.IsZero():
				order = sort.Path()
			}
			var after *store.Position
			setup := func(b *testing.B) *Store {
				s := benchStore(b, d, benchSet{name: "sorted", emails: 1, sorted: true}, n)
				if after == nil {
					// The position of the deep-th user, found once by an OFFSET.
					p, err := s.Users().List(ctx, benchTenant, store.Query{Sort: sort, StartIndex: deep, Count: 1})
					if err != nil || p.Next == nil {
						b.Fatalf("position of user %d: %v", deep, err)
					}
					after = p.Next
					// The cursor page is the index page.
					byCursor, err := s.Users().List(ctx, benchTenant, store.Query{Sort: sort, After: after, Count: 100})
					if err != nil {
						b.Fatal(err)
					}
					byIndex, err := s.Users().List(ctx, benchTenant, store.Query{Sort: sort, StartIndex: deep + 1, Count: 100})
					if err != nil {
						b.Fatal(err)
					}
					if !slices.Equal(diffUserIDs(byCursor.Resources), diffUserIDs(byIndex.Resources)) {
						b.Fatalf("the page after user %d by cursor is not the one by StartIndex", deep)
					}
				}
				return s
			}
			for _, page := range []struct {
				name string
				q    func() store.Query
			}{
				{"first", func() store.Query { return store.Query{Sort: sort, Count: 100} }},
				{"cursor", func() store.Query { return store.Query{Sort: sort, After: after, Count: 100} }},
				{"index", func() store.Query { return store.Query{Sort: sort, StartIndex: deep + 1, Count: 100} }},
			} {
				b.Run(fmt.Sprintf("%s/users=%d/order=%s/%s", dialectName(d), n, order, page.name), func(b *testing.B) {
					users := setup(b).Users()
					q := page.q()
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						p, err := users.List(ctx, benchTenant, q)
						if err != nil {
							b.Fatal(err)
						}
						if p.TotalResults != n || len(p.Resources) != 100 {
							b.Fatalf("found %d users (%d on the page), want %d (100)", p.TotalResults, len(p.Resources), n)
						}
					}
					b.ReportMetric(float64(b.Elapsed())/float64(time.Millisecond)/float64(b.N), "ms/op")
				})
			}
		}
	}
}

// BenchmarkSQLSortedPageRead reads the page of 100 users that BenchmarkSQLListDeepPage lists
// sorted by each attribute a sort column serves, first and after 90% of the tenant (by keyset
// position), without the count of totalResults that every List adds: the index read alone,
// whose cost should not depend on the depth. It reports ms/op besides ns/op.
//
//	VISID_BENCH_LIST_USERS=100000 go test ./store/sqlstore -run '^$' -bench SortedPageRead -benchtime 50x
func BenchmarkSQLSortedPageRead(b *testing.B) {
	ctx := context.Background()
	n := listBenchUsers(b)
	for _, d := range benchDialects {
		for _, c := range sortColumns(kindUser) {
			sort, ok := columnSort(kindUser, c)
			if !ok {
				b.Fatalf("no sort of %s", c.path)
			}
			var after *store.Position
			for _, deep := range []bool{false, true} {
				page := "first"
				if deep {
					page = "cursor"
				}
				b.Run(fmt.Sprintf("%s/users=%d/order=%s/%s", dialectName(d), n, c.path, page), func(b *testing.B) {
					s := benchStore(b, d, benchSet{name: "sorted", emails: 1, sorted: true}, n)
					if after == nil {
						p, err := s.Users().List(ctx, benchTenant, store.Query{Sort: sort, StartIndex: n / 10 * 9, Count: 1})
						if err != nil || p.Next == nil {
							b.Fatalf("position of user %d: %v", n/10*9, err)
						}
						after = p.Next
					}
					var at *store.Position
					if deep {
						at = after
					}
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						err := s.read(ctx, func(t *txn) error {
							lq := listQuery{t: t, table: "users", from: "users r", where: "r.tenant = ?", args: []any{benchTenant},
								key: t.sortKey(kindUser, sort)}
							rows, err := lq.readParts(ctx, at, 100, 0)
							if err == nil && len(rows) != 100 {
								err = fmt.Errorf("read %d users, want 100", len(rows))
							}
							return err
						})
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed())/float64(time.Millisecond)/float64(b.N), "ms/op")
				})
			}
		}
	}
}
