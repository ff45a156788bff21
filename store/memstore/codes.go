package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/visid/visid/store"
)

// codeTable holds every tenant's authorization codes by hash. A consumed code stays, marked
// used, so that a replay is told apart from an unknown code, until DeleteExpired removes it.
type codeTable struct {
	mu     sync.Mutex
	byHash map[[32]byte]*codeRec
}

type codeRec struct {
	c    store.Code
	used bool
}

// Codes implements store.Codes.
type Codes struct{ s *Store }

var _ store.Codes = (*Codes)(nil)

// Create implements store.Codes.
func (cs *Codes) Create(ctx context.Context, c store.Code) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.Expires.IsZero() {
		return fmt.Errorf("code without expiry: %w", store.ErrInvalid)
	}
	// Errors never carry the hash: they may be logged.
	tbl := &cs.s.codes
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	if _, dup := tbl.byHash[c.Hash]; dup {
		return fmt.Errorf("code: %w", store.ErrConflict)
	}
	tbl.byHash[c.Hash] = &codeRec{c: copyCode(c)}
	return nil
}

// Consume implements store.Codes.
func (cs *Codes) Consume(ctx context.Context, h [32]byte) (*store.Code, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tbl := &cs.s.codes
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	rec, ok := tbl.byHash[h]
	if !ok {
		return nil, fmt.Errorf("code: %w", store.ErrNotFound)
	}
	out := copyCode(rec.c)
	if rec.used {
		return &out, fmt.Errorf("code of client %q: %w", rec.c.ClientID, store.ErrUsed)
	}
	rec.used = true
	return &out, nil
}

// DeleteExpired implements store.Codes.
func (cs *Codes) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	tbl := &cs.s.codes
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	n := 0
	for h, rec := range tbl.byHash {
		if rec.c.Expires.Before(now) {
			delete(tbl.byHash, h)
			n++
		}
	}
	return n, nil
}

func copyCode(c store.Code) store.Code {
	c.AMR = slices.Clone(c.AMR)
	return c
}
