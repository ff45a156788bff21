package oidc2fa_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// useClient registers a client of acme as spec says (name and redirect URIs filled in) and
// makes it the env's client, whose requests authParams and tokenForm build.
func (e *env) useClient(spec oidc2fa.ClientSpec) {
	e.t.Helper()
	spec.Tenant, spec.Name, spec.RedirectURIs = "acme", "Client "+spec.IDTokenAlg, []string{testRedirect}
	secret, c, err := oidc2fa.RegisterClient(context.Background(), e.mem.Clients(), spec)
	require.NoError(e.t, err)
	e.client, e.secret = c, secret
}

// jwksPublicKeys fetches the tenant's JWKS from h and returns its keys, whatever their type.
func jwksPublicKeys(t testing.TB, h http.Handler, tenant string) []oidc2fa.PublicKey {
	t.Helper()
	rec := httpRecord(h, "GET", "/jwks/"+tenant)
	require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
	var set struct {
		Keys []struct{ Kty, Crv, Alg, Use, KID, X, Y, N, E, D string }
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &set))
	b64 := func(s string) *big.Int {
		b, err := base64.RawURLEncoding.DecodeString(s)
		require.NoError(t, err)
		return new(big.Int).SetBytes(b)
	}
	var keys []oidc2fa.PublicKey
	for _, k := range set.Keys {
		require.Empty(t, k.D, "no private part")
		require.Equal(t, "sig", k.Use)
		pk := oidc2fa.PublicKey{KID: k.KID, Algorithm: k.Alg}
		switch k.Kty {
		case "OKP":
			require.Equal(t, "Ed25519", k.Crv)
			x, err := base64.RawURLEncoding.DecodeString(k.X)
			require.NoError(t, err)
			pk.Key = ed25519.PublicKey(x)
		case "RSA":
			require.Equal(t, "RS256", k.Alg)
			pk.Key = &rsa.PublicKey{N: b64(k.N), E: int(b64(k.E).Int64())}
		case "EC":
			require.Equal(t, "P-256", k.Crv)
			require.Equal(t, "ES256", k.Alg)
			pk.Key = &ecdsa.PublicKey{Curve: elliptic.P256(), X: b64(k.X), Y: b64(k.Y)}
		default:
			t.Fatalf("JWKS key of kty %q", k.Kty)
		}
		keys = append(keys, pk)
	}
	return keys
}

// A client's ID tokens are signed with the algorithm it registered, verify with the tenant's
// JWKS, and the default stays EdDSA; discovery lists every algorithm.
func TestIDTokenAlgorithmPerClient(t *testing.T) {
	e := newEnv(t)
	defaultToken := e.redeem(e.code())
	header, _ := decodeJWT(t, defaultToken)
	assert.Equal(t, "EdDSA", header["alg"], "a client registered without an algorithm")

	tokens := map[string]string{"default": defaultToken}
	for _, alg := range oidc2fa.SigningAlgorithms() {
		e.useClient(oidc2fa.ClientSpec{IDTokenAlg: alg})
		tok := e.redeem(e.code())
		header, claims := decodeJWT(t, tok)
		assert.Equal(t, alg, header["alg"])
		assert.Equal(t, "JWT", header["typ"])
		assert.Equal(t, e.client.ID, claims["aud"])
		tokens[alg] = tok
	}
	keys := jwksPublicKeys(t, e.handler, "acme")
	assert.Len(t, keys, len(oidc2fa.SigningAlgorithms()), "one key per algorithm in use")
	for alg, tok := range tokens {
		assert.True(t, verifies(t, keys, tok), "%s token verifies with the JWKS", alg)
		tampered := tok[:strings.LastIndexByte(tok, '.')-2] + "AA" + tok[strings.LastIndexByte(tok, '.'):]
		assert.False(t, verifies(t, keys, tampered), "%s: a changed payload does not verify", alg)
	}
	for _, k := range jwksPublicKeys(t, e.handler, "globex") {
		for alg, tok := range tokens {
			assert.False(t, verifies(t, []oidc2fa.PublicKey{k}, tok), "an acme %s token never verifies with globex's JWKS", alg)
		}
	}
}

