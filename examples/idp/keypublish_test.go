package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
)

// jwksKIDs returns the kid and alg of each key of the JWKS at url.
func jwksKIDs(t *testing.T, url string) map[string]string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var set struct{ Keys []struct{ Kid, Alg string } }
	require.NoError(t, json.Unmarshal(body, &set))
	out := map[string]string{}
	for _, k := range set.Keys {
		out[k.Kid] = k.Alg
	}
	return out
}

// TestClientKeyPublishedBeforeSignIn: a client registered with --id-token-alg RS256 while the
// service runs finds the tenant's RS256 key in the JWKS before its first sign-in, and its first
// ID token is signed with that key; `idp client set-id-token-alg` does the same for ES256.
func TestClientKeyPublishedBeforeSignIn(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "idp.db")
	s := startService(t, "-db", db)
	ctx := t.Context()
	jwksURL := strings.Replace(s.vars["issuer"], "/oidc/demo", "/oidc/jwks/demo", 1)
	before := jwksKIDs(t, jwksURL)
	require.NotContains(t, slices.Collect(maps.Values(before)), "RS256", "the demo signs EdDSA only")

	reg := runCmd(t, "client", "create", "--tenant", "demo", "--name", "RS256 app", "--redirect-uri", standardRedirect,
		"--id-token-alg", "RS256", "--access-token", "-db", db) // x/oauth2 needs an access token
	var published map[string]string
	require.Eventually(t, func() bool {
		published = jwksKIDs(t, jwksURL)
		return slices.Contains(slices.Collect(maps.Values(published)), "RS256")
	}, 3*time.Second, 100*time.Millisecond, "the running service lists the new key within a second")

	provider, err := oidc.NewProvider(ctx, s.vars["issuer"])
	require.NoError(t, err)
	conf := oauth2.Config{ClientID: reg["client_id"], ClientSecret: reg["client_secret"], Endpoint: provider.Endpoint(),
		RedirectURL: standardRedirect, Scopes: []string{oidc.ScopeOpenID, "2fa"}}
	verifier := oauth2.GenerateVerifier()
	authURL := conf.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier), oidc.Nonce("nonce-1"),
		oauth2.SetAuthURLParam("login_hint", "alice@example.com"))
	cb := pictureBrowser(t, authURL, s.vars["demo_points"])
	tok, err := conf.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	raw, _ := tok.Extra("id_token").(string)
	head, _, _ := strings.Cut(raw, ".")
	hb, err := base64.RawURLEncoding.DecodeString(head)
	require.NoError(t, err)
	var header struct{ Alg, Kid string }
	require.NoError(t, json.Unmarshal(hb, &header))
	assert.Equal(t, "RS256", header.Alg)
	assert.Equal(t, "RS256", published[header.Kid], "the first token's kid was in the JWKS read before the sign-in")

	set := runCmd(t, "client", "set-id-token-alg", "--tenant", "demo", reg["client_id"], "ES256", "-db", db)
	assert.Equal(t, "ES256", set["id_token_alg"])
	require.Eventually(t, func() bool {
		return slices.Contains(slices.Collect(maps.Values(jwksKIDs(t, jwksURL))), "ES256")
	}, 3*time.Second, 100*time.Millisecond, "set-id-token-alg publishes the ES256 key")
}
