package rp_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/testclock"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/oidc2fa/rp"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// redirectURI is the RP's registered callback. The RP never serves it in these tests: the test
// plays the browser and hands the callback request to RP.Callback itself.
const redirectURI = "https://app.example.com/2fa/callback"

// start is the clock's first reading: any fixed time works.
var start = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// clock is the fake time source tests move by hand.
type clock = testclock.Clock

func newClock() *clock { return testclock.At(start) }

// idp is the real oidc2fa provider on a memstore, mounted under /oidc/ of an httptest server
// with http.StripPrefix: tenant acme, an active user ann, a client registered for redirectURI.
type idp struct {
	srv      *httptest.Server
	issuer   string
	clock    *clock // the provider's clock
	keys     *oidc2fa.KeyRing
	priv     ed25519.PrivateKey // the KeyRing's first key, and its kid
	kid      string
	auth     *authtest.Authenticator
	clientID string
	secret   string
	user     *store.User
	backend  store.Backend // the provider's store

	jwksHits  atomic.Int64
	tokenHits atomic.Int64
	jwksDown  atomic.Bool // the JWKS answers 503
	// forge, when set, replaces the ID token of every successful token response with what
	// it returns for the real token's claims: tests use it to hand the RP tokens of their own.
	forge atomic.Pointer[func(claims map[string]any) string]
}

// offerPushed, set as Config.Pushed by a configure func of newIDP, stands for the provider's own
// store of pushed requests, which newIDP puts in its place.
type offerPushed struct{ store.PushedRequests }

// withPAR, as a configure func of newIDP, makes the provider offer pushed authorization
// requests.
func withPAR(c *oidc2fa.Config) { c.Pushed = offerPushed{} }

