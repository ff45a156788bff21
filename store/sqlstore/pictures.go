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

// Pictures implements store.PictureCredentials. A credential is a row keyed by its user, which
// goes when the user or the tenant goes.
type Pictures struct{ s *Store }

var _ store.PictureCredentials = (*Pictures)(nil)

const pictureColumns = `tenant, user_id, scheme, image, image_digest, points, tolerance, offsets, pepper_id, salt, hash,
	argon_time, argon_memory, argon_threads, failures, created, updated, last_failure`

// Get implements store.PictureCredentials.
func (ps *Pictures) Get(ctx context.Context, tenant, userID string) (*store.PictureCredential, error) {
	var out *store.PictureCredential
	err := ps.s.read(ctx, func(tx *txn) error {
		c, err := scanPicture(tx.queryRow(ctx, `SELECT `+pictureColumns+` FROM pictures WHERE tenant = ? AND user_id = ?`, tenant, userID))
		if errors.Is(err, sql.ErrNoRows) {
			return pictureNotFound(userID)
		}
		out = c
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Put implements store.PictureCredentials.
func (ps *Pictures) Put(ctx context.Context, c store.PictureCredential) error {
	return ps.put(ctx, c, true)
}

// Create implements store.PictureCredentials: the INSERT does nothing when the user has a
// credential, so of concurrent Creates exactly one writes a row.
func (ps *Pictures) Create(ctx context.Context, c store.PictureCredential) error {
	return ps.put(ctx, c, false)
}

// put stores c, replacing the user's credential when replace is set and failing with
// ErrConflict when it is not and the user has one.
func (ps *Pictures) put(ctx context.Context, c store.PictureCredential, replace bool) error {
	switch {
	case c.UserID == "":
		return fmt.Errorf("picture credential without user: %w", store.ErrInvalid)
	case len(c.Hash) == 0 || len(c.Salt) == 0:
		return fmt.Errorf("picture credential without hash or salt: %w", store.ErrInvalid)
	}
	offsets, err := json.Marshal(c.Offsets)
	if err != nil {
		return err
	}
	conflict := `DO NOTHING`
	if replace {
		conflict = `DO UPDATE SET scheme = excluded.scheme, image = excluded.image,
				image_digest = excluded.image_digest, points = excluded.points, tolerance = excluded.tolerance,
				offsets = excluded.offsets, pepper_id = excluded.pepper_id, salt = excluded.salt, hash = excluded.hash,
				argon_time = excluded.argon_time, argon_memory = excluded.argon_memory,
				argon_threads = excluded.argon_threads, failures = 0, created = excluded.created,
				updated = excluded.updated, last_failure = NULL`
	}
	return ps.s.write(ctx, func(tx *txn) error {
		ok, err := tx.exists(ctx, `SELECT 1 FROM users WHERE tenant = ? AND id = ?`, c.Tenant, c.UserID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("user %q: %w", c.UserID, store.ErrNotFound)
		}
		n, err := tx.affected(ctx, `INSERT INTO pictures (`+pictureColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, NULL)
			ON CONFLICT (tenant, user_id) `+conflict,
			c.Tenant, c.UserID, c.Scheme, c.Image, c.ImageDigest, c.Points, c.Tolerance, string(offsets), c.PepperID,
			c.Salt, c.Hash, int64(c.ArgonTime), int64(c.ArgonMemory), int64(c.ArgonThreads), nanos(c.Created), nanos(c.Updated))
		switch {
		case isForeignKey(err):
			return fmt.Errorf("user %q: %w", c.UserID, store.ErrNotFound)
		case err == nil && n == 0:
			return fmt.Errorf("picture credential of user %q: %w", c.UserID, store.ErrConflict)
		}
		return err
	})
}

// Rehash implements store.PictureCredentials: a compare-and-swap on the stored hash.
func (ps *Pictures) Rehash(ctx context.Context, c store.PictureCredential, oldHash []byte) error {
	return ps.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `UPDATE pictures SET scheme = ?, pepper_id = ?, salt = ?, hash = ?, argon_time = ?,
			argon_memory = ?, argon_threads = ?, updated = ? WHERE tenant = ? AND user_id = ? AND hash = ?`,
			c.Scheme, c.PepperID, c.Salt, c.Hash, int64(c.ArgonTime), int64(c.ArgonMemory), int64(c.ArgonThreads),
			nanos(c.Updated), c.Tenant, c.UserID, nonNil(oldHash))
		if err != nil || n > 0 {
			return err
		}
		ok, err := tx.exists(ctx, `SELECT 1 FROM pictures WHERE tenant = ? AND user_id = ?`, c.Tenant, c.UserID)
		switch {
		case err != nil:
			return err
		case !ok:
			return pictureNotFound(c.UserID)
		}
		return fmt.Errorf("picture credential of user %q changed: %w", c.UserID, store.ErrConflict)
	})
}

// Delete implements store.PictureCredentials.
func (ps *Pictures) Delete(ctx context.Context, tenant, userID string) error {
	return ps.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `DELETE FROM pictures WHERE tenant = ? AND user_id = ?`, tenant, userID)
		if err == nil && n == 0 {
			err = pictureNotFound(userID)
		}
		return err
	})
}

// AddFailure implements store.PictureCredentials: one UPDATE … RETURNING, so each of concurrent
// calls gets its own count.
func (ps *Pictures) AddFailure(ctx context.Context, tenant, userID string, at time.Time) (int, error) {
	var n int
	err := ps.s.write(ctx, func(tx *txn) error {
		err := tx.queryRow(ctx, `UPDATE pictures SET failures = failures + 1, last_failure = ? WHERE tenant = ? AND user_id = ?
			RETURNING failures`, nanos(at), tenant, userID).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return pictureNotFound(userID)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// ResetFailures implements store.PictureCredentials.
func (ps *Pictures) ResetFailures(ctx context.Context, tenant, userID string) error {
	return ps.s.write(ctx, func(tx *txn) error {
		p := changes.New(ctx, tenant)
		if p != nil {
			var failures int
			err := tx.queryRow(ctx, `SELECT failures FROM pictures WHERE tenant = ? AND user_id = ?`+tx.d.forUpdate(), tenant, userID).Scan(&failures)
			if errors.Is(err, sql.ErrNoRows) {
				return pictureNotFound(userID)
			}
			if err != nil {
				return err
			}
			changes.Unlocked(p, userID, failures)
		}
		n, err := tx.affected(ctx, `UPDATE pictures SET failures = 0, last_failure = NULL WHERE tenant = ? AND user_id = ?`, tenant, userID)
		if err == nil && n == 0 {
			err = pictureNotFound(userID)
		}
		if err != nil {
			return err
		}
		return tx.recordEvents(ctx, tenant, p)
	})
}

func pictureNotFound(userID string) error {
	return fmt.Errorf("picture credential of user %q: %w", userID, store.ErrNotFound)
}

// nonNil returns b, or an empty slice for nil, which drivers would send as NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func scanPicture(row scanner) (*store.PictureCredential, error) {
	var c store.PictureCredential
	var offsets string
	var argonTime, argonMemory, argonThreads int64
	var created, updated, lastFailure sql.NullInt64
	if err := row.Scan(&c.Tenant, &c.UserID, &c.Scheme, &c.Image, &c.ImageDigest, &c.Points, &c.Tolerance, &offsets,
		&c.PepperID, &c.Salt, &c.Hash, &argonTime, &argonMemory, &argonThreads, &c.Failures, &created, &updated,
		&lastFailure); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(offsets), &c.Offsets); err != nil {
		return nil, fmt.Errorf("picture credential of user %q: offsets: %w", c.UserID, err)
	}
	c.ArgonTime, c.ArgonMemory, c.ArgonThreads = uint32(argonTime), uint32(argonMemory), uint8(argonThreads)
	c.Created, c.Updated, c.LastFailure = fromNanos(created), fromNanos(updated), fromNanos(lastFailure)
	return &c, nil
}
