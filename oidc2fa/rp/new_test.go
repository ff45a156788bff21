package rp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa/rp"
)

func TestNewChecksConfig(t *testing.T) {
	p := newIDP(t, true)
	sessions := sessionKinds[0].make(t, nil)
	valid := func() rp.Config {
		return rp.Config{Issuer: p.issuer, ClientID: p.clientID, ClientSecret: p.secret, RedirectURI: redirectURI, Sessions: sessions}
	}
	_, err := rp.New(context.Background(), valid())
	require.NoError(t, err)

	tests := map[string]func(c *rp.Config){
		"no issuer":           func(c *rp.Config) { c.Issuer = "" },
		"relative issuer":     func(c *rp.Config) { c.Issuer = "/oidc/acme" },
		"issuer with a query": func(c *rp.Config) { c.Issuer += "?x=1" },
		"ftp issuer":          func(c *rp.Config) { c.Issuer = "ftp://id.example.com/acme" },
		"no client id":        func(c *rp.Config) { c.ClientID = "" },
		"no secret":           func(c *rp.Config) { c.ClientSecret = "" },
		"no redirect URI":     func(c *rp.Config) { c.RedirectURI = "" },
		"relative redirect":   func(c *rp.Config) { c.RedirectURI = "/2fa/callback" },
		"no sessions":         func(c *rp.Config) { c.Sessions = nil },
		"negative leeway":     func(c *rp.Config) { c.Leeway = -time.Second },
		"unknown auth method": func(c *rp.Config) { c.AuthMethod = "private_key_jwt" },
		"unknown tenant":      func(c *rp.Config) { c.Issuer = p.srv.URL + "/oidc/globex" },
		"nobody there":        func(c *rp.Config) { c.Issuer = "http://127.0.0.1:1/oidc/acme" },
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := valid()
			change(&cfg)
			r, err := rp.New(context.Background(), cfg)
			require.Error(t, err)
			assert.Nil(t, r)
		})
	}

	t.Run("issuer not exactly the discovery's", func(t *testing.T) {
		cfg := valid()
		cfg.Issuer += "/" // the same discovery URL, another issuer
		_, err := rp.New(context.Background(), cfg)
		require.ErrorIs(t, err, rp.ErrIssuer)
	})
}

// TestNewChecksDiscovery serves discovery documents the RP must refuse.
func TestNewChecksDiscovery(t *testing.T) {
	var doc atomic.Pointer[map[string]any]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/acme/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(*doc.Load())
	}))
	t.Cleanup(srv.Close)
	issuer := srv.URL + "/acme"
	valid := func() map[string]any {
		return map[string]any{
			"issuer":                                         issuer,
			"authorization_endpoint":                         srv.URL + "/authorize/acme",
			"token_endpoint":                                 srv.URL + "/token/acme",
			"jwks_uri":                                       srv.URL + "/jwks/acme",
			"id_token_signing_alg_values_supported":          []string{"EdDSA"},
			"code_challenge_methods_supported":               []string{"S256"},
			"token_endpoint_auth_methods_supported":          []string{"client_secret_post"},
			"authorization_response_iss_parameter_supported": true,
		}
	}
	sessions := sessionKinds[0].make(t, nil)
	newRP := func(method rp.AuthMethod) error {
		_, err := rp.New(context.Background(), rp.Config{Issuer: issuer, ClientID: "client_1", ClientSecret: "secret_1",
			RedirectURI: redirectURI, Sessions: sessions, AuthMethod: method})
		return err
	}
	d := valid()
	doc.Store(&d)
	require.NoError(t, newRP(""))

	tests := map[string]func(d map[string]any){
		"another issuer":        func(d map[string]any) { d["issuer"] = "https://id.example.com/acme" },
		"RS256 only":            func(d map[string]any) { d["id_token_signing_alg_values_supported"] = []string{"RS256"} },
		"no algorithms":         func(d map[string]any) { delete(d, "id_token_signing_alg_values_supported") },
		"no iss parameter":      func(d map[string]any) { delete(d, "authorization_response_iss_parameter_supported") },
		"plain PKCE only":       func(d map[string]any) { d["code_challenge_methods_supported"] = []string{"plain"} },
		"no token endpoint":     func(d map[string]any) { delete(d, "token_endpoint") },
		"relative jwks_uri":     func(d map[string]any) { d["jwks_uri"] = "/jwks/acme" },
		"basic only for a post": func(d map[string]any) { d["token_endpoint_auth_methods_supported"] = []string{"client_secret_basic"} },
		"no authorize endpoint": func(d map[string]any) { d["authorization_endpoint"] = "" },
		"PAR required, no PAR endpoint": func(d map[string]any) {
			d["require_pushed_authorization_requests"] = true
		},
		"relative PAR endpoint": func(d map[string]any) { d["pushed_authorization_request_endpoint"] = "/par/acme" },
	}
	t.Run("PAR offered and required", func(t *testing.T) {
		d := valid()
		d["pushed_authorization_request_endpoint"] = srv.URL + "/par/acme"
		d["require_pushed_authorization_requests"] = true
		doc.Store(&d)
		require.NoError(t, newRP(""))
	})
	t.Run("basic where only basic is offered", func(t *testing.T) {
		d := valid()
		d["token_endpoint_auth_methods_supported"] = []string{"client_secret_basic"}
		doc.Store(&d)
		require.NoError(t, newRP(rp.ClientSecretBasic))
	})
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			d := valid()
			change(d)
			doc.Store(&d)
			require.ErrorIs(t, newRP(""), rp.ErrDiscovery)
		})
	}
	t.Run("provider unreachable", func(t *testing.T) {
		gone := httptest.NewServer(http.NotFoundHandler())
		gone.Close()
		_, err := rp.New(context.Background(), rp.Config{Issuer: gone.URL + "/acme", ClientID: "client_1",
			ClientSecret: "secret_1", RedirectURI: redirectURI, Sessions: sessions})
		require.ErrorIs(t, err, rp.ErrDiscovery)
	})
}
