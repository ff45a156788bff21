package scimsvc_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// manyEmails returns n work emails numbered from first.
func manyEmails(first, n int) []store.MultiValue {
	out := make([]store.MultiValue, n)
	for i := range out {
		out[i] = store.MultiValue{Value: fmt.Sprintf("ann%06d@example.com", first+i), Type: "work"}
	}
	return out
}

// addEmailsBody is a PatchOp adding n work emails numbered from first.
func addEmailsBody(first, n int) string {
	var b strings.Builder
	b.WriteString(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"emails","value":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"value":"ANN%06d@example.com","type":"work"}`, first+i)
	}
	b.WriteString(`]}]}`)
	return b.String()
}

// BenchmarkPatchAddManyEmails is a PATCH that adds n emails to a user that has n, half of them
// already there (in another case, so the comparison folds case), against a PATCH of the same user
// that only renames it (small). Each iteration patches a fresh user. The figure to quote is the
// ms/op of each size, which grows linearly with n: the duplicate check is a map, not a scan of
// the list for each new value.
func BenchmarkPatchAddManyEmails(b *testing.B) {
	for _, n := range []int{0, 1_000, 5_000} {
		name := fmt.Sprintf("emails=%d+%d", n, n)
		if n == 0 {
			name = "small"
		}
		b.Run(name, func(b *testing.B) {
			h, mem, key := benchEnv(b, func(c *scimsvc.Config) { c.MaxMultiValued = -1 })
			body := addEmailsBody(n/2, n)
			if n == 0 {
				body = `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"displayName","value":"Ann"}]}`
			}
			ctx := context.Background()
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				i++
				u, err := mem.Users().Create(ctx, "acme", store.User{UserName: fmt.Sprintf("ann%d", i), Active: true, Emails: manyEmails(0, n)})
				if err != nil {
					b.Fatal(err)
				}
				req := httptest.NewRequest("PATCH", "/acme/Users/"+u.ID, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/scim+json")
				w := discard{h: http.Header{}}
				b.StartTimer()
				h.ServeHTTP(&w, req)
				if w.code != http.StatusOK {
					b.Fatalf("status %d", w.code)
				}
			}
		})
	}
}

// BenchmarkPatchAddManyMembers is Entra ID's way of filling a large group: one PATCH adding n
// members to a group that has n, half of them already members, and removing n/2 others, against
// a PATCH that only renames the group (small). Each iteration patches a fresh group. The
// figure to quote is the ms/op of each size; it grows linearly with n.
func BenchmarkPatchAddManyMembers(b *testing.B) {
	for _, n := range []int{0, 10_000, 50_000} {
		name := fmt.Sprintf("members=%d+%d", n, n)
		if n == 0 {
			name = "small"
		}
		b.Run(name, func(b *testing.B) {
			h, mem, key := benchEnv(b, func(c *scimsvc.Config) { c.MaxGroupMembers, c.MaxBodyBytes = -1, 8<<20 })
			ctx := context.Background()
			ids := make([]string, 2*n)
			for i := range ids {
				u, err := mem.Users().Create(ctx, "acme", store.User{UserName: fmt.Sprintf("m%d", i), Active: true})
				if err != nil {
					b.Fatal(err)
				}
				ids[i] = u.ID
			}
			members := make([]store.Member, n)
			for i := range members {
				members[i] = store.Member{Value: ids[i]}
			}
			var body strings.Builder
			body.WriteString(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[`)
			if n == 0 {
				body.WriteString(`{"op":"replace","path":"displayName","value":"Staff"}`)
			} else {
				body.WriteString(`{"op":"add","path":"members","value":[`)
				for i, id := range ids[n/2 : n/2+n] {
					if i > 0 {
						body.WriteByte(',')
					}
					body.WriteString(`{"value":"` + id + `"}`)
				}
				body.WriteString(`]},{"op":"remove","path":"members","value":[`)
				for i, id := range ids[:n/2] {
					if i > 0 {
						body.WriteByte(',')
					}
					body.WriteString(`{"value":"` + id + `"}`)
				}
				body.WriteString(`]}`)
			}
			body.WriteString(`]}`)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				g, err := mem.Groups().Create(ctx, "acme", store.Group{DisplayName: "All", Members: members})
				if err != nil {
					b.Fatal(err)
				}
				req := httptest.NewRequest("PATCH", "/acme/Groups/"+g.ID, strings.NewReader(body.String()))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/scim+json")
				w := discard{h: http.Header{}}
				b.StartTimer()
				h.ServeHTTP(&w, req)
				if w.code != http.StatusOK {
					b.Fatalf("status %d", w.code)
				}
			}
		})
	}
}
