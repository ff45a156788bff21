package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// Clients implements store.Clients.
type Clients struct{ s *Store }

var _ store.Clients = (*Clients)(nil)

const clientColumns = `tenant, id, name, description, redirect_uris, secret_hash, created, secret_rotated, require_par, id_token_alg, access_token`

// Create implements store.Clients.
func (cs *Clients) Create(ctx context.Context, c store.Client) (*store.Client, error) {
	if len(c.RedirectURIs) == 0 {
		return nil, fmt.Errorf("client without redirect URI: %w", store.ErrInvalid)
	}
	if c.ID == "" {
		c.ID = store.NewID("client")
	}
	uris, err := json.Marshal(c.RedirectURIs)
	if err != nil {
		return nil, err
	}
	var out *store.Client
	err = cs.s.write(ctx, func(tx *txn) error {
		if err := tx.tenantExists(ctx, c.Tenant); err != nil {
			return err
		}
		n, err := tx.affected(ctx, `INSERT INTO clients (`+clientColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			c.Tenant, c.ID, c.Name, c.Description, string(uris), c.SecretHash[:], nanos(c.Created), nanos(c.SecretRotated),
			c.RequirePAR, c.IDTokenAlg, c.AccessToken)
		switch {
		case isForeignKey(err):
			return fmt.Errorf("tenant %q: %w", c.Tenant, store.ErrNotFound)
		case err != nil:
			return err
		case n == 0:
			return fmt.Errorf("client id %q: %w", c.ID, store.ErrConflict)
		}
		if out, err = tx.client(ctx, c.Tenant, c.ID, false); err != nil {
			return err
		}
		p := changes.New(ctx, c.Tenant)
		changes.Client(p, nil, out)
		return tx.recordEvents(ctx, c.Tenant, p)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Get implements store.Clients.
func (cs *Clients) Get(ctx context.Context, tenant, id string) (*store.Client, error) {
	var out *store.Client
	err := cs.s.read(ctx, func(tx *txn) error {
		var err error
		out, err = tx.client(ctx, tenant, id, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// List implements store.Clients.
func (cs *Clients) List(ctx context.Context, tenant string) ([]store.Client, error) {
	out := []store.Client{}
	err := cs.s.read(ctx, func(tx *txn) error {
		if err := tx.tenantExists(ctx, tenant); err != nil {
			return err
		}
		rows, err := tx.query(ctx, `SELECT `+clientColumns+` FROM clients WHERE tenant = ? ORDER BY seq`, tenant)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanClient(rows)
			if err != nil {
				return err
			}
			out = append(out, *c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Update implements store.Clients.
func (cs *Clients) Update(ctx context.Context, tenant, id string, fn func(*store.Client) error) (*store.Client, error) {
	var out *store.Client
	err := cs.s.write(ctx, func(tx *txn) error {
		work, err := tx.client(ctx, tenant, id, true)
		if err != nil {
			return err
		}
		p := changes.New(ctx, tenant)
		before := *work
		before.RedirectURIs = append([]string(nil), work.RedirectURIs...)
		if err := fn(work); err != nil {
			return err
		}
		switch {
		case work.ID != id:
			return fmt.Errorf("client %q: the id cannot change: %w", id, store.ErrInvalid)
		case work.Tenant != tenant:
			return fmt.Errorf("client %q: the tenant cannot change: %w", id, store.ErrInvalid)
		case len(work.RedirectURIs) == 0:
			return fmt.Errorf("client %q: at least one redirect URI is required: %w", id, store.ErrInvalid)
		}
		uris, err := json.Marshal(work.RedirectURIs)
		if err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `UPDATE clients SET name = ?, description = ?, redirect_uris = ?, secret_hash = ?,
			created = ?, secret_rotated = ?, require_par = ?, id_token_alg = ?, access_token = ? WHERE tenant = ? AND id = ?`,
			work.Name, work.Description, string(uris), work.SecretHash[:], nanos(work.Created), nanos(work.SecretRotated),
			work.RequirePAR, work.IDTokenAlg, work.AccessToken, tenant, id); err != nil {
			return err
		}
		if out, err = tx.client(ctx, tenant, id, false); err != nil {
			return err
		}
		changes.Client(p, &before, out)
		return tx.recordEvents(ctx, tenant, p)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete implements store.Clients.
func (cs *Clients) Delete(ctx context.Context, tenant, id string) error {
	return cs.s.write(ctx, func(tx *txn) error {
		p := changes.New(ctx, tenant)
		if p != nil {
			gone, err := tx.client(ctx, tenant, id, true)
			if err != nil {
				return err
			}
			changes.Client(p, gone, nil)
		}
		n, err := tx.affected(ctx, `DELETE FROM clients WHERE tenant = ? AND id = ?`, tenant, id)
		if err == nil && n == 0 {
			err = fmt.Errorf("client %q: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		return tx.recordEvents(ctx, tenant, p)
	})
}

// client reads one client, locking it for the transaction when lock is set.
func (t *txn) client(ctx context.Context, tenant, id string, lock bool) (*store.Client, error) {
	q := `SELECT ` + clientColumns + ` FROM clients WHERE tenant = ? AND id = ?`
	if lock {
		q += t.d.forUpdate()
	}
	c, err := scanClient(t.queryRow(ctx, q, tenant, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("client %q: %w", id, store.ErrNotFound)
	}
	return c, err
}

func scanClient(row scanner) (*store.Client, error) {
	var c store.Client
	var uris string
	var hash []byte
	var created, rotated sql.NullInt64
	if err := row.Scan(&c.Tenant, &c.ID, &c.Name, &c.Description, &uris, &hash, &created, &rotated, &c.RequirePAR, &c.IDTokenAlg, &c.AccessToken); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(uris), &c.RedirectURIs); err != nil {
		return nil, fmt.Errorf("client %q: redirect_uris: %w", c.ID, err)
	}
	copy(c.SecretHash[:], hash)
	c.Created, c.SecretRotated = fromNanos(created), fromNanos(rotated)
	return &c, nil
}
