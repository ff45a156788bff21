package oidc2fa

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/text/language"

	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/store"
)

// DefaultEnrollmentLinkLifetime is how long an enrollment link may be opened when
// Config.EnrollmentLinkLifetime is 0.
const DefaultEnrollmentLinkLifetime = 10 * time.Minute

// Enroller is what an Authenticator implements to let users set up their factor. The provider
// finds it by type assertion: without it, the enrollment endpoint answers 404 and no link can
// be made.
//
// Enrollment needs proof of the first factor, never just a login hint: it starts from a
// one-time link that the relying application's backend asked for with its client secret
// (POST /enroll/{tenant}) or that an administrator made (NewEnrollmentLink). The person opens
// the link, the provider binds the enrollment to that browser, and every request under the
// enrollment URL reaches ServeEnroll with the enrollment, after the same checks as the login
// pages (pending, unexpired, bound to this browser, CSRF token on POST, user still active).
type Enroller interface {
	ServeEnroll(w http.ResponseWriter, r *http.Request, e *Enrollment)
}

// FactorChecker is what an Enroller implements to tell the provider whether a user already has
// the factor. A client's link for such a user replaces the factor, so the provider asks the
// client for proof of a recent sign-in with it (id_token_hint); a first enrollment needs only
// the client's word. Without FactorChecker every user counts as enrolled: a client's link then
// always needs that proof, and only an administrator's link enrolls without it.
type FactorChecker interface {
	// HasFactor reports whether the user has the factor set up. tenant and subject name a user
	// that exists.
	HasFactor(ctx context.Context, tenant, subject string) (bool, error)
}

// Enrollment is one request to the enrollment pages, as an Enroller sees it.
type Enrollment struct {
	// Tenant is the tenant of the user.
	Tenant string
	// Look is how the tenant's pages look: its name, logo and accent colour, and its default
	// language.
	Look TenantLook
	// Client is the application the person returns to; its ID is "" when an administrator made
	// the link, and there is nowhere to return to.
	Client ClientInfo
	// Subject is the id of the user who enrolls, and User the user, who is active.
	Subject string
	User    *store.User
	// Rest is the part of the request's path below the enrollment URL: "" on the first visit.
	Rest string
	// State is what the enroller saved with SaveState; nil at first.
	State []byte
	// CSRFToken must come back in the form field CSRFField of every POST.
	CSRFToken string
	// Expires is when the enrollment ends.
	Expires time.Time
	// Replace reports that the enrollment may replace a factor the user already has: an
	// administrator made the link, or the client proved a recent sign-in with the current
	// factor. When it is false the Enroller must only set up a first factor, and refuse (with
	// Cancel) if the user has one by the time the enrollment is stored.
	Replace bool
	// Languages are the person's languages, best first, as Login.Languages: the ui_locales of
	// the link, the browser's Accept-Language, the tenant's default language.
	Languages []language.Tag
	// Passkeys and Origin are as in Login: the tenant lets its users enroll a passkey, and the
	// origin of the provider's pages.
	Passkeys bool
	Origin   string

	p  *provider
	in *store.Interaction
}

// Path is the absolute path of a page below the enrollment URL, for links and form actions.
func (e *Enrollment) Path(rest string) string { return e.p.loginPath(e.in, rest) }

// SaveState stores state for the enrollment; later requests see it as Enrollment.State.
func (e *Enrollment) SaveState(ctx context.Context, state []byte) error {
	in, err := e.p.updateState(ctx, e.in.ID, func([]byte) ([]byte, error) { return state, nil })
	if err != nil {
		return err
	}
	e.in, e.State = in, in.AuthState
	return nil
}

// UpdateState changes the enrollment's state atomically: fn gets the state as stored now and
// returns the new one; when fn returns an error nothing is stored and UpdateState returns it.
// Of several requests of one enrollment (a double submit) that update at once, each fn sees
// what the one before stored, so an enroller can let only the first of them store the factor.
// A missing enrollment (ended by another request) is store.ErrNotFound.
func (e *Enrollment) UpdateState(ctx context.Context, fn func(state []byte) ([]byte, error)) error {
	in, err := e.p.updateState(ctx, e.in.ID, fn)
	if err != nil {
		return err
	}
	e.in, e.State = in, in.AuthState
	return nil
}

