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
	cursor, err := changes.ParseCursor(e.Delivery.Cursor)
	if err != nil {
		return nil, err
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
		// The tenant's row of event_heads counts its endpoints, so that a write that records
		// an event wakes them (Due). Taking it locks it until the commit: an event recorded
		// meanwhile is numbered either before this read (and the default cursor is at or past
		// it) or after the endpoint is stored (and wakes it).
		var last int64
		if err := tx.queryRow(ctx, `INSERT INTO event_heads (tenant, last, hooks) VALUES (?, 0, 1)
			ON CONFLICT (tenant) DO UPDATE SET hooks = event_heads.hooks + 1 RETURNING last`, e.Tenant).Scan(&last); err != nil {
			return err
		}
		if e.Delivery.Cursor == "" && last > 0 {
			e.Delivery.Cursor, cursor = changes.FormatCursor(last), last
		}
		var due any // not due
		if !e.Delivery.Failing {
			after, err := tx.eventsAfter(ctx, e.Tenant, cursor)
			if err != nil {
				return err
			}
			switch {
			case after && !e.Delivery.NextAttempt.IsZero():
				due = nanos(e.Delivery.NextAttempt)
			case after:
				if err := tx.wakeWebhooks(ctx, e.Tenant); err != nil {
					return err
				}
			}
		}
		n, err := tx.affected(ctx, `INSERT INTO webhooks (`+webhookColumns+`, due_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			e.Tenant, e.ID, e.URL, string(types), sealed, nanos(e.Created), e.Delivery.Cursor, e.Delivery.Attempts,
			nanos(e.Delivery.FirstFailure), nanos(e.Delivery.NextAttempt), e.Delivery.Failing, e.Delivery.LastError, due)
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
	list, err := ws.list(ctx, `WHERE tenant = ? AND id = ? ORDER BY n`, tenant, id)
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
	return ws.list(ctx, `WHERE tenant = ? ORDER BY n`, tenant)
}

// list returns the endpoints that where selects (a WHERE clause, an ORDER BY, …), in its order.
func (ws *Webhooks) list(ctx context.Context, where string, args ...any) ([]store.WebhookEndpoint, error) {
	aead, err := ws.s.keyAEAD()
	if err != nil {
		return nil, err
	}
	out := []store.WebhookEndpoint{}
	err = ws.s.read(ctx, func(tx *txn) error {
		out = out[:0]
		rows, err := tx.query(ctx, `SELECT `+webhookColumns+` FROM webhooks `+where, args...)
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

// Delete implements store.Webhooks. It locks the tenant's row of event_heads, which counts
// the endpoints, before the endpoint's: the order Due takes them in.
func (ws *Webhooks) Delete(ctx context.Context, tenant, id string) error {
	return ws.s.write(ctx, func(tx *txn) error {
		if _, err := tx.exists(ctx, `SELECT 1 FROM event_heads WHERE tenant = ?`+tx.d.forUpdate(), tenant); err != nil {
			return err
		}
		n, err := tx.affected(ctx, `DELETE FROM webhooks WHERE tenant = ? AND id = ?`, tenant, id)
		if err == nil && n == 0 {
			err = fmt.Errorf("webhook endpoint %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, `UPDATE event_heads SET hooks = hooks - 1 WHERE tenant = ? AND hooks > 0`, tenant)
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

// SaveDelivery implements store.Webhooks. When it may record webhook.failing, it locks the
// tenant's row of event_heads before the endpoint's, the order Due takes them in.
//
// It finds whether events follow d.Cursor after it has locked the endpoint's row, so that a
// write that records an event concurrently either comes before (and is seen) or sets
// event_heads.woken_at after, which the next Due turns into the endpoint's due_at.
func (ws *Webhooks) SaveDelivery(ctx context.Context, tenant, id, holder string, now time.Time, d store.WebhookDelivery) error {
	cursor, err := changes.ParseCursor(d.Cursor)
	if err != nil {
		return err
	}
	return ws.s.write(ctx, func(tx *txn) error {
		if d.Failing && store.ChangeOf(ctx) != nil {
			if _, err := tx.exists(ctx, `SELECT 1 FROM event_heads WHERE tenant = ?`+tx.d.forUpdate(), tenant); err != nil {
				return err
			}
		}
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
		var due any // caught up or failing: not due
		if !d.Failing {
			after, err := tx.eventsAfter(ctx, tenant, cursor)
			if err != nil {
				return err
			}
			if after {
				due = nanos(d.NextAttempt)
				if d.NextAttempt.IsZero() {
					due = now.UnixNano()
				}
			}
		}
		if ws.s.savedChecked != nil {
			ws.s.savedChecked()
		}
		if _, err := tx.exec(ctx, `UPDATE webhooks SET cursor = ?, attempts = ?, first_failure = ?, next_attempt = ?,
			failing = ?, last_error = ?, due_at = ? WHERE tenant = ? AND id = ?`,
			d.Cursor, d.Attempts, nanos(d.FirstFailure), nanos(d.NextAttempt), d.Failing, d.LastError, due, tenant, id); err != nil {
			return err
		}
		e.ID = id
		p := changes.New(ctx, tenant)
		changes.Webhook(p, &e, d)
		return tx.recordEvents(ctx, tenant, p)
	})
}

// Resume implements store.Webhooks. It wakes the tenant's endpoints (event_heads first, the
// order Due takes the rows in), and the next Due makes the endpoint due if events follow its
// cursor.
func (ws *Webhooks) Resume(ctx context.Context, tenant, id string) error {
	return ws.s.write(ctx, func(tx *txn) error {
		if err := tx.wakeWebhooks(ctx, tenant); err != nil {
			return err
		}
		n, err := tx.affected(ctx, `UPDATE webhooks SET attempts = 0, first_failure = NULL, next_attempt = NULL,
			failing = ?, last_error = '', due_at = NULL WHERE tenant = ? AND id = ?`, false, tenant, id)
		if err == nil && n == 0 {
			err = fmt.Errorf("webhook endpoint %q: %w", id, store.ErrNotFound)
		}
		return err
	})
}

// Due implements store.Webhooks. It first makes the endpoints of the tenants that writes of
// events woke due (wakeUps), then reads the webhooks_due index in its order: with nothing
// woken and nothing due, it reads one entry of an index or none.
func (ws *Webhooks) Due(ctx context.Context, now time.Time, limit int) ([]store.WebhookEndpoint, error) {
	if limit < 1 {
		return nil, fmt.Errorf("due webhook endpoints: limit %d: %w", limit, store.ErrInvalid)
	}
	if err := ws.wakeUps(ctx, now); err != nil {
		return nil, fmt.Errorf("due webhook endpoints: %w", err)
	}
	return ws.list(ctx, `WHERE due_at <= ? AND (lease_until IS NULL OR lease_until <= ?) ORDER BY due_at, n LIMIT ?`,
		now.UnixNano(), now.UnixNano(), limit)
}

// wakeUpsPerWrite is how many woken tenants one write of wakeUps takes; maxWakeUps bounds how
// many one Due takes (the next takes the rest).
const (
	wakeUpsPerWrite = 256
	maxWakeUps      = 16 * wakeUpsPerWrite
)

// wakeUps makes due the endpoints, not failing and not due already, of the tenants
// whose event_heads.woken_at is set and whose last event kept follows their cursors, from
// woken_at (when the first event woke them, by the clock of the instance that wrote it) or
// from now if that is earlier, and clears woken_at. It locks the tenants' rows of event_heads (oldest woken first), so no write of an
// event of theirs commits meanwhile, then updates their endpoints' rows, which it reads as
// committed after it took those locks; on SQLite the writers take turns. A look at the
// event_heads_woken index comes first, outside any transaction: most passes end there.
func (ws *Webhooks) wakeUps(ctx context.Context, now time.Time) error {
	var one int
	err := ws.s.db.QueryRowContext(ctx, `SELECT 1 FROM event_heads WHERE woken_at IS NOT NULL LIMIT 1`).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	for taken := 0; taken < maxWakeUps; {
		n := 0
		err := ws.s.write(ctx, func(tx *txn) error {
			rows, err := tx.query(ctx, `SELECT tenant, woken_at FROM event_heads WHERE woken_at IS NOT NULL
				ORDER BY woken_at, tenant LIMIT ?`+tx.d.forUpdate(), wakeUpsPerWrite)
			if err != nil {
				return err
			}
			var (
				tenants []any
				woken   []int64
			)
			for rows.Next() {
				var (
					tenant string
					at     int64
				)
				if err := rows.Scan(&tenant, &at); err != nil {
					rows.Close()
					return err
				}
				tenants, woken = append(tenants, tenant), append(woken, at)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			n = len(tenants)
			if n == 0 {
				return nil
			}
			// The last event the log holds, not event_heads.last: Events.DeleteExpired may
			// have removed the events after a cursor.
			lastKept := `(SELECT printf('%016x', seq) FROM events WHERE tenant = ? ORDER BY seq DESC LIMIT 1)`
			if tx.d == postgresDialect {
				lastKept = `(SELECT lpad(to_hex(seq), 16, '0') FROM events WHERE tenant = ? ORDER BY seq DESC LIMIT 1)`
			}
			// Every endpoint row of the tenant is locked, whatever it holds: a SaveDelivery that
			// holds one (and may find itself caught up in a snapshot older than the last event)
			// is waited for, and the row as it committed is what decides.
			for i, tenant := range tenants {
				if _, err := tx.exec(ctx, `UPDATE webhooks SET due_at = CASE WHEN NOT failing AND cursor < `+lastKept+`
					THEN coalesce(due_at, ?) ELSE due_at END WHERE tenant = ?`, tenant, min(now.UnixNano(), woken[i]), tenant); err != nil {
					return err
				}
			}
			_, err = tx.exec(ctx, `UPDATE event_heads SET woken_at = NULL WHERE tenant IN (`+placeholders(n)+`)`, tenants...)
			return err
		})
		if err != nil {
			return err
		}
		taken += n
		if n < wakeUpsPerWrite {
			return nil
		}
	}
	return nil
}

// wakeWebhooks sets the tenant's event_heads.woken_at, if it has endpoints.
func (t *txn) wakeWebhooks(ctx context.Context, tenant string) error {
	_, err := t.exec(ctx, `UPDATE event_heads SET woken_at = coalesce(woken_at, ?) WHERE tenant = ? AND hooks > 0`,
		time.Now().UnixNano(), tenant)
	return err
}

// eventsAfter reports whether tenant's log holds an event after the one numbered seq.
func (t *txn) eventsAfter(ctx context.Context, tenant string, seq int64) (bool, error) {
	return t.exists(ctx, `SELECT 1 FROM events WHERE tenant = ? AND seq > ? LIMIT 1`, tenant, seq)
}
