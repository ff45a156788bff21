package memstore

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// liveHeap is the live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// An idle tenant — made, with nothing in it — costs the store under 1 KiB: its record, its place
// in the map and the ordered index of ids, and no empty index (each is made by its first write).
// A host of 100,000 tenants so holds them in under 100 MiB.
func TestIdleTenantHeap(t *testing.T) {
	const n = 20_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("tenant-%06d", i)
	}
	s := New()
	before := liveHeap()
	for _, id := range ids {
		require.NoError(t, s.Tenants().Create(t.Context(), store.Tenant{ID: id, DisplayName: "Tenant " + id}))
	}
	per := (int64(liveHeap()) - int64(before)) / n
	runtime.KeepAlive(s)
	t.Logf("%d bytes an idle tenant", per)
	assert.Less(t, per, int64(1024), "bytes an idle tenant")
}
