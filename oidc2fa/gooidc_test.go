package oidc2fa_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
)

// mounting is one way a host mounts the provider on its router.
type mounting struct {
	name  string
	path  string // the path of BaseURL: where the provider is mounted
	mount func(h http.Handler) http.Handler
}

// hostApp is the host application's own page next to the provider.
func hostApp(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("host app")) }

var mountings = []mounting{
	{"at the root", "", func(h http.Handler) http.Handler { return h }},
	{"under /oidc/ on ServeMux with StripPrefix", "/oidc", func(h http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("/oidc/", http.StripPrefix("/oidc", h))
		mux.HandleFunc("/", hostApp)
		return mux
	}},
	{"under /sso/oidc on chi", "/sso/oidc", func(h http.Handler) http.Handler {
		r := chi.NewRouter()
		r.Mount("/sso/oidc", http.StripPrefix("/sso/oidc", h))
		r.Get("/", hostApp)
		return r
	}},
}

// goOIDCFlow mounts the provider on a real HTTP server as m says and runs the whole second
// factor with go-oidc as an independent relying party: discovery, the authorization in a
// cookie-keeping browser, the code exchange by a plain POST (x/oauth2 cannot read a token
// response without access_token), and the verification of the ID token by go-oidc. With par the
// authorization request is pushed first (RFC 9126) to the endpoint discovery names.
func goOIDCFlow(t *testing.T, m mounting, par bool) {
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + m.path
	e := newEnv(t, func(c *oidc2fa.Config) {
		c.BaseURL = base
		c.Now = nil // go-oidc checks exp against the real clock
		c.Authenticator = &authtest.Authenticator{AutoApprove: true, Methods: []string{"swk", "user"}}
	})
	srv.Config.Handler = m.mount(e.handler)
	srv.Start()
	t.Cleanup(srv.Close)

	ctx := context.Background()
	issuer := base + "/acme"
	provider, err := oidc.NewProvider(ctx, issuer)
	require.NoError(t, err, "go-oidc discovery")
	var meta struct {
		Algs []string `json:"id_token_signing_alg_values_supported"`
		PAR  string   `json:"pushed_authorization_request_endpoint"`
	}
	require.NoError(t, provider.Claims(&meta))
	assert.Equal(t, []string{"EdDSA", "RS256", "ES256", "Ed25519"}, meta.Algs)

	// The authorization, in a browser that keeps cookies and stops at the client.
	const state, nonce = "state-go-oidc", "nonce-go-oidc"
	params := e.authParams()
	params.Set("state", state)
	params.Set("nonce", nonce)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), testRedirect) {
			return http.ErrUseLastResponse
		}
		if len(via) > 5 {
			return errors.New("too many redirects")
		}
		return nil
	}}
	authURL := provider.Endpoint().AuthURL + "?" + params.Encode()
	if par {
		require.Equal(t, base+"/par/acme", meta.PAR)
		params.Set("client_secret", e.secret)
		resp, err := http.PostForm(meta.PAR, params)
		require.NoError(t, err)
		var pushed struct {
			RequestURI string `json:"request_uri"`
		}
		require.Equal(t, http.StatusCreated, resp.StatusCode)
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&pushed))
		resp.Body.Close()
		authURL = provider.Endpoint().AuthURL + "?" + url.Values{"client_id": {e.client.ID}, "request_uri": {pushed.RequestURI}}.Encode()
	}
	resp, err := browser.Get(authURL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, testRedirect, loc.Scheme+"://"+loc.Host+loc.Path)
	q := loc.Query()
	require.Empty(t, q.Get("error"), "callback: %v", q)
	assert.Equal(t, state, q.Get("state"))
	assert.Equal(t, issuer, q.Get("iss"), "RFC 9207: iss is the discovered issuer")

	// The exchange, by a plain POST.
	resp, err = http.PostForm(provider.Endpoint().TokenURL, url.Values{
		"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {testRedirect},
		"code_verifier": {testVerifier}, "client_id": {e.client.ID}, "client_secret": {e.secret},
	})
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var tok struct {
		IDToken string `json:"id_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tok))

	// go-oidc verifies the EdDSA token with the keys it finds through discovery.
	idToken, err := provider.Verifier(&oidc.Config{ClientID: e.client.ID}).Verify(ctx, tok.IDToken)
	require.NoError(t, err, "go-oidc verification")
	assert.Equal(t, issuer, idToken.Issuer)
	assert.Equal(t, e.user.ID, idToken.Subject)
	assert.Equal(t, []string{e.client.ID}, idToken.Audience)
	assert.Equal(t, nonce, idToken.Nonce)
	assert.WithinDuration(t, time.Now().Add(time.Hour), idToken.Expiry, time.Minute)
	var claims struct {
		AMR               []string `json:"amr"`
		AuthTime          int64    `json:"auth_time"`
		PreferredUsername string   `json:"preferred_username"`
		Email             string   `json:"email"`
	}
	require.NoError(t, idToken.Claims(&claims))
	assert.Equal(t, []string{"swk", "user"}, claims.AMR)
	assert.Equal(t, "ann@example.com", claims.PreferredUsername)
	assert.Equal(t, "ann.lee@example.com", claims.Email)
	assert.InDelta(t, time.Now().Unix(), claims.AuthTime, 60)

	_, err = provider.Verifier(&oidc.Config{ClientID: "client_other"}).Verify(ctx, tok.IDToken)
	assert.Error(t, err, "the token is for this client only")
	tampered := tok.IDToken[:strings.LastIndexByte(tok.IDToken, '.')+1] + strings.Repeat("A", 86)
	_, err = provider.Verifier(&oidc.Config{ClientID: e.client.ID}).Verify(ctx, tampered)
	assert.Error(t, err, "a bad signature is refused")

	if m.path != "" {
		resp, err := http.Get("http://" + srv.Listener.Addr().String() + "/")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "the host's own routes still work")
	}
}

func TestGoOIDC(t *testing.T) {
	for _, par := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "pushed"}[par], func(t *testing.T) {
			goOIDCFlow(t, mountings[1], par)
		})
	}
}

func TestMounting(t *testing.T) {
	for _, m := range mountings {
		t.Run(m.name, func(t *testing.T) { goOIDCFlow(t, m, true) })
	}
}
