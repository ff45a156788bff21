package oidc2fa_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/store"
)

// TestAuthorizeParamSizes: state, nonce and login_hint may have 512 bytes, not more; a state
// refused for its size is not echoed.
func TestAuthorizeParamSizes(t *testing.T) {
	for _, name := range []string{"state", "nonce", "login_hint"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			p := e.authParams()
			value := strings.Repeat("x", 512)
			if name == "login_hint" {
				value = "ann@example.com"
			}
			p.Set(name, value)
			rec := e.sendAuthorize("GET", "acme", p)
			require.Equal(t, http.StatusSeeOther, rec.Code, "512 bytes pass: %s", rec.Body)
			assert.Regexp(t, loginURL, rec.Header().Get("Location"))

			p.Set(name, strings.Repeat("x", 513))
			wantState := "st-123"
			if name == "state" {
				wantState = ""
			}
			q := requireAuthError(t, e.sendAuthorize("GET", "acme", p), "invalid_request", wantState)
			assert.Contains(t, q.Get("error_description"), "512")
		})
	}
}

// TestAuthorizeRefusesBadText: a NUL byte or invalid UTF-8 in any parameter is an error page:
// nothing is stored, nothing redirects.
func TestAuthorizeRefusesBadText(t *testing.T) {
	for _, tc := range []struct{ name, param, value string }{
		{"NUL in client_id", "client_id", "client_\x00"},
		{"NUL in redirect_uri", "redirect_uri", testRedirect + "\x00"},
		{"NUL in state", "state", "st\x00"},
		{"invalid UTF-8 in nonce", "nonce", "n-\xff"},
		{"invalid UTF-8 in login_hint", "login_hint", "ann\xc3@example.com"},
		{"NUL in an unknown parameter", "ui_locales", "de\x00"},
		{"NUL in a parameter's name", "x\x00", "y"},
	} {
		for _, method := range []string{"GET", "POST"} {
			t.Run(method+" "+tc.name, func(t *testing.T) {
				var rec *recordingInteractions
				e := newEnv(t, func(c *oidc2fa.Config) {
					rec = &recordingInteractions{Interactions: c.Interactions}
					c.Interactions = rec
				})
				p := e.authParams()
				p.Set(tc.param, tc.value)
				res := e.sendAuthorize(method, "acme", p)
				requirePage(t, res, http.StatusBadRequest)
				assert.Empty(t, rec.created(), "nothing stored")
			})
		}
	}
}

// addressRequest is GET /authorize/acme with params from addr.
func addressRequest(e *env, params url.Values, addr string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/authorize/acme?"+params.Encode(), nil)
	req.RemoteAddr = addr
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return rec
}

// TestAuthorizeLimitedPerAddress: the default limit lets an address send DefaultAddressRate
// authorization requests a minute; the next gets a 429 page with Retry-After, while another
// address goes on; a minute later the first may send again.
func TestAuthorizeLimitedPerAddress(t *testing.T) {
	e := newEnv(t)
	p := e.authParams()
	for i := range oidc2fa.DefaultAddressRate {
		require.Equal(t, http.StatusSeeOther, addressRequest(e, p, "198.51.100.7:4000").Code, "request %d", i+1)
	}
	rec := addressRequest(e, p, "198.51.100.7:4001")
	requirePage(t, rec, http.StatusTooManyRequests)
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
	assert.Contains(t, rec.Body.String(), "temporarily_unavailable")

	assert.Equal(t, http.StatusSeeOther, addressRequest(e, p, "198.51.100.8:4000").Code, "another address")
	e.clock.Advance(time.Minute)
	assert.Equal(t, http.StatusSeeOther, addressRequest(e, p, "198.51.100.7:4000").Code, "a minute later")
}

