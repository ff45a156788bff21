package oidc2fa_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/openidclienttest"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
)

// openIDClientResult is what testdata/openid-client.mjs prints.
type openIDClientResult struct {
	Sub, Iss, Aud     string
	Nonce             bool
	PreferredUsername string         `json:"preferred_username"`
	BrowserParams     []string       `json:"browser_params"`
	TokenType         string         `json:"token_type"`
	ExpiresIn         int            `json:"expires_in"`
	Alg               string         `json:"alg"`
	UserInfo          map[string]any `json:"userinfo"`
}

// TestOpenIDClientNode runs a sign-in with npm's openid-client 6, unpatched, against the
// provider, for clients registered with an access token: it accepts EdDSA, Ed25519, RS256 and
// ES256, PKCE, client_secret_post and the iss parameter, reads the token response, and fetches
// UserInfo with the access token; and it pushes the request (RFC 9126) with
// buildAuthorizationUrlWithPAR to a client that requires it. It needs openid-client installed
// (internal/openidclienttest).
func TestOpenIDClientNode(t *testing.T) {
	script := openidclienttest.Script(t, "testdata/openid-client.mjs")
	ctx := context.Background()
	e := newEnv(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := e.mem.Backend()
	const redirect = "http://127.0.0.1:9/callback"
	provider, err := oidc2fa.New(oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Pushed: b.Pushed, AccessTokens: b.AccessTokens, Authenticator: &authtest.Authenticator{AutoApprove: true},
		Signer: e.keys, BaseURL: srv.URL + "/oidc", Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	mux.Handle("/oidc/", http.StripPrefix("/oidc", provider))

	for _, tc := range []struct{ mode, alg string }{
		{"plain", ""}, {"par", ""}, {"plain", "Ed25519"}, {"plain", "RS256"}, {"plain", "ES256"},
	} {
		t.Run(tc.mode+" "+tc.alg, func(t *testing.T) {
			secret, client, err := oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{Tenant: "acme", Name: "node",
				RedirectURIs: []string{redirect}, RequirePAR: tc.mode == "par", IDTokenAlg: tc.alg, AccessToken: true})
			require.NoError(t, err)
			out := script(srv.URL+"/oidc/acme", client.ID, secret, redirect, "ann@example.com", tc.mode)
			var got openIDClientResult
			require.NoError(t, json.Unmarshal(out, &got), "node printed: %s", out)
			assert.Equal(t, e.user.ID, got.Sub)
			assert.Equal(t, srv.URL+"/oidc/acme", got.Iss)
			assert.Equal(t, client.ID, got.Aud)
			assert.True(t, got.Nonce, "openid-client saw our nonce")
			assert.Equal(t, "ann@example.com", got.PreferredUsername)
			want := tc.alg
			if want == "" {
				want = "EdDSA"
			}
			assert.Equal(t, want, got.Alg)
			assert.Equal(t, "bearer", got.TokenType, "openid-client lower-cases it")
			assert.Equal(t, 300, got.ExpiresIn)
			assert.Equal(t, map[string]any{"sub": e.user.ID, "preferred_username": "ann@example.com",
				"email": "ann.lee@example.com"}, got.UserInfo)
			if tc.mode == "par" {
				assert.Equal(t, []string{"client_id", "request_uri"}, got.BrowserParams, "the browser carries nothing else")
			}
		})
	}
}
