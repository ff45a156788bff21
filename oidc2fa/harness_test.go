package oidc2fa_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/testclock"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// The provider's URL in tests and the client's registered redirect URI.
const (
	testBase     = "https://id.example.com/oidc"
	testRedirect = "https://app.example.com/callback"
	testVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-long-enough-verifier"
)

// testChallenge is the S256 challenge of testVerifier.
func testChallenge() string {
	sum := sha256.Sum256([]byte(testVerifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// clock is the fake time source tests move by hand.
type clock = testclock.Clock

// env is a provider over a fresh memstore: tenant acme, a user ann, a client "app" with a secret.
type env struct {
	t        testing.TB
	mem      *memstore.Store
	clock    *clock
	auth     *authtest.Authenticator
	keys     *oidc2fa.KeyRing
	handler  http.Handler
	client   *store.Client
	secret   string
	user     *store.User
	inactive *store.User
}

func newEnv(t testing.TB, configure ...func(*oidc2fa.Config)) *env {
	t.Helper()
	ctx := context.Background()
	c := testclock.At(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	mem := memstore.New()
	b := mem.Backend()
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "globex"}))
	ann, err := b.Users.Create(ctx, "acme", store.User{UserName: "ann@example.com", Active: true,
		Emails: []store.MultiValue{{Value: "ann.lee@example.com", Primary: true}}})
	require.NoError(t, err)
	bob, err := b.Users.Create(ctx, "acme", store.User{UserName: "bob@example.com", Active: false})
	require.NoError(t, err)
	secret, client, err := oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{
		Tenant: "acme", Name: "App", RedirectURIs: []string{testRedirect, "http://127.0.0.1:8081/callback"}, Now: c.Now()})
	require.NoError(t, err)
	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Now: c.Now})
	require.NoError(t, err)
	auth := &authtest.Authenticator{AutoApprove: true, Now: c.Now}
	cfg := oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Pushed: b.Pushed, Events: b.Events, Authenticator: auth, Signer: keys, BaseURL: testBase, Now: c.Now,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, f := range configure {
		f(&cfg)
	}
	if _, ok := cfg.AccessTokens.(envAccessTokens); ok {
		cfg.AccessTokens = b.AccessTokens
	}
	h, err := oidc2fa.New(cfg)
	require.NoError(t, err)
	return &env{t: t, mem: mem, clock: c, auth: auth, keys: keys, handler: h, client: client,
		secret: secret, user: ann, inactive: bob}
}

// authParams are the parameters of a valid authorization request for ann.
func (e *env) authParams() url.Values {
	return url.Values{
		"response_type":         {"code"},
		"client_id":             {e.client.ID},
		"redirect_uri":          {testRedirect},
		"scope":                 {"openid 2fa"},
		"state":                 {"st-123"},
		"nonce":                 {"n-456"},
		"code_challenge":        {testChallenge()},
		"code_challenge_method": {"S256"},
		"login_hint":            {"ann@example.com"},
	}
}

// browser follows the provider's redirects in one cookie jar until the answer leaves the
// provider (a redirect to the client) or is not a redirect. Like a real browser it stops sending
// a cookie once it has expired by the env's clock, unless keepExpired is set.
type browser struct {
	e           *env
	cookies     map[string]*http.Cookie
	keepExpired bool
	// acceptLanguage, when set, is the Accept-Language of every request.
	acceptLanguage string
}

func (e *env) browser() *browser { return &browser{e: e, cookies: map[string]*http.Cookie{}} }

// clone is a copy of the browser with the same cookies, as a second request sent before the
// answer to the first arrives (a double submit) would carry them.
func (b *browser) clone() *browser {
	c := &browser{e: b.e, cookies: make(map[string]*http.Cookie, len(b.cookies)), keepExpired: b.keepExpired}
	for k, v := range b.cookies {
		cc := *v
		c.cookies[k] = &cc
	}
	return c
}

// expired reports whether a browser would no longer send c.
func (b *browser) expired(c *http.Cookie) bool {
	return !b.keepExpired && !c.Expires.IsZero() && !c.Expires.After(b.e.clock.Now())
}

// do sends one request with the browser's cookies and keeps the cookies it sets.
func (b *browser) do(method, target string, form url.Values) *httptest.ResponseRecorder {
	b.e.t.Helper()
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	for _, c := range b.cookies {
		if !b.expired(c) {
			req.AddCookie(c)
		}
	}
	if b.acceptLanguage != "" {
		req.Header.Set("Accept-Language", b.acceptLanguage)
	}
	rec := httptest.NewRecorder()
	b.e.handler.ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		switch {
		case c.MaxAge < 0:
			delete(b.cookies, c.Name)
		case c.MaxAge > 0:
			c.Expires = b.e.clock.Now().Add(time.Duration(c.MaxAge) * time.Second)
			b.cookies[c.Name] = c
		default:
			b.cookies[c.Name] = c
		}
	}
	return rec
}

// follow sends the request and follows redirects within the provider; it returns the last
// answer.
func (b *browser) follow(method, target string, form url.Values) *httptest.ResponseRecorder {
	b.e.t.Helper()
	rec := b.do(method, target, form)
	for i := 0; i < 5 && rec.Code == http.StatusSeeOther; i++ {
		loc := rec.Header().Get("Location")
		if !strings.HasPrefix(loc, "/oidc/") {
			return rec
		}
		rec = b.do("GET", strings.TrimPrefix(loc, "/oidc"), nil)
	}
	return rec
}

