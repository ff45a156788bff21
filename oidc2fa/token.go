package oidc2fa

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/visid/visid/store"
)

// token is the token endpoint (OpenID Connect Core §3.1.3). The client is authenticated before
// the code is touched, so a failed attempt never burns it; the code is then consumed in one
// atomic store operation and checked against the client, the redirect URI, its expiry and the
// PKCE verifier. Success is an ID token, signed with the client's algorithm, and for a client
// registered with store.Client.AccessToken an access token good only at the UserInfo endpoint.
// A replayed code revokes the access tokens its first redemption issued.
func (p *provider) token(w http.ResponseWriter, r *http.Request, tenant string) {
	ctx := r.Context()
	form, client, ok := p.clientRequest(w, r, tenant)
	if !ok {
		return
	}
	if gt := form.Get("grant_type"); gt != "authorization_code" {
		if gt == "" {
			p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "grant_type is required"))
		} else {
			p.tokenError(w, r, http.StatusBadRequest, newError(errUnsupportedGrantType, "only authorization_code is supported"))
		}
		return
	}
	code := form.Get("code")
	if code == "" {
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "code is required"))
		return
	}
	if form.Get("redirect_uri") == "" {
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "redirect_uri is required"))
		return
	}
	invalid := newError(errInvalidGrant, "the code is invalid, expired, used, or was issued to another client or redirect URI")
	codeHash := sha256.Sum256([]byte(code))
	grant, err := p.cfg.Codes.Consume(ctx, codeHash)
	switch {
	case errors.Is(err, store.ErrUsed):
		p.log.WarnContext(ctx, "authorization code replayed", "tenant", tenant, "client", client.ID,
			"code_client", grant.ClientID, "subject", grant.Subject)
		p.tel.count(ctx, p.tel.replays, "", tenant)
		p.revokeReplayed(r, tenant, codeHash)
		p.tokenError(w, r, http.StatusBadRequest, invalid)
		return
	case errors.Is(err, store.ErrNotFound):
		p.tokenError(w, r, http.StatusBadRequest, invalid)
		return
	case err != nil:
		p.log.ErrorContext(ctx, "consuming a code failed", "tenant", tenant, "err", err)
		p.tokenError(w, r, http.StatusInternalServerError, serverError(err, "the code could not be redeemed"))
		return
	}
	now := p.now()
	switch {
	case grant.Tenant != tenant || grant.ClientID != client.ID:
		p.log.WarnContext(ctx, "code redeemed by another client", "tenant", tenant, "client", client.ID, "code_client", grant.ClientID)
	case grant.RedirectURI != form.Get("redirect_uri"):
	case !now.Before(grant.Expires):
	case !verifierMatches(form.Get("code_verifier"), grant.Challenge):
	default:
		p.issue(w, r, tenant, client, grant)
		return
	}
	p.tokenError(w, r, http.StatusBadRequest, invalid)
}

// issue answers with the ID token of grant. The user is read again: one removed or deactivated
// since the second factor gets no token, and the token names the user as the store has it now.
func (p *provider) issue(w http.ResponseWriter, r *http.Request, tenant string, client *store.Client, grant *store.Code) {
	ctx := r.Context()
	clientID := client.ID
	u, err := p.cfg.Users.Get(ctx, tenant, grant.Subject)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && !u.Active:
		p.log.InfoContext(ctx, "code refused: the user was removed or deactivated", "tenant", tenant, "client", clientID)
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidGrant, "the user can no longer sign in"))
		return
	case err != nil:
		p.log.ErrorContext(ctx, "reading the user failed", "tenant", tenant, "err", err)
		p.tokenError(w, r, http.StatusInternalServerError, serverError(err, "the code could not be redeemed"))
		return
	}
	userName, email, err := namesOf(ctx, p.cfg.Users, tenant, u)
	if err != nil {
		p.log.ErrorContext(ctx, "reading the user's names failed", "tenant", tenant, "err", err)
		p.tokenError(w, r, http.StatusInternalServerError, serverError(err, "the code could not be redeemed"))
		return
	}
	now := p.now()
	tok, err := mintIDTokenWith(ctx, p.cfg.Signer, tenant, ClientIDTokenAlg(client), &IDToken{
		Issuer:            p.issuer(tenant),
		Subject:           grant.Subject,
		Audience:          clientID,
		Expiry:            now.Add(p.tokenLife),
		IssuedAt:          now,
		AuthTime:          grant.AuthTime,
		Nonce:             grant.Nonce,
		AMR:               grant.AMR,
		PreferredUsername: userName,
		Email:             email,
	})
	if err != nil {
		p.log.ErrorContext(r.Context(), "signing an ID token failed", "tenant", tenant, "err", err)
		p.tokenError(w, r, http.StatusInternalServerError, serverError(err, "the ID token could not be signed"))
		return
	}
	body := make([]byte, 0, len(tok)+128)
	body = append(body, `{"id_token":"`...)
	body = append(body, tok...) // base64url and dots: nothing to escape
	expiresIn := p.tokenLife
	if client.AccessToken {
		at, err := p.newAccessToken(ctx, tenant, clientID, grant, now)
		if err != nil {
			p.log.ErrorContext(ctx, "storing an access token failed", "tenant", tenant, "err", err)
			p.tokenError(w, r, http.StatusInternalServerError, serverError(err, "the access token could not be issued"))
			return
		}
		body = append(body, `","access_token":"`...)
		body = append(body, at...) // base64url: nothing to escape
		expiresIn = p.atLife
	}
	body = append(body, `","token_type":"Bearer","expires_in":`...)
	body = strconv.AppendInt(body, int64(expiresIn/time.Second), 10)
	body = append(body, '}')
	p.tel.count(ctx, p.tel.redeemed, "", tenant)
	writeNoStoreJSON(w, http.StatusOK, body)
}

