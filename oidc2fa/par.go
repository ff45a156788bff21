package oidc2fa

import (
	"crypto/sha256"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/visid/visid/internal/jsonenc"
	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/store"
)

// requestURIPrefix begins every request_uri the provider hands out (RFC 9126 §2.2); 256 random
// bits follow, base64url-encoded, and then, when the request had ui_locales, a dot and its
// canonical tags joined by dots. The store keeps the SHA-256 of everything after the prefix, so
// the tags travel with the request without a column of their own and cannot be changed on the
// way: a request_uri whose tags were edited names no pushed request.
const requestURIPrefix = "urn:ietf:params:oauth:request_uri:"

// par is the pushed authorization request endpoint (RFC 9126): the client's backend,
// authenticated as at the token endpoint, sends the authorization request itself, and gets a
// one-time request_uri for the browser to bring to the authorization endpoint. The request is
// checked as the authorization endpoint checks it, but every error is a JSON answer: nothing
// redirects. The store keeps only the SHA-256 of the request_uri's part after its prefix.
func (p *provider) par(w http.ResponseWriter, r *http.Request, tenant string) {
	ctx := r.Context()
	form, client, ok := p.clientRequest(w, r, tenant)
	if !ok {
		return
	}
	bad := func(e *oauthError) { p.tokenError(w, r, http.StatusBadRequest, e) }
	if form.Has("request_uri") {
		bad(newError(errInvalidRequest, "a pushed authorization request cannot carry request_uri"))
		return
	}
	redirectURI := form.Get("redirect_uri")
	if redirectURI == "" || !slices.Contains(client.RedirectURIs, redirectURI) {
		bad(newError(errInvalidRequest, "redirect_uri is missing or is not registered for this client"))
		return
	}
	if e := checkAuthorizeParams(form); e != nil {
		bad(e)
		return
	}
	token := randomToken()
	if tags := pagetext.UILocales(form.Get("ui_locales")); len(tags) > 0 {
		token += "." + strings.Join(tags, ".")
	}
	now := p.now()
	err := p.cfg.Pushed.Create(ctx, store.PushedRequest{
		Hash:        sha256.Sum256([]byte(token)),
		Tenant:      tenant,
		ClientID:    client.ID,
		RedirectURI: redirectURI,
		State:       form.Get("state"),
		Nonce:       form.Get("nonce"),
		Challenge:   form.Get("code_challenge"),
		LoginHint:   loginHint(form),
		Created:     now,
		Expires:     now.Add(p.parLife),
	})
	if err != nil {
		p.log.ErrorContext(ctx, "storing a pushed request failed", "tenant", tenant, "err", err)
		p.tokenError(w, r, http.StatusInternalServerError, serverError(err, "the request could not be stored"))
		return
	}
	p.log.DebugContext(ctx, "authorization request pushed", "tenant", tenant, "client", client.ID)
	p.tel.count(ctx, p.tel.pushed, "", tenant)
	body := make([]byte, 0, 128)
	body = append(body, `{"request_uri":`...)
	body = jsonenc.AppendString(body, requestURIPrefix+token)
	body = append(body, `,"expires_in":`...)
	body = strconv.AppendInt(body, int64(p.parLife.Seconds()), 10)
	body = append(body, '}')
	writeNoStoreJSON(w, http.StatusCreated, body)
}
