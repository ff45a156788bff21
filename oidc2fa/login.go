package oidc2fa

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"golang.org/x/text/language"

	"github.com/visid/visid/store"
)

// Authenticator is the second factor: it runs the login pages of an interaction and proves that
// the person at the browser is the user the interaction names.
//
// The provider validates an authorization request, stores it as an interaction bound to the
// browser, and sends the browser to the interaction's login URL. Every request under that URL
// reaches ServeLogin with the interaction as a *Login, after the provider has checked that the
// interaction is pending, unexpired and bound to this browser, and that a POST carries the
// interaction's CSRF token. The authenticator serves its pages (with links and form actions from
// Login.Path and the token from Login.CSRFToken), keeps what it needs with Login.SaveState, and
// finishes with Login.Succeed or Login.Fail, which answer the browser with a 303 back to the
// client.
type Authenticator interface {
	ServeLogin(w http.ResponseWriter, r *http.Request, l *Login)
}

// CSRFField is the name of the form field that must carry Login.CSRFToken on every POST to a
// login page.
const CSRFField = "csrf"

// Login is one request to the login pages of an interaction, as an Authenticator sees it.
type Login struct {
	// Tenant is the tenant of the interaction.
	Tenant string
	// Look is how the tenant's pages look: its name, logo and accent colour, and its default
	// language.
	Look TenantLook
	// Client is the application that asked for the second factor.
	Client ClientInfo
	// Subject is the id of the user login_hint named, and User that user (nil when the hint
	// named nobody). A user that is unknown, inactive or locked must fail the same way as a
	// wrong factor, and look the same to the person. The hint is looked up again on every
	// request: one that no longer names the user it named when the sign-in started (the user
	// was renamed or removed, or another user now has the same name) names nobody.
	Subject string
	User    *store.User
	// LoginHint is the login_hint as the client sent it.
	LoginHint string
	// ClientAddr is the address the person's browser sent the request from: the connection's
	// peer, or behind Config.TrustedProxies the address they forwarded (ClientIP). The zero
	// Addr when the request's RemoteAddr is not an address.
	ClientAddr netip.Addr
	// AmbiguousHint is set when LoginHint matches different users (one's userName and
	// another's primary email, say): such a hint names nobody, so Subject is "" and User nil,
	// and the pages must look exactly as for a hint that names nobody. An authenticator may
	// count such sign-ins apart, never show them apart.
	AmbiguousHint bool
	// Rest is the part of the request's path below the login URL: "" on the first visit.
	Rest string
	// State is what the authenticator saved for the interaction with SaveState; nil at first.
	State []byte
	// CSRFToken must come back in the form field CSRFField of every POST.
	CSRFToken string
	// Expires is when the interaction ends.
	Expires time.Time
	// Languages are the person's languages, best first: the authorization request's
	// ui_locales, the browser's Accept-Language, the tenant's default language. The pages
	// speak the best match among the languages they have (language.Matcher), English when none
	// matches, and say which in <html lang>.
	Languages []language.Tag
	// Passkeys reports that the tenant lets its users pass with a passkey
	// (store.Tenant.PasskeysAllowed).
	Passkeys bool
	// Origin is the origin of Config.BaseURL ("https://id.example.com"): the origin of every
	// page of the provider, and so the WebAuthn relying party's, whose ID is its host.
	Origin string

	p  *provider
	in *store.Interaction
	// subject and ambiguous are Subject and AmbiguousHint as the provider found them, out of
	// the authenticator's reach.
	subject   string
	ambiguous bool
	// pushedOnly: every sign-in of the client is pushed by its backend (RequirePAR).
	pushedOnly bool
}

// ClientInfo describes the client of an interaction to the login pages.
type ClientInfo struct {
	ID          string
	Name        string
	Description string
}

// Success is what an authenticator reports when the person proved to be the user.
type Success struct {
	// Subject is the id of the user who authenticated; it must be Login.Subject.
	Subject string
	// AuthTime is when the user authenticated.
	AuthTime time.Time
	// Methods are the authentication methods used, for the amr claim (RFC 8176 values where
	// one fits), unless Config.AMR overrides them.
	Methods []string
}

// Failure is why an interaction ended without success. Every failure is reported to the client
// as access_denied; the provider's log says which.
type Failure int

// The failures.
const (
	// Denied: the person did not prove to be the user (a wrong factor, an unknown or inactive
	// user).
	Denied Failure = iota + 1
	// Cancelled: the person chose not to go on.
	Cancelled
	// Locked: the factor is locked for the user after too many failures.
	Locked
)

