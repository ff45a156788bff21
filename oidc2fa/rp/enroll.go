package rp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ErrNoEnrollment: the provider offers no enrollment (its discovery document lists no
// enrollment_endpoint, because its Authenticator cannot enroll), so EnrollURL cannot start one.
var ErrNoEnrollment = errors.New("rp: the provider offers no enrollment")

// EnrollmentComplete is the error Callback returns when the callback finished an enrollment
// that EnrollURL started: the user set up the second factor. It is an error, not a Result, so
// that a handler which signs the user in whenever Callback's error is nil can never sign anyone
// in after an enrollment. Match it with errors.As.
type EnrollmentComplete struct {
	// LoginHint is the login hint EnrollURL was given: the user who enrolled.
	LoginHint string
}

func (*EnrollmentComplete) Error() string {
	return "rp: the callback finished an enrollment, not a sign-in"
}

// enrollResponse is an answer of the enrollment endpoint: a link, or an error.
type enrollResponse struct {
	URL       string `json:"enrollment_url"`
	ExpiresIn int64  `json:"expires_in"`
	errorResponse
}

// EnrollURL starts an enrollment: it lets the user that loginHint names (a userName, primary
// email or visid id) set up the second factor. Call it only for a user the application has
// authenticated itself — the link it returns lets whoever opens it first enroll for that user.
//
// It asks the provider's enrollment endpoint, with the client's credentials, for a one-time
// link that returns to Config.RedirectURI with a fresh state (256 bits), saves that state with
// Config.Sessions as an enrollment (Session.Enroll; Sessions may set a cookie on w, so call
// EnrollURL before writing the response; nothing is saved when the provider refuses), and
// returns the link to redirect the browser to. The provider sends the browser back to the redirect URI, where Callback reports the end
// of the enrollment: an *EnrollmentComplete error, or an *AuthError such as access_denied when
// the user cancelled.
//
// EnrollURL sets up a first factor only: for a user who already has one the provider answers
// login_required, and EnrollURL fails with ErrSignInFirst (and the *AuthError), because a first
// factor alone must never replace the second. To replace it, sign the user in with both
// factors and call ReenrollURL with the Result.
//
// EnrollURL fails with ErrNoEnrollment when the provider offers no enrollment, with an
// *AuthError when the provider refuses (invalid_request for a login hint that names no active
// user), and with an error when the link is not an absolute http or https URL on the issuer's
// scheme and host. The link is a secret: do not log it.
func (p *RP) EnrollURL(ctx context.Context, w http.ResponseWriter, r *http.Request, loginHint string) (string, error) {
	if loginHint == "" {
		return "", errors.New("rp: EnrollURL needs the login hint of the user who enrolls")
	}
	return p.enrollURL(ctx, w, r, loginHint, url.Values{})
}

// ReenrollURL starts an enrollment that replaces the second factor of the user who has just
// signed in with it: signedIn is the Result of that sign-in's Callback, kept by the application
// (its IDToken is needed). It asks for the link as EnrollURL does, with signedIn.Subject as the
// login hint and the sign-in's ID token as id_token_hint, which the provider accepts when the
// token is its own, issued to this client for that user, and its auth_time is recent (at most
// the provider's Config.ReenrollmentMaxAge old, five minutes by default). Otherwise the provider
// answers login_required and ReenrollURL fails with ErrSignInFirst (and the *AuthError): the
// application runs the second factor again (AuthCodeURL) and calls ReenrollURL with the new
// Result. Everything else is as EnrollURL; the EnrollmentComplete that Callback reports has
// LoginHint signedIn.Subject.
func (p *RP) ReenrollURL(ctx context.Context, w http.ResponseWriter, r *http.Request, signedIn *Result) (string, error) {
	if signedIn == nil || signedIn.IDToken == "" || signedIn.Subject == "" {
		return "", errors.New("rp: ReenrollURL needs the Result of a sign-in with both factors")
	}
	return p.enrollURL(ctx, w, r, signedIn.Subject, url.Values{"id_token_hint": {signedIn.IDToken}})
}

// enrollURL is EnrollURL and ReenrollURL: form carries what the request adds.
func (p *RP) enrollURL(ctx context.Context, w http.ResponseWriter, r *http.Request, loginHint string, form url.Values) (string, error) {
	if p.enroll == "" {
		return "", fmt.Errorf("rp: EnrollURL: %w", ErrNoEnrollment)
	}
	s := Session{State: randomString(), LoginHint: loginHint, Enroll: true}
	form.Set("login_hint", loginHint)
	form.Set("redirect_uri", p.cfg.RedirectURI)
	form.Set("state", s.State)
	resp, body, err := p.postForm(ctx, "enrollment request", p.enroll, form)
	if err != nil {
		return "", err
	}
	var er enrollResponse
	jsonErr := json.Unmarshal(body, &er)
	switch {
	case jsonErr == nil && er.Error == LoginRequired:
		return "", fmt.Errorf("%w: %w", ErrSignInFirst, er.authError())
	case jsonErr == nil && er.Error != "":
		return "", er.authError()
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("rp: enrollment request: the enrollment endpoint answered %s", resp.Status)
	case jsonErr != nil:
		return "", fmt.Errorf("rp: enrollment response: %w", jsonErr)
	case !p.onIssuerHost(er.URL):
		// The link is a secret: the error does not quote it.
		return "", errors.New("rp: enrollment response: the enrollment_url is missing or not an absolute http or https URL on the issuer's scheme and host")
	}
	// Saved once the provider has made the link: a refusal leaves nothing in the browser.
	if err := p.cfg.Sessions.Save(w, r, s); err != nil {
		return "", fmt.Errorf("rp: saving the enrollment session: %w", err)
	}
	return er.URL, nil
}

// onIssuerHost reports whether s is an absolute http or https URL with the issuer's scheme and
// host.
func (p *RP) onIssuerHost(s string) bool {
	iss, err := url.Parse(p.issuer)
	if err != nil {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.IsAbs() && u.Opaque == "" && u.User == nil &&
		(u.Scheme == "http" || u.Scheme == "https") &&
		strings.EqualFold(u.Scheme, iss.Scheme) && strings.EqualFold(u.Host, iss.Host)
}

// enrollmentEnd is what Callback returns for the callback of enrollment s that carries no
// error.
func enrollmentEnd(q url.Values, s Session) error {
	if v, ok := single(q, "enrollment"); !ok || v != "complete" {
		return errors.New("rp: callback: the enrollment's callback carries neither enrollment=complete nor error")
	}
	return &EnrollmentComplete{LoginHint: s.LoginHint}
}