// authenticateClient authenticates the client with client_secret_basic or client_secret_post;
// basic reports whether the client tried Basic, for WWW-Authenticate.
func (p *provider) authenticateClient(r *http.Request, tenant string, form url.Values) (c *store.Client, basic bool, e *oauthError) {
	user, pass, hasBasic := r.BasicAuth()
	_, hasPostSecret := form["client_secret"]
	if !hasBasic && len(r.Header.Get("Authorization")) > 6 && strings.EqualFold(r.Header.Get("Authorization")[:6], "Basic ") {
		return nil, true, newError(errInvalidClient, "the Basic credentials could not be read")
	}
	if hasBasic && hasPostSecret {
		return nil, true, newError(errInvalidRequest, "use one client authentication method, not two")
	}
	var id, secret string
	switch {
	case hasBasic:
		var err1, err2 error
		id, err1 = url.QueryUnescape(user)
		secret, err2 = url.QueryUnescape(pass)
		// The same text check as the form's (validParams), before the store sees the id.
		if err1 != nil || err2 != nil || !validText(id) || !validText(secret) {
			return nil, true, newError(errInvalidClient, "client authentication failed")
		}
		if formID := form.Get("client_id"); formID != "" && formID != id {
			return nil, true, newError(errInvalidRequest, "client_id differs from the authenticated client")
		}
	case hasPostSecret:
		id, secret = form.Get("client_id"), form.Get("client_secret")
	default:
		return nil, false, newError(errInvalidClient, "client authentication is required (client_secret_basic or client_secret_post)")
	}
	sum := sha256.Sum256([]byte(secret))
	c, err := p.cfg.Clients.Get(r.Context(), tenant, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		p.log.ErrorContext(r.Context(), "reading a client failed", "tenant", tenant, "err", err)
		return nil, hasBasic, serverError(err, "the client could not be authenticated")
	}
	want := [32]byte{}
	if c != nil {
		want = c.SecretHash
	}
	if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 || c == nil {
		return nil, hasBasic, newError(errInvalidClient, "client authentication failed")
	}
	return c, hasBasic, nil
}

// verifierMatches checks a PKCE code_verifier against an S256 challenge in constant time.
func verifierMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	for i := 0; i < len(verifier); i++ {
		c := verifier[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0) {
			return false
		}
	}
	sum := sha256.Sum256([]byte(verifier))
	got := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}

// clientRequest reads the form of a client's POST (to the token, PAR or enrollment endpoint)
// and authenticates the client. On failure it answers with the JSON error and returns false.
func (p *provider) clientRequest(w http.ResponseWriter, r *http.Request, tenant string) (url.Values, *store.Client, bool) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "the body must be application/x-www-form-urlencoded"))
		return nil, nil, false
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFormBytes))
	if err != nil {
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "the body is too large or could not be read"))
		return nil, nil, false
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "the body is not a valid form"))
		return nil, nil, false
	}
	for name, vs := range form {
		if len(vs) > 1 {
			p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "the parameter %s is given more than once", name))
			return nil, nil, false
		}
	}
	if !validParams(form) {
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "the form carries characters that are not text (NUL or invalid UTF-8)"))
		return nil, nil, false
	}
	client, basic, e := p.authenticateClient(r, tenant, form)
	if e != nil {
		if e.Code == errInvalidClient {
			if basic {
				w.Header().Set("WWW-Authenticate", `Basic realm="`+p.issuer(tenant)+`"`)
			}
			p.tokenError(w, r, http.StatusUnauthorized, e)
		} else if e.Code == errServerError || e.Code == errTemporarilyUnavailable {
			p.tokenError(w, r, http.StatusInternalServerError, e)
		} else {
			p.tokenError(w, r, http.StatusBadRequest, e)
		}
		return nil, nil, false
	}
	return form, client, true
}

// primaryEmail is the user's primary email, or "" when the user has none marked primary.
func primaryEmail(u *store.User) string {
	for _, e := range u.Emails {
		if e.Primary {
			return e.Value
		}
	}
	return ""
}
