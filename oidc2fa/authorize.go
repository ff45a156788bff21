package oidc2fa

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// maxFormBytes bounds the body of a POSTed authorization request or login form.
const maxFormBytes = 64 << 10

// authorize is the authorization endpoint (OpenID Connect Core §3.1.2). Errors about the tenant,
// the client, the redirect URI or a pushed request render a page and never redirect; every other
// error is sent to the registered redirect URI with state and iss.
//
// A request whose request_uri is one the provider handed out brings a pushed authorization
// request (RFC 9126): the provider
// takes it from the store (once, for this client, unexpired) and ignores every other parameter,
// so nothing the browser adds or edits reaches the interaction.
func (p *provider) authorize(w http.ResponseWriter, r *http.Request, tenant string) {
	ctx := r.Context()
	params, err := requestParams(w, r)
	if err != nil {
		p.page(w, r, http.StatusBadRequest, errInvalidRequest, "error.request.unreadable")
		return
	}
	if validParams(params) && r.Method == http.MethodPost {
		pageLangOf(r).uiLocales = params.Get("ui_locales")
	}
	if !validParams(params) {
		p.page(w, r, http.StatusBadRequest, errInvalidRequest, "error.request.nottext")
		return
	}
	if !p.tenantExists(w, r, tenant) {
		return
	}
	clientID, ok := single(params, "client_id")
	if !ok || clientID == "" {
		p.page(w, r, http.StatusBadRequest, errInvalidRequest, "error.request.noclient")
		return
	}
	client, err := p.cfg.Clients.Get(ctx, tenant, clientID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			p.page(w, r, http.StatusBadRequest, errInvalidRequest, "error.request.unknownclient")
		} else {
			p.internal(w, r, err)
		}
		return
	}
	if strings.HasPrefix(params.Get("request_uri"), requestURIPrefix) {
		p.authorizePushed(w, r, tenant, client, params)
		return
	}
	// Any other request_uri would be fetched from the client (OpenID Connect Core §6.2), which
	// the provider never does: request_uri_not_supported, below.
	redirectURI, ok := single(params, "redirect_uri")
	if !ok || !slices.Contains(client.RedirectURIs, redirectURI) {
		p.page(w, r, http.StatusBadRequest, errInvalidRequest, "error.request.redirecturi")
		return
	}
	// From here on the redirect URI is trusted: errors go back to the client.
	state := params.Get("state")
	if len(state) > maxParamBytes {
		state = "" // not echoed: it is refused for its size
	}
	fail := func(e *oauthError) { p.redirectError(w, r, redirectURI, state, tenant, e) }
	if p.cfg.RequirePAR || client.RequirePAR {
		fail(newError(errInvalidRequest, "pushed authorization request required"))
		return
	}
	if e := checkAuthorizeParams(params); e != nil {
		fail(e)
		return
	}
	p.start(w, r, tenant, client, authRequest{
		RedirectURI: redirectURI,
		State:       params.Get("state"),
		Nonce:       params.Get("nonce"),
		Challenge:   params.Get("code_challenge"),
		LoginHint:   loginHint(params),
		UILocales:   pagetext.UILocales(params.Get("ui_locales")),
	})
}

// authRequest is a validated authorization request: what the interaction keeps of it.
type authRequest struct {
	RedirectURI, State, Nonce, Challenge, LoginHint string
	// UILocales are the canonical tags of ui_locales, kept beside the interaction for its pages.
	UILocales []string
}

// authorizePushed serves an authorization request that brings a pushed request: only client_id
// and request_uri are read.
func (p *provider) authorizePushed(w http.ResponseWriter, r *http.Request, tenant string, client *store.Client, params url.Values) {
	ctx := r.Context()
	ref, ok := single(params, "request_uri")
	rest, isOurs := strings.CutPrefix(ref, requestURIPrefix)
	token, locales, _ := strings.Cut(rest, ".")
	uiLocales := pagetext.UILocales(strings.ReplaceAll(locales, ".", " "))
	// The pushed ui_locales, not the browser's parameter, speak for the pages.
	pageLangOf(r).uiLocales = strings.Join(uiLocales, " ")
	if !ok || !isOurs || !tokenShaped(token) || locales != strings.Join(uiLocales, ".") {
		p.page(w, r, http.StatusBadRequest, errInvalidRequest, "error.request.pushedgone")
		return
	}
	pr, err := p.cfg.Pushed.Consume(ctx, tenant, client.ID, sha256.Sum256([]byte(rest)), p.now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		p.log.InfoContext(ctx, "request_uri refused: unknown, used, expired or another client's", "tenant", tenant, "client", client.ID)
		p.page(w, r, http.StatusBadRequest, errInvalidRequest, "error.request.pushedgone")
		return
	case err != nil:
		p.internal(w, r, err)
		return
	case !slices.Contains(client.RedirectURIs, pr.RedirectURI):
		// The client's redirect URIs changed since it pushed the request.
		p.page(w, r, http.StatusBadRequest, errInvalidRequest, "error.request.redirecturigone")
		return
	}
	p.start(w, r, tenant, client, authRequest{
		RedirectURI: pr.RedirectURI, State: pr.State, Nonce: pr.Nonce, Challenge: pr.Challenge, LoginHint: pr.LoginHint,
		UILocales: uiLocales,
	})
}

