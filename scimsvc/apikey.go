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

// Why a request is refused, as the log says it; the response says none of this. A key's id is
// not secret, so the log may name it; its secret is never logged.
const (
	reasonNoHeader     = "no Authorization header"
	reasonNotBearer    = "the Authorization header is not \"Bearer <key>\""
	reasonNotAKey      = "the bearer token is not a visid API key (scimkey_<id>_<secret>)"
	reasonUnknownKey   = "no API key has the id the token names"
	reasonWrongSecret  = "wrong secret for the API key the token names (a truncated or altered key?)"
	reasonNoMatch      = "no API key has this secret"
	reasonRevoked      = "the API key is revoked"
	reasonScope        = "the API key lacks the scim scope"
	reasonOtherTenant  = "the API key may not act on this tenant"
	reasonNoSuchTenant = "the tenant does not exist"
)

// refusal is a client error with the reason the log gives for it: the response is the Error's
// alone, the same for every reason of one status.
type refusal struct {
	err    *Error
	reason string
	// key is the id of the API key the request presents or names, "" for none.
	key string
}

func (r *refusal) Error() string { return r.err.Error() + " (" + r.reason + ")" }

func (r *refusal) Unwrap() error { return r.err }

// bearer returns the secret of a request's "Authorization: Bearer" header and the key id part
// of it; ok is false when the header holds no well-formed visid key, and reason says why.
func bearer(r *http.Request) (secret, idPart string, ok bool, reason string) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", "", false, reasonNoHeader
	}
	scheme, secret, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", "", false, reasonNotBearer
	}
	secret = strings.TrimSpace(secret)
	if !strings.HasPrefix(secret, keyPrefix) || len(secret) > 256 {
		return "", "", false, reasonNotAKey
	}
	idPart, _, found = strings.Cut(secret[len(keyPrefix):], "_")
	if !found || idPart == "" {
		return "", "", false, reasonNotAKey
	}
	return secret, idPart, true, ""
}

// claimedKeyID is the key id part of the request's key, or "" when it carries no well-formed key.
func claimedKeyID(r *http.Request) string {
	_, id, _, _ := bearer(r)
	return id
}

// authenticate returns the API key a request presents, or a *refusal of errUnauthenticated
// whose reason is reasonNoMatch when the secret matches no key (the caller tells an unknown
// key id from a wrong secret, at the cost of a lookup spent only on failures). The key comes
// from h.keyCache when it may be trusted there, and is shared: the caller must not change it.
func (h *handler) authenticate(r *http.Request) (*cachedKey, error) {
	secret, idPart, ok, reason := bearer(r)
	if !ok {
		return nil, &refusal{err: errUnauthenticated, reason: reason}
	}
	sum := sha256.Sum256([]byte(secret))
	ck, err := h.keyCache.byHash(r.Context(), sum)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &refusal{err: errUnauthenticated, reason: reasonNoMatch, key: "key_" + idPart}
	}
	if err != nil {
		return nil, err
	}
	k := ck.key
	if subtle.ConstantTimeCompare(k.SecretHash[:], sum[:]) != 1 || k.ID != "key_"+idPart {
		return nil, &refusal{err: errUnauthenticated, reason: reasonNoMatch, key: "key_" + idPart}
	}
	if k.Revoked {
		return nil, &refusal{err: errUnauthenticated, reason: reasonRevoked, key: k.ID}
	}
	return ck, nil
}

// authMetric is the reason label of MetricAuthFailures for a refusal's reason.
func authMetric(reason string) string {
	switch reason {
	case reasonNoHeader, reasonNotBearer, reasonNotAKey:
		return authMissing
	case reasonRevoked:
		return authRevoked
	case reasonScope:
		return authScope
	case reasonOtherTenant, reasonNoSuchTenant, reasonOtherTenant + ", and " + reasonNoSuchTenant:
		return authTenant
	}
	if strings.HasPrefix(reason, reasonScope) {
		return authScope
	}
	return authUnknown
}

// authorize checks that k may use the SCIM API on tenant, which must exist: otherwise 403, so a
// key learns nothing about tenants it cannot use. The log says which check failed, and whether
// the tenant exists.
func (h *handler) authorize(r *http.Request, k *store.APIKey, tenant string) error {
	forbidden := &Error{Status: http.StatusForbidden, Detail: "this API key may not use the SCIM API of this tenant"}
	reason := ""
	switch {
	case !slices.Contains(k.Scopes, ScopeSCIM):
		reason = reasonScope
	case !slices.Contains(k.Tenants, tenant):
		reason = reasonOtherTenant
	}
	_, err := h.cfg.Tenants.Get(r.Context(), tenant)
	switch {
	case errors.Is(err, store.ErrNotFound) && reason == "":
		reason = reasonNoSuchTenant
	case errors.Is(err, store.ErrNotFound):
		reason += ", and " + reasonNoSuchTenant
	case err != nil:
		return err
	}
	if reason != "" {
		h.tel.count(r.Context(), h.tel.authFailed, attrReason, authMetric(reason), "")
		return &refusal{err: forbidden, reason: reason, key: k.ID}
	}
	return nil
}