// Done ends the enrollment after the enroller stored the factor: the browser goes back to the
// client's redirect URI (303) with enrollment=complete, state and iss. Done reports whether it
// answered the browser: when there is no client (an administrator's link) Done writes nothing
// and returns false, and the enroller answers with its own page. When the enrollment had
// already ended (a double submit), Done answers with an error page and returns true.
func (e *Enrollment) Done(w http.ResponseWriter, r *http.Request) bool {
	in, err := e.p.take(w, r, e.in.ID)
	if err != nil {
		return true // take answered with a page
	}
	e.p.log.InfoContext(r.Context(), "enrolled", "tenant", in.Tenant, "client", in.ClientID, "subject", in.Subject)
	why := ""
	if in.ReplaceFactor {
		why = "replaced"
	}
	e.p.record(r.Context(), in, store.EventEnrollmentCompleted, why)
	if in.RedirectURI == "" {
		return false
	}
	q := url.Values{"enrollment": {"complete"}, "iss": {e.p.issuer(in.Tenant)}}
	if in.State != "" {
		q.Set("state", in.State)
	}
	e.p.redirect(w, in.RedirectURI, q)
	return true
}

// Cancel ends the enrollment without a factor: the browser goes back to the client with
// error=access_denied, or, without a client, sees a page saying that nothing was changed.
func (e *Enrollment) Cancel(w http.ResponseWriter, r *http.Request) {
	e.p.end(w, r, e.in.ID, newError(errAccessDenied, "the enrollment was cancelled; nothing was changed"), "cancelled")
}

// EnrollmentRequest asks for a one-time enrollment link.
type EnrollmentRequest struct {
	// Tenant and User name the user who enrolls: User is an id, a userName or a primary email,
	// as login_hint. The user must be active.
	Tenant string
	User   string
	// ClientID and RedirectURI name the application the person returns to: RedirectURI must be
	// one of the client's registered redirect URIs. Both empty for an administrator's link.
	ClientID    string
	RedirectURI string
	// State is returned to RedirectURI unchanged.
	State string
	// UILocales are the person's languages (space-separated BCP 47 tags, as OpenID Connect's
	// ui_locales), best first: the link carries them, and its pages speak the best match.
	// "": the browser's Accept-Language, then the tenant's default language.
	UILocales string
}

// EnrollmentLink is a one-time link that lets its holder set up the factor for a user.
type EnrollmentLink struct {
	// URL is the link. It is a secret: whoever opens it first can enroll for the user. The
	// store keeps only its hash.
	URL string
	// Expires is when the link stops working if nobody opened it.
	Expires time.Time
	// Subject is the id of the user.
	Subject string
}

// Errors of NewEnrollmentLink.
var (
	// ErrUnknownUser: the request names no active user of the tenant.
	ErrUnknownUser = errors.New("oidc2fa: no active user of the tenant has that id, userName or primary email")
	// ErrUnknownClient: the client is not registered in the tenant.
	ErrUnknownClient = errors.New("oidc2fa: no such client in the tenant")
	// ErrRedirectURI: the redirect URI is not one the client registered, or a redirect URI was
	// given without a client.
	ErrRedirectURI = errors.New("oidc2fa: the redirect URI is not registered for the client")
	// ErrNoEnrollment: the Authenticator does not implement Enroller.
	ErrNoEnrollment = errors.New("oidc2fa: the Authenticator has no enrollment (it does not implement Enroller)")
)

