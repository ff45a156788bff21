package oidc2fa

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/visid/visid/store"
)

// LoadKeyRing returns a KeyRing whose keys live in keys, so that ID tokens stay verifiable
// across restarts and every instance that shares the store signs and publishes the same keys.
// It reads no tenant's keys to start (only the shared keys of earlier versions, below): a
// tenant's keys are read, with one indexed query, when the tenant is first served and again
// when the copy in memory is older than cfg.Refresh; a tenant's first key of an algorithm is
// made, and stored, when the tenant first needs it (or at PublishKey). cfg.Keys must be empty.
//
// Keys of a stored ring lists a key another instance made within a second (it reads the
// tenant's keys again when its copy is older), and signing uses it within Refresh. Rotate,
// RotateBatch and RotateTenant store the new keys, which every instance publishes at once and
// signs with once RotationDelay has passed; the key signing until then stops at that moment and
// its retirement is stored by the first instance that reads the tenant's keys after it. Nothing
// needs to run on a timer.
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

// Reload makes a stored ring forget the keys it holds in memory, so that each tenant's next
// request reads its keys from the store, and reads the shared keys at once (retiring those an
// earlier version of visid stored). A host need not call it: a stored ring reads a tenant's keys
// again once they are older than Refresh. Reload of a ring from NewKeyRing does nothing.
func (r *KeyRing) Reload(ctx context.Context) error {
	if r.store == nil {
		return nil
	}
	r.mu.Lock()
	r.tenants = map[string]*tenantRing{}
	r.mu.Unlock()
	_, err := r.keysOf(ctx, "", r.now(), 0)
	return err
}

// load reads tenant's keys ("" the shared ones) from the store, stores what time has changed
// (the retirement of keys a newer key replaced, and of shared keys; the deletion of keys whose
// retention has passed), and makes them tr's snapshot. The caller holds tr.mu.
func (r *KeyRing) load(ctx context.Context, tenant string, tr *tenantRing, now time.Time) (*keySnap, error) {
	stored, err := r.store.List(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("oidc2fa: reading the signing keys of %q: %w", tenant, err)
	}
	old := tr.snap.Load()
	keys := make([]*ringKey, 0, len(stored))
	for _, sk := range stored {
		if !ValidSigningAlgorithm(sk.Algorithm) || sk.Tenant != tenant {
			continue // a key of another signer
		}
		k, err := parseStored(sk, old)
		if err != nil {
			return nil, err
		}
		if tenant == "" && sk.Retired.IsZero() {
			// The key every tenant shared in earlier versions stops signing now.
			if err := r.store.Retire(ctx, sk.ID, now); err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, fmt.Errorf("oidc2fa: retiring a signing key: %w", err)
			}
			k = k.retiredAt(now)
		}
		keys = append(keys, k)
	}
	slices.SortStableFunc(keys, newerFirst)
	s := &keySnap{loaded: now, keys: keys}
	v := s.view(now, r.retain)
	for _, k := range v.superseded {
		if err := r.store.Retire(ctx, k.kid, k.retired); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("oidc2fa: retiring a signing key: %w", err)
		}
	}
	if len(v.expired) > 0 {
		for _, k := range v.expired {
			if err := r.store.Delete(ctx, k.kid); err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, fmt.Errorf("oidc2fa: deleting an expired signing key: %w", err)
			}
		}
		s.keys = slices.DeleteFunc(s.keys, func(k *ringKey) bool {
			return slices.ContainsFunc(v.expired, func(e *ringKey) bool { return e.kid == k.kid })
		})
	}
	tr.snap.Store(s)
	return s, nil
}

// put stores k.
func (r *KeyRing) put(ctx context.Context, k *ringKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(k.priv)
	if err != nil {
		return fmt.Errorf("oidc2fa: encoding a signing key: %w", err)
	}
	err = r.store.Add(ctx, store.SigningKey{ID: k.kid, Tenant: k.tenant, Algorithm: k.alg, PrivateKey: der,
		Created: k.created, Activates: k.activates})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("oidc2fa: storing a signing key: %w", err)
	}
	return nil
}

// parseStored turns a stored key back into a ring key, taking the parsed key from old (the
// tenant's previous snapshot) when it has it, so that each key is parsed once while in memory.
func parseStored(sk store.SigningKey, old *keySnap) (*ringKey, error) {
	var k *ringKey
	if old != nil {
		if i := slices.IndexFunc(old.keys, func(o *ringKey) bool { return o.kid == sk.ID }); i >= 0 {
			c := *old.keys[i]
			k = &c
		}
	}
	if k == nil {
		key, err := x509.ParsePKCS8PrivateKey(sk.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("oidc2fa: signing key %s: %w", sk.ID, err)
		}
		priv, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("oidc2fa: signing key %s: %w", sk.ID, ErrInvalidKey)
		}
		if k, err = newRingKey(sk.Tenant, sk.Algorithm, priv); err != nil {
			return nil, fmt.Errorf("oidc2fa: signing key %s: %w", sk.ID, err)
		}
		if k.kid != sk.ID {
			return nil, fmt.Errorf("oidc2fa: signing key %s: its id is not its thumbprint %s", sk.ID, k.kid)
		}
	}
	k.created, k.activates, k.retired = sk.Created, sk.Activates, sk.Retired
	return k, nil
}
