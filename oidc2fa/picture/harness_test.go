package picture_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

const testRedirect = "https://app.example.com/callback"

// fastArgon keeps tests quick; the benchmarks measure the defaults.
var fastArgon = picture.Argon2Params{Time: 1, MemoryKiB: 64, Threads: 1}

// testPepper is the pepper of the tests' authenticators.
var testPepper = picture.Pepper{ID: "p1", Key: bytes.Repeat([]byte{7}, 32)}

// annPoints are ann's enrolled points on the harbour.
var annPoints = []picture.Point{{100, 100}, {300, 200}, {500, 400}, {700, 600}, {900, 300}}

// logBuffer collects the log of an env, for tests that check what it says (and what not).
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *logBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// env is the provider with the picture login over a memstore, served by httptest: tenant acme
// with ann (active, enrolled on the harbour), bob (inactive, enrolled) and carol (active, not
// enrolled), and a client.
type env struct {
	t        *testing.T
	srv      *httptest.Server
	base     string // the origin of the provider's BaseURL, where browsers go
	b        store.Backend
	auth     *picture.Authenticator
	pcfg     picture.Config
	ocfg     oidc2fa.Config
	clientID string
	secret   string
	ann      *store.User
	bob      *store.User
	carol    *store.User
	log      *logBuffer
}

func newEnv(t *testing.T, configure ...func(*picture.Config)) *env {
	t.Helper()
	return newEnvWith(t, envOptions{}, configure...)
}

// envOptions are what newEnvWith changes of newEnv's provider.
type envOptions struct {
	// host, when set, names the provider in its BaseURL instead of the test server's address
	// ("localhost": passkeys need a domain); browsers still reach the test server.
	host string
	// secondFactor is acme's policy (store.Tenant.SecondFactor).
	secondFactor string
}

// newEnvWith is newEnv with opts; the picture login has the memstore's passkeys.
func newEnvWith(t *testing.T, opts envOptions, configure ...func(*picture.Config)) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, b: memstore.New().Backend(), log: &logBuffer{}}
	require.NoError(t, e.b.Tenants.Create(ctx, store.Tenant{ID: "acme", SecondFactor: opts.secondFactor}))
	var err error
	mk := func(name string, active bool) *store.User {
		u, err := e.b.Users.Create(ctx, "acme", store.User{UserName: name, Active: active})
		require.NoError(t, err)
		return u
	}
	e.ann, e.bob, e.carol = mk("ann", true), mk("bob", false), mk("carol", true)
	logger := slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.pcfg = picture.Config{Credentials: e.b.Pictures, Passkeys: e.b.Passkeys, Peppers: []picture.Pepper{testPepper}, Argon2: fastArgon, Logger: logger}
	for _, f := range configure {
		f(&e.pcfg)
	}
	e.auth, err = picture.New(e.pcfg)
	require.NoError(t, err)
	require.NoError(t, e.auth.Enroll(ctx, "acme", e.ann.ID, "harbour", annPoints))
	require.NoError(t, e.auth.Enroll(ctx, "acme", e.bob.ID, "farm", annPoints))
	var client *store.Client
	e.secret, client, err = oidc2fa.RegisterClient(ctx, e.b.Clients, oidc2fa.ClientSpec{
		Tenant: "acme", Name: "Example app", RedirectURIs: []string{testRedirect}})
	require.NoError(t, err)
	e.clientID = client.ID
	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	require.NoError(t, err)
	e.srv = httptest.NewServer(nil)
	t.Cleanup(e.srv.Close)
	e.base = e.srv.URL
	if opts.host != "" {
		_, port, err := net.SplitHostPort(e.srv.Listener.Addr().String())
		require.NoError(t, err)
		e.base = "http://" + net.JoinHostPort(opts.host, port)
	}
	e.ocfg = oidc2fa.Config{
		Tenants: e.b.Tenants, Users: e.b.Users, Clients: e.b.Clients, Codes: e.b.Codes, Interactions: e.b.Interactions,
		Authenticator: e.auth, Signer: keys, BaseURL: e.base + "/oidc", Logger: logger,
		Events: e.b.Events,
		// The test server is reached over loopback, which is trusted as a proxy, so that a
		// browser can come from any address it forwards (browserFrom).
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
	}
	h, err := oidc2fa.New(e.ocfg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/oidc/", http.StripPrefix("/oidc", h))
	e.srv.Config.Handler = mux
	return e
}