// NewEnrollmentLink stores a one-time enrollment link for a user and returns it. It takes the
// Config the provider was made with (only Users, Clients, Interactions, Authenticator, BaseURL,
// EnrollmentLinkLifetime and Now are used), so an administrator's tool can make a link without
// running the provider. The link works on every instance that shares the Interactions store.
func NewEnrollmentLink(ctx context.Context, cfg Config, req EnrollmentRequest) (*EnrollmentLink, error) {
	if cfg.Users == nil || cfg.Clients == nil || cfg.Interactions == nil {
		return nil, errors.New("oidc2fa: NewEnrollmentLink needs Config.Users, Clients and Interactions")
	}
	if _, err := parseBaseURL(cfg.BaseURL); err != nil {
		return nil, err
	}
	if cfg.EnrollmentLinkLifetime < 0 {
		return nil, errors.New("oidc2fa: Config durations must not be negative")
	}
	p := &provider{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), now: cfg.Now,
		linkLife: or(cfg.EnrollmentLinkLifetime, DefaultEnrollmentLinkLifetime)}
	if p.now == nil {
		p.now = time.Now
	}
	// An administrator's link may replace the user's factor.
	return p.enrollmentLink(ctx, req, func(context.Context, string) (bool, error) { return true, nil })
}

// enrollmentLink makes the link of req. mayReplace, called with the user's id once the user is
// known to be active, says whether the link may replace a factor the user has, or returns the
// error that refuses the link.
func (p *provider) enrollmentLink(ctx context.Context, req EnrollmentRequest,
	mayReplace func(ctx context.Context, subject string) (bool, error)) (*EnrollmentLink, error) {
	if _, ok := p.cfg.Authenticator.(Enroller); !ok {
		return nil, ErrNoEnrollment
	}
	if !store.ValidTenantID(req.Tenant) {
		return nil, fmt.Errorf("oidc2fa: tenant %q: %w", req.Tenant, store.ErrNotFound)
	}
	if !validText(req.User) || !validText(req.State) || len(req.User) > maxParamBytes || len(req.State) > maxParamBytes {
		return nil, fmt.Errorf("oidc2fa: the user and the state must be text (no NUL, valid UTF-8) of at most %d bytes: %w",
			maxParamBytes, store.ErrInvalid)
	}
	if req.ClientID != "" || req.RedirectURI != "" {
		if req.ClientID == "" {
			return nil, ErrRedirectURI
		}
		c, err := p.cfg.Clients.Get(ctx, req.Tenant, req.ClientID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, ErrUnknownClient
		case err != nil:
			return nil, err
		case !slices.Contains(c.RedirectURIs, req.RedirectURI):
			return nil, ErrRedirectURI
		}
	}
	subject, err := resolveHint(ctx, p.cfg.Users, req.Tenant, req.User)
	if err != nil {
		return nil, err
	}
	if subject == "" {
		return nil, ErrUnknownUser
	}
	u, err := p.cfg.Users.Get(ctx, req.Tenant, subject)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && !u.Active:
		return nil, ErrUnknownUser
	case err != nil:
		return nil, err
	}
	replace, err := mayReplace(ctx, subject)
	if err != nil {
		return nil, err
	}
	token := randomToken()
	now := p.now()
	in := store.Interaction{
		ID:            linkID(token),
		Purpose:       store.PurposeEnrollLink,
		Tenant:        req.Tenant,
		ClientID:      req.ClientID,
		RedirectURI:   req.RedirectURI,
		State:         req.State,
		LoginHint:     req.User,
		Subject:       subject,
		Created:       now,
		Expires:       now.Add(p.linkLife),
		ReplaceFactor: replace,
	}
	if err := p.cfg.Interactions.Create(ctx, in); err != nil {
		return nil, err
	}
	link := p.base + "/enroll/" + req.Tenant + "/" + token
	if tags := pagetext.UILocales(req.UILocales); len(tags) > 0 {
		link += "?" + url.Values{"ui_locales": {strings.Join(tags, " ")}}.Encode()
	}
	return &EnrollmentLink{
		URL:     link,
		Expires: in.Expires,
		Subject: subject,
	}, nil
}

