package oidc2fa_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// sendAuthorize sends the authorization request params to tenant's endpoint by GET (in the
// query) or POST (as a form), in a fresh browser.
func (e *env) sendAuthorize(method, tenant string, params url.Values) *httptest.ResponseRecorder {
	e.t.Helper()
	if method == http.MethodPost {
		return e.browser().do("POST", "/authorize/"+tenant, params)
	}
	return e.browser().do("GET", "/authorize/"+tenant+"?"+params.Encode(), nil)
}

// requireAuthError checks a redirect to the client carrying an error (RFC 6749 §4.1.2.1,
// RFC 9207) and returns its parameters; wantState "" means no state parameter at all.
func requireAuthError(t testing.TB, rec *httptest.ResponseRecorder, wantErr, wantState string) url.Values {
	t.Helper()
	q := callback(t, rec)
	assert.Equal(t, wantErr, q.Get("error"), "callback: %v", q)
	assert.NotEmpty(t, q.Get("error_description"), "callback: %v", q)
	assert.Equal(t, testBase+"/acme", q.Get("iss"))
	if wantState == "" {
		assert.NotContains(t, q, "state", "no state was sent, so none comes back")
	} else {
		assert.Equal(t, wantState, q.Get("state"))
	}
	assert.NotContains(t, q, "code")
	return q
}

// requirePage checks an HTML error page that does not send the browser anywhere.
func requirePage(t testing.TB, rec *httptest.ResponseRecorder, status int) {
	t.Helper()
	assert.Equal(t, status, rec.Code, "body: %s", rec.Body)
	assert.Empty(t, rec.Header().Values("Location"), "a page, never a redirect")
	assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html"), "Content-Type %q", rec.Header().Get("Content-Type"))
	assert.Contains(t, rec.Body.String(), "<html")
}

func TestAuthorizeUntrustedRequestShowsPage(t *testing.T) {
	variants := []string{
		"https://app.example.com/callbac",        // prefix
		"https://app.example.com/callback/extra", // suffix
		"https://app.example.com/callbackx",
		"https://app.example.com/callback/", // trailing slash
		"https://app.example.com/callback?next=1",
		"https://app.example.com/callback#frag",
		"https://APP.example.com/callback", // case
		"https://app.example.com/Callback",
		"HTTPS://app.example.com/callback",
		"https://app.example.com:443/callback",
		"https://app.example.com/%63allback",
		"http://app.example.com/callback",
		"https://app.example.com.evil.example/callback",
		"https://evil.example/callback",
		"http://127.0.0.1:8082/callback",
		"http://localhost:8081/callback",
		" https://app.example.com/callback",
		"/callback",
	}
	type row struct {
		name   string
		tenant string
		params func(e *env) url.Values
	}
	rows := []row{
		{"unknown tenant", "nope", (*env).authParams},
		{"malformed tenant", "ACME", (*env).authParams},
		{"missing client_id", "acme", func(e *env) url.Values { p := e.authParams(); p.Del("client_id"); return p }},
		{"empty client_id", "acme", func(e *env) url.Values { p := e.authParams(); p.Set("client_id", ""); return p }},
		{"unknown client_id", "acme", func(e *env) url.Values { p := e.authParams(); p.Set("client_id", "client_nope"); return p }},
		{"client_id of another tenant", "globex", (*env).authParams},
		{"client_id twice", "acme", func(e *env) url.Values { p := e.authParams(); p.Add("client_id", e.client.ID); return p }},
		{"missing redirect_uri", "acme", func(e *env) url.Values { p := e.authParams(); p.Del("redirect_uri"); return p }},
		{"empty redirect_uri", "acme", func(e *env) url.Values { p := e.authParams(); p.Set("redirect_uri", ""); return p }},
		{"redirect_uri twice", "acme", func(e *env) url.Values { p := e.authParams(); p.Add("redirect_uri", testRedirect); return p }},
		{"unregistered redirect_uri and a bad scope", "acme", func(e *env) url.Values {
			p := e.authParams()
			p.Set("redirect_uri", "https://evil.example/callback")
			p.Set("scope", "openid")
			return p
		}},
	}
	for _, v := range variants {
		rows = append(rows, row{"unregistered redirect_uri " + v, "acme", func(e *env) url.Values {
			p := e.authParams()
			p.Set("redirect_uri", v)
			return p
		}})
	}
	for _, tc := range rows {
		for _, method := range []string{"GET", "POST"} {
			t.Run(method+" "+tc.name, func(t *testing.T) {
				e := newEnv(t)
				rec := e.sendAuthorize(method, tc.tenant, tc.params(e))
				requirePage(t, rec, http.StatusBadRequest)
				assert.Empty(t, rec.Result().Cookies(), "no interaction is started")
				assert.NotContains(t, rec.Body.String(), "evil.example")
			})
		}
	}
}

