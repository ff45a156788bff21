package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

type apiKeys struct {
	byID   map[string]*store.APIKey
	byHash map[[32]byte]*store.APIKey
	order  []*store.APIKey // creation order
	// version counts the changes of Create and Revoke (store.APIKeyVersions); it is written
	// under the store's write lock and read without it.
	version atomic.Uint64
}

// APIKeys implements store.APIKeys.
type APIKeys struct{ s *Store }

var (
	_ store.APIKeys        = (*APIKeys)(nil)
	_ store.APIKeyVersions = (*APIKeys)(nil)
)

// KeyVersion implements store.APIKeyVersions: it changes with every Create and Revoke.
func (ks *APIKeys) KeyVersion() uint64 { return ks.s.keys.version.Load() }

// Create implements store.APIKeys.
func (ks *APIKeys) Create(ctx context.Context, k store.APIKey) (*store.APIKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k.ID == "" {
		k.ID = store.NewID("key")
	}
	s := ks.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.keys.byID[k.ID]; dup {
		return nil, fmt.Errorf("api key %q: %w", k.ID, store.ErrConflict)
	}
	if _, dup := s.keys.byHash[k.SecretHash]; dup {
		return nil, fmt.Errorf("api key %q: secret already in use: %w", k.ID, store.ErrConflict)
	}
	stored := copyKey(&k)
	s.keys.byID[k.ID] = stored
	s.keys.byHash[k.SecretHash] = stored
	s.keys.order = append(s.keys.order, stored)
	s.keys.version.Add(1)
	s.commitKeyEvents(changes.APIKey(ctx, store.EventAPIKeyCreated, stored))
	return copyKey(stored), nil
}

// commitKeyEvents appends each collector's events to its tenant's log, if the tenant exists.
// The caller holds s.mu; a tenant's lock is taken under it (no one holding a tenant's lock
// waits for s.mu).
func (s *Store) commitKeyEvents(list []*changes.Pending) {
	for _, p := range list {
		t, ok := s.tenants[p.Tenant()]
		if !ok {
			continue
		}
		t.mu.Lock()
		if !t.deleted {
			commit(p, t)
		}
		t.mu.Unlock()
	}
}

// ByHash implements store.APIKeys.
func (ks *APIKeys) ByHash(ctx context.Context, h [32]byte) (*store.APIKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ks.s.mu.RLock()
	defer ks.s.mu.RUnlock()
	k, ok := ks.s.keys.byHash[h]
	if !ok {
		return nil, fmt.Errorf("api key: %w", store.ErrNotFound)
	}
	return copyKey(k), nil
}

// Get implements store.APIKeys.
func (ks *APIKeys) Get(ctx context.Context, id string) (*store.APIKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ks.s.mu.RLock()
	defer ks.s.mu.RUnlock()
	k, ok := ks.s.keys.byID[id]
	if !ok {
		return nil, fmt.Errorf("api key %q: %w", id, store.ErrNotFound)
	}
	return copyKey(k), nil
}

// List implements store.APIKeys.
func (ks *APIKeys) List(ctx context.Context) ([]store.APIKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ks.s.mu.RLock()
	defer ks.s.mu.RUnlock()
	out := make([]store.APIKey, len(ks.s.keys.order))
	for i, k := range ks.s.keys.order {
		out[i] = *copyKey(k)
	}
	return out, nil
}

// Touch implements store.APIKeys.
func (ks *APIKeys) Touch(ctx context.Context, id string, t time.Time) error {
	return ks.change(ctx, id, func(k *store.APIKey) {
		if t.After(k.LastUsed) {
			k.LastUsed = t
		}
	})
}

// Revoke implements store.APIKeys.
func (ks *APIKeys) Revoke(ctx context.Context, id string, t time.Time) error {
	return ks.change(ctx, id, func(k *store.APIKey) {
		if !k.Revoked {
			k.Revoked, k.RevokedAt = true, t
			ks.s.keys.version.Add(1)
			ks.s.commitKeyEvents(changes.APIKey(ctx, store.EventAPIKeyRevoked, k))
		}
	})
}

// change runs fn on the stored key under the store's write lock.
func (ks *APIKeys) change(ctx context.Context, id string, fn func(*store.APIKey)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ks.s.mu.Lock()
	defer ks.s.mu.Unlock()
	k, ok := ks.s.keys.byID[id]
	if !ok {
		return fmt.Errorf("api key %q: %w", id, store.ErrNotFound)
	}
	fn(k)
	return nil
}

func copyKey(k *store.APIKey) *store.APIKey {
	c := *k
	c.Tenants = slices.Clone(k.Tenants)
	c.Scopes = slices.Clone(k.Scopes)
	return &c
}
