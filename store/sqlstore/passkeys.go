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

// Passkeys implements store.Passkeys. A passkey is a row of passkeys keyed by its tenant and
// credential ID, which goes when its user or its tenant goes.
type Passkeys struct{ s *Store }

var _ store.Passkeys = (*Passkeys)(nil)

const passkeyColumns = `tenant, user_id, id, name, public_key, attestation_type, aaguid, transports, sign_count,
	backup_eligible, backup_state, created, last_used`

// maxPasskeyID is the longest credential ID the store takes, in bytes.
const maxPasskeyID = 1023

// Create implements store.Passkeys. It locks the user's row first, so that the Creates of one
// user's passkeys take turns and the count it reads holds until it commits; the primary key
// refuses a credential ID the tenant has (ON CONFLICT DO NOTHING: of concurrent Creates of one
// ID the second waits for the first and then inserts nothing).
func (ps *Passkeys) Create(ctx context.Context, p store.Passkey) error {
	switch {
	case p.UserID == "":
		return fmt.Errorf("passkey without user: %w", store.ErrInvalid)
	case len(p.ID) == 0 || len(p.ID) > maxPasskeyID:
		return fmt.Errorf("passkey id of %d bytes: want 1 to %d: %w", len(p.ID), maxPasskeyID, store.ErrInvalid)
	case len(p.PublicKey) == 0:
		return fmt.Errorf("passkey without public key: %w", store.ErrInvalid)
	case !storableText(p.Tenant) || !storableText(p.UserID):
		return fmt.Errorf("user %q: %w", p.UserID, store.ErrNotFound) // no stored user has such an id
	}
	transports := p.Transports
	if transports == nil {
		transports = []string{}
	}
	tj, err := json.Marshal(transports)
	if err != nil {
		return err
	}
	return ps.s.write(ctx, func(tx *txn) error {
		// FOR NO KEY UPDATE: another Create of the user's waits, but not a write that only
		// refers to the user (a membership, a picture credential).
		lock := ""
		if tx.d == postgresDialect {
			lock = " FOR NO KEY UPDATE"
		}
		ok, err := tx.exists(ctx, `SELECT 1 FROM users WHERE tenant = ? AND id = ?`+lock, p.Tenant, p.UserID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("user %q: %w", p.UserID, store.ErrNotFound)
		}
		var held, last int64
		err = tx.queryRow(ctx, `SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM passkeys WHERE tenant = ? AND user_id = ?`,
			p.Tenant, p.UserID).Scan(&held, &last)
		if err != nil {
			return err
		}
		if held >= store.MaxPasskeysPerUser {
			return fmt.Errorf("user %q holds %d passkeys: %w", p.UserID, held, store.ErrConflict)
		}
		n, err := tx.affected(ctx, `INSERT INTO passkeys (`+passkeyColumns+`, seq)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO NOTHING`,
			p.Tenant, p.UserID, p.ID, p.Name, p.PublicKey, p.AttestationType, nonNil(p.AAGUID), string(tj),
			int64(p.SignCount), p.BackupEligible, p.BackupState, nanos(p.Created), nanos(p.LastUsed), last+1)
		switch {
		case isForeignKey(err):
			return fmt.Errorf("user %q: %w", p.UserID, store.ErrNotFound)
		case isUnique(err), err == nil && n == 0:
			return fmt.Errorf("passkey id taken in tenant %q: %w", p.Tenant, store.ErrConflict)
		}
		return err
	})
}