func TestAuthorizeErrorsRedirectToClient(t *testing.T) {
	challenge := testChallenge()
	tests := []struct {
		name      string
		change    func(p url.Values)
		wantErr   string
		wantState string
	}{
		{"response_type token", func(p url.Values) { p.Set("response_type", "token") }, "unsupported_response_type", "st-123"},
		{"response_type id_token", func(p url.Values) { p.Set("response_type", "id_token") }, "unsupported_response_type", "st-123"},
		{"response_type code id_token", func(p url.Values) { p.Set("response_type", "code id_token") }, "unsupported_response_type", "st-123"},
		{"response_type missing", func(p url.Values) { p.Del("response_type") }, "invalid_request", "st-123"},
		{"scope without 2fa", func(p url.Values) { p.Set("scope", "openid") }, "invalid_scope", "st-123"},
		{"scope without openid", func(p url.Values) { p.Set("scope", "2fa") }, "invalid_scope", "st-123"},
		{"scope profile email", func(p url.Values) { p.Set("scope", "openid profile email") }, "invalid_scope", "st-123"},
		{"scope in upper case", func(p url.Values) { p.Set("scope", "OPENID 2FA") }, "invalid_scope", "st-123"},
		{"scope missing", func(p url.Values) { p.Del("scope") }, "invalid_scope", "st-123"},
		{"code_challenge missing", func(p url.Values) { p.Del("code_challenge") }, "invalid_request", "st-123"},
		{"code_challenge_method plain", func(p url.Values) { p.Set("code_challenge_method", "plain") }, "invalid_request", "st-123"},
		{"code_challenge_method plain with a plain challenge", func(p url.Values) {
			p.Set("code_challenge_method", "plain")
			p.Set("code_challenge", testVerifier)
		}, "invalid_request", "st-123"},
		{"code_challenge_method missing", func(p url.Values) { p.Del("code_challenge_method") }, "invalid_request", "st-123"},
		{"code_challenge_method s256", func(p url.Values) { p.Set("code_challenge_method", "s256") }, "invalid_request", "st-123"},
		{"code_challenge of 42 characters", func(p url.Values) { p.Set("code_challenge", challenge[:42]) }, "invalid_request", "st-123"},
		{"code_challenge of 44 characters", func(p url.Values) { p.Set("code_challenge", challenge+"A") }, "invalid_request", "st-123"},
		{"code_challenge padded", func(p url.Values) { p.Set("code_challenge", challenge[:42]+"=") }, "invalid_request", "st-123"},
		{"code_challenge in standard base64", func(p url.Values) { p.Set("code_challenge", "+/"+challenge[2:]) }, "invalid_request", "st-123"},
		{"code_challenge not base64", func(p url.Values) { p.Set("code_challenge", strings.Repeat("!", 43)) }, "invalid_request", "st-123"},
		{"state missing", func(p url.Values) { p.Del("state") }, "invalid_request", ""},
		{"state empty", func(p url.Values) { p.Set("state", "") }, "invalid_request", ""},
		{"nonce missing", func(p url.Values) { p.Del("nonce") }, "invalid_request", "st-123"},
		{"state given twice", func(p url.Values) { p.Add("state", "st-other") }, "invalid_request", "st-123"},
		{"scope given twice", func(p url.Values) { p.Add("scope", "openid 2fa") }, "invalid_request", "st-123"},
		{"nonce given twice", func(p url.Values) { p.Add("nonce", "n-456") }, "invalid_request", "st-123"},
		{"code_challenge given twice", func(p url.Values) { p.Add("code_challenge", challenge) }, "invalid_request", "st-123"},
		{"login_hint given twice", func(p url.Values) { p.Add("login_hint", "bob@example.com") }, "invalid_request", "st-123"},
		{"response_type given twice", func(p url.Values) { p.Add("response_type", "code") }, "invalid_request", "st-123"},
		{"login_hint missing", func(p url.Values) { p.Del("login_hint") }, "invalid_request", "st-123"},
		{"login_hint empty", func(p url.Values) { p.Set("login_hint", "") }, "invalid_request", "st-123"},
		{"login_hint and email_hint differ", func(p url.Values) { p.Set("email_hint", "bob@example.com") }, "invalid_request", "st-123"},
		{"prompt none", func(p url.Values) { p.Set("prompt", "none") }, "login_required", "st-123"},
		{"prompt none among others", func(p url.Values) { p.Set("prompt", "login none") }, "login_required", "st-123"},
		{"request object", func(p url.Values) { p.Set("request", "eyJhbGciOiJub25lIn0.e30.") }, "request_not_supported", "st-123"},
		{"request_uri", func(p url.Values) { p.Set("request_uri", "https://app.example.com/req/1") }, "request_uri_not_supported", "st-123"},
	}
	for _, tc := range tests {
		for _, method := range []string{"GET", "POST"} {
			t.Run(method+" "+tc.name, func(t *testing.T) {
				e := newEnv(t)
				p := e.authParams()
				tc.change(p)
				rec := e.sendAuthorize(method, "acme", p)
				requireAuthError(t, rec, tc.wantErr, tc.wantState)
				assert.Empty(t, rec.Result().Cookies(), "no interaction is started")
			})
		}
	}
}

