package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/visid/visid/store"
)

// accessTokenTable holds every tenant's access tokens by hash.
type accessTokenTable struct {
	mu     sync.Mutex
	byHash map[[32]byte]*store.AccessToken
}

// AccessTokens implements store.AccessTokens. Its errors never carry a hash: they may be
// logged.
type AccessTokens struct{ s *Store }

var _ store.AccessTokens = (*AccessTokens)(nil)

// Create implements store.AccessTokens.
func (as *AccessTokens) Create(ctx context.Context, t store.AccessToken) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case t.Tenant == "" || t.ClientID == "" || t.Subject == "":
		return fmt.Errorf("access token without tenant, client or subject: %w", store.ErrInvalid)
	case t.Hash == [32]byte{}:
		return fmt.Errorf("access token without hash: %w", store.ErrInvalid)
	case t.Expires.IsZero():
		return fmt.Errorf("access token without expiry: %w", store.ErrInvalid)
	}
	// Under the tenants' read lock, so a Tenants.Delete comes wholly before or after.
	as.s.mu.RLock()
	defer as.s.mu.RUnlock()
	if _, ok := as.s.tenants[t.Tenant]; !ok {
		return fmt.Errorf("tenant %q: %w", t.Tenant, store.ErrNotFound)
	}
	tbl := &as.s.accessTokens
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	if _, dup := tbl.byHash[t.Hash]; dup {
		return fmt.Errorf("access token: %w", store.ErrConflict)
	}
	c := t
	tbl.byHash[t.Hash] = &c
	return nil
}

// Get implements store.AccessTokens.
func (as *AccessTokens) Get(ctx context.Context, h [32]byte) (*store.AccessToken, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tbl := &as.s.accessTokens
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	t, ok := tbl.byHash[h]
	if !ok {
		return nil, fmt.Errorf("access token: %w", store.ErrNotFound)
	}
	c := *t
	return &c, nil
}

// RevokeCode implements store.AccessTokens.
func (as *AccessTokens) RevokeCode(ctx context.Context, codeHash [32]byte) (int, error) {
	return as.deleteWhere(ctx, func(t *store.AccessToken) bool { return t.CodeHash == codeHash })
}

// DeleteExpired implements store.AccessTokens.
func (as *AccessTokens) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	return as.deleteWhere(ctx, func(t *store.AccessToken) bool { return t.Expires.Before(now) })
}

// deleteWhere removes every token for which match is true and returns how many it removed.
func (as *AccessTokens) deleteWhere(ctx context.Context, match func(*store.AccessToken) bool) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	tbl := &as.s.accessTokens
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	n := 0
	for h, t := range tbl.byHash {
		if match(t) {
			delete(tbl.byHash, h)
			n++
		}
	}
	return n, nil
}

// deleteTenant removes every token of tenant.
func (tbl *accessTokenTable) deleteTenant(tenant string) {
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	for h, t := range tbl.byHash {
		if t.Tenant == tenant {
			delete(tbl.byHash, h)
		}
	}
}
