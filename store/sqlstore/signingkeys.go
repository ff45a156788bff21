package sqlstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/visid/visid/store"
)

// SigningKeys implements store.SigningKeys. A private key is stored sealed with AES-256-GCM
// under Config.KeyEncryptionKey, with the key's id as additional data, so a sealed key copied to
// another row does not open; it is never written in the clear.
type SigningKeys struct{ s *Store }

var _ store.SigningKeys = (*SigningKeys)(nil)

// sealVersion is the first byte of a sealed key: the format (AES-256-GCM, 12-byte random nonce,
// then the ciphertext with its tag).
const sealVersion = 1

// Add implements store.SigningKeys.
func (ks *SigningKeys) Add(ctx context.Context, k store.SigningKey) error {
	aead, err := ks.s.keyAEAD()
	if err != nil {
		return err
	}
	if k.ID == "" || k.Algorithm == "" || len(k.PrivateKey) == 0 || k.Created.IsZero() {
		return fmt.Errorf("signing key without id, algorithm, key or creation time: %w", store.ErrInvalid)
	}
	sealed := seal(aead, k.PrivateKey, []byte(k.ID))
	return ks.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `INSERT INTO signing_keys (id, tenant, algorithm, private_key, created, retired, activates)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, k.ID, k.Tenant, k.Algorithm, sealed, k.Created.UnixNano(), nanos(k.Retired), nanos(k.Activates))
		if err == nil && n == 0 {
			err = fmt.Errorf("signing key %q: %w", k.ID, store.ErrConflict)
		}
		return err
	})
}

// List implements store.SigningKeys through the index on (tenant, created, id). It fails if a
// key does not open under the key-encryption key.
func (ks *SigningKeys) List(ctx context.Context, tenant string) ([]store.SigningKey, error) {
	aead, err := ks.s.keyAEAD()
	if err != nil {
		return nil, err
	}
	out := []store.SigningKey{}
	err = ks.s.read(ctx, func(tx *txn) error {
		rows, err := tx.query(ctx, `SELECT id, tenant, algorithm, private_key, created, retired, activates
			FROM signing_keys WHERE tenant = ? ORDER BY created, id`, tenant)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k store.SigningKey
			var sealed []byte
			var created int64
			var retired, activates sql.NullInt64
			if err := rows.Scan(&k.ID, &k.Tenant, &k.Algorithm, &sealed, &created, &retired, &activates); err != nil {
				return err
			}
			if k.PrivateKey, err = unseal(aead, sealed, []byte(k.ID)); err != nil {
				return fmt.Errorf("signing key %q does not open under the key-encryption key: %w", k.ID, err)
			}
			k.Created, k.Retired, k.Activates = time.Unix(0, created).UTC(), fromNanos(retired), fromNanos(activates)
			out = append(out, k)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Tenants implements store.SigningKeys through the index on (tenant, created, id).
func (ks *SigningKeys) Tenants(ctx context.Context, after string, limit int) ([]string, error) {
	if limit < 1 {
		return nil, fmt.Errorf("signing key tenants: limit %d: %w", limit, store.ErrInvalid)
	}
	out := []string{}
	err := ks.s.read(ctx, func(tx *txn) error {
		out = out[:0]
		rows, err := tx.query(ctx, `SELECT DISTINCT tenant FROM signing_keys WHERE tenant > ? ORDER BY tenant LIMIT ?`, after, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var t string
			if err := rows.Scan(&t); err != nil {
				return err
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Retire implements store.SigningKeys.
func (ks *SigningKeys) Retire(ctx context.Context, id string, t time.Time) error {
	return ks.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `UPDATE signing_keys SET retired = ? WHERE id = ? AND retired IS NULL`, nanos(t), id)
		if err != nil || n > 0 {
			return err
		}
		ok, err := tx.exists(ctx, `SELECT 1 FROM signing_keys WHERE id = ?`, id)
		if err == nil && !ok {
			err = fmt.Errorf("signing key %q: %w", id, store.ErrNotFound)
		}
		return err
	})
}

// Delete implements store.SigningKeys.
func (ks *SigningKeys) Delete(ctx context.Context, id string) error {
	return ks.s.write(ctx, func(tx *txn) error {
		n, err := tx.affected(ctx, `DELETE FROM signing_keys WHERE id = ?`, id)
		if err == nil && n == 0 {
			err = fmt.Errorf("signing key %q: %w", id, store.ErrNotFound)
		}
		return err
	})
}

// seal encrypts plain under aead with additional data ad, as a sealVersion byte, a random nonce
// and the ciphertext with its tag.
func seal(aead cipher.AEAD, plain, ad []byte) []byte {
	sealed := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plain)+aead.Overhead())
	sealed[0] = sealVersion
	rand.Read(sealed[1:]) // never returns an error
	return aead.Seal(sealed, sealed[1:], plain, ad)
}

// unseal opens what seal made with the same aead and ad.
func unseal(aead cipher.AEAD, sealed, ad []byte) ([]byte, error) {
	if len(sealed) < 1+aead.NonceSize() || sealed[0] != sealVersion {
		return nil, errors.New("unknown sealed format")
	}
	return aead.Open(nil, sealed[1:1+aead.NonceSize()], sealed[1+aead.NonceSize():], ad)
}

// keyAEAD returns the AES-256-GCM of the key-encryption key.
func (s *Store) keyAEAD() (cipher.AEAD, error) {
	if s.kek == nil {
		return nil, ErrNoKeyEncryptionKey
	}
	block, err := aes.NewCipher(s.kek)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, errors.New("sqlstore: AES-GCM: " + err.Error())
	}
	return aead, nil
}