// TestAuthorizeErrorKeepsRedirectQuery: a registered redirect URI with a query keeps it, and the
// error parameters are added to it.
func TestAuthorizeErrorKeepsRedirectQuery(t *testing.T) {
	const withQuery = "https://app.example.com/callback?tenant=acme"
	e := newEnv(t)
	_, err := e.mem.Backend().Clients.Update(context.Background(), "acme", e.client.ID, func(c *store.Client) error {
		c.RedirectURIs = append(c.RedirectURIs, withQuery)
		return nil
	})
	require.NoError(t, err)
	p := e.authParams()
	p.Set("redirect_uri", withQuery)
	p.Set("scope", "openid")
	rec := e.sendAuthorize("GET", "acme", p)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, "https://app.example.com/callback", loc.Scheme+"://"+loc.Host+loc.Path)
	assert.Equal(t, "acme", loc.Query().Get("tenant"))
	assert.Equal(t, "invalid_scope", loc.Query().Get("error"))
	assert.Equal(t, "st-123", loc.Query().Get("state"))
}

func TestAuthorizeScopeOrderDoesNotMatter(t *testing.T) {
	for _, scope := range []string{"openid 2fa", "2fa openid", "  2fa   openid "} {
		t.Run(scope, func(t *testing.T) {
			e := newEnv(t)
			p := e.authParams()
			p.Set("scope", scope)
			q := callback(t, e.browser().follow("GET", "/authorize/acme?"+p.Encode(), nil))
			assert.Empty(t, q.Get("error"), "callback: %v", q)
			assert.NotEmpty(t, q.Get("code"))
			assert.Equal(t, "st-123", q.Get("state"))
		})
	}
}

// lockedAuthenticator reports the factor locked on the first visit, as an authenticator does
// after too many failures.
type lockedAuthenticator struct{}

func (lockedAuthenticator) ServeLogin(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login) {
	l.Fail(w, r, oidc2fa.Locked)
}

func TestAuthorizeAccessDenied(t *testing.T) {
	for _, decision := range []string{"deny", "cancel"} {
		t.Run(decision, func(t *testing.T) {
			e := newEnv(t).manual()
			b := e.browser()
			path, page := b.start(e.authParams())
			rec := b.decide(path, csrfToken(t, page), decision)
			requireAuthError(t, rec, "access_denied", "st-123")
		})
	}
	t.Run("lockout", func(t *testing.T) {
		e := newEnv(t, func(c *oidc2fa.Config) { c.Authenticator = lockedAuthenticator{} })
		rec := e.browser().follow("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
		requireAuthError(t, rec, "access_denied", "st-123")
	})
}

// failingInteractions and failingCodes are stores whose Create fails.
type failingInteractions struct{ store.Interactions }

func (failingInteractions) Create(context.Context, store.Interaction) error {
	return errors.New("interactions table on fire")
}

type failingCodes struct{ store.Codes }

func (failingCodes) Create(context.Context, store.Code) error {
	return errors.New("codes table on fire")
}

func TestAuthorizeServerError(t *testing.T) {
	tests := []struct {
		name string
		wrap func(c *oidc2fa.Config)
	}{
		{"Interactions.Create fails", func(c *oidc2fa.Config) { c.Interactions = failingInteractions{c.Interactions} }},
		{"Codes.Create fails", func(c *oidc2fa.Config) { c.Codes = failingCodes{c.Codes} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.wrap)
			rec := e.browser().follow("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
			q := requireAuthError(t, rec, "server_error", "st-123")
			assert.NotContains(t, q.Get("error_description"), "fire", "internal error text stays inside")
		})
	}
}

func TestAuthorizeIgnoresUnknownParameters(t *testing.T) {
	extra := []struct{ name, value string }{
		{"display", "popup"},
		{"ui_locales", "fr-CA fr en"},
		{"max_age", "0"},
		{"acr_values", "urn:mace:incommon:iap:silver"},
		{"claims", `{"id_token":{"email":{"essential":true}}}`},
		{"claims_locales", "de"},
		{"id_token_hint", "eyJhbGciOiJFZERTQSJ9.e30.sig"},
		{"response_mode", "query"},
		{"prompt", "login"},
		{"foo", "bar"},
	}
	for _, x := range extra {
		t.Run(x.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.authParams()
			p.Set(x.name, x.value)
			q := callback(t, e.browser().follow("GET", "/authorize/acme?"+p.Encode(), nil))
			assert.Empty(t, q.Get("error"), "callback: %v", q)
			assert.NotEmpty(t, q.Get("code"))
		})
	}
}