// linkID is the interaction id under which the link with token is stored.
func linkID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// enrollEndpoint is POST /enroll/{tenant}: the relying application's backend, authenticated as
// at the token endpoint, asks for an enrollment link for a user (login_hint) that returns to
// one of its redirect URIs (redirect_uri) with state.
func (p *provider) enrollEndpoint(w http.ResponseWriter, r *http.Request, tenant string) {
	if _, ok := p.cfg.Authenticator.(Enroller); !ok {
		p.tokenError(w, r, http.StatusNotFound, newError(errInvalidRequest, "this provider offers no enrollment"))
		return
	}
	form, client, ok := p.clientRequest(w, r, tenant)
	if !ok {
		return
	}
	hint := form.Get("login_hint")
	if hint == "" {
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "login_hint is required: it names the user who enrolls"))
		return
	}
	if form.Get("redirect_uri") == "" {
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "redirect_uri is required"))
		return
	}
	if len(hint) > maxParamBytes || len(form.Get("state")) > maxParamBytes {
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "login_hint and state may have at most %d bytes", maxParamBytes))
		return
	}
	proof := form.Get("id_token_hint")
	var (
		refusal   error // why a replacement was refused, for the log
		replacing bool  // the link may replace the user's factor
	)
	link, err := p.enrollmentLink(r.Context(), EnrollmentRequest{
		Tenant: tenant, User: hint, ClientID: client.ID, RedirectURI: form.Get("redirect_uri"), State: form.Get("state"),
		UILocales: form.Get("ui_locales"),
	}, func(ctx context.Context, subject string) (bool, error) {
		has, err := p.hasFactor(ctx, tenant, subject)
		if err != nil {
			return false, err
		}
		if proof == "" && !has {
			return false, nil // a first enrollment: the client's word is enough
		}
		if proof == "" {
			refusal = errors.New("no id_token_hint")
			return false, errSignInFirst
		}
		if refusal = p.checkIDTokenHint(ctx, tenant, client.ID, subject, proof, p.reenroll); refusal != nil {
			return false, errSignInFirst
		}
		replacing = has
		return has, nil
	})
	switch {
	case errors.Is(err, errSignInFirst):
		p.log.InfoContext(r.Context(), "enrollment refused: the user has a second factor and the client proved no recent sign-in with it",
			"tenant", tenant, "client", client.ID, "reason", refusal)
		p.tokenError(w, r, http.StatusBadRequest, newError(errLoginRequired,
			"the user already has a second factor: replacing it needs the id_token_hint of a sign-in with it within the last %s", p.reenroll))
		return
	case errors.Is(err, ErrRedirectURI):
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "redirect_uri is not registered for the client"))
		return
	case errors.Is(err, ErrUnknownUser):
		p.tokenError(w, r, http.StatusBadRequest, newError(errInvalidRequest, "login_hint names no active user of the tenant"))
		return
	case err != nil:
		p.log.ErrorContext(r.Context(), "making an enrollment link failed", "tenant", tenant, "client", client.ID, "err", err)
		p.tokenError(w, r, http.StatusInternalServerError, serverError(err, "the enrollment link could not be made"))
		return
	}
	if replacing {
		p.log.WarnContext(r.Context(), "enrollment link made that replaces the user's second factor", "tenant", tenant,
			"client", client.ID, "subject", link.Subject)
	} else {
		p.log.InfoContext(r.Context(), "enrollment link made", "tenant", tenant, "client", client.ID, "subject", link.Subject)
	}
	body, _ := json.Marshal(struct {
		URL       string `json:"enrollment_url"`
		ExpiresIn int64  `json:"expires_in"`
	}{link.URL, int64(link.Expires.Sub(p.now()).Round(time.Second) / time.Second)})
	writeNoStoreJSON(w, http.StatusOK, body)
}

