package memstore_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/schema"
)

// typicalUser is the user the benchmarks store: a name, one email, one phone number and an
// enterprise department, with every fifth a title containing "Engineer", every third inactive
// and every other email a work one.
func typicalUser(i int) store.User {
	titles := [...]string{"Senior Engineer", "Designer", "Account Manager", "Analyst", "Support Lead"}
	emailType := "home"
	if i%2 == 0 {
		emailType = "work"
	}
	return store.User{
		UserName:     fmt.Sprintf("user%07d@example.com", i),
		Active:       i%3 != 0,
		DisplayName:  fmt.Sprintf("User %d", i),
		Title:        titles[i%len(titles)],
		Name:         store.Name{GivenName: "Given", FamilyName: fmt.Sprintf("Family%d", i)},
		Emails:       []store.MultiValue{{Value: fmt.Sprintf("user%07d@example.com", i), Type: emailType, Primary: true}},
		PhoneNumbers: []store.MultiValue{{Value: fmt.Sprintf("+1 555 %07d", i), Type: "work"}},
		Enterprise:   store.EnterpriseUser{Department: "Department " + fmt.Sprint(i%40)},
		Meta:         store.Meta{Created: time.Unix(1700000000+int64(i), 0), LastModified: time.Unix(1700000000+int64(i), 0)},
	}
}

// fill makes a store with one tenant "t" of n typical users.
func fill(b *testing.B, n int) (*memstore.Store, store.Users) {
	b.Helper()
	ctx := context.Background()
	s := memstore.New()
	if err := s.Tenants().Create(ctx, store.Tenant{ID: "t"}); err != nil {
		b.Fatal(err)
	}
	users := s.Users()
	for i := range n {
		if _, err := users.Create(ctx, "t", typicalUser(i)); err != nil {
			b.Fatal(err)
		}
	}
	return s, users
}

func parse(b *testing.B, f string) filter.Expr {
	b.Helper()
	e, err := filter.Parse(f, schema.User())
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkFilterUserNameEq looks users up by userName: an index lookup, so the cost must not
// grow with the tenant (1M within 2x of 1k).
func BenchmarkFilterUserNameEq(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("users=%s", short(n)), func(b *testing.B) {
			_, users := fill(b, n)
			filters := make([]filter.Expr, 1024)
			for i := range filters {
				// Upper case: the lookup is case-insensitive.
				filters[i] = parse(b, fmt.Sprintf(`userName eq "USER%07d@EXAMPLE.COM"`, (i*7919)%n))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				page, err := users.List(ctx, "t", store.Query{Filter: filters[i%len(filters)], Count: 100})
				if err != nil || page.TotalResults != 1 {
					b.Fatalf("got %d results, %v", page.TotalResults, err)
				}
			}
		})
	}
}

// BenchmarkMemoryPerUser reports the heap a typical user costs in memstore at 1M users
// (B/user, target <= 2 KiB), next to what the same users cost as a plain []store.User
// (plainB/user), the floor any store pays for the data itself.
func BenchmarkMemoryPerUser(b *testing.B) {
	const n = 1_000_000
	for i := 0; i < b.N; i++ {
		before := heap()
		s, _ := fill(b, n)
		after := heap()
		runtime.KeepAlive(s)
		s = nil

		base := heap()
		plain := make([]store.User, n)
		for j := range plain {
			plain[j] = typicalUser(j)
			plain[j].ID = store.NewID("user")
		}
		plainAfter := heap()
		runtime.KeepAlive(plain)

		b.ReportMetric(float64(after-before)/n, "B/user")
		b.ReportMetric(float64(plainAfter-base)/n, "plainB/user")
	}
}

func heap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkFilterScan runs a filter no index answers over 100k users and reports the cost per
// user scanned (target <= 300 ns), next to a hand-written Go predicate over the same users as
// the baseline.
func BenchmarkFilterScan(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	_, users := fill(b, n)
	e := parse(b, `title co "eng" and (emails.type eq "work" or active eq false)`)
	all, err := users.List(ctx, "t", store.Query{Count: -1})
	if err != nil {
		b.Fatal(err)
	}
	want := 0
	handwritten := func(u *store.User) bool {
		if !strings.Contains(strings.ToLower(u.Title), "eng") {
			return false
		}
		if !u.Active {
			return true
		}
		for _, m := range u.Emails {
			if strings.EqualFold(m.Type, "work") {
				return true
			}
		}
		return false
	}
	for i := range all.Resources {
		if handwritten(&all.Resources[i]) {
			want++
		}
	}
	b.Run("memstore", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			page, err := users.List(ctx, "t", store.Query{Filter: e, Count: 100})
			if err != nil || page.TotalResults != want {
				b.Fatalf("got %d results, want %d (%v)", page.TotalResults, want, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/user")
	})
	b.Run("handwritten", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			got := 0
			for j := range all.Resources {
				if handwritten(&all.Resources[j]) {
					got++
				}
			}
			if got != want {
				b.Fatal(got)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/user")
	})
}

// BenchmarkListPageDeep pages 100 users at the start and at startIndex=90001 of 100k users:
// the deep page must cost within 20x of the first. The tenant is made with 110k users of which
// every eleventh is deleted, so positions have holes as a real tenant's do.
func BenchmarkListPageDeep(b *testing.B) {
	const n = 110_000
	ctx := context.Background()
	_, users := fill(b, n)
	all, err := users.List(ctx, "t", store.Query{Count: -1})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i += 11 {
		if err := users.Delete(ctx, "t", all.Resources[i].ID); err != nil {
			b.Fatal(err)
		}
	}
	for _, start := range []int{1, 90_001} {
		b.Run(fmt.Sprintf("startIndex=%d", start), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				page, err := users.List(ctx, "t", store.Query{StartIndex: start, Count: 100})
				if err != nil || len(page.Resources) != 100 || page.TotalResults != 100_000 {
					b.Fatalf("got %d of %d, %v", len(page.Resources), page.TotalResults, err)
				}
			}
		})
	}
}

func short(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return fmt.Sprint(n)
}