func TestAuthorizeGetAndPost(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			e := newEnv(t).manual()
			b := e.browser()
			rec := e.sendAuthorizeIn(b, method, e.authParams())
			require.Equal(t, http.StatusSeeOther, rec.Code, "the authorization answers 303, never 307: %s", rec.Body)
			loc := rec.Header().Get("Location")
			require.Regexp(t, loginURL, loc)
			page := b.do("GET", strings.TrimPrefix(loc, "/oidc"), nil)
			require.Equal(t, http.StatusOK, page.Code)
			done := b.decide(strings.TrimPrefix(loc, "/oidc"), csrfToken(t, page), "approve")
			assert.Equal(t, http.StatusSeeOther, done.Code, "after a login POST the redirect is 303, never 307")
			q := callback(t, done)
			assert.NotEmpty(t, q.Get("code"))
			assert.Equal(t, "st-123", q.Get("state"))
			assert.Equal(t, testBase+"/acme", q.Get("iss"))
		})
	}
}

// sendAuthorizeIn sends the authorization request in browser b.
func (e *env) sendAuthorizeIn(b *browser, method string, params url.Values) *httptest.ResponseRecorder {
	e.t.Helper()
	if method == http.MethodPost {
		return b.do("POST", "/authorize/acme", params)
	}
	return b.do("GET", "/authorize/acme?"+params.Encode(), nil)
}

func TestAuthorizeLoginHintResolvesUser(t *testing.T) {
	tests := []struct {
		name   string
		params func(e *env) url.Values
	}{
		{"userName", func(e *env) url.Values { return e.authParams() }},
		{"userName in upper case", func(e *env) url.Values { p := e.authParams(); p.Set("login_hint", "ANN@EXAMPLE.COM"); return p }},
		{"userName in mixed case", func(e *env) url.Values { p := e.authParams(); p.Set("login_hint", "Ann@Example.com"); return p }},
		{"id", func(e *env) url.Values { p := e.authParams(); p.Set("login_hint", e.user.ID); return p }},
		{"primary email", func(e *env) url.Values { p := e.authParams(); p.Set("login_hint", "ann.lee@example.com"); return p }},
		{"email_hint with the userName", func(e *env) url.Values {
			p := e.authParams()
			p.Del("login_hint")
			p.Set("email_hint", "ann@example.com")
			return p
		}},
		{"email_hint with the primary email", func(e *env) url.Values {
			p := e.authParams()
			p.Del("login_hint")
			p.Set("email_hint", "ann.lee@example.com")
			return p
		}},
		{"email_hint with the id", func(e *env) url.Values {
			p := e.authParams()
			p.Del("login_hint")
			p.Set("email_hint", e.user.ID)
			return p
		}},
		{"login_hint and email_hint with the same value", func(e *env) url.Values {
			p := e.authParams()
			p.Set("email_hint", "ann@example.com")
			return p
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			_, claims := decodeJWT(t, e.redeem(e.codeFor(tc.params(e))))
			assert.Equal(t, e.user.ID, claims["sub"])
		})
	}
}

// snapshot is what a browser sees of one response, with what differs by nature between two
// interactions (ids, MACs, CSRF tokens) and the hint as sent replaced by placeholders.
type snapshot struct {
	Status   int
	Headers  []string
	Location string
	Cookies  []string
	Body     string
}

func snap(rec *httptest.ResponseRecorder, replace *strings.Replacer) snapshot {
	s := snapshot{Status: rec.Code, Location: replace.Replace(rec.Header().Get("Location")), Body: replace.Replace(rec.Body.String())}
	for name, vs := range rec.Header() {
		if name == "Location" || name == "Set-Cookie" {
			continue
		}
		s.Headers = append(s.Headers, name+": "+strings.Join(vs, ", "))
	}
	slices.Sort(s.Headers)
	for _, c := range rec.Result().Cookies() {
		s.Cookies = append(s.Cookies, replace.Replace(fmt.Sprintf("%s path=%s expires=%v max-age=%d httponly=%v secure=%v samesite=%v value-set=%v",
			c.Name, c.Path, c.Expires, c.MaxAge, c.HttpOnly, c.Secure, c.SameSite, c.Value != "")))
	}
	return s
}