// browser is a cookie jar that does not follow redirects. from, when set, is the address its
// requests come from, forwarded by the loopback "proxy" in X-Forwarded-For.
type browser struct {
	t    *testing.T
	c    *http.Client
	from string
	// acceptLanguage, when set, is the Accept-Language of every request.
	acceptLanguage string
}

// browserFrom is a browser whose requests come from the address from.
func (e *env) browserFrom(from string) *browser {
	b := e.browser()
	b.from = from
	return b
}

func (e *env) browser() *browser {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	if e.base != e.srv.URL {
		// The provider is named by a host of its own: every connection goes to the test server.
		addr := e.srv.Listener.Addr().String()
		c.Transport = &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}
	}
	return &browser{t: e.t, c: c}
}

// page is an answer, read.
type page struct {
	status   int
	header   http.Header
	body     string
	location string
}

func (b *browser) do(method, target string, form url.Values) *page {
	b.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, target, body)
	require.NoError(b.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if b.from != "" {
		req.Header.Set("X-Forwarded-For", b.from)
	}
	if b.acceptLanguage != "" {
		req.Header.Set("Accept-Language", b.acceptLanguage)
	}
	resp, err := b.c.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	p := &page{status: resp.StatusCode, header: resp.Header, body: buf.String(), location: resp.Header.Get("Location")}
	if p.location != "" && strings.HasPrefix(p.location, "/") {
		p.location = resp.Request.URL.Scheme + "://" + resp.Request.URL.Host + p.location
	}
	return p
}

func (b *browser) get(target string) *page { return b.do(http.MethodGet, target, nil) }
func (b *browser) post(target string, form url.Values) *page {
	return b.do(http.MethodPost, target, form)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the CSRF token of a page's form.
func (p *page) csrf(t *testing.T) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.body)
	require.NotNil(t, m, "no CSRF field in the page:\n%s", p.body)
	return m[1]
}

// login starts an authorization request for hint and returns the login page's URL and page.
func (e *env) login(b *browser, hint string) (string, *page) {
	e.t.Helper()
	return e.loginWith(b, hint, nil)
}

// loginWith is login with the parameters extra added to the authorization request.
func (e *env) loginWith(b *browser, hint string, extra url.Values) (string, *page) {
	e.t.Helper()
	sum := sha256.Sum256([]byte("verifier-verifier-verifier-verifier-verifier"))
	q := url.Values{
		"response_type": {"code"}, "client_id": {e.clientID}, "redirect_uri": {testRedirect},
		"scope": {"openid 2fa"}, "state": {"st"}, "nonce": {"n"}, "login_hint": {hint},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	for k, v := range extra {
		q[k] = v
	}
	p := b.get(e.base + "/oidc/authorize/acme?" + q.Encode())
	require.Equal(e.t, http.StatusSeeOther, p.status, p.body)
	loginURL := p.location
	p = b.get(loginURL)
	require.Equal(e.t, http.StatusOK, p.status, p.body)
	return loginURL, p
}

// attempt posts points to the login page and returns the answer.
func (e *env) attempt(b *browser, loginURL string, pg *page, points string) *page {
	e.t.Helper()
	return b.post(loginURL, url.Values{"csrf": {pg.csrf(e.t)}, "points": {points}})
}

// toClient reports whether p redirects to the client, and the query it carries.
func toClient(t *testing.T, p *page) url.Values {
	t.Helper()
	require.Equal(t, http.StatusSeeOther, p.status, p.body)
	require.True(t, strings.HasPrefix(p.location, testRedirect+"?"), "redirects to the client: %s", p.location)
	u, err := url.Parse(p.location)
	require.NoError(t, err)
	return u.Query()
}

// shift moves every point by dx, dy.
func shift(ps []picture.Point, dx, dy int) string {
	out := make([]picture.Point, len(ps))
	for i, p := range ps {
		out[i] = picture.Point{X: p.X + dx, Y: p.Y + dy}
	}
	return picture.FormatPoints(out)
}