// Get implements store.Passkeys.
func (ps *Passkeys) Get(ctx context.Context, tenant string, id []byte) (*store.Passkey, error) {
	var out *store.Passkey
	err := ps.s.read(ctx, func(tx *txn) error {
		p, err := scanPasskey(tx.queryRow(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE tenant = ? AND id = ?`,
			tenant, nonNil(id)))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("passkey of tenant %q: %w", tenant, store.ErrNotFound)
		}
		out = p
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// List implements store.Passkeys.
func (ps *Passkeys) List(ctx context.Context, tenant, userID string) ([]store.Passkey, error) {
	out := []store.Passkey{}
	err := ps.s.read(ctx, func(tx *txn) error {
		ok, err := tx.exists(ctx, `SELECT 1 FROM users WHERE tenant = ? AND id = ?`, tenant, userID)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("user %q: %w", userID, store.ErrNotFound)
		}
		rows, err := tx.query(ctx, `SELECT `+passkeyColumns+` FROM passkeys WHERE tenant = ? AND user_id = ? ORDER BY seq`,
			tenant, userID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			p, err := scanPasskey(rows)
			if err != nil {
				return err
			}
			out = append(out, *p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Use implements store.Passkeys: a compare-and-swap on the stored counter. Of concurrent Uses
// with one OldSignCount the first UPDATE changes the row; the others wait for it and then find
// the counter changed.
func (ps *Passkeys) Use(ctx context.Context, tenant, userID string, id []byte, u store.PasskeyUse) error {
	if !storableText(tenant) || !storableText(userID) {
		return passkeyNotFound(userID) // no stored user has such an id
	}
	return ps.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `UPDATE passkeys SET sign_count = ?, backup_state = ?, last_used = ?
			WHERE tenant = ? AND id = ? AND user_id = ? AND sign_count = ?`,
			int64(u.SignCount), u.BackupState, nanos(u.At), tenant, nonNil(id), userID, int64(u.OldSignCount))
		if err != nil || n > 0 {
			return err
		}
		var count int64
		err = tx.queryRow(ctx, `SELECT sign_count FROM passkeys WHERE tenant = ? AND id = ? AND user_id = ?`,
			tenant, nonNil(id), userID).Scan(&count)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return passkeyNotFound(userID)
		case err != nil:
			return err
		}
		return fmt.Errorf("passkey of user %q is at sign count %d, not %d: %w", userID, count, u.OldSignCount, store.ErrConflict)
	})
}

// Delete implements store.Passkeys.
func (ps *Passkeys) Delete(ctx context.Context, tenant, userID string, id []byte) error {
	if !storableText(tenant) || !storableText(userID) {
		return passkeyNotFound(userID) // no stored user has such an id
	}
	return ps.s.write(ctx, func(tx *txn) error {
		p := changes.New(ctx, tenant)
		if p != nil { // the event names the passkey: read it, locked until the write commits
			var name string
			err := tx.queryRow(ctx, `SELECT name FROM passkeys WHERE tenant = ? AND id = ? AND user_id = ?`+tx.d.forUpdate(),
				tenant, nonNil(id), userID).Scan(&name)
			if errors.Is(err, sql.ErrNoRows) {
				return passkeyNotFound(userID)
			}
			if err != nil {
				return err
			}
			changes.PasskeyRemoved(p, &store.Passkey{UserID: userID, ID: id, Name: name})
		}
		n, err := tx.affected(ctx, `DELETE FROM passkeys WHERE tenant = ? AND id = ? AND user_id = ?`, tenant, nonNil(id), userID)
		if err == nil && n == 0 {
			err = passkeyNotFound(userID)
		}
		if err != nil {
			return err
		}
		return tx.recordEvents(ctx, tenant, p)
	})
}

func passkeyNotFound(userID string) error {
	return fmt.Errorf("passkey of user %q: %w", userID, store.ErrNotFound)
}

func scanPasskey(row scanner) (*store.Passkey, error) {
	var p store.Passkey
	var transports string
	var signCount int64
	var created, lastUsed sql.NullInt64
	if err := row.Scan(&p.Tenant, &p.UserID, &p.ID, &p.Name, &p.PublicKey, &p.AttestationType, &p.AAGUID, &transports,
		&signCount, &p.BackupEligible, &p.BackupState, &created, &lastUsed); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(transports), &p.Transports); err != nil {
		return nil, fmt.Errorf("passkey of user %q: transports: %w", p.UserID, err)
	}
	if len(p.Transports) == 0 {
		p.Transports = nil
	}
	if len(p.AAGUID) == 0 {
		p.AAGUID = nil
	}
	p.SignCount = uint32(signCount)
	p.Created, p.LastUsed = fromNanos(created), fromNanos(lastUsed)
	return &p, nil
}