// TestLoginPOSTsShareTheLimit: POSTs to the login pages count against the address's quota, GETs
// do not; a normal sign-in stays far below it.
func TestLoginPOSTsShareTheLimit(t *testing.T) {
	lim, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: 3, Period: time.Minute, Burst: 3}})
	require.NoError(t, err)
	e := newEnv(t, func(c *oidc2fa.Config) { c.AddressLimiter = lim })
	e.manual()
	b := e.browser()
	path, page := b.start(e.authParams()) // 1: the authorization request
	for range 5 {
		require.Equal(t, http.StatusOK, b.do("GET", path, nil).Code, "GETs of the page are not counted")
	}
	csrf := csrfToken(t, page)
	rec := b.do("POST", path, url.Values{oidc2fa.CSRFField: {csrf}, "decision": {"nothing"}}) // 2
	require.NotEqual(t, http.StatusTooManyRequests, rec.Code)
	b2 := e.browser()
	require.Equal(t, http.StatusSeeOther, b2.do("GET", "/authorize/acme?"+e.authParams().Encode(), nil).Code) // 3
	rec = b.do("POST", path, url.Values{oidc2fa.CSRFField: {csrf}, "decision": {"approve"}})
	assert.Equal(t, http.StatusTooManyRequests, rec.Code, "the fourth request of the address")
}

// TestNormalSignInUnderTheDefaultLimit: people signing in from one address (an office behind
// one NAT) stay under the default limit: ten sign-ins, each an authorization request and a
// login POST, within a minute.
func TestNormalSignInUnderTheDefaultLimit(t *testing.T) {
	e := newEnv(t)
	e.manual()
	for i := range 10 {
		b := e.browser()
		path, page := b.start(e.authParams())
		q := callback(t, b.decide(path, csrfToken(t, page), "approve"))
		assert.NotEmpty(t, q.Get("code"), "sign-in %d", i+1)
	}
}

// failingLimiter cannot decide.
type failingLimiter struct{}

func (failingLimiter) Allow(context.Context, string) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("the limiter is down")
}
func (failingLimiter) Peek(context.Context, string) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("the limiter is down")
}

// TestAddressLimiterConfig: Config.ClientAddr names the client, and a limiter that fails lets
// the request through.
func TestAddressLimiterConfig(t *testing.T) {
	t.Run("ClientAddr", func(t *testing.T) {
		lim, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: 1, Period: time.Minute, Burst: 1}})
		require.NoError(t, err)
		e := newEnv(t, func(c *oidc2fa.Config) {
			c.AddressLimiter = lim
			c.ClientAddr = func(r *http.Request) string { return r.Header.Get("X-Real-IP") }
		})
		send := func(ip string) int {
			req := httptest.NewRequest("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
			req.Header.Set("X-Real-IP", ip)
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			return rec.Code
		}
		assert.Equal(t, http.StatusSeeOther, send("203.0.113.1"))
		assert.Equal(t, http.StatusTooManyRequests, send("203.0.113.1"))
		assert.Equal(t, http.StatusSeeOther, send("203.0.113.2"), "the same connection, another forwarded address")
	})
	t.Run("a failing limiter fails open", func(t *testing.T) {
		e := newEnv(t, func(c *oidc2fa.Config) { c.AddressLimiter = failingLimiter{} })
		assert.Equal(t, http.StatusSeeOther, e.sendAuthorize("GET", "acme", e.authParams()).Code)
	})
}

// TestNewEnrollmentLinkRefusesBadText: an administrator's link for a user or state that is not
// text is store.ErrInvalid.
func TestNewEnrollmentLinkRefusesBadText(t *testing.T) {
	e := newEnrollEnv(t)
	for _, req := range []oidc2fa.EnrollmentRequest{
		{Tenant: "acme", User: "ann@example.com\x00"},
		{Tenant: "acme", User: "ann@example.com", State: "\xff"},
		{Tenant: "acme", User: strings.Repeat("a", 513)},
	} {
		_, err := oidc2fa.NewEnrollmentLink(context.Background(), e.cfg, req)
		assert.ErrorIs(t, err, store.ErrInvalid)
	}
	assert.Empty(t, e.interactions.created())
}