func TestAuthorizeNoAccountEnumeration(t *testing.T) {
	type seen struct{ authorize, page, final snapshot }
	run := func(t *testing.T, hint, decision string) seen {
		e := newEnv(t).manual()
		_, err := e.mem.Backend().Users.Create(context.Background(), "globex", store.User{UserName: "carol@globex.example", Active: true})
		require.NoError(t, err)
		// ann's primary email as another user's userName: that hint names two users.
		_, err = e.mem.Backend().Users.Create(context.Background(), "acme", store.User{UserName: "ann.lee@example.com", Active: true})
		require.NoError(t, err)
		b := e.browser()
		p := e.authParams()
		p.Set("login_hint", hint)
		start := b.do("GET", "/authorize/acme?"+p.Encode(), nil)
		require.Equal(t, http.StatusSeeOther, start.Code, "body: %s", start.Body)
		m := loginURL.FindStringSubmatch(start.Header().Get("Location"))
		require.NotNil(t, m, "Location %q", start.Header().Get("Location"))
		id := m[1]
		path := strings.TrimPrefix(m[0], "/oidc")
		page := b.do("GET", path, nil)
		csrf := csrfToken(t, page)
		final := b.decide(path, csrf, decision)
		r := strings.NewReplacer(csrf, "{csrf}", id, "{id}", id[:16], "{id16}", hint, "{hint}")
		return seen{snap(start, r), snap(page, r), snap(final, r)}
	}
	// The baseline: a known, active user who fails the factor.
	want := run(t, "ann@example.com", "deny")
	assert.Contains(t, want.final.Location, "error=access_denied")
	tests := []struct{ name, hint, decision string }{
		{"unknown user approving", "nobody@example.com", "approve"},
		{"unknown user denying", "nobody@example.com", "deny"},
		{"inactive user approving", "bob@example.com", "approve"},
		{"user of another tenant approving", "carol@globex.example", "approve"},
		{"hint naming two users approving", "ann.lee@example.com", "approve"},
		{"hint naming two users, in another case, approving", "ANN.LEE@example.com", "approve"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, tc.hint, tc.decision)
			assert.Equal(t, want.authorize, got.authorize, "the answer to the authorization request")
			assert.Equal(t, want.page.Status, got.page.Status, "the login page's status")
			assert.Equal(t, want.page.Headers, got.page.Headers, "the login page's headers")
			assert.Equal(t, want.page.Body, got.page.Body, "the login page, but for its CSRF token and the hint as sent")
			assert.Equal(t, want.final, got.final, "the redirect to the client")
		})
	}
}