// RegisterClient and SetIDTokenAlg refuse an algorithm the provider does not sign with, and
// store EdDSA as the default (empty).
func TestIDTokenAlgorithmRegistration(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	for _, alg := range []string{"HS256", "none", "RS512", "eddsa"} {
		_, _, err := oidc2fa.RegisterClient(ctx, e.mem.Clients(), oidc2fa.ClientSpec{Tenant: "acme", Name: "x",
			RedirectURIs: []string{testRedirect}, IDTokenAlg: alg})
		require.ErrorIs(t, err, store.ErrInvalid, alg)
		_, err = oidc2fa.SetIDTokenAlg(ctx, e.mem.Clients(), "acme", e.client.ID, alg)
		require.ErrorIs(t, err, store.ErrInvalid, alg)
	}
	c, err := oidc2fa.SetIDTokenAlg(ctx, e.mem.Clients(), "acme", e.client.ID, "RS256")
	require.NoError(t, err)
	assert.Equal(t, "RS256", c.IDTokenAlg)
	header, _ := decodeJWT(t, e.redeem(e.code()))
	assert.Equal(t, "RS256", header["alg"], "the change applies to the next token")
	c, err = oidc2fa.SetIDTokenAlg(ctx, e.mem.Clients(), "acme", e.client.ID, "EdDSA")
	require.NoError(t, err)
	assert.Empty(t, c.IDTokenAlg, "EdDSA is the default")
	c, err = oidc2fa.SetAccessToken(ctx, e.mem.Clients(), "acme", e.client.ID, true)
	require.NoError(t, err)
	assert.True(t, c.AccessToken)
}

