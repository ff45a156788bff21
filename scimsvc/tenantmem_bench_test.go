package scimsvc_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/sqlstore"
)

// liveHeap is the live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkIdleTenantMemory measures what an idle tenant costs in the Go heap. Over memstore
// and over SQLite it makes N tenants, each with one API key, sends one SCIM request per tenant
// with its key (GET /{tenant}/Users?filter=userName eq "ann", Entra ID's first request), lets
// the rate limiter's buckets refill and its shards be swept, and reports the live heap per
// tenant after a collection: what the store holds (store-B/tenant, with its key), what the
// handler added while every tenant had just made its request (served-B/tenant), and what the
// handler still holds once they are idle (idle-B/tenant). N is 2,000; VISID_BENCH_IDLE_TENANTS
// sets another (100000 for the figures of docs/production.md). Run it with -benchtime 1x, each
// store in a process of its own for rss-MiB to be its own:
//
//	go test ./scimsvc -run '^$' -bench 'IdleTenantMemory/store=memstore' -benchtime 1x
//
// SQLite keeps its page cache outside the Go heap (modernc.org/sqlite allocates it itself):
// rss-MiB, the process's resident memory at the end, counts it.
func BenchmarkIdleTenantMemory(b *testing.B) {
	n := 2000
	if s := os.Getenv("VISID_BENCH_IDLE_TENANTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	stores := []struct {
		name string
		open func(b *testing.B) store.Backend
	}{
		{"memstore", func(*testing.B) store.Backend { return memstore.New().Backend() }},
		{"sqlite", func(b *testing.B) store.Backend {
			ctx := context.Background()
			s, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "visid.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			if err := s.Migrate(ctx); err != nil {
				b.Fatal(err)
			}
			return s.Backend()
		}},
	}
	for _, st := range stores {
		b.Run("store="+st.name, func(b *testing.B) {
			var storeB, servedB, idleB float64
			for b.Loop() {
				storeB, servedB, idleB = idleTenantMemory(b, st.open, n)
			}
			b.ReportMetric(storeB, "store-B/tenant")
			b.ReportMetric(servedB, "served-B/tenant")
			b.ReportMetric(idleB, "idle-B/tenant")
			if rss := residentMiB(); rss > 0 {
				b.ReportMetric(rss, "rss-MiB")
			}
		})
	}
}

// idleTenantMemory is one run of BenchmarkIdleTenantMemory over the store open returns.
func idleTenantMemory(b *testing.B, open func(b *testing.B) store.Backend, n int) (storeB, servedB, idleB float64) {
	ctx := context.Background()
	b.StopTimer()
	defer b.StartTimer()
	// The keys' secrets are kept in memory made before the first measure, so that no measure
	// counts them: the requests need them, the tenants do not.
	secretBytes := make([]byte, 0, n*128)
	secretEnds := make([]int, n)
	secretOf := func(i int) string {
		from := 0
		if i > 0 {
			from = secretEnds[i-1]
		}
		return string(secretBytes[from:secretEnds[i]])
	}
	start := liveHeap()
	back := open(b)
	clock := newClock()
	for i := range n {
		tenant := fmt.Sprintf("tenant-%06d", i)
		if err := back.Tenants.Create(ctx, store.Tenant{ID: tenant, DisplayName: "Tenant " + tenant, Created: clock.Now()}); err != nil {
			b.Fatal(err)
		}
		secret, _, err := scimsvc.IssueAPIKey(ctx, back.APIKeys, scimsvc.KeySpec{Name: "Entra ID", Tenants: []string{tenant}, Now: clock.Now()})
		if err != nil {
			b.Fatal(err)
		}
		if len(secretBytes)+len(secret) > cap(secretBytes) {
			b.Fatalf("a secret of %d bytes", len(secret))
		}
		secretBytes = append(secretBytes, secret...)
		secretEnds[i] = len(secretBytes)
	}
	stored := liveHeap()
	// The handler's default limiter, made here so that the benchmark can sweep it quickly.
	limiter, err := ratelimit.NewMemory(ratelimit.MemoryConfig{
		Rate: ratelimit.Rate{Limit: scimsvc.DefaultRequestsPerMinute, Period: time.Minute, Burst: scimsvc.DefaultRequestsPerMinute},
		Now:  clock.Now,
	})
	if err != nil {
		b.Fatal(err)
	}
	h, err := scimsvc.New(scimsvc.Config{
		Tenants: back.Tenants, Users: back.Users, Groups: back.Groups, APIKeys: back.APIKeys, Events: back.Events,
		BaseURL: "https://id.example.com/scim/v2", Now: clock.Now, RateLimiter: limiter,
	})
	if err != nil {
		b.Fatal(err)
	}
	request := func(i int) {
		req := httptest.NewRequest("GET", fmt.Sprintf("/tenant-%06d/Users?filter=userName%%20eq%%20%%22ann%%22", i), nil)
		req.Header.Set("Authorization", "Bearer "+secretOf(i))
		w := discard{h: http.Header{}}
		h.ServeHTTP(&w, req)
		if w.code != http.StatusOK {
			b.Fatalf("tenant %d: status %d", i, w.code)
		}
	}
	request(0) // what the handler makes once, on its first request, is no tenant's cost
	made := liveHeap()
	b.StartTimer()
	for i := 1; i < n; i++ {
		request(i)
	}
	b.StopTimer()
	served := liveHeap()
	if limiter.Len() < n {
		b.Fatalf("the limiter holds %d keys of %d", limiter.Len(), n)
	}
	// Every tenant goes idle: their buckets refill, and traffic on one key sweeps every shard.
	clock.Advance(2 * time.Minute)
	for range 4096 * 16 * 2 {
		if _, err := limiter.Allow(ctx, "hot"); err != nil {
			b.Fatal(err)
		}
	}
	if l := limiter.Len(); l != 1 {
		b.Fatalf("the limiter holds %d keys once every tenant is idle", l)
	}
	idle := liveHeap()
	runtime.KeepAlive(back)
	runtime.KeepAlive(h)
	runtime.KeepAlive(secretBytes)
	runtime.KeepAlive(secretEnds)
	per := func(hi, lo uint64, n int) float64 { return (float64(hi) - float64(lo)) / float64(n) }
	return per(stored, start, n), per(served, made, n-1), per(idle, made, n-1)
}