func TestAuthorizeSubjectMustBeHintedUser(t *testing.T) {
	e := newEnv(t)
	carol, err := e.mem.Backend().Users.Create(context.Background(), "acme", store.User{UserName: "carol@example.com", Active: true})
	require.NoError(t, err)
	for _, other := range []string{carol.ID, e.inactive.ID, "user_01unknown"} {
		t.Run(other, func(t *testing.T) {
			e.auth.Subject = other
			rec := e.browser().follow("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
			requireAuthError(t, rec, "access_denied", "st-123")
		})
	}
}

func TestAuthorizeInteractionID(t *testing.T) {
	e := newEnv(t).manual()
	ids := map[string]bool{}
	for range 20 {
		rec := e.browser().do("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
		require.Equal(t, http.StatusSeeOther, rec.Code)
		m := loginURL.FindStringSubmatch(rec.Header().Get("Location"))
		require.NotNil(t, m, "the login URL ends in 43 base64url characters: %q", rec.Header().Get("Location"))
		raw, err := base64.RawURLEncoding.DecodeString(m[1])
		require.NoError(t, err)
		assert.Len(t, raw, 32, "256 bits")
		assert.False(t, ids[m[1]], "ids are not reused")
		ids[m[1]] = true

		// The binding cookie is a MAC, not the id, and is out of reach of scripts.
		cookies := rec.Result().Cookies()
		require.Len(t, cookies, 1)
		c := cookies[0]
		assert.NotContains(t, c.Value, m[1])
		assert.True(t, c.HttpOnly)
		assert.True(t, c.Secure, "BaseURL is https")
		assert.NotEqual(t, http.SameSiteNoneMode, c.SameSite)
		assert.Equal(t, m[0], c.Path)
	}
}

func TestAuthorizeInteractionBoundToBrowser(t *testing.T) {
	tests := []struct {
		name  string
		thief func(t *testing.T, e *env, owner *browser) *browser
	}{
		{"no cookie", func(_ *testing.T, e *env, _ *browser) *browser { return e.browser() }},
		{"the cookie of another interaction", func(_ *testing.T, e *env, _ *browser) *browser {
			b := e.browser()
			b.start(e.authParams())
			return b
		}},
		{"another interaction's cookie value under this interaction's name", func(t *testing.T, e *env, owner *browser) *browser {
			b := e.browser()
			b.start(e.authParams())
			require.Len(t, b.cookies, 1)
			require.Len(t, owner.cookies, 1)
			for _, mine := range b.cookies {
				for name := range owner.cookies {
					forged := *mine
					forged.Name = name
					b.cookies = map[string]*http.Cookie{name: &forged}
				}
			}
			return b
		}},
		{"a made-up cookie value", func(_ *testing.T, e *env, owner *browser) *browser {
			b := e.browser()
			for name, c := range owner.cookies {
				forged := *c
				forged.Value = strings.Repeat("A", len(c.Value))
				b.cookies[name] = &forged
			}
			return b
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t).manual()
			owner := e.browser()
			path, page := owner.start(e.authParams())
			csrf := csrfToken(t, page)
			thief := tc.thief(t, e, owner)

			requirePage(t, thief.do("GET", path, nil), http.StatusForbidden)
			requirePage(t, thief.decide(path, csrf, "approve"), http.StatusForbidden)
			requirePage(t, thief.decide(path, csrf, "deny"), http.StatusForbidden)

			// The owner still finishes it.
			q := callback(t, owner.decide(path, csrf, "approve"))
			assert.NotEmpty(t, q.Get("code"))
		})
	}
}

func TestAuthorizeLoginPageHeaders(t *testing.T) {
	e := newEnv(t).manual()
	owner := e.browser()
	start := owner.do("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
	path := strings.TrimPrefix(start.Header().Get("Location"), "/oidc")
	page := owner.do("GET", path, nil)
	forbidden := e.browser().do("GET", path, nil)
	badCSRF := owner.decide(path, "wrong", "approve")
	assert.Contains(t, page.Body.String(), `name="`+oidc2fa.CSRFField+`"`, "the form carries the CSRF token")
	finish := owner.decide(path, csrfToken(t, page), "approve")
	ended := owner.do("GET", path, nil)
	responses := []struct {
		name string
		rec  *httptest.ResponseRecorder
	}{
		{"authorize redirect", start},
		{"login page", page},
		{"another browser's page", forbidden},
		{"bad CSRF page", badCSRF},
		{"redirect to the client", finish},
		{"ended page", ended},
	}
	for _, r := range responses {
		t.Run(r.name, func(t *testing.T) {
			h := r.rec.Header()
			csp := h.Get("Content-Security-Policy")
			if strings.HasSuffix(r.name, " page") && r.name != "login page" {
				// visid's own error pages: nothing but their inline style sheet, by its hash.
				assert.Regexp(t, `^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]{44}'; .*frame-ancestors 'none'$`, csp)
			} else {
				assert.Equal(t, "frame-ancestors 'none'", csp)
			}
			assert.Equal(t, "DENY", h.Get("X-Frame-Options"))
			assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
			assert.Equal(t, "no-store", h.Get("Cache-Control"))
		})
	}
}

func TestAuthorizeLoginCSRF(t *testing.T) {
	e := newEnv(t).manual()
	b := e.browser()
	path, page := b.start(e.authParams())
	csrf := csrfToken(t, page)
	_, otherPage := b.start(e.authParams()) // the same browser's other interaction
	otherCSRF := csrfToken(t, otherPage)
	require.NotEqual(t, csrf, otherCSRF)

	tests := []struct {
		name string
		send func() *httptest.ResponseRecorder
	}{
		{"no token", func() *httptest.ResponseRecorder { return b.do("POST", path, url.Values{"decision": {"approve"}}) }},
		{"empty token", func() *httptest.ResponseRecorder { return b.decide(path, "", "approve") }},
		{"wrong token", func() *httptest.ResponseRecorder { return b.decide(path, "wrong", "approve") }},
		{"token of another interaction", func() *httptest.ResponseRecorder { return b.decide(path, otherCSRF, "approve") }},
		{"token with a changed letter", func() *httptest.ResponseRecorder {
			return b.decide(path, flip(csrf), "approve")
		}},
		{"token twice", func() *httptest.ResponseRecorder {
			return b.do("POST", path, url.Values{oidc2fa.CSRFField: {"wrong", csrf}, "decision": {"approve"}})
		}},
		{"token in the query, not the form", func() *httptest.ResponseRecorder {
			return b.do("POST", path+"?"+oidc2fa.CSRFField+"="+csrf, url.Values{"decision": {"approve"}})
		}},
		{"deny without token", func() *httptest.ResponseRecorder { return b.do("POST", path, url.Values{"decision": {"deny"}}) }},
		{"a page below the login URL without token", func() *httptest.ResponseRecorder {
			return b.do("POST", path+"/step-2", url.Values{"decision": {"approve"}})
		}},
		{"cancel with a wrong token", func() *httptest.ResponseRecorder { return b.decide(path, "wrong", "cancel") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			requirePage(t, tc.send(), http.StatusForbidden)
		})
	}
	// Nothing happened: the interaction can still be finished.
	q := callback(t, b.decide(path, csrf, "approve"))
	assert.NotEmpty(t, q.Get("code"))
}

// flip changes the first character of s.
func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

func TestAuthorizeInteractionExpires(t *testing.T) {
	tests := []struct {
		name        string
		lifetime    time.Duration // Config.InteractionLifetime
		wait        time.Duration
		keepExpired bool // the browser sends cookies past their expiry
		method      string
	}{
		{"default lifetime, GET", 0, oidc2fa.DefaultInteractionLifetime + time.Second, false, "GET"},
		{"default lifetime, POST", 0, oidc2fa.DefaultInteractionLifetime + time.Second, false, "POST"},
		{"two minutes, GET", 2 * time.Minute, 2*time.Minute + time.Second, false, "GET"},
		{"long after, POST", 0, 24 * time.Hour, false, "POST"},
		{"browser keeping expired cookies, GET", 0, oidc2fa.DefaultInteractionLifetime + time.Second, true, "GET"},
		{"browser keeping expired cookies, POST", 0, oidc2fa.DefaultInteractionLifetime, true, "POST"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *oidc2fa.Config) { c.InteractionLifetime = tc.lifetime }).manual()
			b := e.browser()
			b.keepExpired = tc.keepExpired
			path, page := b.start(e.authParams())
			csrf := csrfToken(t, page)
			e.clock.Advance(tc.wait)
			var rec *httptest.ResponseRecorder
			if tc.method == "POST" {
				rec = b.decide(path, csrf, "approve")
			} else {
				rec = b.do("GET", path, nil)
			}
			requireAuthError(t, rec, "access_denied", "st-123")
		})
	}
	t.Run("just before the end", func(t *testing.T) {
		e := newEnv(t).manual()
		b := e.browser()
		path, page := b.start(e.authParams())
		e.clock.Advance(oidc2fa.DefaultInteractionLifetime - time.Second)
		q := callback(t, b.decide(path, csrfToken(t, page), "approve"))
		assert.NotEmpty(t, q.Get("code"))
	})
}

