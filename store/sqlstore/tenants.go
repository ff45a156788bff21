package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// Tenants implements store.Tenants.
type Tenants struct{ s *Store }

var _ store.Tenants = (*Tenants)(nil)

const tenantColumns = `id, display_name, created, logo, logo_type, logo_hash, accent_color, default_language, second_factor`

// tenantListColumns are tenantColumns for List, which leaves the logos out: NULL in the logo's
// place.
const tenantListColumns = `id, display_name, created, NULL, logo_type, logo_hash, accent_color, default_language, second_factor`

// Create implements store.Tenants.
func (ts *Tenants) Create(ctx context.Context, t store.Tenant) error {
	if !store.ValidTenantID(t.ID) {
		return fmt.Errorf("tenant id %q: %w", t.ID, store.ErrInvalid)
	}
	if err := store.CheckTenant(&t); err != nil {
		return fmt.Errorf("tenant %q: %w", t.ID, err)
	}
	return ts.s.write(ctx, func(tx *txn) error {
		logo, hash := logoArgs(&t)
		n, err := tx.affected(ctx, `INSERT INTO tenants (`+tenantColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			t.ID, t.DisplayName, nanos(t.Created), logo, t.LogoType, hash, t.AccentColor, t.DefaultLanguage, t.SecondFactor)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("tenant %q: %w", t.ID, store.ErrConflict)
		}
		return nil
	})
}

// logoArgs returns the logo and logo_hash arguments of t: NULL (nil) without a logo.
func logoArgs(t *store.Tenant) (logo, hash any) {
	if len(t.Logo) == 0 {
		return nil, nil
	}
	return t.Logo, t.LogoHash[:]
}

// Get implements store.Tenants.
func (ts *Tenants) Get(ctx context.Context, id string) (*store.Tenant, error) {
	var out *store.Tenant
	err := ts.s.read(ctx, func(tx *txn) error {
		var err error
		out, err = tx.tenant(ctx, id, false)
		return err
	})
	return out, err
}

// tenant reads one tenant, locking its row for the transaction when lock is set.
func (t *txn) tenant(ctx context.Context, id string, lock bool) (*store.Tenant, error) {
	q := `SELECT ` + tenantColumns + ` FROM tenants WHERE id = ?`
	if lock {
		q += t.d.forUpdate()
	}
	tn, err := scanTenant(t.queryRow(ctx, q, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("tenant %q: %w", id, store.ErrNotFound)
	}
	return tn, err
}

func scanTenant(row scanner) (*store.Tenant, error) {
	var t store.Tenant
	var created sql.NullInt64
	var hash []byte
	if err := row.Scan(&t.ID, &t.DisplayName, &created, &t.Logo, &t.LogoType, &hash, &t.AccentColor, &t.DefaultLanguage, &t.SecondFactor); err != nil {
		return nil, err
	}
	t.Created = fromNanos(created)
	if len(t.Logo) == 0 {
		t.Logo = nil
	}
	copy(t.LogoHash[:], hash)
	return &t, nil
}

// List implements store.Tenants: one range read of the primary key.
func (ts *Tenants) List(ctx context.Context, after string, limit int) ([]store.Tenant, error) {
	if limit < 1 || limit > store.MaxTenantPage {
		return nil, fmt.Errorf("tenant page of %d: want 1 to %d: %w", limit, store.MaxTenantPage, store.ErrInvalid)
	}
	out := []store.Tenant{}
	err := ts.s.read(ctx, func(tx *txn) error {
		rows, err := tx.query(ctx, `SELECT `+tenantListColumns+` FROM tenants WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanTenant(rows)
			if err != nil {
				return err
			}
			out = append(out, *t)
		}
		return rows.Err()
	})
	return out, err
}

// Count implements store.Tenants.
func (ts *Tenants) Count(ctx context.Context) (int, error) {
	var n int
	err := ts.s.read(ctx, func(tx *txn) error {
		return tx.queryRow(ctx, `SELECT COUNT(*) FROM tenants`).Scan(&n)
	})
	return n, err
}

// Update implements store.Tenants. The tenant's row is locked for the transaction, and its
// event, if any, is written in it.
func (ts *Tenants) Update(ctx context.Context, id string, fn func(*store.Tenant) error) (*store.Tenant, error) {
	var out *store.Tenant
	err := ts.s.write(ctx, func(tx *txn) error {
		if err := tx.advisoryLock(ctx, id); err != nil {
			return err
		}
		before, err := tx.tenant(ctx, id, true)
		if err != nil {
			return err
		}
		work := *before
		work.Logo = bytes.Clone(before.Logo)
		if err := fn(&work); err != nil {
			return err
		}
		if work.ID != id {
			return fmt.Errorf("tenant %q: the id cannot change: %w", id, store.ErrInvalid)
		}
		if err := store.CheckTenant(&work); err != nil {
			return fmt.Errorf("tenant %q: %w", id, err)
		}
		logo, hash := logoArgs(&work)
		if _, err := tx.exec(ctx, `UPDATE tenants SET display_name = ?, created = ?, logo = ?, logo_type = ?, logo_hash = ?,
			accent_color = ?, default_language = ?, second_factor = ? WHERE id = ?`,
			work.DisplayName, nanos(work.Created), logo, work.LogoType, hash, work.AccentColor, work.DefaultLanguage,
			work.SecondFactor, id); err != nil {
			return err
		}
		p := changes.New(ctx, id)
		changes.Tenant(p, before, &work)
		out = &work
		return tx.recordEvents(ctx, id, p)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete implements store.Tenants. It removes the tenant's users (with their picture
// credentials, passkeys and memberships), groups, clients and signing keys in the same
// transaction.
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
		for _, table := range []string{"webhooks", "events", "event_heads", "attrs", "unique_values", "picture_failures", "pictures", "passkeys", "members", "users", "groups", "clients", "signing_keys", "tenants"} {
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
