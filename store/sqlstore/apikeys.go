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

// APIKeys implements store.APIKeys.
type APIKeys struct{ s *Store }

var _ store.APIKeys = (*APIKeys)(nil)

const apiKeyColumns = `id, name, tenants, scopes, secret_hash, created, last_used, revoked, revoked_at`

// Create implements store.APIKeys.
func (ks *APIKeys) Create(ctx context.Context, k store.APIKey) (*store.APIKey, error) {
	if k.ID == "" {
		k.ID = store.NewID("key")
	}
	tenants, err := json.Marshal(k.Tenants)
	if err != nil {
		return nil, err
	}
	scopes, err := json.Marshal(k.Scopes)
	if err != nil {
		return nil, err
	}
	var out *store.APIKey
	err = ks.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `INSERT INTO api_keys (`+apiKeyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			k.ID, k.Name, string(tenants), string(scopes), k.SecretHash[:], nanos(k.Created), nanos(k.LastUsed),
			k.Revoked, nanos(k.RevokedAt))
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("api key %q: id or secret already in use: %w", k.ID, store.ErrConflict)
		}
		if out, err = scanAPIKey(tx.queryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE id = ?`, k.ID)); err != nil {
			return err
		}
		return tx.recordKeyEvents(ctx, changes.APIKey(ctx, store.EventAPIKeyCreated, out))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ByHash implements store.APIKeys.
func (ks *APIKeys) ByHash(ctx context.Context, h [32]byte) (*store.APIKey, error) {
	return ks.one(ctx, `secret_hash = ?`, h[:], "api key")
}

// Get implements store.APIKeys.
func (ks *APIKeys) Get(ctx context.Context, id string) (*store.APIKey, error) {
	return ks.one(ctx, `id = ?`, id, fmt.Sprintf("api key %q", id))
}

func (ks *APIKeys) one(ctx context.Context, where string, arg any, what string) (*store.APIKey, error) {
	var out *store.APIKey
	err := ks.s.read(ctx, func(tx *txn) error {
		var err error
		out, err = scanAPIKey(tx.queryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE `+where, arg))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", what, store.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// List implements store.APIKeys.
func (ks *APIKeys) List(ctx context.Context) ([]store.APIKey, error) {
	out := []store.APIKey{}
	err := ks.s.read(ctx, func(tx *txn) error {
		rows, err := tx.query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys ORDER BY seq`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			k, err := scanAPIKey(rows)
			if err != nil {
				return err
			}
			out = append(out, *k)
		}
		return rows.Err()
	})
	return out, err
}

// Touch implements store.APIKeys.
func (ks *APIKeys) Touch(ctx context.Context, id string, t time.Time) error {
	return ks.change(ctx, id, `last_used = ? WHERE id = ? AND (last_used IS NULL OR last_used < ?)`,
		nanos(t), id, nanos(t))
}

// Revoke implements store.APIKeys.
func (ks *APIKeys) Revoke(ctx context.Context, id string, t time.Time) error {
	if store.ChangeOf(ctx) == nil {
		return ks.change(ctx, id, `revoked = true, revoked_at = ? WHERE id = ? AND NOT revoked`, nanos(t), id)
	}
	return ks.s.write(ctx, func(tx *txn) error {
		k, err := scanAPIKey(tx.queryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE id = ?`+tx.d.forUpdate(), id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("api key %q: %w", id, store.ErrNotFound)
		}
		if err != nil || k.Revoked {
			return err
		}
		if _, err := tx.exec(ctx, `UPDATE api_keys SET revoked = true, revoked_at = ? WHERE id = ?`, nanos(t), id); err != nil {
			return err
		}
		k.Revoked, k.RevokedAt = true, t
		return tx.recordKeyEvents(ctx, changes.APIKey(ctx, store.EventAPIKeyRevoked, k))
	})
}

// recordKeyEvents records each collector's events in its tenant's log, if the tenant exists.
func (t *txn) recordKeyEvents(ctx context.Context, list []*changes.Pending) error {
	for _, p := range list {
		ok, err := t.exists(ctx, `SELECT 1 FROM tenants WHERE id = ?`, p.Tenant())
		if err != nil {
			return err
		}
		if ok {
			if err := t.recordEvents(ctx, p.Tenant(), p); err != nil {
				return err
			}
		}
	}
	return nil
}

// change runs an UPDATE of the key; when it changes nothing, the key must still exist.
func (ks *APIKeys) change(ctx context.Context, id, set string, args ...any) error {
	return ks.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `UPDATE api_keys SET `+set, args...)
		if err != nil || n > 0 {
			return err
		}
		ok, err := tx.exists(ctx, `SELECT 1 FROM api_keys WHERE id = ?`, id)
		if err == nil && !ok {
			err = fmt.Errorf("api key %q: %w", id, store.ErrNotFound)
		}
		return err
	})
}

type scanner interface{ Scan(dest ...any) error }

func scanAPIKey(row scanner) (*store.APIKey, error) {
	var k store.APIKey
	var tenants, scopes string
	var hash []byte
	var created, lastUsed, revokedAt sql.NullInt64
	if err := row.Scan(&k.ID, &k.Name, &tenants, &scopes, &hash, &created, &lastUsed, &k.Revoked, &revokedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(tenants), &k.Tenants); err != nil {
		return nil, fmt.Errorf("api key %q: tenants: %w", k.ID, err)
	}
	if err := json.Unmarshal([]byte(scopes), &k.Scopes); err != nil {
		return nil, fmt.Errorf("api key %q: scopes: %w", k.ID, err)
	}
	copy(k.SecretHash[:], hash)
	k.Created, k.LastUsed, k.RevokedAt = fromNanos(created), fromNanos(lastUsed), fromNanos(revokedAt)
	return &k, nil
}