// start stores the interaction of a validated request, binds it to the browser and sends the
// browser to the login pages.
func (p *provider) start(w http.ResponseWriter, r *http.Request, tenant string, client *store.Client, req authRequest) {
	ctx := r.Context()
	fail := func(e *oauthError) { p.redirectError(w, r, req.RedirectURI, req.State, tenant, e) }
	m, err := lookupHint(ctx, p.cfg.Users, tenant, req.LoginHint)
	if err != nil {
		p.log.ErrorContext(ctx, "resolving login_hint failed", "tenant", tenant, "err", err)
		fail(serverError(err, "the login hint could not be resolved"))
		return
	}
	subject := ""
	if m.User != nil {
		subject = m.User.ID
	}
	if m.Ambiguous {
		// Answered as a hint that names nobody; the log names neither the hint nor the users.
		p.log.InfoContext(ctx, "login_hint names nobody: "+reasonAmbiguousHint, "tenant", tenant, "client", client.ID)
	}
	in := store.Interaction{
		ID:          randomToken(),
		Purpose:     store.PurposeLogin,
		Tenant:      tenant,
		ClientID:    client.ID,
		RedirectURI: req.RedirectURI,
		State:       req.State,
		Nonce:       req.Nonce,
		Challenge:   req.Challenge,
		LoginHint:   req.LoginHint,
		Subject:     subject,
		Created:     p.now(),
	}
	in.Expires = in.Created.Add(p.loginLife)
	if err := p.cfg.Interactions.Create(ctx, in); err != nil {
		p.log.ErrorContext(ctx, "storing an interaction failed", "tenant", tenant, "err", err)
		fail(serverError(err, "the sign-in could not be started"))
		return
	}
	p.tel.count(ctx, p.tel.authorizations, "", tenant)
	p.bind(w, &in)
	p.keepUILocales(w, &in, req.UILocales)
	secureHeaders(w.Header())
	w.Header().Set("Location", p.loginPath(&in, ""))
	w.WriteHeader(http.StatusSeeOther)
}

// tenantExists answers with an error page unless tenant exists; it reports whether to go on.
func (p *provider) tenantExists(w http.ResponseWriter, r *http.Request, tenant string) bool {
	if !store.ValidTenantID(tenant) {
		p.page(w, r, http.StatusBadRequest, errInvalidRequest, "error.request.unknowntenant")
		return false
	}
	if _, err := p.cfg.Tenants.Get(r.Context(), tenant); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			p.page(w, r, http.StatusBadRequest, errInvalidRequest, "error.request.unknowntenant")
		} else {
			p.internal(w, r, err)
		}
		return false
	}
	return true
}

// loginHint is the request's login_hint, or its email_hint when it has none.
func loginHint(params url.Values) string {
	if hint := params.Get("login_hint"); hint != "" {
		return hint
	}
	return params.Get("email_hint")
}

// maxParamBytes bounds state, nonce and login_hint: each is stored with the interaction, and a
// request anyone may send must not make the store grow by more than a few kilobytes.
const maxParamBytes = 512

// validParams reports whether every name and value of params is valid UTF-8 without NUL: what
// every store can keep and every page can show.
func validParams(params url.Values) bool {
	for name, vs := range params {
		if !validText(name) {
			return false
		}
		for _, v := range vs {
			if !validText(v) {
				return false
			}
		}
	}
	return true
}

// validText reports whether s is valid UTF-8 without NUL.
func validText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// checkAuthorizeParams checks everything but the client and redirect URI, in the order the
// errors are reported.
func checkAuthorizeParams(params url.Values) *oauthError {
	for name, vs := range params {
		if len(vs) > 1 {
			return newError(errInvalidRequest, "the parameter %s is given more than once", name)
		}
	}
	if params.Has("request") {
		return newError(errRequestNotSupported, "request objects are not supported")
	}
	if params.Has("request_uri") {
		return newError(errRequestURINotSupported, "request_uri is not supported")
	}
	switch rt := params.Get("response_type"); {
	case rt == "":
		return newError(errInvalidRequest, "response_type is required")
	case rt != "code":
		return newError(errUnsupportedResponseType, "only response_type=code is supported")
	}
	scopes := strings.Fields(params.Get("scope"))
	if !slices.Contains(scopes, "openid") || !slices.Contains(scopes, "2fa") {
		return newError(errInvalidScope, "the scope must contain openid and 2fa")
	}
	if slices.Contains(strings.Fields(params.Get("prompt")), "none") {
		return newError(errLoginRequired, "the second factor always needs the user")
	}
	if params.Get("code_challenge_method") != "S256" {
		return newError(errInvalidRequest, "PKCE is required: code_challenge_method must be S256")
	}
	if !validChallenge(params.Get("code_challenge")) {
		return newError(errInvalidRequest, "code_challenge must be the base64url SHA-256 of the code verifier (43 characters)")
	}
	switch state, nonce := params.Get("state"), params.Get("nonce"); {
	case state == "":
		return newError(errInvalidRequest, "state is required")
	case len(state) > maxParamBytes:
		return newError(errInvalidRequest, "state is longer than %d bytes", maxParamBytes)
	case nonce == "":
		return newError(errInvalidRequest, "nonce is required")
	case len(nonce) > maxParamBytes:
		return newError(errInvalidRequest, "nonce is longer than %d bytes", maxParamBytes)
	}
	hint, email := params.Get("login_hint"), params.Get("email_hint")
	switch {
	case hint == "" && email == "":
		return newError(errInvalidRequest, "login_hint is required: the second factor authenticates the user the first factor identified")
	case hint != "" && email != "" && hint != email:
		return newError(errInvalidRequest, "login_hint and email_hint name different users")
	case len(hint) > maxParamBytes || len(email) > maxParamBytes:
		return newError(errInvalidRequest, "login_hint is longer than %d bytes", maxParamBytes)
	}
	return nil
}