func (f Failure) String() string {
	switch f {
	case Denied:
		return "denied"
	case Cancelled:
		return "cancelled"
	case Locked:
		return "locked"
	}
	return "failed"
}

// Path is the absolute path of a page below the login URL, for links and form actions: Path("")
// is the login URL itself.
func (l *Login) Path(rest string) string { return l.p.loginPath(l.in, rest) }

// SaveState stores state for the interaction; later requests see it as Login.State.
func (l *Login) SaveState(ctx context.Context, state []byte) error {
	in, err := l.p.updateState(ctx, l.in.ID, func([]byte) ([]byte, error) { return state, nil })
	if err != nil {
		return err
	}
	l.in, l.State = in, in.AuthState
	return nil
}

// UpdateState changes the interaction's state atomically, as Enrollment.UpdateState does: fn
// gets the state as stored now and returns the new one; when fn returns an error nothing is
// stored and UpdateState returns it. Of several requests of one sign-in that update at once,
// each fn sees what the one before stored, so an authenticator can let a one-time value (a
// challenge) be taken by one request only. A missing interaction is store.ErrNotFound.
func (l *Login) UpdateState(ctx context.Context, fn func(state []byte) ([]byte, error)) error {
	in, err := l.p.updateState(ctx, l.in.ID, fn)
	if err != nil {
		return err
	}
	l.in, l.State = in, in.AuthState
	return nil
}

// updateState changes the authenticator's state of interaction id atomically with fn, and
// returns the interaction as stored: the one home of SaveState and UpdateState of Login and
// Enrollment.
func (p *provider) updateState(ctx context.Context, id string, fn func(state []byte) ([]byte, error)) (*store.Interaction, error) {
	return p.cfg.Interactions.Update(ctx, id, func(in *store.Interaction) error {
		state, err := fn(append([]byte(nil), in.AuthState...))
		if err != nil {
			return err
		}
		in.AuthState = append([]byte(nil), state...)
		return nil
	})
}

// Succeed ends the interaction: the provider issues a code for s.Subject and redirects the
// browser to the client (303). If s.Subject is not Login.Subject, or the user is no longer
// active, the client gets access_denied instead.
func (l *Login) Succeed(w http.ResponseWriter, r *http.Request, s Success) {
	if s.Subject != l.subject {
		s.Subject = "" // not the user the hint names now: refused below as any other subject
	}
	l.p.succeed(w, r, l.in.ID, s)
}

// Fail ends the interaction: the browser is redirected to the client with access_denied.
func (l *Login) Fail(w http.ResponseWriter, r *http.Request, f Failure) {
	l.p.fail(w, r, l.in.ID, f, l.ambiguous, time.Time{})
}

// FailLocked ends the interaction because the factor is locked until until: the browser is
// redirected to the client with access_denied, as Fail(Locked) does. A client that must push
// every sign-in (Config.RequirePAR, or the client's RequirePAR) is also told why and until
// when: error_description says the second factor is locked, and locked_until gives until
// (RFC 3339, UTC), so that the application can tell the person when to try again. Only that
// client's backend, after its own first factor, can start such a sign-in, so the answer tells
// a stranger nothing; any other client's sign-in can be started by anyone with any login_hint,
// and a lock (which only an enrolled user gets) would tell who is enrolled, so it hears
// access_denied alone, as for every failure.
func (l *Login) FailLocked(w http.ResponseWriter, r *http.Request, until time.Time) {
	if !l.pushedOnly || l.ambiguous {
		until = time.Time{}
	}
	l.p.fail(w, r, l.in.ID, Locked, l.ambiguous, until)
}

// loginPath is the path of page rest of interaction in: below /login/ for an authorization
// request, below /enrollment/ for an enrollment.
func (p *provider) loginPath(in *store.Interaction, rest string) string {
	kind := "/login/"
	if in.Purpose == store.PurposeEnroll {
		kind = "/enrollment/"
	}
	s := p.basePath + kind + in.Tenant + "/" + in.ID
	if rest != "" {
		s += "/" + rest
	}
	return s
}

