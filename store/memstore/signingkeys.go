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

// signingKeyTable holds the signing keys by id behind its own lock.
type signingKeyTable struct {
	mu   sync.Mutex
	byID map[string]*store.SigningKey
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
	tbl.byID[k.ID] = copySigningKey(&k)
	return nil
}

// List implements store.SigningKeys.
func (ks *SigningKeys) List(ctx context.Context) ([]store.SigningKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tbl := ks.s.signingKeyTable()
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	out := make([]store.SigningKey, 0, len(tbl.byID))
	for _, k := range tbl.byID {
		out = append(out, *copySigningKey(k))
	}
	slices.SortFunc(out, func(a, b store.SigningKey) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
	})
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
	if _, ok := tbl.byID[id]; !ok {
		return fmt.Errorf("signing key %q: %w", id, store.ErrNotFound)
	}
	delete(tbl.byID, id)
	return nil
}

func copySigningKey(k *store.SigningKey) *store.SigningKey {
	c := *k
	c.PrivateKey = slices.Clone(k.PrivateKey)
	return &c
}
