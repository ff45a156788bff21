package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/visid/visid/store"
)

// PushedRequests implements store.PushedRequests. Errors never carry a request's hash: they may
// be logged.
type PushedRequests struct{ s *Store }

var _ store.PushedRequests = (*PushedRequests)(nil)

const pushedColumns = `hash, tenant, client_id, redirect_uri, state, nonce, challenge, login_hint, created, expires`

// Create implements store.PushedRequests.
func (ps *PushedRequests) Create(ctx context.Context, r store.PushedRequest) error {
	switch {
	case r.Tenant == "" || r.ClientID == "":
		return fmt.Errorf("pushed request without tenant or client: %w", store.ErrInvalid)
	case r.Hash == [32]byte{}:
		return fmt.Errorf("pushed request without hash: %w", store.ErrInvalid)
	case r.Expires.IsZero():
		return fmt.Errorf("pushed request without expiry: %w", store.ErrInvalid)
	}
	return ps.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `INSERT INTO pushed_requests (`+pushedColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`,
			r.Hash[:], r.Tenant, r.ClientID, r.RedirectURI, r.State, r.Nonce, r.Challenge, r.LoginHint, nanos(r.Created),
			r.Expires.UnixNano())
		switch {
		case isForeignKey(err):
			return fmt.Errorf("tenant %q: %w", r.Tenant, store.ErrNotFound)
		case err == nil && n == 0:
			return fmt.Errorf("pushed request: %w", store.ErrConflict)
		}
		return err
	})
}

// Consume implements store.PushedRequests: one DELETE … RETURNING, conditioned on the tenant,
// the client and the expiry, so of concurrent Consumes exactly one gets the row and another
// client's Consume leaves it in place.
func (ps *PushedRequests) Consume(ctx context.Context, tenant, clientID string, h [32]byte, now time.Time) (*store.PushedRequest, error) {
	var out *store.PushedRequest
	err := ps.s.write(ctx, func(tx *txn) error {
		r, err := scanPushed(tx.queryRow(ctx, `DELETE FROM pushed_requests
			WHERE hash = ? AND tenant = ? AND client_id = ? AND expires > ? RETURNING `+pushedColumns,
			h[:], tenant, clientID, now.UnixNano()))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("pushed request: %w", store.ErrNotFound)
		}
		out = r
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteExpired implements store.PushedRequests.
func (ps *PushedRequests) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := ps.s.write(ctx, func(tx *txn) error {
		var err error
		n, err = tx.affected(ctx, `DELETE FROM pushed_requests WHERE expires < ?`, now.UnixNano())
		return err
	})
	return int(n), err
}

func scanPushed(row scanner) (*store.PushedRequest, error) {
	var r store.PushedRequest
	var hash []byte
	var created sql.NullInt64
	var expires int64
	if err := row.Scan(&hash, &r.Tenant, &r.ClientID, &r.RedirectURI, &r.State, &r.Nonce, &r.Challenge, &r.LoginHint,
		&created, &expires); err != nil {
		return nil, err
	}
	copy(r.Hash[:], hash)
	r.Created = fromNanos(created)
	r.Expires = time.Unix(0, expires).UTC()
	return &r, nil
}