// callback parses the redirect to the client.
func callback(t testing.TB, rec *httptest.ResponseRecorder) url.Values {
	t.Helper()
	require.Equal(t, http.StatusSeeOther, rec.Code, "body: %s", rec.Body)
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	require.Equal(t, testRedirect, loc.Scheme+"://"+loc.Host+loc.Path, "redirected to the client")
	return loc.Query()
}

// code runs an authorization for ann with the auto-approving authenticator and returns the code.
func (e *env) code() string {
	e.t.Helper()
	return e.codeFor(e.authParams())
}

// codeFor runs the authorization request params with the auto-approving authenticator and
// returns the code.
func (e *env) codeFor(params url.Values) string {
	e.t.Helper()
	q := callback(e.t, e.browser().follow("GET", "/authorize/acme?"+params.Encode(), nil))
	require.NotEmpty(e.t, q.Get("code"), "callback: %v", q)
	return q.Get("code")
}

// tokenForm is a valid token request for code with client_secret_post.
func (e *env) tokenForm(code string) url.Values {
	return url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {testRedirect},
		"code_verifier": {testVerifier},
		"client_id":     {e.client.ID},
		"client_secret": {e.secret},
	}
}

// postToken sends a token request; basic, when not nil, is sent as Basic credentials.
func (e *env) postToken(form url.Values, basic *[2]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/token/acme", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic != nil {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return rec
}

func httpRecord(h http.Handler, method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// manual makes the test authenticator show its page (Approve, Deny, Cancel) instead of
// approving at once.
func (e *env) manual() *env {
	e.auth.AutoApprove = false
	return e
}

// loginURL matches the login URL the provider sends the browser to: the interaction id is 256
// bits, base64url-encoded.
var loginURL = regexp.MustCompile(`^/oidc/login/acme/([A-Za-z0-9_-]{43})$`)

// start sends the authorization request params by GET and follows the browser to the login page
// of the test authenticator; it returns the page's path (relative to the handler) and the page.
func (b *browser) start(params url.Values) (path string, page *httptest.ResponseRecorder) {
	t := b.e.t
	t.Helper()
	rec := b.do("GET", "/authorize/acme?"+params.Encode(), nil)
	require.Equal(t, http.StatusSeeOther, rec.Code, "body: %s", rec.Body)
	loc := rec.Header().Get("Location")
	require.Regexp(t, loginURL, loc)
	path = strings.TrimPrefix(loc, "/oidc")
	page = b.do("GET", path, nil)
	require.Equal(t, http.StatusOK, page.Code, "body: %s", page.Body)
	return path, page
}

var csrfInput = regexp.MustCompile(`name="` + oidc2fa.CSRFField + `" value="([^"]+)"`)

// csrfToken is the CSRF token in a login page's form.
func csrfToken(t testing.TB, page *httptest.ResponseRecorder) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(page.Body.String())
	require.NotNil(t, m, "no CSRF field in the page: %s", page.Body)
	return m[1]
}

// decide presses a button of the test authenticator's page.
func (b *browser) decide(path, csrf, decision string) *httptest.ResponseRecorder {
	b.e.t.Helper()
	return b.do("POST", path, url.Values{oidc2fa.CSRFField: {csrf}, "decision": {decision}})
}

// redeem exchanges code with client_secret_post and returns the raw ID token.
func (e *env) redeem(code string) string {
	e.t.Helper()
	rec := e.postToken(e.tokenForm(code), nil)
	require.Equal(e.t, http.StatusOK, rec.Code, "body: %s", rec.Body)
	var resp struct {
		IDToken string `json:"id_token"`
	}
	require.NoError(e.t, json.Unmarshal(rec.Body.Bytes(), &resp))
	require.NotEmpty(e.t, resp.IDToken)
	return resp.IDToken
}

// decodeJWT returns the header and claims of a compact JWS, without checking the signature.
func decodeJWT(t testing.TB, raw string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(raw, ".")
	require.Len(t, parts, 3, "a compact JWS")
	for i, dst := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		require.NoError(t, err)
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		require.NoError(t, d.Decode(dst))
	}
	return header, claims
}

// jwksKeys fetches the tenant's JWKS from h and returns its Ed25519 keys by kid.
func jwksKeys(t testing.TB, h http.Handler, tenant string) map[string]ed25519.PublicKey {
	t.Helper()
	rec := httpRecord(h, "GET", "/jwks/"+tenant)
	require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
	var set struct {
		Keys []struct {
			Kty, Crv, KID, X string
		}
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &set))
	keys := map[string]ed25519.PublicKey{}
	for _, k := range set.Keys {
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		require.NoError(t, err)
		require.Len(t, x, ed25519.PublicKeySize)
		keys[k.KID] = ed25519.PublicKey(x)
	}
	return keys
}

// verifiesWith reports whether the EdDSA signature of the compact JWS raw verifies with the key
// its header names in keys.
func verifiesWith(t testing.TB, keys map[string]ed25519.PublicKey, raw string) bool {
	t.Helper()
	header, _ := decodeJWT(t, raw)
	key, ok := keys[fmt.Sprint(header["kid"])]
	if !ok {
		return false
	}
	i := strings.LastIndexByte(raw, '.')
	sig, err := base64.RawURLEncoding.DecodeString(raw[i+1:])
	require.NoError(t, err)
	return ed25519.Verify(key, []byte(raw[:i]), sig)
}
