package oidc2fa

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/visid/visid/store"
)

// newAccessToken issues the access token of grant's redemption: 256 random bits, base64url,
// stored as its SHA-256 with the code's hash, good until now + AccessTokenLifetime.
func (p *provider) newAccessToken(ctx context.Context, tenant, clientID string, grant *store.Code, now time.Time) (string, error) {
	if p.cfg.AccessTokens == nil {
		return "", errors.New("the client has access tokens but Config.AccessTokens is nil")
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(raw[:])
	err := p.cfg.AccessTokens.Create(ctx, store.AccessToken{
		Hash:     sha256.Sum256([]byte(tok)),
		Tenant:   tenant,
		ClientID: clientID,
		Subject:  grant.Subject,
		CodeHash: grant.Hash,
		Created:  now,
		Expires:  now.Add(p.atLife),
	})
	if err != nil {
		return "", err
	}
	return tok, nil
}

// revokeReplayed revokes the access tokens issued for the code whose hash is codeHash, which
// was just presented again (RFC 6749 §4.1.2).
func (p *provider) revokeReplayed(r *http.Request, tenant string, codeHash [32]byte) {
	if p.cfg.AccessTokens == nil {
		return
	}
	n, err := p.cfg.AccessTokens.RevokeCode(r.Context(), codeHash)
	if err != nil {
		p.log.ErrorContext(r.Context(), "revoking the access tokens of a replayed code failed", "tenant", tenant, "err", err)
		return
	}
	if n > 0 {
		p.log.WarnContext(r.Context(), "revoked the access tokens of a replayed code", "tenant", tenant, "tokens", n)
	}
}

// userinfo is the UserInfo endpoint (OpenID Connect Core §5.3): with an access token of the
// tenant in the Authorization header (RFC 6750 §2.1), it returns the user's sub and the identity
// claims the ID token carries (preferred_username, email), read from the store now and left out
// by the same rule (namesOf) when another user of the tenant shares them. The access
// token grants nothing else. A missing token is 401 with WWW-Authenticate: Bearer; an unknown,
// expired or revoked one, one of another tenant, or a user removed or deactivated since, is 401
// with error="invalid_token".
func (p *provider) userinfo(w http.ResponseWriter, r *http.Request, tenant string) {
	ctx := r.Context()
	if !store.ValidTenantID(tenant) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	auth := r.Header.Get("Authorization")
	scheme, tok, _ := strings.Cut(auth, " ")
	tok = strings.TrimSpace(tok)
	if auth == "" || !strings.EqualFold(scheme, "Bearer") {
		p.bearerError(w, tenant, http.StatusUnauthorized, "", "")
		return
	}
	if tok == "" {
		p.bearerError(w, tenant, http.StatusBadRequest, "invalid_request", "the Bearer credentials are empty")
		return
	}
	invalid := func() {
		p.bearerError(w, tenant, http.StatusUnauthorized, "invalid_token", "the access token is invalid, expired or revoked")
	}
	at, err := p.cfg.AccessTokens.Get(ctx, sha256.Sum256([]byte(tok)))
	switch {
	case errors.Is(err, store.ErrNotFound):
		invalid()
		return
	case err != nil:
		p.log.ErrorContext(ctx, "reading an access token failed", "tenant", tenant, "err", err)
		plainServerError(w, err)
		return
	case at.Tenant != tenant || !p.now().Before(at.Expires):
		invalid()
		return
	}
	u, err := p.cfg.Users.Get(ctx, tenant, at.Subject)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && !u.Active:
		invalid()
		return
	case err != nil:
		p.log.ErrorContext(ctx, "reading the user failed", "tenant", tenant, "err", err)
		plainServerError(w, err)
		return
	}
	// The identity claims follow the ID token's rule, decided in one place (namesOf): a name
	// that another user of the tenant shares vouches for nobody, here as there.
	userName, email, err := namesOf(ctx, p.cfg.Users, tenant, u)
	if err != nil {
		p.log.ErrorContext(ctx, "reading the user's names failed", "tenant", tenant, "err", err)
		plainServerError(w, err)
		return
	}
	body, err := json.Marshal(struct {
		Sub               string `json:"sub"`
		PreferredUsername string `json:"preferred_username,omitempty"`
		Email             string `json:"email,omitempty"`
	}{Sub: u.ID, PreferredUsername: userName, Email: email})
	if err != nil {
		p.log.ErrorContext(ctx, "encoding userinfo failed", "err", err)
		plainServerError(w, err)
		return
	}
	writeNoStoreJSON(w, http.StatusOK, body)
}

// bearerError answers a UserInfo request with status and WWW-Authenticate: Bearer, with
// error and error_description when code is not empty (RFC 6750 §3).
func (p *provider) bearerError(w http.ResponseWriter, tenant string, status int, code, description string) {
	v := `Bearer realm=` + strconv.Quote(p.issuer(tenant))
	if code != "" {
		v += `, error="` + code + `", error_description=` + strconv.Quote(description)
	}
	w.Header().Set("WWW-Authenticate", v)
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, http.StatusText(status), status)
}
