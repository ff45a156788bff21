package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/visid/visid/store"
)

// signingKeyTable holds the signing keys by id and by tenant behind its own lock.
type signingKeyTable struct {
	mu   sync.Mutex
	byID map[string]*store.SigningKey
	// byTenant holds each tenant's keys ("" the shared ones) in List's order.
	byTenant map[string][]*store.SigningKey
	// tenants holds the tenants of byTenant but "", in order, for Tenants.
	tenants orderedSet
}

// signingKeyOrder is List's order: oldest Created first, by id for equal times.
func signingKeyOrder(a, b *store.SigningKey) int {
	return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
}

// SigningKeys implements store.SigningKeys. It keeps private keys in memory only.
type SigningKeys struct{ s *Store }

var _ store.SigningKeys = (*SigningKeys)(nil)

// Add implements store.SigningKeys.
func (ks *SigningKeys) Add(ctx context.Context, k store.SigningKey) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if k.ID == "" || k.Algorithm == "" || len(k.PrivateKey) == 0 || k.Created.IsZero() {
		return fmt.Errorf("signing key without id, algorithm, key or creation time: %w", store.ErrInvalid)
	}
	tbl := ks.s.signingKeyTable()
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	if _, dup := tbl.byID[k.ID]; dup {
		return fmt.Errorf("signing key %q: %w", k.ID, store.ErrConflict)
	}
	c := copySigningKey(&k)
	tbl.byID[k.ID] = c
	keys := tbl.byTenant[k.Tenant]
	i, _ := slices.BinarySearchFunc(keys, c, signingKeyOrder)
	tbl.byTenant[k.Tenant] = slices.Insert(keys, i, c)
	if k.Tenant != "" {
		tbl.tenants.add(k.Tenant)
	}
	return nil
}

// List implements store.SigningKeys.
func (ks *SigningKeys) List(ctx context.Context, tenant string) ([]store.SigningKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tbl := ks.s.signingKeyTable()
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	keys := tbl.byTenant[tenant]
	out := make([]store.SigningKey, 0, len(keys))
	for _, k := range keys {
		out = append(out, *copySigningKey(k))
	}
	return out, nil
}

// Tenants implements store.SigningKeys.
func (ks *SigningKeys) Tenants(ctx context.Context, after string, limit int) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if limit < 1 {
		return nil, fmt.Errorf("signing key tenants: limit %d: %w", limit, store.ErrInvalid)
	}
	tbl := ks.s.signingKeyTable()
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	out := tbl.tenants.after(after, limit)
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// Retire implements store.SigningKeys.
func (ks *SigningKeys) Retire(ctx context.Context, id string, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tbl := ks.s.signingKeyTable()
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	k, ok := tbl.byID[id]
	if !ok {
		return fmt.Errorf("signing key %q: %w", id, store.ErrNotFound)
	}
	if k.Retired.IsZero() {
		k.Retired = t
	}
	return nil
}

// Delete implements store.SigningKeys.
func (ks *SigningKeys) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tbl := ks.s.signingKeyTable()
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	k, ok := tbl.byID[id]
	if !ok {
		return fmt.Errorf("signing key %q: %w", id, store.ErrNotFound)
	}
	delete(tbl.byID, id)
	keys := slices.DeleteFunc(tbl.byTenant[k.Tenant], func(o *store.SigningKey) bool { return o == k })
	if len(keys) == 0 {
		delete(tbl.byTenant, k.Tenant)
		tbl.tenants.remove(k.Tenant)
	} else {
		tbl.byTenant[k.Tenant] = keys
	}
	return nil
}

func copySigningKey(k *store.SigningKey) *store.SigningKey {
	c := *k
	c.PrivateKey = slices.Clone(k.PrivateKey)
	return &c
}

// deleteTenant removes every key of tenant (Tenants.Delete).
func (tbl *signingKeyTable) deleteTenant(tenant string) {
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	for _, k := range tbl.byTenant[tenant] {
		delete(tbl.byID, k.ID)
	}
	delete(tbl.byTenant, tenant)
	tbl.tenants.remove(tenant)
}