// tokenShaped reports whether s has the shape of what randomToken makes: 43 characters of the
// unpadded base64url alphabet.
func tokenShaped(s string) bool {
	if len(s) != 43 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// bindingCookie is the name of the cookie that binds interaction id to the browser; one per
// interaction, so two tabs do not disturb each other.
func bindingCookie(id string) string { return "visid_login_" + id[:16] }

func (p *provider) mac(parts ...string) string {
	m := hmac.New(sha256.New, p.cookieKey)
	for _, s := range parts {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// bind sets the cookie that binds in to this browser.
func (p *provider) bind(w http.ResponseWriter, in *store.Interaction) {
	http.SetCookie(w, &http.Cookie{
		Name:  bindingCookie(in.ID),
		Value: p.mac("bind", in.ID),
		Path:  p.loginPath(in, ""),
		// A session cookie: one that expired with the interaction would make a late browser
		// look like another browser, and it could not be sent back to the client.
		HttpOnly: true,
		Secure:   p.secure,
		SameSite: http.SameSiteLaxMode,
	})
}

// unbind clears the binding cookie of in.
func (p *provider) unbind(w http.ResponseWriter, in *store.Interaction) {
	http.SetCookie(w, &http.Cookie{Name: bindingCookie(in.ID), Value: "", Path: p.loginPath(in, ""),
		MaxAge: -1, HttpOnly: true, Secure: p.secure, SameSite: http.SameSiteLaxMode})
}

// bound reports whether r carries the binding cookie of interaction id.
func (p *provider) bound(r *http.Request, id string) bool {
	c, err := r.Cookie(bindingCookie(id))
	return err == nil && hmac.Equal([]byte(c.Value), []byte(p.mac("bind", id)))
}

// login serves the login pages of an interaction through the Authenticator.
func (p *provider) login(w http.ResponseWriter, r *http.Request, tenant, id, rest string) {
	ctx := r.Context()
	in, ok := p.open(w, r, store.PurposeLogin, tenant, id)
	if !ok {
		return
	}
	l := &Login{
		Tenant:     in.Tenant,
		Subject:    in.Subject,
		LoginHint:  in.LoginHint,
		ClientAddr: ClientIP(r, p.cfg.TrustedProxies),
		Rest:       rest,
		State:      in.AuthState,
		CSRFToken:  p.mac("csrf", id),
		Expires:    in.Expires,
		p:          p,
		in:         in,
	}
	t, err := p.tenant(ctx, in.Tenant)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	look := p.lookOf(t)
	l.Look, l.Passkeys, l.Origin = look, t.PasskeysAllowed(), p.origin
	p.knowTenantLanguage(r, look)
	l.Languages = p.preferences(r, pageLangOf(r).uiLocales, in.Tenant)
	if c, err := p.cfg.Clients.Get(ctx, in.Tenant, in.ClientID); err == nil {
		l.Client = ClientInfo{ID: c.ID, Name: c.Name, Description: c.Description}
		l.pushedOnly = p.cfg.RequirePAR || c.RequirePAR
	} else if !errors.Is(err, store.ErrNotFound) {
		p.internal(w, r, err)
		return
	} else {
		p.end(w, r, id, newError(errAccessDenied, "the application is no longer registered"), "client deleted")
		return
	}
	// The hint is looked up again, the same way whether or not it named a user, so the page
	// takes as long for an unknown user as for a known one; it must still name the user it
	// named when the sign-in started, and that user alone.
	m, err := lookupHint(ctx, p.cfg.Users, in.Tenant, in.LoginHint)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	switch {
	case m.Ambiguous:
		l.Subject, l.AmbiguousHint = "", true
	case in.Subject != "" && m.User != nil && m.User.ID == in.Subject:
		l.User = m.User
	default:
		l.Subject = ""
	}
	l.subject, l.ambiguous = l.Subject, l.AmbiguousHint
	p.cfg.Authenticator.ServeLogin(w, r, l)
}

// open reads interaction id of tenant for a request to its pages and checks that it is pending,
// has purpose, is bound to this browser and unexpired, and that a POST carries its CSRF token.
// Otherwise it answers the browser and returns false.
func (p *provider) open(w http.ResponseWriter, r *http.Request, purpose, tenant, id string) (*store.Interaction, bool) {
	secureHeaders(w.Header())
	ended := "error.signin.ended"
	page := p.page
	if purpose == store.PurposeEnroll {
		ended = "enrollment.ended"
		page = p.enrollmentPage
	}
	if !tokenShaped(id) { // checked before any store call: a store may refuse bytes that are not text
		page(w, r, http.StatusBadRequest, errInvalidRequest, ended)
		return nil, false
	}
	in, err := p.cfg.Interactions.Get(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (in.Tenant != tenant || in.Purpose != purpose) {
		page(w, r, http.StatusBadRequest, errInvalidRequest, ended)
		return nil, false
	}
	if err != nil {
		p.internal(w, r, err)
		return nil, false
	}
	if !p.bound(r, id) {
		page(w, r, http.StatusForbidden, errInvalidRequest, "error.otherbrowser")
		return nil, false
	}
	if !p.now().Before(in.Expires) {
		what := "sign-in"
		if purpose == store.PurposeEnroll {
			what = "enrollment"
		}
		p.end(w, r, id, newError(errAccessDenied, "the %s expired", what), "expired")
		return nil, false
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil || !hmac.Equal([]byte(r.PostFormValue(CSRFField)), []byte(p.mac("csrf", id))) {
			page(w, r, http.StatusForbidden, errInvalidRequest, "error.form")
			return nil, false
		}
	}
	return in, true
}

// succeed issues a code for the interaction and redirects to the client.
func (p *provider) succeed(w http.ResponseWriter, r *http.Request, id string, s Success) {
	ctx := r.Context()
	in, err := p.take(w, r, id)
	if err != nil {
		return
	}
	fail := func(description, why string) {
		p.log.InfoContext(ctx, "second factor refused", "tenant", in.Tenant, "client", in.ClientID, "reason", why)
		p.record(ctx, in, store.EventSecondFactorFailed, why)
		p.tel.count(ctx, p.tel.outcomes, outcomeOf(in.Subject, Denied), in.Tenant)
		p.redirectError(w, r, in.RedirectURI, in.State, in.Tenant, newError(errAccessDenied, "%s", description))
	}
	if s.Subject == "" || s.Subject != in.Subject {
		fail("the user did not pass the second factor", "the authenticated subject is not the hinted user")
		return
	}
	u, err := p.cfg.Users.Get(ctx, in.Tenant, s.Subject)
	switch {
	case errors.Is(err, store.ErrNotFound):
		fail("the user did not pass the second factor", "user deleted")
		return
	case err != nil:
		p.log.ErrorContext(ctx, "reading the user failed", "tenant", in.Tenant, "err", err)
		p.redirectError(w, r, in.RedirectURI, in.State, in.Tenant, serverError(err, "the sign-in could not be completed"))
		return
	case !u.Active:
		fail("the user did not pass the second factor", "user inactive")
		return
	}
	code := randomToken()
	authTime := s.AuthTime
	if authTime.IsZero() {
		authTime = p.now()
	}
	amr := p.cfg.AMR
	if amr == nil {
		amr = s.Methods
	}
	err = p.cfg.Codes.Create(ctx, store.Code{
		Hash:        sha256.Sum256([]byte(code)),
		Tenant:      in.Tenant,
		ClientID:    in.ClientID,
		RedirectURI: in.RedirectURI,
		Challenge:   in.Challenge,
		Nonce:       in.Nonce,
		Subject:     s.Subject,
		AuthTime:    authTime,
		AMR:         append([]string(nil), amr...),
		Expires:     p.now().Add(p.codeLife),
	})
	if err != nil {
		p.log.ErrorContext(ctx, "storing a code failed", "tenant", in.Tenant, "err", err)
		p.redirectError(w, r, in.RedirectURI, in.State, in.Tenant, serverError(err, "the sign-in could not be completed"))
		return
	}
	p.log.InfoContext(ctx, "second factor passed", "tenant", in.Tenant, "client", in.ClientID, "subject", s.Subject)
	p.record(ctx, in, store.EventSecondFactorSucceeded, "")
	p.tel.count(ctx, p.tel.outcomes, outcomeSucceeded, in.Tenant)
	p.redirect(w, in.RedirectURI, url.Values{"code": {code}, "state": {in.State}, "iss": {p.issuer(in.Tenant)}})
}

// fail ends the interaction with access_denied. ambiguous says that its login_hint matched
// several users: it is logged and counted apart, and answered as any other failure.
func (p *provider) fail(w http.ResponseWriter, r *http.Request, id string, f Failure, ambiguous bool, lockedUntil time.Time) {
	e := newError(errAccessDenied, "the user did not pass the second factor")
	if !lockedUntil.IsZero() {
		e = newError(errAccessDenied, "the second factor is locked after too many failures")
		e.LockedUntil = lockedUntil
	}
	if ambiguous {
		p.finish(w, r, id, e, f.String()+": "+reasonAmbiguousHint, outcomeAmbiguousHint)
		return
	}
	p.end(w, r, id, e, f.String())
}

// reasonAmbiguousHint is the reason logged for a sign-in whose login_hint matched several users.
// It never carries the hint or the users' names.
const reasonAmbiguousHint = "the login_hint names more than one user"

// end takes the interaction and redirects to its client with e.
func (p *provider) end(w http.ResponseWriter, r *http.Request, id string, e *oauthError, why string) {
	p.finish(w, r, id, e, why, "")
}

// finish is end with the MetricOutcomes outcome of a sign-in: "" for the one its subject and
// failure give.
func (p *provider) finish(w http.ResponseWriter, r *http.Request, id string, e *oauthError, why, outcome string) {
	in, err := p.take(w, r, id)
	if err != nil {
		return
	}
	if in.Purpose == store.PurposeEnroll {
		p.log.InfoContext(r.Context(), "enrollment ended", "tenant", in.Tenant, "client", in.ClientID, "subject", in.Subject, "reason", why)
		if in.RedirectURI == "" {
			p.enrollmentEnded(w, r, in.Tenant, e, why)
			return
		}
	} else {
		p.log.InfoContext(r.Context(), "second factor failed", "tenant", in.Tenant, "client", in.ClientID, "reason", why)
		typ, f := store.EventSecondFactorFailed, Denied
		switch strings.TrimSuffix(why, ": "+reasonAmbiguousHint) {
		case Locked.String():
			typ, f = store.EventSecondFactorLocked, Locked
		case Cancelled.String():
			f = Cancelled
		}
		p.record(r.Context(), in, typ, why)
		if outcome == "" {
			outcome = outcomeOf(in.Subject, f)
		}
		p.tel.count(r.Context(), p.tel.outcomes, outcome, in.Tenant)
	}
	p.redirectError(w, r, in.RedirectURI, in.State, in.Tenant, e)
}

// enrollmentEnded answers the browser of an enrollment without an application to return to,
// which ended with e for reason why, with a page that says in plain words what happened.
func (p *provider) enrollmentEnded(w http.ResponseWriter, r *http.Request, tenant string, e *oauthError, why string) {
	status, title, msg := http.StatusBadRequest, enrollmentProblemTitle, "enrollment.ended"
	switch why {
	case "cancelled":
		status, title, msg = http.StatusOK, enrollmentCancelledTitle, "enrollment.cancelled"
	case "expired":
		msg = "enrollment.expired"
	case "user deleted or inactive":
		msg = "enrollment.usergone"
	case "client deleted":
		msg = "enrollment.clientgone"
	}
	look, err := p.look(r.Context(), tenant)
	if err != nil { // the page is still worth showing, in visid's look
		p.log.ErrorContext(r.Context(), "reading the tenant's look failed", "tenant", tenant, "err", err)
	} else {
		p.knowTenantLanguage(r, look)
	}
	p.tenantErrorPage(w, r, look, status, title, e.Code, msg)
}

// take removes the interaction, so it ends once; when another request ended it first, it
// answers with a page and returns an error.
func (p *provider) take(w http.ResponseWriter, r *http.Request, id string) (*store.Interaction, error) {
	in, err := p.cfg.Interactions.Take(r.Context(), id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			p.page(w, r, http.StatusBadRequest, errInvalidRequest, "error.signin.alreadyended")
		} else {
			p.internal(w, r, err)
		}
		return nil, err
	}
	p.unbind(w, in)
	return in, nil
}

// record appends an event about the user of interaction in when Config.Events is set: typ,
// with the client as actor and why as the reason in its data. An interaction for nobody (a
// login_hint that named no user) records nothing. A failure to append is logged: the sign-in
// has ended either way.
func (p *provider) record(ctx context.Context, in *store.Interaction, typ store.EventType, why string) {
	if p.cfg.Events == nil || in.Subject == "" {
		return
	}
	actor := in.ClientID
	if actor == "" {
		actor = "admin" // an administrator's enrollment link
	}
	data := map[string]string{"client": in.ClientID}
	if why != "" {
		data["reason"] = why
	}
	raw, _ := json.Marshal(data) // cannot fail
	err := p.cfg.Events.Append(ctx, in.Tenant, store.Event{Type: typ, Time: p.now(), Actor: actor,
		SubjectKind: store.SubjectUser, SubjectID: in.Subject, Data: raw})
	if err != nil {
		p.log.ErrorContext(ctx, "recording an event failed", "tenant", in.Tenant, "type", typ, "err", err)
	}
}
