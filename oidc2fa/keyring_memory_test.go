package oidc2fa_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store/memstore"
)

// BenchmarkKeyRingBytesPerTenant reports the heap a stored ring keeps for each tenant whose
// EdDSA key it holds in memory (B/tenant), the figure behind DefaultKeyCacheTenants.
func BenchmarkKeyRingBytesPerTenant(b *testing.B) {
	ctx := context.Background()
	const tenants = 2000
	for b.Loop() {
		keys := memstore.New().SigningKeys()
		maker, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, keys)
		if err != nil {
			b.Fatal(err)
		}
		for i := range tenants {
			if _, err := maker.Keys(ctx, fmt.Sprintf("tenant-%05d", i)); err != nil {
				b.Fatal(err)
			}
		}
		ring, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, keys)
		if err != nil {
			b.Fatal(err)
		}
		before := heapInUse()
		for i := range tenants {
			if _, err := ring.Sign(ctx, fmt.Sprintf("tenant-%05d", i), []byte(`{}`)); err != nil {
				b.Fatal(err)
			}
		}
		after := heapInUse()
		b.ReportMetric(float64(after-before)/tenants, "B/tenant")
		runtime.KeepAlive(ring)
		runtime.KeepAlive(keys)
	}
}

// heapInUse returns the bytes of live heap objects after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
