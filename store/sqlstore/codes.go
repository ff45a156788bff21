package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/visid/visid/store"
)

// Codes implements store.Codes. A consumed code stays, marked used, so that a replay is told
// apart from an unknown code, until DeleteExpired removes it. Errors never carry a code's hash:
// they may be logged.
type Codes struct{ s *Store }

var _ store.Codes = (*Codes)(nil)

const codeColumns = `hash, tenant, client_id, redirect_uri, challenge, nonce, subject, auth_time, amr, expires`

// Create implements store.Codes.
func (cs *Codes) Create(ctx context.Context, c store.Code) error {
	if c.Expires.IsZero() {
		return fmt.Errorf("code without expiry: %w", store.ErrInvalid)
	}
	amr, err := json.Marshal(c.AMR)
	if err != nil {
		return err
	}
	return cs.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `INSERT INTO codes (`+codeColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			c.Hash[:], c.Tenant, c.ClientID, c.RedirectURI, c.Challenge, c.Nonce, c.Subject, nanos(c.AuthTime),
			string(amr), c.Expires.UnixNano())
		if err == nil && n == 0 {
			err = fmt.Errorf("code: %w", store.ErrConflict)
		}
		return err
	})
}

// Consume implements store.Codes. One UPDATE marks the code used if it was not: of concurrent
// Consumes exactly one changes the row and gets it back; the others read it as used.
func (cs *Codes) Consume(ctx context.Context, h [32]byte) (*store.Code, error) {
	var out *store.Code
	var used bool
	err := cs.s.write(ctx, func(tx *txn) error {
		c, err := scanCode(tx.queryRow(ctx, `UPDATE codes SET used = true WHERE hash = ? AND NOT used RETURNING `+codeColumns, h[:]))
		if err == nil {
			out, used = c, false
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		c, err = scanCode(tx.queryRow(ctx, `SELECT `+codeColumns+` FROM codes WHERE hash = ?`, h[:]))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("code: %w", store.ErrNotFound)
		}
		out, used = c, true
		return err
	})
	if err != nil {
		return nil, err
	}
	if used {
		return out, fmt.Errorf("code of client %q: %w", out.ClientID, store.ErrUsed)
	}
	return out, nil
}

// DeleteExpired implements store.Codes.
func (cs *Codes) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := cs.s.write(ctx, func(tx *txn) error {
		var err error
		n, err = tx.affected(ctx, `DELETE FROM codes WHERE expires < ?`, now.UnixNano())
		return err
	})
	return int(n), err
}

func scanCode(row scanner) (*store.Code, error) {
	var c store.Code
	var hash []byte
	var authTime sql.NullInt64
	var amr string
	var expires int64
	if err := row.Scan(&hash, &c.Tenant, &c.ClientID, &c.RedirectURI, &c.Challenge, &c.Nonce, &c.Subject, &authTime, &amr, &expires); err != nil {
		return nil, err
	}
	copy(c.Hash[:], hash)
	if err := json.Unmarshal([]byte(amr), &c.AMR); err != nil {
		return nil, fmt.Errorf("code: amr: %w", err)
	}
	c.AuthTime = fromNanos(authTime)
	c.Expires = time.Unix(0, expires).UTC()
	return &c, nil
}
