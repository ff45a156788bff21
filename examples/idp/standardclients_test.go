package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/visid/visid/internal/openidclienttest"
)

// standardRedirect is the redirect URI of the standard clients' registrations: nothing listens
// there, the browser stops before it.
const standardRedirect = "http://127.0.0.1:9/callback"

// pictureBrowser follows a sign-in from the authorization URL to the redirect back to the
// client, as a person's browser does: it keeps cookies, and on the picture login page it posts
// points with the page's CSRF token, as the page's form does. It returns the callback URL.
func pictureBrowser(t *testing.T, authURL, points string) *url.URL {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next, form := authURL, url.Values(nil)
	for range 8 {
		var resp *http.Response
		var err error
		if form == nil {
			resp, err = browser.Get(next)
		} else {
			resp, err = browser.PostForm(next, form)
		}
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		form = nil
		if loc, err := resp.Location(); err == nil {
			if strings.HasPrefix(loc.String(), standardRedirect) {
				return loc
			}
			next = loc.String()
			continue
		}
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", next, body)
		csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(body)
		require.NotNil(t, csrf, "a login page with a form: %s", body)
		form = url.Values{"csrf": {string(csrf[1])}, "points": {points}}
	}
	t.Fatal("no redirect to the client after 8 steps")
	return nil
}

// TestStandardGoClient signs alice in through the service with golang.org/x/oauth2 and
// coreos/go-oidc, unpatched, as the README's "Using a standard OpenID client" says: a client
// registered with --access-token (EdDSA and RS256), the authorization with PKCE, the picture
// login by form POST, Config.Exchange, go-oidc's verification of the ID token, and UserInfo.
func TestStandardGoClient(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "idp.db")
	s := startService(t, "-db", db)
	ctx := t.Context()
	provider, err := oidc.NewProvider(ctx, s.vars["issuer"])
	require.NoError(t, err, "go-oidc discovery")

	for _, alg := range []string{"EdDSA", "RS256"} {
		t.Run(alg, func(t *testing.T) {
			reg := runCmd(t, "client", "create", "--tenant", "demo", "--name", "Go "+alg, "--redirect-uri", standardRedirect,
				"--access-token", "--id-token-alg", alg, "-db", db)
			assert.Equal(t, "true", reg["access_token"])
			assert.Equal(t, alg, reg["id_token_alg"])
			conf := oauth2.Config{
				ClientID: reg["client_id"], ClientSecret: reg["client_secret"], Endpoint: provider.Endpoint(),
				RedirectURL: standardRedirect, Scopes: []string{oidc.ScopeOpenID, "2fa"},
			}
			verifier := oauth2.GenerateVerifier()
			const state, nonce = "state-x-oauth2", "nonce-x-oauth2"
			authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce),
				oauth2.SetAuthURLParam("login_hint", "alice@example.com"))

			cb := pictureBrowser(t, authURL, s.vars["demo_points"])
			require.Equal(t, state, cb.Query().Get("state"))
			require.Equal(t, s.vars["issuer"], cb.Query().Get("iss"))
			tok, err := conf.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(verifier))
			require.NoError(t, err, "x/oauth2 Exchange")
			assert.Equal(t, "Bearer", tok.TokenType)
			assert.False(t, tok.Expiry.IsZero())
			raw, ok := tok.Extra("id_token").(string)
			require.True(t, ok, "an id_token beside the access token")

			idt, err := provider.Verifier(&oidc.Config{ClientID: conf.ClientID}).Verify(ctx, raw)
			require.NoError(t, err, "go-oidc verification")
			assert.Equal(t, nonce, idt.Nonce)
			head, _, _ := strings.Cut(raw, ".")
			hb, err := base64.RawURLEncoding.DecodeString(head)
			require.NoError(t, err)
			var header struct{ Alg string }
			require.NoError(t, json.Unmarshal(hb, &header))
			assert.Equal(t, alg, header.Alg)
			var claims struct {
				PreferredUsername string `json:"preferred_username"`
			}
			require.NoError(t, idt.Claims(&claims))
			assert.Equal(t, "alice", claims.PreferredUsername)

			info, err := provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
			require.NoError(t, err, "UserInfo with the access token")
			assert.Equal(t, idt.Subject, info.Subject)
			assert.Equal(t, "alice@example.com", info.Email)
		})
	}
}

// TestStandardNodeClient signs alice in through the service with npm's openid-client 6,
// unpatched, for a client registered with --access-token, with and without a pushed
// authorization request, the picture login answered by a form POST.
func TestStandardNodeClient(t *testing.T) {
	script := openidclienttest.Script(t, "../../oidc2fa/testdata/openid-client.mjs")
	db := "sqlite:" + filepath.Join(t.TempDir(), "idp.db")
	s := startService(t, "-db", db)
	for _, mode := range []string{"plain", "par"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{"client", "create", "--tenant", "demo", "--name", "Node " + mode,
				"--redirect-uri", standardRedirect, "--access-token", "-db", db}
			if mode == "par" {
				args = append(args, "--require-par")
			}
			reg := runCmd(t, args...)
			out := script(s.vars["issuer"], reg["client_id"], reg["client_secret"], standardRedirect,
				"alice@example.com", mode, s.vars["demo_points"])
			var got struct {
				Sub, Iss, Aud     string
				Nonce             bool
				PreferredUsername string         `json:"preferred_username"`
				BrowserParams     []string       `json:"browser_params"`
				Alg               string         `json:"alg"`
				UserInfo          map[string]any `json:"userinfo"`
			}
			require.NoError(t, json.Unmarshal(out, &got), "node printed: %s", out)
			assert.True(t, strings.HasPrefix(got.Sub, "user_"))
			assert.Equal(t, s.vars["issuer"], got.Iss)
			assert.Equal(t, reg["client_id"], got.Aud)
			assert.True(t, got.Nonce)
			assert.Equal(t, "alice", got.PreferredUsername)
			assert.Equal(t, "EdDSA", got.Alg)
			assert.Equal(t, got.Sub, got.UserInfo["sub"])
			if mode == "par" {
				assert.Equal(t, []string{"client_id", "request_uri"}, got.BrowserParams)
			}
		})
	}
}
