package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// Webhooks implements store.Webhooks over the webhooks table. An endpoint's secret is sealed
// with AES-256-GCM under Config.KeyEncryptionKey, with the tenant and the endpoint's id as
// additional data; without that key Create, Get and List fail with ErrNoKeyEncryptionKey.
type Webhooks struct{ s *Store }

var _ store.Webhooks = (*Webhooks)(nil)

const webhookColumns = `tenant, id, url, types, secret, created, cursor, attempts, first_failure, next_attempt, failing, last_error`

// secretAD is the additional data a secret of endpoint id of tenant is sealed with, so a sealed
// secret copied to another row does not open.
func secretAD(tenant, id string) []byte { return []byte("webhook/" + tenant + "/" + id) }

// Create implements store.Webhooks.
func (ws *Webhooks) Create(ctx context.Context, e store.WebhookEndpoint) (*store.WebhookEndpoint, error) {
	aead, err := ws.s.keyAEAD()
	if err != nil {
		return nil, err
	}
	if e.URL == "" || e.Secret == "" {
		return nil, fmt.Errorf("webhook endpoint without URL or secret: %w", store.ErrInvalid)
	}
	if e.ID == "" {
		e.ID = store.NewID("webhook")
	}
	types, err := json.Marshal(append([]store.EventType{}, e.Types...))
	if err != nil {
		return nil, err
	}
	sealed := seal(aead, []byte(e.Secret), secretAD(e.Tenant, e.ID))
	err = ws.s.write(ctx, func(tx *txn) error {
		if err := tx.tenantExists(ctx, e.Tenant); err != nil {
			return err
		}
		if e.Delivery.Cursor == "" {
			var last int64
			err := tx.queryRow(ctx, `SELECT last FROM event_heads WHERE tenant = ?`, e.Tenant).Scan(&last)
			switch {
			case err == nil:
				e.Delivery.Cursor = changes.FormatCursor(last)
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
		n, err := tx.affected(ctx, `INSERT INTO webhooks (`+webhookColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			e.Tenant, e.ID, e.URL, string(types), sealed, nanos(e.Created), e.Delivery.Cursor, e.Delivery.Attempts,
			nanos(e.Delivery.FirstFailure), nanos(e.Delivery.NextAttempt), e.Delivery.Failing, e.Delivery.LastError)
		if err == nil && n == 0 {
			err = fmt.Errorf("webhook endpoint %q: %w", e.ID, store.ErrConflict)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	e.Types = append([]store.EventType(nil), e.Types...)
	return &e, nil
}

// Get implements store.Webhooks.
func (ws *Webhooks) Get(ctx context.Context, tenant, id string) (*store.WebhookEndpoint, error) {
	list, err := ws.list(ctx, `WHERE tenant = ? AND id = ?`, tenant, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("webhook endpoint %q: %w", id, store.ErrNotFound)
	}
	return &list[0], nil
}

// List implements store.Webhooks.
func (ws *Webhooks) List(ctx context.Context, tenant string) ([]store.WebhookEndpoint, error) {
	return ws.list(ctx, `WHERE tenant = ?`, tenant)
}

// list returns the endpoints that where selects, in creation order.
func (ws *Webhooks) list(ctx context.Context, where string, args ...any) ([]store.WebhookEndpoint, error) {
	aead, err := ws.s.keyAEAD()
	if err != nil {
		return nil, err
	}
	out := []store.WebhookEndpoint{}
	err = ws.s.read(ctx, func(tx *txn) error {
		out = out[:0]
		rows, err := tx.query(ctx, `SELECT `+webhookColumns+` FROM webhooks `+where+` ORDER BY n`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				e                    store.WebhookEndpoint
				types                string
				sealed               []byte
				created, first, next sql.NullInt64
				d                    = &e.Delivery
			)
			if err := rows.Scan(&e.Tenant, &e.ID, &e.URL, &types, &sealed, &created, &d.Cursor, &d.Attempts,
				&first, &next, &d.Failing, &d.LastError); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(types), &e.Types); err != nil {
				return fmt.Errorf("webhook endpoint %q: types: %w", e.ID, err)
			}
			if len(e.Types) == 0 {
				e.Types = nil
			}
			secret, err := unseal(aead, sealed, secretAD(e.Tenant, e.ID))
			if err != nil {
				return fmt.Errorf("webhook endpoint %q: the secret does not open under the key-encryption key: %w", e.ID, err)
			}
			e.Secret = string(secret)
			e.Created, d.FirstFailure, d.NextAttempt = fromNanos(created), fromNanos(first), fromNanos(next)
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete implements store.Webhooks.
func (ws *Webhooks) Delete(ctx context.Context, tenant, id string) error {
	return ws.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `DELETE FROM webhooks WHERE tenant = ? AND id = ?`, tenant, id)
		if err == nil && n == 0 {
			err = fmt.Errorf("webhook endpoint %q: %w", id, store.ErrNotFound)
		}
		return err
	})
}

// Lease implements store.Webhooks with one conditional UPDATE: of concurrent ones, the row's
// lock lets the first through, and the others then see its lease.
func (ws *Webhooks) Lease(ctx context.Context, tenant, id, holder string, now, until time.Time) error {
	return ws.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `UPDATE webhooks SET lease_holder = ?, lease_until = ?
			WHERE tenant = ? AND id = ? AND (lease_holder = ? OR lease_until IS NULL OR lease_until <= ?)`,
			holder, nanos(until), tenant, id, holder, nanos(now))
		if err != nil || n > 0 {
			return err
		}
		return tx.webhookMissingOr(ctx, tenant, id, fmt.Errorf("webhook endpoint %q is leased: %w", id, store.ErrConflict))
	})
}

// webhookMissingOr returns ErrNotFound when the endpoint does not exist, otherwise err.
func (t *txn) webhookMissingOr(ctx context.Context, tenant, id string, err error) error {
	ok, qerr := t.exists(ctx, `SELECT 1 FROM webhooks WHERE tenant = ? AND id = ?`, tenant, id)
	switch {
	case qerr != nil:
		return qerr
	case !ok:
		return fmt.Errorf("webhook endpoint %q: %w", id, store.ErrNotFound)
	}
	return err
}

// SaveDelivery implements store.Webhooks.
func (ws *Webhooks) SaveDelivery(ctx context.Context, tenant, id, holder string, now time.Time, d store.WebhookDelivery) error {
	return ws.s.write(ctx, func(tx *txn) error {
		var (
			e     store.WebhookEndpoint
			lease string
			until sql.NullInt64
		)
		err := tx.queryRow(ctx, `SELECT url, failing, lease_holder, lease_until FROM webhooks WHERE tenant = ? AND id = ?`+tx.d.forUpdate(),
			tenant, id).Scan(&e.URL, &e.Delivery.Failing, &lease, &until)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("webhook endpoint %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if lease != holder || !until.Valid || until.Int64 <= now.UnixNano() {
			return fmt.Errorf("webhook endpoint %q: the lease of %q has ended: %w", id, holder, store.ErrConflict)
		}
		if _, err := tx.exec(ctx, `UPDATE webhooks SET cursor = ?, attempts = ?, first_failure = ?, next_attempt = ?,
			failing = ?, last_error = ? WHERE tenant = ? AND id = ?`,
			d.Cursor, d.Attempts, nanos(d.FirstFailure), nanos(d.NextAttempt), d.Failing, d.LastError, tenant, id); err != nil {
			return err
		}
		e.ID = id
		p := changes.New(ctx, tenant)
		changes.Webhook(p, &e, d)
		return tx.recordEvents(ctx, tenant, p)
	})
}

// Resume implements store.Webhooks.
func (ws *Webhooks) Resume(ctx context.Context, tenant, id string) error {
	return ws.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `UPDATE webhooks SET attempts = 0, first_failure = NULL, next_attempt = NULL,
			failing = ?, last_error = '' WHERE tenant = ? AND id = ?`, false, tenant, id)
		if err == nil && n == 0 {
			err = fmt.Errorf("webhook endpoint %q: %w", id, store.ErrNotFound)
		}
		return err
	})
}
