package memstore_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// BenchmarkMemoryPerMember reports the heap one membership costs in memstore (B/member): a group
// of 50,000 members, against the same users in no group.
func BenchmarkMemoryPerMember(b *testing.B) {
	const n = 50_000
	ctx := context.Background()
	for b.Loop() {
		s := memstore.New()
		if err := s.Tenants().Create(ctx, store.Tenant{ID: "acme"}); err != nil {
			b.Fatal(err)
		}
		ids := make([]string, n)
		for i := range ids {
			u, err := s.Users().Create(ctx, "acme", store.User{UserName: fmt.Sprintf("member%d", i)})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = u.ID
		}
		g, err := s.Groups().Create(ctx, "acme", store.Group{DisplayName: "Everyone"})
		if err != nil {
			b.Fatal(err)
		}
		before := heap()
		for start := 0; start < n; start += 1000 {
			if _, err := s.Groups().Patch(ctx, "acme", g.ID, store.GroupPatch{Add: ids[start : start+1000]}); err != nil {
				b.Fatal(err)
			}
		}
		after := heap()
		runtime.KeepAlive(s)
		b.ReportMetric(float64(after-before)/n, "B/member")
	}
}