// A plain Signer (no AlgorithmSigner) signs EdDSA only: discovery says so, and a client that
// asks for another algorithm gets server_error, never a token in the wrong algorithm.
func TestIDTokenAlgorithmPlainSigner(t *testing.T) {
	e := newEnv(t, func(c *oidc2fa.Config) { c.Signer = plainSigner{c.Signer} })
	rec := httpRecord(e.handler, "GET", "/acme/.well-known/openid-configuration")
	require.Equal(t, http.StatusOK, rec.Code)
	var doc struct {
		Algs []string `json:"id_token_signing_alg_values_supported"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	assert.Equal(t, []string{"EdDSA"}, doc.Algs)
	e.useClient(oidc2fa.ClientSpec{IDTokenAlg: "RS256"})
	tok := e.postToken(e.tokenForm(e.code()), nil)
	assert.Equal(t, http.StatusInternalServerError, tok.Code)
	assert.Contains(t, tok.Body.String(), `"server_error"`)
	assert.NotContains(t, tok.Body.String(), "id_token\"")
}

// plainSigner hides every method of a Signer but Sign and Keys.
type plainSigner struct{ s oidc2fa.Signer }

func (p plainSigner) Sign(ctx context.Context, tenant string, payload []byte) (string, error) {
	return p.s.Sign(ctx, tenant, payload)
}

func (p plainSigner) Keys(ctx context.Context, tenant string) ([]oidc2fa.PublicKey, error) {
	return p.s.Keys(ctx, tenant)
}

// tokenResponse redeems code and returns the token response's members.
func (e *env) tokenResponse(code string) map[string]any {
	e.t.Helper()
	rec := e.postToken(e.tokenForm(code), nil)
	require.Equal(e.t, http.StatusOK, rec.Code, "body: %s", rec.Body)
	var resp map[string]any
	require.NoError(e.t, json.Unmarshal(rec.Body.Bytes(), &resp))
	return resp
}

// userinfo calls the UserInfo endpoint of tenant with the Authorization header auth.
func (e *env) userinfo(method, tenant, auth string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, "/userinfo/"+tenant, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return rec
}

// A client registered with AccessToken gets an opaque access token, Bearer, for at most five
// minutes, good at the tenant's UserInfo endpoint only, which returns sub and the ID token's
// identity claims. Clients without the option get exactly the ID-token-only response.
func TestAccessTokenUserInfo(t *testing.T) {
	e := newEnvAccess(t)

	plain := e.tokenResponse(e.code())
	assert.ElementsMatch(t, []string{"id_token", "token_type", "expires_in"}, keysOf(plain), "no access token without the option")
	assert.Equal(t, float64(3600), plain["expires_in"])

	e.useClient(oidc2fa.ClientSpec{AccessToken: true})
	resp := e.tokenResponse(e.code())
	assert.ElementsMatch(t, []string{"id_token", "access_token", "token_type", "expires_in"}, keysOf(resp))
	assert.Equal(t, "Bearer", resp["token_type"])
	assert.Equal(t, float64(300), resp["expires_in"], "the access token's lifetime")
	at := resp["access_token"].(string)
	raw, err := base64.RawURLEncoding.DecodeString(at)
	require.NoError(t, err, "opaque: 256 random bits, base64url")
	assert.Len(t, raw, 32)
	_, idClaims := decodeJWT(t, resp["id_token"].(string))

	for _, method := range []string{"GET", "POST"} {
		rec := e.userinfo(method, "acme", "Bearer "+at)
		require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
		assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
		assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json"))
		var info map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &info))
		assert.Equal(t, map[string]any{"sub": e.user.ID, "preferred_username": "ann@example.com",
			"email": "ann.lee@example.com"}, info)
		for claim, v := range info {
			assert.Equal(t, v, idClaims[claim], "the ID token carries the same %s", claim)
		}
	}

	// What it is not good for.
	for name, rec := range map[string]*httptest.ResponseRecorder{
		"another tenant":   e.userinfo("GET", "globex", "Bearer "+at),
		"an unknown token": e.userinfo("GET", "acme", "Bearer "+strings.Repeat("A", 43)),
	} {
		assert.Equal(t, http.StatusUnauthorized, rec.Code, name)
		assert.Contains(t, rec.Header().Get("WWW-Authenticate"), `error="invalid_token"`, name)
	}
	rec := e.userinfo("GET", "acme", "")
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Equal(t, `Bearer realm="`+testBase+`/acme"`, rec.Header().Get("WWW-Authenticate"), "no token: no error code (RFC 6750 §3.1)")
	rec = e.userinfo("GET", "acme", "Basic "+base64.StdEncoding.EncodeToString([]byte("a:b")))
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	rec = e.userinfo("DELETE", "acme", "Bearer "+at)
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	req := httptest.NewRequest("POST", "/token/acme", strings.NewReader("grant_type=refresh_token&refresh_token="+at))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+at)
	tok := httptest.NewRecorder()
	e.handler.ServeHTTP(tok, req)
	assert.Equal(t, http.StatusUnauthorized, tok.Code, "the access token does not authenticate a client: %s", tok.Body)

	// A deactivated user's token stops working at once.
	_, err = e.mem.Users().Update(context.Background(), "acme", e.user.ID, func(u *store.User) error {
		u.Active = false
		return nil
	})
	require.NoError(t, err)
	rec = e.userinfo("GET", "acme", "Bearer "+at)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
}

// An access token expires after AccessTokenLifetime; the sweep removes it.
func TestAccessTokenExpires(t *testing.T) {
	e := newEnvAccess(t)
	e.useClient(oidc2fa.ClientSpec{AccessToken: true})
	at := e.tokenResponse(e.code())["access_token"].(string)
	e.clock.Advance(oidc2fa.DefaultAccessTokenLifetime - time.Second)
	assert.Equal(t, http.StatusOK, e.userinfo("GET", "acme", "Bearer "+at).Code)
	e.clock.Advance(time.Second)
	rec := e.userinfo("GET", "acme", "Bearer "+at)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Contains(t, rec.Header().Get("WWW-Authenticate"), `error="invalid_token"`)
	n, err := e.mem.AccessTokens().DeleteExpired(context.Background(), e.clock.Now().Add(time.Nanosecond))
	require.NoError(t, err)
	assert.Equal(t, 1, n)

	_, err = oidc2fa.New(oidc2fa.Config{AccessTokenLifetime: 6 * time.Minute})
	assert.Error(t, err)
}

// A replayed code revokes the access token its first redemption issued (RFC 6749 §4.1.2).
func TestAccessTokenRevokedByCodeReplay(t *testing.T) {
	e := newEnvAccess(t)
	e.useClient(oidc2fa.ClientSpec{AccessToken: true})
	code := e.code()
	at := e.tokenResponse(code)["access_token"].(string)
	other := e.tokenResponse(e.code())["access_token"].(string)
	require.Equal(t, http.StatusOK, e.userinfo("GET", "acme", "Bearer "+at).Code)

	replay := e.postToken(e.tokenForm(code), nil)
	assert.Equal(t, http.StatusBadRequest, replay.Code)
	assert.Contains(t, replay.Body.String(), `"invalid_grant"`)
	assert.Equal(t, http.StatusUnauthorized, e.userinfo("GET", "acme", "Bearer "+at).Code, "revoked by the replay")
	assert.Equal(t, http.StatusOK, e.userinfo("GET", "acme", "Bearer "+other).Code, "another code's token stays")
}

// Discovery lists userinfo_endpoint when the provider stores access tokens; without a store
// the endpoint is 404, and a client with the option gets server_error, never a half response.
func TestAccessTokenDiscoveryAndMissingStore(t *testing.T) {
	endpoint := func(e *env) any {
		rec := httpRecord(e.handler, "GET", "/acme/.well-known/openid-configuration")
		require.Equal(t, http.StatusOK, rec.Code)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
		return doc["userinfo_endpoint"]
	}
	assert.Equal(t, testBase+"/userinfo/acme", endpoint(newEnvAccess(t)))

	e := newEnv(t)
	assert.Nil(t, endpoint(e))
	assert.Equal(t, http.StatusNotFound, e.userinfo("GET", "acme", "Bearer x").Code)
	e.useClient(oidc2fa.ClientSpec{AccessToken: true})
	rec := e.postToken(e.tokenForm(e.code()), nil)
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Contains(t, rec.Body.String(), `"server_error"`)
	assert.NotContains(t, rec.Body.String(), "id_token\"")
}

// envAccessTokens, set as Config.AccessTokens by a configure function, stands for the env's own
// memstore access tokens, which newEnv puts in its place.
type envAccessTokens struct{ store.AccessTokens }

// newEnvAccess is an env whose provider stores access tokens in the env's memstore.
func newEnvAccess(t *testing.T) *env {
	t.Helper()
	return newEnv(t, func(c *oidc2fa.Config) { c.AccessTokens = envAccessTokens{} })
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The JWKS renders RSA and P-256 keys as RFC 7518 §6 says, beside the OKP ones.
func TestJWKSKeyTypes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, alg := range oidc2fa.SigningAlgorithms() {
		_, err := e.keys.SignWith(ctx, "acme", alg, []byte(`{}`))
		require.NoError(t, err)
	}
	rec := httpRecord(e.handler, "GET", "/jwks/acme")
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &set))
	byAlg := map[string]map[string]any{}
	for _, k := range set.Keys {
		byAlg[k["alg"].(string)] = k
	}
	require.Len(t, byAlg, 4)
	assert.Equal(t, "OKP", byAlg["EdDSA"]["kty"])
	assert.Equal(t, "OKP", byAlg["Ed25519"]["kty"])
	assert.Equal(t, "RSA", byAlg["RS256"]["kty"])
	assert.Equal(t, "AQAB", byAlg["RS256"]["e"])
	n, err := base64.RawURLEncoding.DecodeString(byAlg["RS256"]["n"].(string))
	require.NoError(t, err)
	assert.Len(t, n, 256, "a 2048-bit modulus")
	assert.Equal(t, "EC", byAlg["ES256"]["kty"])
	assert.Equal(t, "P-256", byAlg["ES256"]["crv"])
	for _, c := range []string{"x", "y"} {
		b, err := base64.RawURLEncoding.DecodeString(byAlg["ES256"][c].(string))
		require.NoError(t, err)
		assert.Len(t, b, 32)
	}
}
