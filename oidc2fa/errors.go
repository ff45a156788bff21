package oidc2fa

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/visid/visid/store"
)

// The OAuth 2.0 and OpenID Connect error codes the provider uses.
const (
	errInvalidRequest          = "invalid_request"
	errInvalidClient           = "invalid_client"
	errInvalidGrant            = "invalid_grant"
	errUnsupportedGrantType    = "unsupported_grant_type"
	errUnsupportedResponseType = "unsupported_response_type"
	errInvalidScope            = "invalid_scope"
	errAccessDenied            = "access_denied"
	errLoginRequired           = "login_required"
	errRequestNotSupported     = "request_not_supported"
	errRequestURINotSupported  = "request_uri_not_supported"
	errServerError             = "server_error"
	errTemporarilyUnavailable  = "temporarily_unavailable"
)

// oauthError is an error answer of the authorization or token endpoint.
type oauthError struct {
	Code        string
	Description string
	// LockedUntil, when set, is sent as locked_until (RFC 3339) with an access_denied
	// redirect: the second factor is locked until then (Login.FailLocked).
	LockedUntil time.Time
}

func (e *oauthError) Error() string { return e.Code + ": " + e.Description }

func newError(code, format string, args ...any) *oauthError {
	return &oauthError{Code: code, Description: fmt.Sprintf(format, args...)}
}

// retryAfterUnavailable is the Retry-After, in seconds, of a 503 for store.ErrUnavailable.
const retryAfterUnavailable = int(store.UnavailableRetryAfter / time.Second)

// unavailable reports whether err says the store cannot answer now (store.ErrUnavailable): the
// request may be sent again in a moment, and is answered 503 or temporarily_unavailable.
func unavailable(err error) bool { return errors.Is(err, store.ErrUnavailable) }

// serverError is the OAuth error of a request that failed on err, which is the provider's
// fault: temporarily_unavailable when the store is unavailable (RFC 6749 §4.1.2.1), else
// server_error with description.
func serverError(err error, description string) *oauthError {
	if unavailable(err) {
		return newError(errTemporarilyUnavailable, "the service is temporarily unavailable; try again in a few seconds")
	}
	return newError(errServerError, "%s", description)
}

// plainServerError answers a request that failed on err, which is the provider's fault, with
// a short text: 503 with Retry-After when the store is unavailable, else 500. The caller logs.
func plainServerError(w http.ResponseWriter, err error) {
	if unavailable(err) {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
		http.Error(w, "service temporarily unavailable", http.StatusServiceUnavailable)
		return
	}
	http.Error(w, "internal server error", http.StatusInternalServerError)
}

// secureHeaders are set on every page the provider or an authenticator serves to a browser.
func secureHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
}

// page answers a browser with an error page of a sign-in and never redirects: used when the
// redirect URI cannot be trusted, or no longer known. msg is the message key of what the page
// says; code the OAuth error code it shows for support.
func (p *provider) page(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	p.errorPage(w, r, status, signInProblemTitle, code, msg)
}

// enrollmentPage is page for an enrollment: its heading speaks of the set-up, not of a sign-in.
func (p *provider) enrollmentPage(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	p.errorPage(w, r, status, enrollmentProblemTitle, code, msg)
}

// errorPage answers with the error page headed title that says msg (message keys), in the
// person's language, in the look of the tenant the request's path names when it is known
// (visid's otherwise: an unknown tenant, or a store that cannot be read, shows no one's).
func (p *provider) errorPage(w http.ResponseWriter, r *http.Request, status int, title, code, msg string) {
	var look TenantLook
	if tenant := pageLangOf(r).tenant; tenant != "" {
		if l, err := p.look(r.Context(), tenant); err == nil && l.ID != "" {
			look = l
			p.knowTenantLanguage(r, look)
		}
	}
	p.tenantErrorPage(w, r, look, status, title, code, msg)
}

// tenantErrorPage is errorPage with the look of the tenant the page is about.
func (p *provider) tenantErrorPage(w http.ResponseWriter, r *http.Request, look TenantLook, status int, title, code, msg string) {
	p.log.DebugContext(r.Context(), "oidc request refused with a page", "path", RedactPath(r.URL.Path),
		"status", status, "error", code, "message", msg)
	tp := newTenantPage(look)
	secureHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", tp.csp())
	t := p.pageTexts(r)
	w.Header().Set("Content-Language", t.Lang())
	w.WriteHeader(status)
	_ = errorPageTemplate.Execute(w, errorPageData{T: t, Title: title, Message: msg, Code: code, Style: pageStyle, tenantPage: tp})
}

// redirectError sends the browser back to the client with an error (RFC 6749 §4.1.2.1, RFC 9207).
func (p *provider) redirectError(w http.ResponseWriter, r *http.Request, redirectURI, state, tenant string, e *oauthError) {
	p.log.DebugContext(r.Context(), "authorization refused", "tenant", tenant, "error", e.Code, "description", e.Description)
	q := url.Values{"error": {e.Code}, "iss": {p.issuer(tenant)}}
	if e.Description != "" {
		q.Set("error_description", e.Description)
	}
	if state != "" {
		q.Set("state", state)
	}
	if !e.LockedUntil.IsZero() {
		q.Set("locked_until", e.LockedUntil.UTC().Truncate(time.Second).Format(time.RFC3339))
	}
	p.redirect(w, redirectURI, q)
}

// redirect answers 303 to redirectURI with q added to its query.
func (p *provider) redirect(w http.ResponseWriter, redirectURI string, q url.Values) {
	sep := "?"
	if strings.Contains(redirectURI, "?") {
		sep = "&"
	}
	secureHeaders(w.Header())
	w.Header().Set("Location", redirectURI+sep+q.Encode())
	w.WriteHeader(http.StatusSeeOther)
}

// tokenError answers the token endpoint with a JSON error. A temporarily_unavailable error
// (serverError of an unavailable store) is a 503 with Retry-After, whatever status says.
func (p *provider) tokenError(w http.ResponseWriter, r *http.Request, status int, e *oauthError) {
	if e.Code == errTemporarilyUnavailable {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
	}
	p.log.DebugContext(r.Context(), "token request refused", "path", RedactPath(r.URL.Path), "status", status, "error", e.Code, "description", e.Description)
	body, _ := json.Marshal(map[string]string{"error": e.Code, "error_description": e.Description})
	writeNoStoreJSON(w, status, body)
}

func writeNoStoreJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// recoverer turns a panic into a logged 500 that says nothing internal.
func (p *provider) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				p.log.ErrorContext(r.Context(), "oidc handler panicked", "path", RedactPath(r.URL.Path), "panic", fmt.Sprint(v))
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Header().Set("Cache-Control", "no-store")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte("internal server error\n"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// internal logs an unexpected error and answers a browser with a page: a 503 with Retry-After
// that asks to try again in a moment when the store is unavailable, else a 500.
func (p *provider) internal(w http.ResponseWriter, r *http.Request, err error) {
	p.log.ErrorContext(r.Context(), "oidc request failed", "path", RedactPath(r.URL.Path), "err", err)
	if unavailable(err) {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
		p.page(w, r, http.StatusServiceUnavailable, errTemporarilyUnavailable, "error.unavailable")
		return
	}
	p.page(w, r, http.StatusInternalServerError, errServerError, "error.internal")
}