// validChallenge reports whether s is a base64url-encoded SHA-256 (RFC 7636 §4.2).
func validChallenge(s string) bool {
	if len(s) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// requestParams returns the parameters of an authorization request: the query of a GET, the
// form of a POST.
func requestParams(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	if r.Method != http.MethodPost {
		return r.URL.Query(), nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	return r.PostForm, nil
}

// single returns the one value of a parameter; ok is false when it is absent or repeated.
func single(params url.Values, name string) (string, bool) {
	vs := params[name]
	if len(vs) != 1 {
		return "", false
	}
	return vs[0], true
}

// absentUser is a well-formed user id that no store issues, looked up where no user is named so
// that a request for an unknown user costs what one for a known user costs.
const absentUser = "user_00000000000000000000000000"

// hintMatch is what a login hint names: the one user it names, if any, and whether it named
// several.
type hintMatch struct {
	// User is the one user the hint names; nil when it names nobody.
	User *store.User
	// Ambiguous is set when the hint matched different users (by id, userName and primary
	// email): such a hint names nobody.
	Ambiguous bool
}

// resolveHint returns the id of the tenant's user that hint names, or "" when it names none or
// several: see lookupHint.
func resolveHint(ctx context.Context, users store.Users, tenant, hint string) (string, error) {
	m, err := lookupHint(ctx, users, tenant, hint)
	if err != nil || m.User == nil {
		return "", err
	}
	return m.User.ID, nil
}

// lookupHint finds the user hint names among the tenant's users: the one whose id is the hint
// (ids are lower case: the hint's case is folded), whose userName is the hint, or whose primary
// email is the hint, those two compared with the store's folding (schema.Fold). A hint that
// matches different users this way (one user's userName and another's primary email, two users'
// primary emails, one user's id and another's userName) names nobody: it could not tell which of
// them the relying party meant, and a relying party that compares the hint with the ID token's
// claims would take the one for the other.
//
// All three lookups run whatever the hint, so the answer takes as long for an unknown or
// ambiguous hint as for a known one.
func lookupHint(ctx context.Context, users store.Users, tenant, hint string) (hintMatch, error) {
	var found []*store.User
	several := false // more users than a page holds
	add := func(u *store.User) {
		for _, f := range found {
			if f.ID == u.ID {
				return
			}
		}
		found = append(found, u)
	}
	id := absentUser
	if folded := schema.Fold(hint); strings.HasPrefix(folded, "user_") {
		id = folded
	}
	u, err := users.Get(ctx, tenant, id)
	switch {
	case err == nil && id != absentUser:
		add(u)
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return hintMatch{}, err
	}
	lit := filter.Literal{Kind: filter.KindString, Str: hint}.String()
	for _, f := range []string{
		`userName eq ` + lit,
		`emails[value eq ` + lit + ` and primary eq true]`,
	} {
		expr, err := filter.Parse(f, schema.User())
		if err != nil {
			expr = nil // a hint that is no filter literal names nobody; still spend the lookup
		}
		q := store.Query{Filter: expr, StartIndex: 1, Count: 2}
		if expr == nil {
			q.Filter, _ = filter.Parse(`id eq "`+absentUser+`"`, schema.User())
		}
		page, err := users.List(ctx, tenant, q)
		if err != nil {
			return hintMatch{}, err
		}
		if expr == nil {
			continue
		}
		for i := range page.Resources {
			add(&page.Resources[i])
		}
		several = several || page.TotalResults > len(page.Resources)
	}
	switch {
	case several || len(found) > 1:
		return hintMatch{Ambiguous: true}, nil
	case len(found) == 0:
		return hintMatch{}, nil
	}
	return hintMatch{User: found[0]}, nil
}

// randomToken is 256 random bits, base64url-encoded.
func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("oidc2fa: reading random bytes: " + err.Error()) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}
