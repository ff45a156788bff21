package memstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// BenchmarkTenantList reads a page of 100 tenants from the middle of stores of 1,000 and
// 100,000 tenants, and creates and deletes one tenant in them: each costs about the same
// whatever the number of tenants, as List reads from the ordered index of ids and a create or a
// delete moves one block of it.
func BenchmarkTenantList(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1_000, 100_000} {
		s := memstore.New()
		for i := range n {
			if err := s.Tenants().Create(ctx, store.Tenant{ID: fmt.Sprintf("tenant-%06d", i)}); err != nil {
				b.Fatal(err)
			}
		}
		after := fmt.Sprintf("tenant-%06d", n/2)
		b.Run(fmt.Sprintf("page/tenants=%d", n), func(b *testing.B) {
			for b.Loop() {
				page, err := s.Tenants().List(ctx, after, 100)
				if err != nil || len(page) != 100 {
					b.Fatal(len(page), err)
				}
			}
		})
		b.Run(fmt.Sprintf("create-delete/tenants=%d", n), func(b *testing.B) {
			id := fmt.Sprintf("tenant-%06d-x", n/2)
			for b.Loop() {
				if err := s.Tenants().Create(ctx, store.Tenant{ID: id}); err != nil {
					b.Fatal(err)
				}
				if err := s.Tenants().Delete(ctx, id); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("count/tenants=%d", n), func(b *testing.B) {
			for b.Loop() {
				if c, err := s.Tenants().Count(ctx); err != nil || c != n {
					b.Fatal(c, err)
				}
			}
		})
	}
}
