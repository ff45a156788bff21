package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// clientRec is a stored client, kept in its tenant's seq in creation order.
type clientRec struct {
	c   store.Client
	pos int
}

func (r *clientRec) setPos(p int)  { r.pos = p }
func (r *clientRec) position() int { return r.pos }

// Clients implements store.Clients.
type Clients struct{ s *Store }

var _ store.Clients = (*Clients)(nil)

// Create implements store.Clients.
func (cs *Clients) Create(ctx context.Context, c store.Client) (*store.Client, error) {
	if len(c.RedirectURIs) == 0 {
		return nil, fmt.Errorf("client without redirect URI: %w", store.ErrInvalid)
	}
	if c.ID == "" {
		c.ID = store.NewID("client")
	}
	var out *store.Client
	p := changes.New(ctx, c.Tenant)
	err := cs.s.write(ctx, c.Tenant, func(t *tenantData) error {
		if _, dup := t.clientByID[c.ID]; dup {
			return fmt.Errorf("client id %q: %w", c.ID, store.ErrConflict)
		}
		rec := &clientRec{c: c}
		rec.c.RedirectURIs = slices.Clone(c.RedirectURIs)
		t.clients.push(rec)
		if t.clientByID == nil {
			t.clientByID = map[string]*clientRec{}
		}
		t.clientByID[c.ID] = rec
		out = new(store.Client)
		rec.fill(out)
		changes.Client(p, nil, out)
		commit(p, t)
		return nil
	})
	return out, err
}

// Get implements store.Clients.
func (cs *Clients) Get(ctx context.Context, tenant, id string) (*store.Client, error) {
	return get(cs.s, ctx, tenant, id, (*tenantData).client, (*clientRec).fill)
}

// List implements store.Clients.
func (cs *Clients) List(ctx context.Context, tenant string) ([]store.Client, error) {
	var out []store.Client
	err := cs.s.read(ctx, tenant, func(t *tenantData) error {
		out = make([]store.Client, 0, t.clients.live)
		for _, rec := range t.clients.slots {
			if rec != nil {
				out = append(out, store.Client{})
				rec.fill(&out[len(out)-1])
			}
		}
		return nil
	})
	return out, err
}

// Update implements store.Clients.
func (cs *Clients) Update(ctx context.Context, tenant, id string, fn func(*store.Client) error) (*store.Client, error) {
	return update(cs.s, ctx, tenant, id, (*tenantData).client, (*clientRec).fill, fn, (*tenantData).applyClient, clientEvents)
}

// clientEvents collects the events of a client's Update.
func clientEvents(p *changes.Pending, before, after *store.Client) error {
	changes.Client(p, before, after)
	return nil
}

// applyClient stores what an Update function left.
func (t *tenantData) applyClient(rec *clientRec, work, _ *store.Client) error {
	switch {
	case work.ID != rec.c.ID:
		return fmt.Errorf("client %q: the id cannot change: %w", rec.c.ID, store.ErrInvalid)
	case work.Tenant != rec.c.Tenant:
		return fmt.Errorf("client %q: the tenant cannot change: %w", rec.c.ID, store.ErrInvalid)
	case len(work.RedirectURIs) == 0:
		return fmt.Errorf("client %q: at least one redirect URI is required: %w", rec.c.ID, store.ErrInvalid)
	}
	rec.c = *work
	rec.c.RedirectURIs = slices.Clone(work.RedirectURIs)
	return nil
}

// Delete implements store.Clients.
func (cs *Clients) Delete(ctx context.Context, tenant, id string) error {
	p := changes.New(ctx, tenant)
	return cs.s.write(ctx, tenant, func(t *tenantData) error {
		rec, err := t.client(id)
		if err != nil {
			return err
		}
		if p != nil {
			var gone store.Client
			rec.fill(&gone)
			changes.Client(p, &gone, nil)
			commit(p, t)
		}
		delete(t.clientByID, id)
		t.clients.remove(rec.pos)
		return nil
	})
}

func (t *tenantData) client(id string) (*clientRec, error) {
	rec, ok := t.clientByID[id]
	if !ok {
		return nil, fmt.Errorf("client %q: %w", id, store.ErrNotFound)
	}
	return rec, nil
}

// fill copies the client into dst; dst shares no memory with the store.
func (r *clientRec) fill(dst *store.Client) {
	*dst = r.c
	dst.RedirectURIs = slices.Clone(r.c.RedirectURIs)
}
