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
	argon_time, argon_memory, argon_threads, failures, created, updated, last_failure, failure_networks`

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
				updated = excluded.updated, last_failure = NULL, failure_networks = 0`
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
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, NULL, 0)
			ON CONFLICT (tenant, user_id) `+conflict,
			c.Tenant, c.UserID, c.Scheme, c.Image, c.ImageDigest, c.Points, c.Tolerance, string(offsets), c.PepperID,
			c.Salt, c.Hash, int64(c.ArgonTime), int64(c.ArgonMemory), int64(c.ArgonThreads), nanos(c.Created), nanos(c.Updated))
		switch {
		case isForeignKey(err):
			return fmt.Errorf("user %q: %w", c.UserID, store.ErrNotFound)
		case err == nil && n == 0:
			return fmt.Errorf("picture credential of user %q: %w", c.UserID, store.ErrConflict)
		case err != nil:
			return err
		}
		if _, err := tx.exec(ctx, `DELETE FROM picture_failures WHERE tenant = ? AND user_id = ?`, c.Tenant, c.UserID); err != nil {
			return err
		}
		_, err = tx.exec(ctx, `DELETE FROM picture_familiar WHERE tenant = ? AND user_id = ?`, c.Tenant, c.UserID)
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
		if _, err := tx.exec(ctx, `DELETE FROM picture_failures WHERE tenant = ? AND user_id = ?`, tenant, userID); err != nil {
			return err
		}
		n, err := tx.affected(ctx, `DELETE FROM pictures WHERE tenant = ? AND user_id = ?`, tenant, userID)
		if err == nil && n == 0 {
			err = pictureNotFound(userID)
		}
		return err
	})
}

// AddFailure implements store.PictureCredentials. The UPDATE of the credential comes first and
// holds its row until the transaction ends, so concurrent failures of one user are counted one
// after the other, each seeing the network's row as the one before left it.
func (ps *Pictures) AddFailure(ctx context.Context, tenant, userID, network string, at time.Time) (store.FailureCounts, error) {
	if network == "" {
		return store.FailureCounts{}, fmt.Errorf("picture failure without network: %w", store.ErrInvalid)
	}
	var n store.FailureCounts
	err := ps.s.write(ctx, func(tx *txn) error {
		var epoch int64
		err := tx.queryRow(ctx, `UPDATE pictures SET failures = failures + 1, last_failure = ? WHERE tenant = ? AND user_id = ?
			RETURNING failures, failure_networks, failure_epoch`, nanos(at), tenant, userID).Scan(&n.User, &n.Networks, &epoch)
		if errors.Is(err, sql.ErrNoRows) {
			return pictureNotFound(userID)
		}
		if err != nil {
			return err
		}
		var was sql.NullInt64
		err = tx.queryRow(ctx, `SELECT epoch FROM picture_failures WHERE tenant = ? AND user_id = ? AND network = ?`,
			tenant, userID, network).Scan(&was)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if !was.Valid || was.Int64 != epoch {
			err := tx.queryRow(ctx, `UPDATE pictures SET failure_networks = failure_networks + 1 WHERE tenant = ? AND user_id = ?
				RETURNING failure_networks`, tenant, userID).Scan(&n.Networks)
			if err != nil {
				return err
			}
		}
		return tx.queryRow(ctx, `INSERT INTO picture_failures (tenant, user_id, network, failures, last_failure, epoch)
			VALUES (?, ?, ?, 1, ?, ?)
			ON CONFLICT (tenant, user_id, network) DO UPDATE SET failures = picture_failures.failures + 1,
				last_failure = excluded.last_failure, epoch = excluded.epoch
			RETURNING failures`, tenant, userID, network, nanos(at), epoch).Scan(&n.Network)
	})
	if err != nil {
		return store.FailureCounts{}, err
	}
	return n, nil
}

// NetworkFailures implements store.PictureCredentials.
func (ps *Pictures) NetworkFailures(ctx context.Context, tenant, userID, network string) (store.NetworkFailures, error) {
	out := store.NetworkFailures{Network: network}
	err := ps.s.read(ctx, func(tx *txn) error {
		var failures, last sql.NullInt64
		err := tx.queryRow(ctx, `SELECT f.failures, f.last_failure FROM pictures p
			LEFT JOIN picture_failures f ON f.tenant = p.tenant AND f.user_id = p.user_id AND f.network = ?
			WHERE p.tenant = ? AND p.user_id = ?`, network, tenant, userID).Scan(&failures, &last)
		if errors.Is(err, sql.ErrNoRows) {
			return pictureNotFound(userID)
		}
		out.Failures, out.LastFailure = int(failures.Int64), fromNanos(last)
		return err
	})
	if err != nil {
		return store.NetworkFailures{}, err
	}
	return out, nil
}

// ListNetworkFailures implements store.PictureCredentials.
func (ps *Pictures) ListNetworkFailures(ctx context.Context, tenant, userID string) ([]store.NetworkFailures, error) {
	var out []store.NetworkFailures
	err := ps.s.read(ctx, func(tx *txn) error {
		ok, err := tx.exists(ctx, `SELECT 1 FROM pictures WHERE tenant = ? AND user_id = ?`, tenant, userID)
		if err != nil {
			return err
		}
		if !ok {
			return pictureNotFound(userID)
		}
		rows, err := tx.query(ctx, `SELECT network, failures, last_failure FROM picture_failures
			WHERE tenant = ? AND user_id = ? AND failures > 0 ORDER BY network`, tenant, userID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f store.NetworkFailures
			var last sql.NullInt64
			if err := rows.Scan(&f.Network, &f.Failures, &last); err != nil {
				return err
			}
			f.LastFailure = fromNanos(last)
			out = append(out, f)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Succeeded implements store.PictureCredentials: a new failure_epoch makes every other
// network's row older than the reset. The UPDATE of the credential holds its row, so
// concurrent successes of one user keep the familiar networks one after the other.
func (ps *Pictures) Succeeded(ctx context.Context, tenant, userID string, s store.PictureSuccess) error {
	if s.Network == "" {
		return fmt.Errorf("picture success without network: %w", store.ErrInvalid)
	}
	reset := `failures = 0, failure_networks = 0, last_failure = NULL, failure_epoch = failure_epoch + 1`
	if s.KeepUserCount {
		reset = `failures = failures` // takes the row's lock all the same
	}
	return ps.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `UPDATE pictures SET `+reset+` WHERE tenant = ? AND user_id = ?`, tenant, userID)
		if err == nil && n == 0 {
			err = pictureNotFound(userID)
		}
		if err != nil {
			return err
		}
		forget := `DELETE FROM picture_failures`
		if s.KeepUserCount {
			forget = `UPDATE picture_failures SET failures = 0, last_failure = NULL` // its epoch stays: it has been counted
		}
		_, err = tx.exec(ctx, forget+` WHERE tenant = ? AND user_id = ? AND network = ?`, tenant, userID, s.Network)
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, `INSERT INTO picture_familiar (tenant, user_id, network, passed) VALUES (?, ?, ?, ?)
			ON CONFLICT (tenant, user_id, network) DO UPDATE SET passed = excluded.passed`, tenant, userID, s.Network, nanos(s.At))
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, `DELETE FROM picture_familiar WHERE tenant = ? AND user_id = ? AND network NOT IN (
			SELECT network FROM picture_familiar WHERE tenant = ? AND user_id = ? ORDER BY passed DESC, network LIMIT ?)`,
			tenant, userID, tenant, userID, max(s.KeepFamiliar, 1))
		return err
	})
}

// FamiliarNetworks implements store.PictureCredentials.
func (ps *Pictures) FamiliarNetworks(ctx context.Context, tenant, userID string) ([]store.FamiliarNetwork, error) {
	var out []store.FamiliarNetwork
	err := ps.s.read(ctx, func(tx *txn) error {
		ok, err := tx.exists(ctx, `SELECT 1 FROM pictures WHERE tenant = ? AND user_id = ?`, tenant, userID)
		if err != nil {
			return err
		}
		if !ok {
			return pictureNotFound(userID)
		}
		rows, err := tx.query(ctx, `SELECT network, passed FROM picture_familiar
			WHERE tenant = ? AND user_id = ? ORDER BY passed DESC, network`, tenant, userID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f store.FamiliarNetwork
			var passed sql.NullInt64
			if err := rows.Scan(&f.Network, &passed); err != nil {
				return err
			}
			f.Passed = fromNanos(passed)
			out = append(out, f)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ResetFailures implements store.PictureCredentials.
func (ps *Pictures) ResetFailures(ctx context.Context, tenant, userID string) error {
	return ps.s.write(ctx, func(tx *txn) error {
		p := changes.New(ctx, tenant)
		if p != nil {
			var failures, sum int
			err := tx.queryRow(ctx, `SELECT failures FROM pictures WHERE tenant = ? AND user_id = ?`+tx.d.forUpdate(), tenant, userID).Scan(&failures)
			if errors.Is(err, sql.ErrNoRows) {
				return pictureNotFound(userID)
			}
			if err != nil {
				return err
			}
			err = tx.queryRow(ctx, `SELECT COALESCE(SUM(failures), 0) FROM picture_failures WHERE tenant = ? AND user_id = ?`,
				tenant, userID).Scan(&sum)
			if err != nil {
				return err
			}
			changes.Unlocked(p, userID, max(failures, sum))
		}
		n, err := tx.affected(ctx, `UPDATE pictures SET failures = 0, failure_networks = 0, last_failure = NULL,
			failure_epoch = failure_epoch + 1 WHERE tenant = ? AND user_id = ?`, tenant, userID)
		if err == nil && n == 0 {
			err = pictureNotFound(userID)
		}
		if err != nil {
			return err
		}
		if _, err := tx.exec(ctx, `DELETE FROM picture_failures WHERE tenant = ? AND user_id = ?`, tenant, userID); err != nil {
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
		&lastFailure, &c.Networks); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(offsets), &c.Offsets); err != nil {
		return nil, fmt.Errorf("picture credential of user %q: offsets: %w", c.UserID, err)
	}
	c.ArgonTime, c.ArgonMemory, c.ArgonThreads = uint32(argonTime), uint32(argonMemory), uint8(argonThreads)
	c.Created, c.Updated, c.LastFailure = fromNanos(created), fromNanos(updated), fromNanos(lastFailure)
	return &c, nil
}
