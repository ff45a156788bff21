package oidc2fa_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
)

// openIDClientVersion is the npm openid-client the interop test installs.
const openIDClientVersion = "6.8.9"

// TestOpenIDClientNode runs a sign-in with npm's openid-client 6 against the provider, proving
// what the README says: it accepts EdDSA, PKCE, client_secret_post and the iss parameter, and
// reads the ID-token-only response once customFetch adds a placeholder access_token; and it
// pushes the request (RFC 9126) with buildAuthorizationUrlWithPAR to a client that requires it.
// It needs
// Node.js and the npm registry; it skips without them, unless VISID_REQUIRE_SERVICES=1.
func TestOpenIDClientNode(t *testing.T) {
	if testing.Short() {
		t.Skip("installs an npm package; -short")
	}
	unavailable := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node is not installed: %v", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		unavailable("npm is not installed: %v", err)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "package.json"),
		[]byte(`{"private":true,"dependencies":{"openid-client":"`+openIDClientVersion+`"}}`), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--loglevel=error",
		"--fetch-retries=1", "--fetch-timeout=20000") // an offline machine gives up quickly
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		unavailable("npm install openid-client@%s: %v\n%s", openIDClientVersion, err, out)
	}
	script, err := os.ReadFile("testdata/openid-client.mjs")
	require.NoError(t, err)
	// Copied, not linked: Node resolves packages from the script's real directory.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "openid-client.mjs"), script, 0o644))

	e := newEnv(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := e.mem.Backend()
	const redirect = "http://127.0.0.1:9/callback"
	provider, err := oidc2fa.New(oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Pushed: b.Pushed, Authenticator: &authtest.Authenticator{AutoApprove: true}, Signer: e.keys, BaseURL: srv.URL + "/oidc",
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	mux.Handle("/oidc/", http.StripPrefix("/oidc", provider))

	for _, mode := range []string{"plain", "par"} {
		t.Run(mode, func(t *testing.T) {
			secret, client, err := oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{Tenant: "acme", Name: "node",
				RedirectURIs: []string{redirect}, RequirePAR: mode == "par"})
			require.NoError(t, err)
			run := exec.CommandContext(ctx, node, "openid-client.mjs", srv.URL+"/oidc/acme", client.ID, secret, redirect,
				"ann@example.com", mode)
			run.Dir = dir
			out, err := run.Output()
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			require.NoError(t, err, "node: %s", stderr)
			var got struct {
				Sub, Iss, Aud     string
				Nonce             bool
				PreferredUsername string   `json:"preferred_username"`
				BrowserParams     []string `json:"browser_params"`
			}
			require.NoError(t, json.Unmarshal(out, &got), "node printed: %s", out)
			assert.Equal(t, e.user.ID, got.Sub)
			assert.Equal(t, srv.URL+"/oidc/acme", got.Iss)
			assert.Equal(t, client.ID, got.Aud)
			assert.True(t, got.Nonce, "openid-client saw our nonce")
			assert.Equal(t, "ann@example.com", got.PreferredUsername)
			if mode == "par" {
				assert.Equal(t, []string{"client_id", "request_uri"}, got.BrowserParams, "the browser carries nothing else")
			}
		})
	}
}
