package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/visid/visid/store"
)

// interactionTable holds every tenant's pending interactions by id (ids are unique over all
// tenants).
type interactionTable struct {
	mu   sync.RWMutex
	byID map[string]*store.Interaction
}

// Interactions implements store.Interactions. Its errors never carry an interaction's id: it
// names the interaction in URLs, and errors may be logged.
type Interactions struct{ s *Store }

var _ store.Interactions = (*Interactions)(nil)

// Create implements store.Interactions.
func (is *Interactions) Create(ctx context.Context, i store.Interaction) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case i.ID == "":
		return fmt.Errorf("interaction without id: %w", store.ErrInvalid)
	case i.Expires.IsZero():
		return fmt.Errorf("interaction without expiry: %w", store.ErrInvalid)
	}
	tbl := &is.s.interactions
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	if _, dup := tbl.byID[i.ID]; dup {
		return fmt.Errorf("interaction: id taken: %w", store.ErrConflict)
	}
	tbl.byID[i.ID] = copyInteraction(&i)
	return nil
}

// Get implements store.Interactions.
func (is *Interactions) Get(ctx context.Context, id string) (*store.Interaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tbl := &is.s.interactions
	tbl.mu.RLock()
	defer tbl.mu.RUnlock()
	i, ok := tbl.byID[id]
	if !ok {
		return nil, fmt.Errorf("interaction: %w", store.ErrNotFound)
	}
	return copyInteraction(i), nil
}

// Update implements store.Interactions.
func (is *Interactions) Update(ctx context.Context, id string, fn func(*store.Interaction) error) (*store.Interaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tbl := &is.s.interactions
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	i, ok := tbl.byID[id]
	if !ok {
		return nil, fmt.Errorf("interaction: %w", store.ErrNotFound)
	}
	work := copyInteraction(i)
	if err := fn(work); err != nil {
		return nil, err
	}
	if work.ID != i.ID {
		return nil, fmt.Errorf("interaction: the id cannot change: %w", store.ErrInvalid)
	}
	stored := copyInteraction(work)
	tbl.byID[id] = stored
	return copyInteraction(stored), nil
}

// Take implements store.Interactions.
func (is *Interactions) Take(ctx context.Context, id string) (*store.Interaction, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tbl := &is.s.interactions
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	i, ok := tbl.byID[id]
	if !ok {
		return nil, fmt.Errorf("interaction: %w", store.ErrNotFound)
	}
	delete(tbl.byID, id)
	return i, nil // removed, so no longer shared
}

// DeleteExpired implements store.Interactions.
func (is *Interactions) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	tbl := &is.s.interactions
	tbl.mu.Lock()
	defer tbl.mu.Unlock()
	n := 0
	for id, i := range tbl.byID {
		if i.Expires.Before(now) {
			delete(tbl.byID, id)
			n++
		}
	}
	return n, nil
}

func copyInteraction(i *store.Interaction) *store.Interaction {
	c := *i
	c.AuthState = slices.Clone(i.AuthState)
	return &c
}
