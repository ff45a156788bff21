package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/visid/visid/store"
)

// AccessTokens implements store.AccessTokens. Errors never carry a token's hash: they may be
// logged.
type AccessTokens struct{ s *Store }

var _ store.AccessTokens = (*AccessTokens)(nil)

const accessTokenColumns = `hash, tenant, client_id, subject, code_hash, created, expires`

// Create implements store.AccessTokens.
func (as *AccessTokens) Create(ctx context.Context, t store.AccessToken) error {
	switch {
	case t.Tenant == "" || t.ClientID == "" || t.Subject == "":
		return fmt.Errorf("access token without tenant, client or subject: %w", store.ErrInvalid)
	case t.Hash == [32]byte{}:
		return fmt.Errorf("access token without hash: %w", store.ErrInvalid)
	case t.Expires.IsZero():
		return fmt.Errorf("access token without expiry: %w", store.ErrInvalid)
	}
	return as.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `INSERT INTO access_tokens (`+accessTokenColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`,
			t.Hash[:], t.Tenant, t.ClientID, t.Subject, t.CodeHash[:], nanos(t.Created), t.Expires.UnixNano())
		switch {
		case isForeignKey(err):
			return fmt.Errorf("tenant %q: %w", t.Tenant, store.ErrNotFound)
		case err == nil && n == 0:
			return fmt.Errorf("access token: %w", store.ErrConflict)
		}
		return err
	})
}

// Get implements store.AccessTokens.
func (as *AccessTokens) Get(ctx context.Context, h [32]byte) (*store.AccessToken, error) {
	var out *store.AccessToken
	err := as.s.read(ctx, func(tx *txn) error {
		var t store.AccessToken
		var hash, code []byte
		var created sql.NullInt64
		var expires int64
		err := tx.queryRow(ctx, `SELECT `+accessTokenColumns+` FROM access_tokens WHERE hash = ?`, h[:]).
			Scan(&hash, &t.Tenant, &t.ClientID, &t.Subject, &code, &created, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("access token: %w", store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		copy(t.Hash[:], hash)
		copy(t.CodeHash[:], code)
		t.Created = fromNanos(created)
		t.Expires = time.Unix(0, expires).UTC()
		out = &t
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RevokeCode implements store.AccessTokens.
func (as *AccessTokens) RevokeCode(ctx context.Context, codeHash [32]byte) (int, error) {
	var n int64
	err := as.s.write(ctx, func(tx *txn) error {
		var err error
		n, err = tx.affected(ctx, `DELETE FROM access_tokens WHERE code_hash = ?`, codeHash[:])
		return err
	})
	return int(n), err
}

// DeleteExpired implements store.AccessTokens.
func (as *AccessTokens) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := as.s.write(ctx, func(tx *txn) error {
		var err error
		n, err = tx.affected(ctx, `DELETE FROM access_tokens WHERE expires < ?`, now.UnixNano())
		return err
	})
	return int(n), err
}