func TestAuthorizeFinishesOnce(t *testing.T) {
	t.Run("double submit", func(t *testing.T) {
		e := newEnv(t).manual()
		b := e.browser()
		path, page := b.start(e.authParams())
		csrf := csrfToken(t, page)
		second := b.clone() // sent before the first answer arrives, with the same cookie
		q := callback(t, b.decide(path, csrf, "approve"))
		require.NotEmpty(t, q.Get("code"))
		requirePage(t, second.decide(path, csrf, "approve"), http.StatusBadRequest)
		e.redeem(q.Get("code"))
	})
	t.Run("deny then approve", func(t *testing.T) {
		e := newEnv(t).manual()
		b := e.browser()
		path, page := b.start(e.authParams())
		csrf := csrfToken(t, page)
		second := b.clone()
		requireAuthError(t, b.decide(path, csrf, "deny"), "access_denied", "st-123")
		requirePage(t, second.decide(path, csrf, "approve"), http.StatusBadRequest)
	})
	t.Run("concurrent submits", func(t *testing.T) {
		e := newEnv(t).manual()
		b := e.browser()
		path, page := b.start(e.authParams())
		csrf := csrfToken(t, page)
		const n = 10
		form := url.Values{oidc2fa.CSRFField: {csrf}, "decision": {"approve"}}.Encode()
		type result struct {
			status   int
			location string
		}
		results := make(chan result, n)
		var wg sync.WaitGroup
		for range n {
			req := httptest.NewRequest("POST", path, strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for _, c := range b.cookies {
				req.AddCookie(c)
			}
			wg.Go(func() {
				rec := httptest.NewRecorder()
				e.handler.ServeHTTP(rec, req)
				results <- result{rec.Code, rec.Header().Get("Location")}
			})
		}
		wg.Wait()
		close(results)
		codes := 0
		for r := range results {
			if r.status == http.StatusSeeOther {
				u, err := url.Parse(r.location)
				require.NoError(t, err)
				require.NotEmpty(t, u.Query().Get("code"), "Location %q", r.location)
				codes++
				continue
			}
			assert.Equal(t, http.StatusBadRequest, r.status)
			assert.Empty(t, r.location)
		}
		assert.Equal(t, 1, codes, "one interaction, one code")
	})
}

// carelessAuthenticator approves whoever the hint named, on the first visit, without looking
// at the user: the provider itself must still refuse an inactive user.
type carelessAuthenticator struct{}

func (carelessAuthenticator) ServeLogin(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login) {
	l.Succeed(w, r, oidc2fa.Success{Subject: l.Subject, Methods: []string{"test"}})
}

func TestAuthorizeInactiveUserNeverPasses(t *testing.T) {
	t.Run("inactive when the request starts", func(t *testing.T) {
		e := newEnv(t, func(c *oidc2fa.Config) { c.Authenticator = carelessAuthenticator{} })
		p := e.authParams()
		p.Set("login_hint", "bob@example.com")
		rec := e.browser().follow("GET", "/authorize/acme?"+p.Encode(), nil)
		requireAuthError(t, rec, "access_denied", "st-123")
	})
	t.Run("deactivated during the login", func(t *testing.T) {
		e := newEnv(t, func(c *oidc2fa.Config) { c.Authenticator = carelessAuthenticator{} })
		b := e.browser()
		start := b.do("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
		require.Regexp(t, loginURL, start.Header().Get("Location"))
		_, err := e.mem.Backend().Users.Update(context.Background(), "acme", e.user.ID, func(u *store.User) error {
			u.Active = false
			return nil
		})
		require.NoError(t, err)
		rec := b.do("GET", strings.TrimPrefix(start.Header().Get("Location"), "/oidc"), nil)
		requireAuthError(t, rec, "access_denied", "st-123")
	})
}

// slowUsers is a users store with the latency of a remote database.
type slowUsers struct {
	store.Users
	delay time.Duration
}

func (s slowUsers) Get(ctx context.Context, tenant, id string) (*store.User, error) {
	time.Sleep(s.delay)
	return s.Users.Get(ctx, tenant, id)
}

func (s slowUsers) List(ctx context.Context, tenant string, q store.Query) (store.Page[store.User], error) {
	time.Sleep(s.delay)
	return s.Users.List(ctx, tenant, q)
}

// TestAuthorizeNoEnumerationByTiming: with a store as slow as a remote database, the answer to
// an authorization request and the login page take as long whether the hint names an active
// user, an inactive one or nobody, so their timing tells an attacker who crafts requests
// nothing.
func TestAuthorizeNoEnumerationByTiming(t *testing.T) {
	// A path that skipped one store read would be a delay faster; a busy machine adds a few
	// milliseconds here and there.
	const delay = 40 * time.Millisecond
	const tolerance = delay / 2
	var requests atomic.Int64
	e := newEnv(t, func(c *oidc2fa.Config) {
		c.Users = slowUsers{c.Users, delay}
		// Every request its own client, so that the many tries stay under the address limit.
		c.ClientAddr = func(*http.Request) string { return strconv.FormatInt(requests.Add(1), 10) }
	}).manual()
	// measure returns the shortest time, over several tries, of the authorization answer and
	// of the login page for each of two hints, trying them in turn: the shortest is the store's
	// latency plus the least the machine adds, and taking turns lets a loaded machine slow both
	// alike, so two equal paths do not look different.
	measure := func(hints ...string) (authorize, page []time.Duration) {
		authorize, page = make([]time.Duration, len(hints)), make([]time.Duration, len(hints))
		for i := range hints {
			authorize[i], page[i] = time.Hour, time.Hour
		}
		for range 7 {
			for i, hint := range hints {
				b := e.browser()
				p := e.authParams()
				p.Set("login_hint", hint)
				t0 := time.Now()
				start := b.do("GET", "/authorize/acme?"+p.Encode(), nil)
				t1 := time.Now()
				require.Equal(t, http.StatusSeeOther, start.Code)
				b.do("GET", strings.TrimPrefix(start.Header().Get("Location"), "/oidc"), nil)
				t2 := time.Now()
				authorize[i], page[i] = min(authorize[i], t1.Sub(t0)), min(page[i], t2.Sub(t1))
			}
		}
		return authorize, page
	}
	tests := []struct{ name, known, other string }{
		{"unknown userName", "ann@example.com", "nobody@example.com"},
		{"inactive user", "ann@example.com", "bob@example.com"},
		{"unknown email", "ann.lee@example.com", "nobody@example.com"},
		{"unknown id", e.user.ID, "user_01m80aaaaaaaaaaaaaaaaaaaaa"},
		{"hint naming two users", "ann@example.com", "dora@example.com"},
	}
	// dora@example.com is one user's userName and another's primary email: it names nobody.
	for _, u := range []store.User{
		{UserName: "dora@example.com", Active: true},
		{UserName: "dora.twin", Active: true, Emails: []store.MultiValue{{Value: "dora@example.com", Primary: true}}},
	} {
		_, err := e.mem.Backend().Users.Create(context.Background(), "acme", u)
		require.NoError(t, err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			authorizes, pages := measure(tc.known, tc.other)
			wantAuthorize, authorize, wantPage, page := authorizes[0], authorizes[1], pages[0], pages[1]
			assert.InDelta(t, wantAuthorize.Seconds(), authorize.Seconds(), tolerance.Seconds(),
				"the authorization answer takes %v for %s, %v for %s", authorize, tc.other, wantAuthorize, tc.known)
			assert.InDelta(t, wantPage.Seconds(), page.Seconds(), tolerance.Seconds(),
				"the login page takes %v for %s, %v for %s", page, tc.other, wantPage, tc.known)
		})
	}
}