// configure, if any, changes the provider's Config before the server starts.
func newIDP(t *testing.T, autoApprove bool, configure ...func(*oidc2fa.Config)) *idp {
	t.Helper()
	ctx := context.Background()
	p := &idp{clock: newClock()}
	p.srv = httptest.NewUnstartedServer(nil)
	t.Cleanup(p.srv.Close)
	base := "http://" + p.srv.Listener.Addr().String() + "/oidc"
	p.issuer = base + "/acme"

	b := memstore.New().Backend()
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	var err error
	p.user, err = b.Users.Create(ctx, "acme", store.User{UserName: "ann@example.com", Active: true})
	require.NoError(t, err)
	p.backend = b
	secret, client, err := oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{
		Tenant: "acme", Name: "App", RedirectURIs: []string{redirectURI}, Now: p.clock.Now()})
	require.NoError(t, err)
	p.clientID, p.secret = client.ID, secret
	_, p.priv, err = ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	// Rotations sign at once (RotationDelay -1), without publishing the key first, so that the
	// tests see the RP meet an unknown kid, as it does with a provider that rotates that way.
	p.keys, err = oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Now: p.clock.Now, Keys: []ed25519.PrivateKey{p.priv}, RotationDelay: -1})
	require.NoError(t, err)
	published, err := p.keys.Keys(ctx, "acme")
	require.NoError(t, err)
	require.Len(t, published, 1)
	p.kid = published[0].KID
	p.auth = &authtest.Authenticator{AutoApprove: autoApprove, Now: p.clock.Now}
	cfg := oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Authenticator: p.auth, Signer: p.keys, BaseURL: base, Now: p.clock.Now,
		Logger: slog.New(slog.DiscardHandler),
	}
	for _, f := range configure {
		f(&cfg)
	}
	if _, ok := cfg.Pushed.(offerPushed); ok {
		cfg.Pushed = b.Pushed
	}
	provider, err := oidc2fa.New(cfg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/oidc/", http.StripPrefix("/oidc", provider))
	p.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/oidc/jwks/acme":
			p.jwksHits.Add(1)
			if p.jwksDown.Load() {
				http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
				return
			}
		case "/oidc/token/acme":
			p.tokenHits.Add(1)
			if f := p.forge.Load(); f != nil {
				forgeToken(w, r, mux, *f)
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
	p.srv.Start()
	return p
}

// forgeToken runs the real token endpoint and replaces the ID token of a successful answer. It
// runs on the server's goroutine: no testify here.
func forgeToken(w http.ResponseWriter, r *http.Request, h http.Handler, f func(map[string]any) string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	var resp map[string]any
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &resp) != nil {
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	claims := map[string]any{}
	if raw, ok := resp["id_token"].(string); ok {
		if parts := strings.Split(raw, "."); len(parts) == 3 {
			payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
			_ = json.Unmarshal(payload, &claims)
		}
	}
	resp["id_token"] = f(claims)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// setForge makes the token endpoint answer with f's tokens until the test ends.
func (p *idp) setForge(t *testing.T, f func(claims map[string]any) string) {
	p.forge.Store(&f)
	t.Cleanup(func() { p.forge.Store(nil) })
}

// sign has the provider's KeyRing sign claims: a token as valid as the real ones, whatever
// the claims say.
func (p *idp) sign(claims map[string]any) string {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "unsignable"
	}
	tok, err := p.keys.Sign(context.Background(), "acme", payload)
	if err != nil {
		return "unsignable"
	}
	return tok
}

// signAs signs claims with the provider's first key; header adds to or overrides the fields
// alg, kid and typ of the provider's tokens, and a nil value removes one.
func (p *idp) signAs(claims map[string]any, header map[string]any) string {
	h := map[string]any{"alg": "EdDSA", "kid": p.kid, "typ": "JWT"}
	for k, v := range header {
		if v == nil {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
	return signEd25519(p.priv, h, claims)
}

// rpEnv is an RP of the idp with its own clock.
type rpEnv struct {
	*idp
	rp       *rp.RP
	clock    *clock // the RP's clock; the Sessions use the provider's
	sessions rp.Sessions
}

// sessionKinds are the two Sessions implementations every flow runs with, on the provider's
// clock (so moving the RP's clock does not expire sign-ins).
var sessionKinds = []struct {
	name string
	make func(t *testing.T, now func() time.Time) rp.Sessions
}{
	{"server", func(t *testing.T, now func() time.Time) rp.Sessions {
		s, err := rp.NewServerSessions(rp.ServerSessionsConfig{Now: now})
		require.NoError(t, err)
		return s
	}},
	{"cookie", func(t *testing.T, now func() time.Time) rp.Sessions {
		s, err := rp.NewCookieSessions(rp.CookieSessionsConfig{Key: []byte("0123456789abcdef0123456789abcdef"), Now: now})
		require.NoError(t, err)
		return s
	}},
}

func newRP(t *testing.T, p *idp, sessions rp.Sessions, configure ...func(*rp.Config)) *rpEnv {
	t.Helper()
	e := &rpEnv{idp: p, clock: newClock(), sessions: sessions}
	cfg := rp.Config{
		Issuer: p.issuer, ClientID: p.clientID, ClientSecret: p.secret, RedirectURI: redirectURI,
		Sessions: sessions, Now: e.clock.Now, Logger: slog.New(slog.DiscardHandler),
	}
	for _, f := range configure {
		f(&cfg)
	}
	var err error
	e.rp, err = rp.New(context.Background(), cfg)
	require.NoError(t, err)
	return e
}

// flight is one sign-in as the browser sees it.
type flight struct {
	authURL  string
	cookies  []*http.Cookie // the RP's cookies, set by AuthCodeURL
	callback *url.URL       // where the provider sent the browser back
}

// begin runs the RP's login handler: AuthCodeURL for ann.
func (e *rpEnv) begin(t *testing.T) *flight {
	t.Helper()
	rec := httptest.NewRecorder()
	target, err := e.rp.AuthCodeURL(rec, httptest.NewRequest("POST", "https://app.example.com/login", nil), "ann@example.com")
	require.NoError(t, err)
	return &flight{authURL: target, cookies: rec.Result().Cookies()}
}

// authorize sends a fresh browser to the authorization URL and follows the provider's pages
// until it is sent back to the RP; with a login page (no AutoApprove) it presses decision.
func (p *idp) authorize(t *testing.T, f *flight, decision string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			if strings.HasPrefix(req.URL.String(), redirectURI) {
				return http.ErrUseLastResponse
			}
			return nil
		}}
	resp, err := browser.Get(f.authURL)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		action := regexp.MustCompile(`action="([^"]+)"`).FindSubmatch(body)
		csrf := regexp.MustCompile(`name="` + oidc2fa.CSRFField + `" value="([^"]+)"`).FindSubmatch(body)
		require.NotNil(t, action, "login page: %s", body)
		require.NotNil(t, csrf, "login page: %s", body)
		resp, err = browser.PostForm(p.srv.URL+html.UnescapeString(string(action[1])), url.Values{
			oidc2fa.CSRFField: {html.UnescapeString(string(csrf[1]))}, "decision": {decision}})
		require.NoError(t, err)
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "body: %s", body)
	f.callback, err = url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(f.callback.String(), redirectURI+"?"), "sent back to %s", f.callback)
}

// finish calls the RP's callback handler with the callback URL (as altered by edit) and the
// given cookies; it returns Callback's result, the cookies it set and its error.
func (e *rpEnv) finish(f *flight, cookies []*http.Cookie, edit func(q url.Values)) (*rp.Result, []*http.Cookie, error) {
	u := *f.callback
	if edit != nil {
		q := u.Query()
		edit(q)
		u.RawQuery = q.Encode()
	}
	req := httptest.NewRequest("GET", u.String(), nil)
	for _, c := range cookies {
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	rec := httptest.NewRecorder()
	res, err := e.rp.Callback(context.Background(), rec, req)
	return res, rec.Result().Cookies(), err
}

// flow runs a whole sign-in with the approving authenticator.
func (e *rpEnv) flow(t *testing.T) (*rp.Result, error) {
	t.Helper()
	f := e.begin(t)
	e.authorize(t, f, "approve")
	res, _, err := e.finish(f, f.cookies, nil)
	return res, err
}
