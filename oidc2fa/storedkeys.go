package oidc2fa

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"

	"github.com/visid/visid/store"
)

// LoadKeyRing returns a KeyRing whose keys live in keys, so that ID tokens stay verifiable
// across restarts and every instance that shares the store signs and publishes the same keys.
// It loads the keys still published (signing, or retired less than Retain ago); a tenant's
// first key of an algorithm is made, and stored, when the tenant first needs it. cfg.Keys must
// be empty.
//
// Keys of a stored ring reads the store, so the JWKS of every instance lists a new key as soon
// as one instance has made it. Rotate and RotateTenant store the new keys and the old keys'
// retirement. Other instances sign with the new keys when they call Reload, which a host runs
// from time to time (every minute, say; keep the interval well below Config.JWKSMaxAge and
// Retain). Until then they sign with the old keys, which are still published, so every token
// verifies everywhere.
//
// A store that holds the key every tenant shared (what earlier versions of visid stored, with
// no tenant) has that key retired at the first load: it stays published in every tenant's JWKS
// until Retain has passed, so the tokens it signed keep verifying, and each tenant signs with a
// key of its own from then on.
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

// Reload reads the ring's keys from its store: in each chain (a tenant and an algorithm) the
// newest unretired key signs and the older unretired ones are retired (instances that needed a
// tenant's first key at once each stored one); a shared key (no tenant) is retired; keys whose
// retention has passed are deleted from the store. Reload of a ring from NewKeyRing does
// nothing.
func (r *KeyRing) Reload(ctx context.Context) error {
	if r.store == nil {
		return nil
	}
	r.reloadMu.Lock()
	defer r.reloadMu.Unlock()
	stored, err := r.store.List(ctx)
	if err != nil {
		return fmt.Errorf("oidc2fa: reading the signing keys: %w", err)
	}
	now := r.now()
	chains := map[chainID]*chain{}
	for i := len(stored) - 1; i >= 0; i-- { // newest first
		sk := stored[i]
		if !ValidSigningAlgorithm(sk.Algorithm) {
			continue // a key of another signer
		}
		k, err := r.parseStored(sk)
		if err != nil {
			return err
		}
		id := chainID{sk.Tenant, sk.Algorithm}
		c := chains[id]
		if c == nil {
			c = &chain{}
			chains[id] = c
		}
		switch {
		case sk.Retired.IsZero() && sk.Tenant != "" && c.current == nil:
			c.current = k
			continue
		case sk.Retired.IsZero():
			if err := r.store.Retire(ctx, sk.ID, now); err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("oidc2fa: retiring a signing key: %w", err)
			}
			k = k.retiredAt(now)
		default:
			k = k.retiredAt(sk.Retired)
		}
		if r.published(k, now) {
			c.retired = append(c.retired, k)
		} else {
			if err := r.store.Delete(ctx, sk.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("oidc2fa: deleting an expired signing key: %w", err)
			}
			r.parsed.Delete(sk.ID)
		}
	}
	for _, c := range chains {
		slices.SortStableFunc(c.retired, func(a, b *ringKey) int { return b.retired.Compare(a.retired) })
	}
	r.mu.Lock()
	r.chains = chains
	r.mu.Unlock()
	return nil
}

// put stores k, unretired.
func (r *KeyRing) put(ctx context.Context, k *ringKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(k.priv)
	if err != nil {
		return fmt.Errorf("oidc2fa: encoding a signing key: %w", err)
	}
	err = r.store.Add(ctx, store.SigningKey{ID: k.kid, Tenant: k.tenant, Algorithm: k.alg, PrivateKey: der, Created: r.now()})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("oidc2fa: storing a signing key: %w", err)
	}
	return nil
}

// parseStored turns a stored key back into a ring key, unretired, parsing each key once.
func (r *KeyRing) parseStored(sk store.SigningKey) (*ringKey, error) {
	if k, ok := r.parsed.Load(sk.ID); ok {
		return k.(*ringKey), nil
	}
	key, err := x509.ParsePKCS8PrivateKey(sk.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: signing key %s: %w", sk.ID, err)
	}
	priv, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("oidc2fa: signing key %s: %w", sk.ID, ErrInvalidKey)
	}
	k, err := newRingKey(sk.Tenant, sk.Algorithm, priv)
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: signing key %s: %w", sk.ID, err)
	}
	if k.kid != sk.ID {
		return nil, fmt.Errorf("oidc2fa: signing key %s: its id is not its thumbprint %s", sk.ID, k.kid)
	}
	r.parsed.Store(sk.ID, k)
	return k, nil
}
