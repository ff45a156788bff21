package scimsvc_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// benchGroupSizes are the group sizes of the group benchmarks: 10 and 10,000, and 1,000,000
// with VISID_BENCH_LARGE=1.
func benchGroupSizes() []int {
	sizes := []int{10, 10_000}
	if os.Getenv("VISID_BENCH_LARGE") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	return sizes
}

// benchGroup makes, in mem's tenant acme, n+1 users and a group of the first n; it returns the
// group's id and the last user's id.
func benchGroup(b *testing.B, mem *memstore.Store, n int) (group, newcomer string) {
	b.Helper()
	ctx := context.Background()
	members := make([]store.Member, n)
	for i := range n + 1 {
		u, err := mem.Users().Create(ctx, "acme", store.User{UserName: fmt.Sprintf("member%d", i), Active: true})
		if err != nil {
			b.Fatal(err)
		}
		if i < n {
			members[i] = store.Member{Value: u.ID}
		} else {
			newcomer = u.ID
		}
	}
	g, err := mem.Groups().Create(ctx, "acme", store.Group{DisplayName: "Everyone", Members: members})
	if err != nil {
		b.Fatal(err)
	}
	return g.ID, newcomer
}

// BenchmarkGroupAddMember is Entra ID's PATCH adding one member to a group of 10, 10,000 and
// (with VISID_BENCH_LARGE=1) 1,000,000 members, through the handler over memstore, the response
// without members (?excludedAttributes=members, as Entra ID and Okta can be answered; see
// Config.GroupNoContent). Each iteration adds a user who is not a member (timed) and removes it
// again through the store (not timed). Adding to the largest group should cost no more than
// twice adding to the smallest. store/sqlstore has the same benchmark for SQLite and
// PostgreSQL.
//
//	VISID_BENCH_LARGE=1 go test ./scimsvc -run '^$' -bench BenchmarkGroupAddMember -benchtime 2000x
func BenchmarkGroupAddMember(b *testing.B) {
	for _, n := range benchGroupSizes() {
		b.Run(fmt.Sprintf("memstore/members=%d", n), func(b *testing.B) {
			h, mem, key := benchEnv(b, func(c *scimsvc.Config) { c.MaxGroupMembers = -1 })
			group, newcomer := benchGroup(b, mem, n)
			body := patchOps(`[{"op":"Add","path":"members","value":[{"value":"` + newcomer + `"}]}]`)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("PATCH", "/acme/Groups/"+group+"?excludedAttributes=members", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/scim+json")
				w := discard{h: http.Header{}}
				h.ServeHTTP(&w, req)
				if w.code != http.StatusOK {
					b.Fatalf("status %d", w.code)
				}
				b.StopTimer()
				if _, err := mem.Groups().Patch(ctx, "acme", group, store.GroupPatch{Remove: []string{newcomer}}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkGetGroup is GET of a group of 10, 10,000 and (with VISID_BENCH_LARGE=1) 1,000,000
// members through the handler over memstore, with its members and with
// ?excludedAttributes=members; it reports the size of the response (bytes/response).
func BenchmarkGetGroup(b *testing.B) {
	for _, n := range benchGroupSizes() {
		h, mem, key := benchEnv(b)
		group, _ := benchGroup(b, mem, n)
		for _, q := range []string{"", "?excludedAttributes=members"} {
			name := "members"
			if q != "" {
				name = "excludedAttributes=members"
			}
			b.Run(fmt.Sprintf("memstore/members=%d/%s", n, name), func(b *testing.B) {
				size := 0
				for b.Loop() {
					req := httptest.NewRequest("GET", "/acme/Groups/"+group+q, nil)
					req.Header.Set("Authorization", "Bearer "+key)
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Fatalf("status %d", w.Code)
					}
					size = w.Body.Len()
				}
				b.ReportMetric(float64(size), "bytes/response")
			})
		}
	}
}