// enrollLink serves a one-time link. GET shows a page whose button POSTs to the same URL, so a
// mail scanner that fetches the link does not use it up; POST takes the link, stores the
// enrollment bound to this browser and sends the browser to its pages.
func (p *provider) enrollLink(w http.ResponseWriter, r *http.Request, tenant, token string) {
	ctx := r.Context()
	secureHeaders(w.Header())
	if _, ok := p.cfg.Authenticator.(Enroller); !ok || !tokenShaped(token) {
		p.enrollmentPage(w, r, http.StatusNotFound, errInvalidRequest, "enrollment.linkgone")
		return
	}
	id := linkID(token)
	var (
		link *store.Interaction
		err  error
	)
	if r.Method == http.MethodPost {
		link, err = p.cfg.Interactions.Take(ctx, id)
	} else {
		link, err = p.cfg.Interactions.Get(ctx, id)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		p.enrollmentPage(w, r, http.StatusNotFound, errInvalidRequest, "enrollment.linkgone")
		return
	case err != nil:
		p.internal(w, r, err)
		return
	case link.Purpose != store.PurposeEnrollLink || link.Tenant != tenant || !p.now().Before(link.Expires):
		// A link of another tenant was taken by mistake only if someone guessed a 256-bit
		// token; an expired one is gone either way.
		p.enrollmentPage(w, r, http.StatusNotFound, errInvalidRequest, "enrollment.linkgone")
		return
	}
	if r.Method != http.MethodPost {
		client := ""
		if link.ClientID != "" {
			if c, err := p.cfg.Clients.Get(ctx, tenant, link.ClientID); err == nil {
				client = c.Name
			}
		}
		look, err := p.look(ctx, tenant)
		if err != nil {
			p.internal(w, r, err)
			return
		}
		tp := newTenantPage(look)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", tp.csp())
		action := p.basePath + "/enroll/" + tenant + "/" + token
		if tags := pagetext.UILocales(pageLangOf(r).uiLocales); len(tags) > 0 {
			action += "?" + url.Values{"ui_locales": {strings.Join(tags, " ")}}.Encode()
		}
		p.knowTenantLanguage(r, look)
		t := p.pageTexts(r)
		w.Header().Set("Content-Language", t.Lang())
		_ = linkPageTemplate.Execute(w, linkPageData{T: t, Client: client, Action: action, Style: pageStyle, tenantPage: tp})
		return
	}
	now := p.now()
	in := *link
	in.ID = randomToken()
	in.Purpose = store.PurposeEnroll
	in.Created = now
	in.Expires = now.Add(p.loginLife)
	if err := p.cfg.Interactions.Create(ctx, in); err != nil {
		p.internal(w, r, err)
		return
	}
	p.bind(w, &in)
	p.keepUILocales(w, &in, pagetext.UILocales(pageLangOf(r).uiLocales))
	http.Redirect(w, r, p.loginPath(&in, ""), http.StatusSeeOther)
}

// enrollment serves the enrollment pages through the Authenticator's Enroller.
func (p *provider) enrollment(w http.ResponseWriter, r *http.Request, tenant, id, rest string) {
	ctx := r.Context()
	enroller, ok := p.cfg.Authenticator.(Enroller)
	if !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	in, ok := p.open(w, r, store.PurposeEnroll, tenant, id)
	if !ok {
		return
	}
	e := &Enrollment{
		Tenant:    in.Tenant,
		Subject:   in.Subject,
		Rest:      rest,
		State:     in.AuthState,
		CSRFToken: p.mac("csrf", id),
		Expires:   in.Expires,
		Replace:   in.ReplaceFactor,
		p:         p,
		in:        in,
	}
	if in.ClientID != "" {
		c, err := p.cfg.Clients.Get(ctx, in.Tenant, in.ClientID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			p.end(w, r, id, newError(errAccessDenied, "The application that sent you here is no longer registered."), "client deleted")
			return
		case err != nil:
			p.internal(w, r, err)
			return
		}
		e.Client = ClientInfo{ID: c.ID, Name: c.Name, Description: c.Description}
	}
	u, err := p.cfg.Users.Get(ctx, in.Tenant, in.Subject)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && !u.Active:
		p.end(w, r, id, newError(errAccessDenied, "the account cannot be enrolled"), "user deleted or inactive")
		return
	case err != nil:
		p.internal(w, r, err)
		return
	}
	e.User = u
	t, err := p.tenant(ctx, in.Tenant)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	e.Look, e.Passkeys, e.Origin = p.lookOf(t), t.PasskeysAllowed(), p.origin
	p.knowTenantLanguage(r, e.Look)
	e.Languages = p.preferences(r, pageLangOf(r).uiLocales, in.Tenant)
	enroller.ServeEnroll(w, r, e)
}

// hasFactor reports whether the user has the factor set up, through the Authenticator's
// FactorChecker; without one, every user counts as having it.
func (p *provider) hasFactor(ctx context.Context, tenant, subject string) (bool, error) {
	fc, ok := p.cfg.Authenticator.(FactorChecker)
	if !ok {
		return true, nil
	}
	return fc.HasFactor(ctx, tenant, subject)
}
