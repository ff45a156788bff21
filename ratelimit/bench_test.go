package ratelimit_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/visid/visid/ratelimit"
)

// benchRate is SCIM's quota.
var benchRate = ratelimit.Rate{Limit: 200, Period: time.Minute}

// liveHeap returns the live heap in bytes after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkRateLimiterAllow is Memory.Allow cycling through a million distinct keys, each
// already held, on the real clock. heap-MiB is the live heap once the million keys are held,
// their strings included; B/key is what the Memory adds per key, its strings excluded.
func BenchmarkRateLimiterAllow(b *testing.B) {
	const n = 1_000_000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key_%08d", i) // 12 bytes, as an API key id
	}
	before := liveHeap()
	m, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: benchRate})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range keys {
		if _, err := m.Allow(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
	after := liveHeap()
	if got := m.Len(); got != n {
		b.Fatalf("Len = %d after %d keys, want %d", got, n, n)
	}

	i := 0
	for b.Loop() {
		if _, err := m.Allow(ctx, keys[i]); err != nil {
			b.Fatal(err)
		}
		if i++; i == n {
			i = 0
		}
	}
	b.ReportMetric(float64(after)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(after-before)/n, "B/key")
	runtime.KeepAlive(keys)
}

// BenchmarkRateLimiterAllowOneKey is Memory.Allow on a single key: the cost without cache
// misses, to quote BenchmarkRateLimiterAllow against.
func BenchmarkRateLimiterAllowOneKey(b *testing.B) {
	m, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: benchRate})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.Allow(ctx, "key_00000001"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRateLimiterAllowBare is the baseline: x/time/rate's AllowN on one bucket with
// time.Now, what Memory builds on.
func BenchmarkRateLimiterAllowBare(b *testing.B) {
	lim := rate.NewLimiter(rate.Limit(float64(benchRate.Limit)/benchRate.Period.Seconds()), benchRate.Limit)
	for b.Loop() {
		lim.AllowN(time.Now(), 1)
	}
}

// BenchmarkRateLimiterAllowParallel is Memory.Allow from every core (b.RunParallel) on 65,536
// distinct keys: the cost when the shards' locks are contended.
func BenchmarkRateLimiterAllowParallel(b *testing.B) {
	const n = 1 << 16
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key_%08d", i)
	}
	m, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: benchRate})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range keys {
		_, _ = m.Allow(ctx, k)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(time.Now().UnixNano()) & (n - 1)
		for pb.Next() {
			_, _ = m.Allow(ctx, keys[i])
			i = (i + 1) & (n - 1)
		}
	})
}
