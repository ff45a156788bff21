package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/visid/visid/store"
)

// pushedTable holds every tenant's pushed authorization requests by hash.
type pushedTable struct {
	mu     sync.Mutex
	byHash map[[32]byte]*store.PushedRequest
}

// PushedRequests implements store.PushedRequests. Its errors never carry a hash: they may be
// logged.
type PushedRequests struct{ s *Store }

var _ store.PushedRequests = (*PushedRequests)(nil)

// Create implements store.PushedRequests.
func (ps *PushedRequests) Create(ctx context.Context, r store.PushedRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case r.Tenant == "" || r.ClientID == "":
		return fmt.Errorf("pushed request without tenant or client: %w", store.ErrInvalid)
	case r.Hash == [32]byte{}:
		return fmt.Errorf("pushed request without hash: %w", store.ErrInvalid)
	case r.Expires.IsZero():
		return fmt.Errorf("pushed request without expiry: %w", store.ErrInvalid)
	}
	// The tenant's read lock is held while the request is stored, so a Tenants.Delete, which
	// removes the tenant's requests under the write lock, comes wholly before or after.
	ps.s.mu.RLock()
	defer ps.s.mu.RUnlock()
	if _, ok := ps.s.tenants[r.Tenant]; !ok {
		return fmt.Errorf("tenant %q: %w", r.Tenant, store.ErrNotFound)
	}
	tbl := &ps.s.pushed
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	if _, dup := tbl.byHash[r.Hash]; dup {
		return fmt.Errorf("pushed request: %w", store.ErrConflict)
	}
	c := r
	tbl.byHash[r.Hash] = &c
	return nil
}

// Consume implements store.PushedRequests.
func (ps *PushedRequests) Consume(ctx context.Context, tenant, clientID string, h [32]byte, now time.Time) (*store.PushedRequest, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tbl := &ps.s.pushed
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	r, ok := tbl.byHash[h]
	if !ok || r.Tenant != tenant || r.ClientID != clientID || !now.Before(r.Expires) {
		return nil, fmt.Errorf("pushed request: %w", store.ErrNotFound)
	}
	delete(tbl.byHash, h)
	return r, nil // removed, so no longer shared
}

// DeleteExpired implements store.PushedRequests.
func (ps *PushedRequests) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	tbl := &ps.s.pushed
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	n := 0
	for h, r := range tbl.byHash {
		if r.Expires.Before(now) {
			delete(tbl.byHash, h)
			n++
		}
	}
	return n, nil
}

// deleteTenant removes every request of tenant.
func (tbl *pushedTable) deleteTenant(tenant string) {
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	for h, r := range tbl.byHash {
		if r.Tenant == tenant {
			delete(tbl.byHash, h)
		}
	}
}
