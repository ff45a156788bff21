package scimsvc

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/visid/visid/store"
)

// ScopeSCIM is the scope an API key needs to use the SCIM API.
const ScopeSCIM = "scim"

// keyPrefix starts every API key secret: scimkey_<id>_<secret>, where <id> is the key id without
// its "key_" prefix, so a leaked secret names the key to revoke.
const keyPrefix = "scimkey_"

// KeySpec describes an API key to issue.
type KeySpec struct {
	// Name is a label for people, such as "Entra ID provisioning".
	Name string
	// Tenants are the tenants the key may act on; at least one.
	Tenants []string
	// Scopes are what the key may do. Empty: []string{ScopeSCIM}.
	Scopes []string
	// Now is the creation time. Zero: time.Now().
	Now time.Time
}

// IssueAPIKey stores a new API key and returns its secret, which is shown this once: only its
// SHA-256 is stored. The secret is what a client sends as "Authorization: Bearer <secret>".
func IssueAPIKey(ctx context.Context, keys store.APIKeys, spec KeySpec) (secret string, key *store.APIKey, err error) {
	if len(spec.Tenants) == 0 {
		return "", nil, fmt.Errorf("scimsvc: an API key needs at least one tenant: %w", store.ErrInvalid)
	}
	for _, t := range spec.Tenants {
		if !store.ValidTenantID(t) {
			return "", nil, fmt.Errorf("scimsvc: %q is not a tenant id: %w", t, store.ErrInvalid)
		}
	}
	scopes := spec.Scopes
	if len(scopes) == 0 {
		scopes = []string{ScopeSCIM}
	}
	now := spec.Now
	if now.IsZero() {
		now = time.Now()
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, fmt.Errorf("scimsvc: reading random bytes: %w", err)
	}
	id := store.NewID("key")
	secret = keyPrefix + strings.TrimPrefix(id, "key_") + "_" +
		strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:]))
	key, err = keys.Create(ctx, store.APIKey{
		ID:         id,
		Name:       spec.Name,
		Tenants:    slices.Clone(spec.Tenants),
		Scopes:     slices.Clone(scopes),
		SecretHash: sha256.Sum256([]byte(secret)),
		Created:    now,
	})
	if err != nil {
		return "", nil, err
	}
	return secret, key, nil
}

// RevokeAPIKey revokes the key with id (as "key_…") at now; the key is refused from then on.
// ErrNotFound if there is no such key.
func RevokeAPIKey(ctx context.Context, keys store.APIKeys, id string, now time.Time) error {
	return keys.Revoke(ctx, id, now)
}

// touchEvery is how stale a key's LastUsed may get before a request records a new use, so a busy
// key does not write to the store on every request.
const touchEvery = time.Minute

// errUnauthenticated is a 401: no key, or one that is unknown or revoked.
var errUnauthenticated = &Error{Status: http.StatusUnauthorized,
	Detail: "a valid API key is required: Authorization: Bearer <key>"}

// bearer returns the secret of a request's "Authorization: Bearer" header and the key id part
// of it; ok is false when the header holds no well-formed visid key.
func bearer(r *http.Request) (secret, idPart string, ok bool) {
	scheme, secret, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", "", false
	}
	secret = strings.TrimSpace(secret)
	if !strings.HasPrefix(secret, keyPrefix) || len(secret) > 256 {
		return "", "", false
	}
	idPart, _, found = strings.Cut(secret[len(keyPrefix):], "_")
	return secret, idPart, found && idPart != ""
}

// claimedKeyID is the key id part of the request's key, or "" when it carries no well-formed key.
func claimedKeyID(r *http.Request) string {
	_, id, _ := bearer(r)
	return id
}

// authenticate returns the API key a request presents, or errUnauthenticated and the reason of
// MetricAuthFailures: authMissing, authUnknown or authRevoked.
func (h *handler) authenticate(r *http.Request) (*store.APIKey, string, error) {
	secret, idPart, ok := bearer(r)
	if !ok {
		return nil, authMissing, errUnauthenticated
	}
	sum := sha256.Sum256([]byte(secret))
	k, err := h.cfg.APIKeys.ByHash(r.Context(), sum)
	if errors.Is(err, store.ErrNotFound) {
		return nil, authUnknown, errUnauthenticated
	}
	if err != nil {
		return nil, "", err
	}
	if subtle.ConstantTimeCompare(k.SecretHash[:], sum[:]) != 1 || k.ID != "key_"+idPart {
		return nil, authUnknown, errUnauthenticated
	}
	if k.Revoked {
		return nil, authRevoked, errUnauthenticated
	}
	return k, "", nil
}

// authorize checks that k may use the SCIM API on tenant, which must exist: otherwise 403, so a
// key learns nothing about tenants it cannot use.
func (h *handler) authorize(r *http.Request, k *store.APIKey, tenant string) error {
	forbidden := &Error{Status: http.StatusForbidden, Detail: "this API key may not use the SCIM API of this tenant"}
	ctx := r.Context()
	if !slices.Contains(k.Scopes, ScopeSCIM) {
		h.tel.count(ctx, h.tel.authFailed, attrReason, authScope, "")
		return forbidden
	}
	if !slices.Contains(k.Tenants, tenant) {
		h.tel.count(ctx, h.tel.authFailed, attrReason, authTenant, "")
		return forbidden
	}
	if _, err := h.cfg.Tenants.Get(ctx, tenant); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			h.tel.count(ctx, h.tel.authFailed, attrReason, authTenant, "")
			return forbidden
		}
		return err
	}
	return nil
}
