package memstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// webhookRec is a stored endpoint and its lease.
type webhookRec struct {
	e      store.WebhookEndpoint
	cursor int64 // the event number of e.Delivery.Cursor
	holder string
	until  time.Time
	t      *tenantData
	due    dueEntry // under the dueIndex's lock
}

// Webhooks implements store.Webhooks. A tenant's endpoints live with the tenant.
type Webhooks struct{ s *Store }

var (
	_ store.Webhooks       = (*Webhooks)(nil)
	_ store.WebhookWakeUps = (*Webhooks)(nil)
)

func copyEndpoint(e *store.WebhookEndpoint) store.WebhookEndpoint {
	c := *e
	c.Types = slices.Clone(e.Types)
	return c
}

// Create implements store.Webhooks.
func (ws *Webhooks) Create(ctx context.Context, e store.WebhookEndpoint) (*store.WebhookEndpoint, error) {
	if e.URL == "" || e.Secret == "" {
		return nil, fmt.Errorf("webhook endpoint without URL or secret: %w", store.ErrInvalid)
	}
	if e.ID == "" {
		e.ID = store.NewID("webhook")
	}
	cursor, err := changes.ParseCursor(e.Delivery.Cursor)
	if err != nil {
		return nil, err
	}
	var out store.WebhookEndpoint
	err = ws.s.write(ctx, e.Tenant, func(t *tenantData) error {
		if slices.ContainsFunc(t.webhooks, func(r *webhookRec) bool { return r.e.ID == e.ID }) {
			return fmt.Errorf("webhook endpoint %q: %w", e.ID, store.ErrConflict)
		}
		if e.Delivery.Cursor == "" && t.log.last > 0 {
			e.Delivery.Cursor = changes.FormatCursor(t.log.last)
			cursor = t.log.last
		}
		rec := &webhookRec{e: copyEndpoint(&e), cursor: cursor, t: t}
		t.webhooks = append(t.webhooks, rec)
		t.due.added(rec, !e.Delivery.Failing && t.log.after(cursor))
		if !e.Delivery.Failing && !e.Delivery.NextAttempt.IsZero() && t.log.after(cursor) {
			t.due.set(rec, e.Delivery.NextAttempt)
		}
		out = copyEndpoint(&rec.e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// endpoint returns the tenant's endpoint id.
func (t *tenantData) endpoint(id string) (*webhookRec, error) {
	for _, r := range t.webhooks {
		if r.e.ID == id {
			return r, nil
		}
	}
	return nil, fmt.Errorf("webhook endpoint %q: %w", id, store.ErrNotFound)
}

// Get implements store.Webhooks.
func (ws *Webhooks) Get(ctx context.Context, tenant, id string) (*store.WebhookEndpoint, error) {
	var out store.WebhookEndpoint
	err := ws.s.read(ctx, tenant, func(t *tenantData) error {
		r, err := t.endpoint(id)
		if err == nil {
			out = copyEndpoint(&r.e)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// List implements store.Webhooks.
func (ws *Webhooks) List(ctx context.Context, tenant string) ([]store.WebhookEndpoint, error) {
	out := []store.WebhookEndpoint{}
	err := ws.s.read(ctx, tenant, func(t *tenantData) error {
		for _, r := range t.webhooks {
			out = append(out, copyEndpoint(&r.e))
		}
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return []store.WebhookEndpoint{}, nil // a tenant that does not exist has none
	}
	return out, err
}

// Delete implements store.Webhooks.
func (ws *Webhooks) Delete(ctx context.Context, tenant, id string) error {
	return ws.s.write(ctx, tenant, func(t *tenantData) error {
		r, err := t.endpoint(id)
		if err != nil {
			return err
		}
		t.webhooks = slices.DeleteFunc(t.webhooks, func(x *webhookRec) bool { return x == r })
		t.due.drop(r)
		return nil
	})
}

// Lease implements store.Webhooks.
func (ws *Webhooks) Lease(ctx context.Context, tenant, id, holder string, now, until time.Time) error {
	return ws.s.write(ctx, tenant, func(t *tenantData) error {
		r, err := t.endpoint(id)
		if err != nil {
			return err
		}
		if r.holder != holder && r.until.After(now) {
			return fmt.Errorf("webhook endpoint %q is leased: %w", id, store.ErrConflict)
		}
		r.holder, r.until = holder, until
		t.due.leased(r, until)
		return nil
	})
}

// SaveDelivery implements store.Webhooks.
func (ws *Webhooks) SaveDelivery(ctx context.Context, tenant, id, holder string, now time.Time, d store.WebhookDelivery) error {
	cursor, err := changes.ParseCursor(d.Cursor)
	if err != nil {
		return err
	}
	p := changes.New(ctx, tenant)
	return ws.s.write(ctx, tenant, func(t *tenantData) error {
		r, err := t.endpoint(id)
		if err != nil {
			return err
		}
		if r.holder != holder || !r.until.After(now) {
			return fmt.Errorf("webhook endpoint %q: the lease of %q has ended: %w", id, holder, store.ErrConflict)
		}
		changes.Webhook(p, &r.e, d)
		r.e.Delivery, r.cursor = d, cursor
		var at time.Time // idle
		if !d.Failing && t.log.after(cursor) {
			at = d.NextAttempt
			if at.IsZero() {
				at = now
			}
		}
		t.due.set(r, at)
		commit(p, t) // webhook.failing wakes the tenant's other endpoints
		return nil
	})
}

// Resume implements store.Webhooks.
func (ws *Webhooks) Resume(ctx context.Context, tenant, id string) error {
	return ws.s.write(ctx, tenant, func(t *tenantData) error {
		r, err := t.endpoint(id)
		if err != nil {
			return err
		}
		r.e.Delivery = store.WebhookDelivery{Cursor: r.e.Delivery.Cursor}
		t.due.set(r, time.Time{})
		t.due.wake([]*webhookRec{r}, t.log.lastKept())
		return nil
	})
}

// Due implements store.Webhooks: it reads the Store's dueIndex, then copies each endpoint
// under its tenant's lock.
func (ws *Webhooks) Due(ctx context.Context, now time.Time, limit int) ([]store.WebhookEndpoint, error) {
	if limit < 1 {
		return nil, fmt.Errorf("due webhook endpoints: limit %d: %w", limit, store.ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := []store.WebhookEndpoint{}
	for _, r := range ws.s.due.due(now, limit) {
		t := r.t
		t.mu.RLock()
		if !t.deleted && slices.Contains(t.webhooks, r) {
			out = append(out, copyEndpoint(&r.e))
		}
		t.mu.RUnlock()
	}
	return out, nil
}

// WakeUps implements store.WebhookWakeUps: the channel is closed when an endpoint is woken
// (an event recorded after its cursor, Create or Resume with events after it).
func (ws *Webhooks) WakeUps() <-chan struct{} { return ws.s.due.wakeUps() }
