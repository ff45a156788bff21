package oidc2fa

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"

	"github.com/visid/visid/store"
)

// LoadKeyRing returns a KeyRing whose keys live in keys, so that ID tokens stay verifiable
// across restarts and every instance that shares the store signs and publishes the same keys.
// It loads the keys still published (signing, or retired less than Retain ago) and, when no
// key signs, generates one and stores it. cfg.Keys must be empty.
//
// Rotate (and Add) store the new key and the old key's retirement. Other instances see a
// rotation when they call Reload, which a host runs from time to time (every minute, say; keep
// the interval well below Config.JWKSMaxAge and Retain). Until then they sign with the old key,
// which is still published, so every token verifies everywhere.
func LoadKeyRing(ctx context.Context, cfg KeyRingConfig, keys store.SigningKeys) (*KeyRing, error) {
	if keys == nil {
		return nil, errors.New("oidc2fa: LoadKeyRing needs a store.SigningKeys")
	}
	if len(cfg.Keys) > 0 {
		return nil, errors.New("oidc2fa: LoadKeyRing takes its keys from the store; KeyRingConfig.Keys must be empty")
	}
	r, err := newKeyRing(cfg)
	if err != nil {
		return nil, err
	}
	r.store = keys
	if err := r.Reload(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Reload reads the ring's keys from its store: the newest unretired key signs, the older
// unretired ones are retired (two instances that started at once each stored a key), and keys
// whose retention has passed are deleted from the store. When no key signs, it generates one.
// Reload of a ring from NewKeyRing does nothing.
func (r *KeyRing) Reload(ctx context.Context) error {
	if r.store == nil {
		return nil
	}
	stored, err := r.store.List(ctx)
	if err != nil {
		return fmt.Errorf("oidc2fa: reading the signing keys: %w", err)
	}
	if !slices.ContainsFunc(stored, func(k store.SigningKey) bool { return k.Retired.IsZero() }) {
		if _, err := r.storeNew(ctx); err != nil {
			return err
		}
		if stored, err = r.store.List(ctx); err != nil {
			return fmt.Errorf("oidc2fa: reading the signing keys: %w", err)
		}
	}
	now := r.now()
	var current *ringKey
	var retired []*ringKey
	for i := len(stored) - 1; i >= 0; i-- { // newest first
		sk := stored[i]
		if sk.Algorithm != "EdDSA" {
			continue // a key of another signer
		}
		k, err := parseStoredKey(sk)
		if err != nil {
			return err
		}
		switch {
		case sk.Retired.IsZero() && current == nil:
			current = k
			continue
		case sk.Retired.IsZero():
			if err := r.store.Retire(ctx, sk.ID, now); err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("oidc2fa: retiring a signing key: %w", err)
			}
			k.retired = now
		default:
			k.retired = sk.Retired
		}
		if r.published(k, now) {
			retired = append(retired, k)
		} else if err := r.store.Delete(ctx, sk.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("oidc2fa: deleting an expired signing key: %w", err)
		}
	}
	if current == nil {
		return errors.New("oidc2fa: the store holds no EdDSA signing key")
	}
	slices.SortStableFunc(retired, func(a, b *ringKey) int { return b.retired.Compare(a.retired) })
	r.mu.Lock()
	r.current, r.retired = current, retired
	r.mu.Unlock()
	return nil
}

// addStored stores priv as the signing key, retires the key that signed until now in the store,
// and reloads.
func (r *KeyRing) addStored(ctx context.Context, priv ed25519.PrivateKey) (string, error) {
	k, err := newRingKey(priv)
	if err != nil {
		return "", err
	}
	r.mu.RLock()
	old := r.current
	r.mu.RUnlock()
	if old != nil && old.kid == k.kid {
		return k.kid, nil
	}
	if err := r.put(ctx, k); err != nil {
		return "", err
	}
	if old != nil {
		if err := r.store.Retire(ctx, old.kid, r.now()); err != nil && !errors.Is(err, store.ErrNotFound) {
			return "", fmt.Errorf("oidc2fa: retiring a signing key: %w", err)
		}
	}
	return k.kid, r.Reload(ctx)
}

// storeNew generates a key and stores it.
func (r *KeyRing) storeNew(ctx context.Context) (string, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", fmt.Errorf("oidc2fa: generate key: %w", err)
	}
	k, err := newRingKey(priv)
	if err != nil {
		return "", err
	}
	return k.kid, r.put(ctx, k)
}

// put stores k, unretired.
func (r *KeyRing) put(ctx context.Context, k *ringKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(k.priv)
	if err != nil {
		return fmt.Errorf("oidc2fa: encoding a signing key: %w", err)
	}
	err = r.store.Add(ctx, store.SigningKey{ID: k.kid, Algorithm: "EdDSA", PrivateKey: der, Created: r.now()})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("oidc2fa: storing a signing key: %w", err)
	}
	return nil
}

// parseStoredKey turns a stored key back into a ring key.
func parseStoredKey(sk store.SigningKey) (*ringKey, error) {
	key, err := x509.ParsePKCS8PrivateKey(sk.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: signing key %s: %w", sk.ID, err)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("oidc2fa: signing key %s: %w", sk.ID, ErrInvalidKey)
	}
	k, err := newRingKey(priv)
	if err != nil {
		return nil, err
	}
	if k.kid != sk.ID {
		return nil, fmt.Errorf("oidc2fa: signing key %s: its id is not its thumbprint %s", sk.ID, k.kid)
	}
	return k, nil
}
