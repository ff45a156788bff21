package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/visid/visid/store"
)

// Tenants implements store.Tenants.
type Tenants struct{ s *Store }

var _ store.Tenants = (*Tenants)(nil)

// Create implements store.Tenants.
func (ts *Tenants) Create(ctx context.Context, t store.Tenant) error {
	if !store.ValidTenantID(t.ID) {
		return fmt.Errorf("tenant id %q: %w", t.ID, store.ErrInvalid)
	}
	return ts.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `INSERT INTO tenants (id, display_name, created) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
			t.ID, t.DisplayName, nanos(t.Created))
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("tenant %q: %w", t.ID, store.ErrConflict)
		}
		return nil
	})
}

// Get implements store.Tenants.
func (ts *Tenants) Get(ctx context.Context, id string) (*store.Tenant, error) {
	var out *store.Tenant
	err := ts.s.read(ctx, func(tx *txn) error {
		t := store.Tenant{ID: id}
		var created sql.NullInt64
		err := tx.queryRow(ctx, `SELECT display_name, created FROM tenants WHERE id = ?`, id).Scan(&t.DisplayName, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("tenant %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		t.Created = fromNanos(created)
		out = &t
		return nil
	})
	return out, err
}

// List implements store.Tenants.
func (ts *Tenants) List(ctx context.Context) ([]store.Tenant, error) {
	out := []store.Tenant{}
	err := ts.s.read(ctx, func(tx *txn) error {
		rows, err := tx.query(ctx, `SELECT id, display_name, created FROM tenants ORDER BY id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t store.Tenant
			var created sql.NullInt64
			if err := rows.Scan(&t.ID, &t.DisplayName, &created); err != nil {
				return err
			}
			t.Created = fromNanos(created)
			out = append(out, t)
		}
		return rows.Err()
	})
	return out, err
}

// Delete implements store.Tenants. It removes the tenant's users (with their picture
// credentials and memberships), groups and clients in the same transaction.
func (ts *Tenants) Delete(ctx context.Context, id string) error {
	return ts.s.write(ctx, func(tx *txn) error {
		if err := tx.advisoryLock(ctx, id); err != nil {
			return err
		}
		ok, err := tx.exists(ctx, `SELECT 1 FROM tenants WHERE id = ?`+tx.d.forUpdate(), id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("tenant %q: %w", id, store.ErrNotFound)
		}
		for _, table := range []string{"webhooks", "events", "event_heads", "attrs", "unique_values", "picture_failures", "pictures", "members", "users", "groups", "clients", "tenants"} {
			col := "tenant"
			if table == "tenants" {
				col = "id"
			}
			if _, err := tx.exec(ctx, `DELETE FROM `+table+` WHERE `+col+` = ?`, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// tenantExists returns ErrNotFound unless the tenant exists.
func (t *txn) tenantExists(ctx context.Context, tenant string) error {
	ok, err := t.exists(ctx, `SELECT 1 FROM tenants WHERE id = ?`, tenant)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("tenant %q: %w", tenant, store.ErrNotFound)
	}
	return nil
}
