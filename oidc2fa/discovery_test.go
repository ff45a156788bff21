package oidc2fa_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
)

// discover fetches tenant's discovery document from h with a hostile Host header and forwarding
// headers, which must not matter.
func discover(t *testing.T, h http.Handler, tenant string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	req := httptest.NewRequest("GET", "/"+tenant+"/.well-known/openid-configuration", nil)
	req.Host = "evil.example"
	req.Header.Set("X-Forwarded-Host", "evil.example")
	req.Header.Set("X-Forwarded-Proto", "http")
	req.Header.Set("Forwarded", "host=evil.example;proto=http")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return rec, nil
	}
	var doc map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc), "body: %s", rec.Body)
	return rec, doc
}

func TestDiscoveryFields(t *testing.T) {
	e := newEnv(t)
	rec, doc := discover(t, e.handler, "acme")
	require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
	assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json"))
	assert.NotContains(t, rec.Body.String(), "evil.example", "absolute URLs come from BaseURL, never from the request")

	tests := []struct {
		field string
		want  any
	}{
		{"issuer", "https://id.example.com/oidc/acme"},
		{"authorization_endpoint", "https://id.example.com/oidc/authorize/acme"},
		{"token_endpoint", "https://id.example.com/oidc/token/acme"},
		{"jwks_uri", "https://id.example.com/oidc/jwks/acme"},
		{"response_types_supported", []any{"code"}},
		{"grant_types_supported", []any{"authorization_code"}},
		{"subject_types_supported", []any{"public"}},
		{"id_token_signing_alg_values_supported", []any{"EdDSA", "RS256", "ES256", "Ed25519"}},
		{"scopes_supported", []any{"openid", "2fa"}},
		{"code_challenge_methods_supported", []any{"S256"}},
		{"authorization_response_iss_parameter_supported", true},
		{"request_parameter_supported", false},
		{"request_uri_parameter_supported", false},
		{"ui_locales_supported", []any{"en", "de", "es", "fr", "ja"}},
	}
	for _, tc := range tests {
		t.Run(tc.field, func(t *testing.T) {
			got, present := doc[tc.field]
			require.True(t, present, "%s is present, not omitted", tc.field)
			assert.Equal(t, tc.want, got)
		})
	}
	t.Run("token_endpoint_auth_methods_supported", func(t *testing.T) {
		assert.ElementsMatch(t, []any{"client_secret_post", "client_secret_basic"}, doc["token_endpoint_auth_methods_supported"])
	})
	t.Run("claims_supported", func(t *testing.T) {
		got, _ := doc["claims_supported"].([]any)
		for _, c := range []string{"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "amr"} {
			assert.Contains(t, got, c)
		}
		assert.NotContains(t, got, "at_hash")
	})
	t.Run("issuer matches the iss of answers and tokens", func(t *testing.T) {
		q := callback(t, e.browser().follow("GET", "/authorize/acme?"+e.authParams().Encode(), nil))
		assert.Equal(t, doc["issuer"], q.Get("iss"))
		_, claims := decodeJWT(t, e.redeem(q.Get("code")))
		assert.Equal(t, doc["issuer"], claims["iss"])
	})
}

func TestDiscoveryURLsFromBaseURL(t *testing.T) {
	tests := []struct {
		name, base, tenant   string
		wantIssuer, wantJWKS string
	}{
		{"with a path", "https://id.example.com/oidc", "acme", "https://id.example.com/oidc/acme", "https://id.example.com/oidc/jwks/acme"},
		{"with a trailing slash", "https://id.example.com/oidc/", "acme", "https://id.example.com/oidc/acme", "https://id.example.com/oidc/jwks/acme"},
		{"at the root", "https://id.example.com", "acme", "https://id.example.com/acme", "https://id.example.com/jwks/acme"},
		{"with a port", "http://127.0.0.1:8080/x/oidc", "acme", "http://127.0.0.1:8080/x/oidc/acme", "http://127.0.0.1:8080/x/oidc/jwks/acme"},
		{"another tenant", "https://id.example.com/oidc", "globex", "https://id.example.com/oidc/globex", "https://id.example.com/oidc/jwks/globex"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *oidc2fa.Config) { c.BaseURL = tc.base })
			rec, doc := discover(t, e.handler, tc.tenant)
			require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
			assert.Equal(t, tc.wantIssuer, doc["issuer"])
			assert.Equal(t, tc.wantJWKS, doc["jwks_uri"])
			assert.NotContains(t, rec.Body.String(), "evil.example")
		})
	}
}

func TestDiscoveryUnknownTenant(t *testing.T) {
	e := newEnv(t)
	for _, tenant := range []string{"nope", "ACME", "a%20b", "-acme"} {
		t.Run(tenant, func(t *testing.T) {
			rec, _ := discover(t, e.handler, tenant)
			assert.Equal(t, http.StatusNotFound, rec.Code)
			rec = httpRecord(e.handler, "GET", "/jwks/"+tenant)
			assert.Equal(t, http.StatusNotFound, rec.Code, "the JWKS of an unknown tenant")
		})
	}
}
