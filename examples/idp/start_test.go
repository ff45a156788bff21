package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// tenantReads is a store.Tenants that records the pages its callers ask for.
type tenantReads struct {
	store.Tenants
	mu     sync.Mutex
	limits []int // the limit of each List
	counts int   // the number of Counts
}

func (r *tenantReads) List(ctx context.Context, after string, limit int) ([]store.Tenant, error) {
	r.mu.Lock()
	r.limits = append(r.limits, limit)
	r.mu.Unlock()
	return r.Tenants.List(ctx, after, limit)
}

func (r *tenantReads) Count(ctx context.Context) (int, error) {
	r.mu.Lock()
	r.counts++
	r.mu.Unlock()
	return r.Tenants.Count(ctx)
}

// TestStartCountsTenants: on a store of many tenants the service's start prints how many there
// are (tenants=N) and reads none of them, in demo mode and out of it: it counts them, and in demo
// mode makes or finds the demo tenant by its id.
func TestStartCountsTenants(t *testing.T) {
	const n = 2*store.MaxTenantPage + 1 // more than a page
	ctx := t.Context()
	mem := memstore.New()
	for i := range n {
		require.NoError(t, mem.Tenants().Create(ctx, store.Tenant{ID: fmt.Sprintf("t%05d", i)}))
	}
	reads := &tenantReads{Tenants: mem.Tenants()}
	b := mem.Backend()
	b.Tenants = reads
	log := discardLogger()
	sec, err := newSecrets(ctx, b, randomKEK())
	require.NoError(t, err)
	svc, err := newServices(b, "http://localhost:8080", sec, limiters{}, false, false, nil, log, nil)
	require.NoError(t, err)

	out, err := startMessage(ctx, b, svc, log, false, "http://localhost:8080", "sqlite:idp.db", true)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, fmt.Sprintf("base_url=http://localhost:8080\ntenants=%d\n\n", n)), "%s", out)
	assert.Equal(t, 1, reads.counts, "one Count")
	assert.Empty(t, reads.limits, "no List outside demo mode")

	for _, made := range []bool{true, false} { // the demo made, then found
		out, err = startMessage(ctx, b, svc, log, true, "http://localhost:8080", "sqlite:idp.db", true)
		require.NoError(t, err)
		assert.Contains(t, out, "tenant=demo\n")
		if made {
			assert.Contains(t, out, "scim_api_key=scimkey_", "the demo's secrets when it is made")
		}
		assert.Empty(t, reads.limits, "no List in demo mode")
	}
	count, err := mem.Tenants().Count(ctx)
	require.NoError(t, err)
	assert.Equal(t, n+1, count, "the demo tenant was made once")
}

// TestServiceStartCountsTenants runs the service, outside demo mode, on a SQLite store of more
// tenants than a page: it prints their number, and its metrics show the one Count it made.
func TestServiceStartCountsTenants(t *testing.T) {
	const n = store.MaxTenantPage + 1
	db := storeWithTenants(t, n)
	s := startObserved(t, "-db", db, "-demo=false")
	assert.Equal(t, fmt.Sprint(n), s.vars["tenants"])
	families := s.scrape(t)
	assert.Equal(t, uint64(1), histogramCount(families, "db_client_operation_duration_seconds", map[string]string{"db_operation_name": "tenants.count"}),
		"one tenants.count; families: %s", familyNames(families))
}
