package scimsvc_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkBulkCreate compares creating 100 users (with the attributes Entra ID provisions)
// with 100 POST /Users requests and with one POST /Bulk of 100 operations, both served
// in-process over memstore; one iteration creates the 100 users. The figure to quote is bulk's
// time per iteration as a fraction of requests'.
func BenchmarkBulkCreate(b *testing.B) {
	const n = 100
	user := func(run, i int) string {
		name := fmt.Sprintf("user%d-%03d@example.com", run, i)
		return `{"userName":"` + name + `","externalId":"ext-` + name + `","active":true,"displayName":"Ann Lee",` +
			`"name":{"givenName":"Ann","familyName":"Lee","formatted":"Ann Lee"},` +
			`"emails":[{"value":"` + name + `","type":"work","primary":true}]}`
	}
	serve := func(b *testing.B, h http.Handler, key, path, body string, want int) {
		b.Helper()
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/scim+json")
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want || strings.Contains(rec.Body.String(), `"status":"4`) {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
		}
	}
	b.Run("requests", func(b *testing.B) {
		h, _, key := benchEnv(b)
		run := 0
		for b.Loop() {
			for i := range n {
				serve(b, h, key, "/acme/Users", user(run, i), http.StatusCreated)
			}
			run++
		}
	})
	b.Run("bulk", func(b *testing.B) {
		h, _, key := benchEnv(b)
		run := 0
		for b.Loop() {
			ops := make([]string, n)
			for i := range n {
				ops[i] = fmt.Sprintf(`{"method":"POST","path":"/Users","bulkId":"u%d","data":%s}`, i, user(run, i))
			}
			serve(b, h, key, "/acme/Bulk", `{"Operations":[`+strings.Join(ops, ",")+`]}`, http.StatusOK)
			run++
		}
	})
}
