package oidc2fa_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// requireNoStore checks the caching headers every token endpoint answer carries.
func requireNoStore(t testing.TB, rec *httptest.ResponseRecorder) {
	t.Helper()
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	assert.Equal(t, "no-cache", rec.Header().Get("Pragma"))
	assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json"), "Content-Type %q", rec.Header().Get("Content-Type"))
}

// requireTokenError checks a token endpoint error (RFC 6749 §5.2): the status, a JSON object of
// exactly error and error_description, and the caching headers.
func requireTokenError(t testing.TB, rec *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	assert.Equal(t, status, rec.Code, "body: %s", rec.Body)
	requireNoStore(t, rec)
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), "body: %s", rec.Body)
	assert.Equal(t, []string{"error", "error_description"}, slices.Sorted(maps.Keys(body)))
	assert.Equal(t, code, body["error"])
	assert.NotEmpty(t, body["error_description"])
}

// requireIDTokenResponse checks a successful token answer.
func requireIDTokenResponse(t testing.TB, rec *httptest.ResponseRecorder) {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
	requireNoStore(t, rec)
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	assert.NotEmpty(t, body["id_token"])
}

// tokenRequest builds a token request from a form body and headers.
func tokenRequest(tenant, contentType, body string, header http.Header) *http.Request {
	req := httptest.NewRequest("POST", "/token/"+tenant, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	return req
}

func (e *env) serve(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return rec
}

// withoutSecret is a token request for code without client_secret.
func (e *env) withoutSecret(code string) url.Values {
	f := e.tokenForm(code)
	f.Del("client_secret")
	return f
}

func TestTokenClientAuthentication(t *testing.T) {
	basic := func(id, secret string) http.Header {
		r := httptest.NewRequest("POST", "/", nil)
		r.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
		return http.Header{"Authorization": r.Header.Values("Authorization")}
	}
	tests := []struct {
		name       string
		tenant     string
		form       func(e *env, code string) url.Values
		header     func(e *env) http.Header
		wantStatus int
		wantError  string
		wantBasic  bool // WWW-Authenticate: Basic
	}{
		{"client_secret_post", "acme", (*env).tokenForm, nil, http.StatusOK, "", false},
		{"client_secret_basic", "acme", (*env).withoutSecret,
			func(e *env) http.Header { return basic(e.client.ID, e.secret) }, http.StatusOK, "", false},
		{"client_secret_basic without client_id in the form", "acme",
			func(e *env, code string) url.Values { f := e.withoutSecret(code); f.Del("client_id"); return f },
			func(e *env) http.Header { return basic(e.client.ID, e.secret) }, http.StatusOK, "", false},
		{"no authentication", "acme", (*env).withoutSecret, nil, http.StatusUnauthorized, "invalid_client", false},
		{"no authentication and no client_id", "acme",
			func(e *env, code string) url.Values { f := e.withoutSecret(code); f.Del("client_id"); return f },
			nil, http.StatusUnauthorized, "invalid_client", false},
		{"wrong secret by Basic", "acme", (*env).withoutSecret,
			func(e *env) http.Header { return basic(e.client.ID, e.secret+"x") }, http.StatusUnauthorized, "invalid_client", true},
		{"empty secret by Basic", "acme", (*env).withoutSecret,
			func(e *env) http.Header { return basic(e.client.ID, "") }, http.StatusUnauthorized, "invalid_client", true},
		{"unknown client by Basic", "acme",
			func(e *env, code string) url.Values { f := e.withoutSecret(code); f.Del("client_id"); return f },
			func(e *env) http.Header { return basic("client_nope", e.secret) }, http.StatusUnauthorized, "invalid_client", true},
		{"Basic and another client_id in the form", "acme",
			func(e *env, code string) url.Values {
				f := e.withoutSecret(code)
				f.Set("client_id", "client_nope")
				return f
			},
			func(e *env) http.Header { return basic(e.client.ID, e.secret) }, http.StatusBadRequest, "invalid_request", false},
		{"Basic with bad percent-encoding", "acme", (*env).withoutSecret,
			func(e *env) http.Header {
				r := httptest.NewRequest("POST", "/", nil)
				r.SetBasicAuth(e.client.ID, "%zz")
				return r.Header
			}, http.StatusUnauthorized, "invalid_client", true},
		{"malformed Basic header", "acme", (*env).withoutSecret,
			func(*env) http.Header { return http.Header{"Authorization": {"Basic !!not-base64!!"}} },
			http.StatusUnauthorized, "invalid_client", true},
		{"wrong secret by post", "acme",
			func(e *env, code string) url.Values {
				f := e.tokenForm(code)
				f.Set("client_secret", e.secret+"x")
				return f
			},
			nil, http.StatusUnauthorized, "invalid_client", false},
		{"empty secret by post", "acme",
			func(e *env, code string) url.Values { f := e.tokenForm(code); f.Set("client_secret", ""); return f },
			nil, http.StatusUnauthorized, "invalid_client", false},
		{"unknown client by post", "acme",
			func(e *env, code string) url.Values {
				f := e.tokenForm(code)
				f.Set("client_id", "client_nope")
				return f
			},
			nil, http.StatusUnauthorized, "invalid_client", false},
		{"client of another tenant", "globex", (*env).tokenForm, nil, http.StatusUnauthorized, "invalid_client", false},
		{"unknown tenant", "nope", (*env).tokenForm, nil, http.StatusUnauthorized, "invalid_client", false},
		{"Basic and post in one request", "acme", (*env).tokenForm,
			func(e *env) http.Header { return basic(e.client.ID, e.secret) }, http.StatusBadRequest, "invalid_request", false},
		{"Basic and post with a wrong Basic secret", "acme", (*env).tokenForm,
			func(e *env) http.Header { return basic(e.client.ID, "wrong") }, http.StatusBadRequest, "invalid_request", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			code := e.code()
			var header http.Header
			if tc.header != nil {
				header = tc.header(e)
			}
			rec := e.serve(tokenRequest(tc.tenant, "application/x-www-form-urlencoded", tc.form(e, code).Encode(), header))
			if tc.wantStatus == http.StatusOK {
				requireIDTokenResponse(t, rec)
				return
			}
			requireTokenError(t, rec, tc.wantStatus, tc.wantError)
			if tc.wantBasic {
				assert.True(t, strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Basic"),
					"WWW-Authenticate %q", rec.Header().Get("WWW-Authenticate"))
			} else {
				assert.Empty(t, rec.Header().Values("WWW-Authenticate"))
			}
			// The client was not authenticated, so the code was not touched.
			requireIDTokenResponse(t, e.postToken(e.tokenForm(code), nil))
		})
	}
}

// TestTokenBasicURLEncoded: client_secret_basic credentials are form-urlencoded before they are
// joined (RFC 6749 §2.3.1), so an id and a secret with ':', '%', '+' and spaces work.
func TestTokenBasicURLEncoded(t *testing.T) {
	e := newEnv(t)
	const id, secret = "client_odd:id %+", "s3cr:t +/%&=é"
	_, err := e.mem.Backend().Clients.Create(context.Background(), store.Client{ID: id, Tenant: "acme", Name: "Odd",
		RedirectURIs: []string{testRedirect}, SecretHash: sha256.Sum256([]byte(secret))})
	require.NoError(t, err)
	params := e.authParams()
	params.Set("client_id", id)
	for _, tc := range []struct {
		name string
		auth func(r *http.Request)
		want int
	}{
		{"encoded", func(r *http.Request) { r.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret)) }, http.StatusOK},
		{"encoded with %20 for spaces", func(r *http.Request) {
			r.SetBasicAuth(strings.ReplaceAll(url.QueryEscape(id), "+", "%20"), strings.ReplaceAll(url.QueryEscape(secret), "+", "%20"))
		}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{"grant_type": {"authorization_code"}, "code": {e.codeFor(params)},
				"redirect_uri": {testRedirect}, "code_verifier": {testVerifier}}
			req := tokenRequest("acme", "application/x-www-form-urlencoded", form.Encode(), nil)
			tc.auth(req)
			requireIDTokenResponse(t, e.serve(req))
		})
	}
}

// TestTokenFailedBasicDoesNotBurnCode is what golang.org/x/oauth2 does when it guesses the auth
// style: Basic first, then, after a 401, the same code with the secret in the body.
func TestTokenFailedBasicDoesNotBurnCode(t *testing.T) {
	e := newEnv(t)
	code := e.code()
	rec := e.postToken(e.withoutSecret(code), &[2]string{e.client.ID, "not-the-secret"})
	requireTokenError(t, rec, http.StatusUnauthorized, "invalid_client")
	assert.NotEmpty(t, rec.Header().Get("WWW-Authenticate"))
	requireIDTokenResponse(t, e.postToken(e.tokenForm(code), nil))
}

func TestTokenInvalidGrant(t *testing.T) {
	challengeOf := func(v string) string {
		sum := sha256.Sum256([]byte(v))
		return base64.RawURLEncoding.EncodeToString(sum[:])
	}
	// codeWithVerifier is a code whose challenge is that of verifier, and a request redeeming it
	// with verifier.
	codeWithVerifier := func(e *env, verifier string) url.Values {
		p := e.authParams()
		p.Set("code_challenge", challengeOf(verifier))
		f := e.tokenForm(e.codeFor(p))
		f.Set("code_verifier", verifier)
		return f
	}
	unreserved := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
	tests := []struct {
		name    string
		request func(t *testing.T, e *env) (tenant string, form url.Values)
		want    int // 0: invalid_grant
	}{
		{"reuse", func(t *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			requireIDTokenResponse(t, e.postToken(f, nil))
			return "acme", f
		}, 0},
		{"reuse 30 s later", func(t *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			requireIDTokenResponse(t, e.postToken(f, nil))
			e.clock.Advance(30 * time.Second)
			return "acme", f
		}, 0},
		{"reuse after a failed redemption", func(t *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			bad := e.tokenForm(f.Get("code"))
			bad.Set("code_verifier", strings.Repeat("a", 43))
			requireTokenError(t, e.postToken(bad, nil), http.StatusBadRequest, "invalid_grant")
			return "acme", f
		}, 0},
		{"59 s old", func(_ *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			e.clock.Advance(59 * time.Second)
			return "acme", f
		}, http.StatusOK},
		{"expired: 60 s old", func(_ *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			e.clock.Advance(60 * time.Second)
			return "acme", f
		}, 0},
		{"expired: 61 s old", func(_ *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			e.clock.Advance(61 * time.Second)
			return "acme", f
		}, 0},
		{"unknown code", func(_ *testing.T, e *env) (string, url.Values) {
			return "acme", e.tokenForm("DoesNotExistDoesNotExistDoesNotExistDoesNot")
		}, 0},
		{"another client's code", func(t *testing.T, e *env) (string, url.Values) {
			secret, other, err := oidc2fa.RegisterClient(context.Background(), e.mem.Backend().Clients, oidc2fa.ClientSpec{
				Tenant: "acme", Name: "Other", RedirectURIs: []string{testRedirect}})
			require.NoError(t, err)
			f := e.tokenForm(e.code())
			f.Set("client_id", other.ID)
			f.Set("client_secret", secret)
			return "acme", f
		}, 0},
		{"a code of another tenant", func(t *testing.T, e *env) (string, url.Values) {
			secret, other, err := oidc2fa.RegisterClient(context.Background(), e.mem.Backend().Clients, oidc2fa.ClientSpec{
				Tenant: "globex", Name: "Globex app", RedirectURIs: []string{testRedirect}})
			require.NoError(t, err)
			f := e.tokenForm(e.code())
			f.Set("client_id", other.ID)
			f.Set("client_secret", secret)
			return "globex", f
		}, 0},
		{"another registered redirect_uri", func(_ *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			f.Set("redirect_uri", "http://127.0.0.1:8081/callback")
			return "acme", f
		}, 0},
		{"redirect_uri with a trailing slash", func(_ *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			f.Set("redirect_uri", testRedirect+"/")
			return "acme", f
		}, 0},
		{"wrong code_verifier", func(_ *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			f.Set("code_verifier", strings.Repeat("b", 64))
			return "acme", f
		}, 0},
		{"the challenge as code_verifier", func(_ *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			f.Set("code_verifier", testChallenge())
			return "acme", f
		}, 0},
		{"missing code_verifier", func(_ *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			f.Del("code_verifier")
			return "acme", f
		}, 0},
		{"empty code_verifier", func(_ *testing.T, e *env) (string, url.Values) {
			f := e.tokenForm(e.code())
			f.Set("code_verifier", "")
			return "acme", f
		}, 0},
		{"code_verifier of 42 characters, matching", func(_ *testing.T, e *env) (string, url.Values) {
			return "acme", codeWithVerifier(e, strings.Repeat("v", 42))
		}, 0},
		{"code_verifier of 1 character, matching", func(_ *testing.T, e *env) (string, url.Values) {
			return "acme", codeWithVerifier(e, "v")
		}, 0},
		{"code_verifier of 129 characters, matching", func(_ *testing.T, e *env) (string, url.Values) {
			return "acme", codeWithVerifier(e, strings.Repeat("v", 129))
		}, 0},
		{"code_verifier with '+', matching", func(_ *testing.T, e *env) (string, url.Values) {
			return "acme", codeWithVerifier(e, strings.Repeat("v", 50)+"+")
		}, 0},
		{"code_verifier with '/', matching", func(_ *testing.T, e *env) (string, url.Values) {
			return "acme", codeWithVerifier(e, "/"+strings.Repeat("v", 50))
		}, 0},
		{"code_verifier with a space, matching", func(_ *testing.T, e *env) (string, url.Values) {
			return "acme", codeWithVerifier(e, strings.Repeat("v", 25)+" "+strings.Repeat("v", 25))
		}, 0},
		{"code_verifier with '=', matching", func(_ *testing.T, e *env) (string, url.Values) {
			return "acme", codeWithVerifier(e, strings.Repeat("v", 50)+"=")
		}, 0},
		{"code_verifier with 'é', matching", func(_ *testing.T, e *env) (string, url.Values) {
			return "acme", codeWithVerifier(e, strings.Repeat("v", 50)+"é")
		}, 0},
		{"code_verifier of 43 unreserved characters", func(_ *testing.T, e *env) (string, url.Values) {
			return "acme", codeWithVerifier(e, unreserved[len(unreserved)-43:])
		}, http.StatusOK},
		{"code_verifier of 128 unreserved characters", func(_ *testing.T, e *env) (string, url.Values) {
			return "acme", codeWithVerifier(e, (unreserved + unreserved)[:128])
		}, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tenant, form := tc.request(t, e)
			rec := e.serve(tokenRequest(tenant, "application/x-www-form-urlencoded", form.Encode(), nil))
			if tc.want == http.StatusOK {
				requireIDTokenResponse(t, rec)
				return
			}
			requireTokenError(t, rec, http.StatusBadRequest, "invalid_grant")
		})
	}
}

func TestTokenRequestErrors(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        func(e *env, code string) string
		wantError   string
	}{
		{"grant_type refresh_token", "application/x-www-form-urlencoded", func(e *env, code string) string {
			f := e.tokenForm(code)
			f.Set("grant_type", "refresh_token")
			f.Set("refresh_token", "rt")
			return f.Encode()
		}, "unsupported_grant_type"},
		{"grant_type client_credentials", "application/x-www-form-urlencoded", func(e *env, code string) string {
			f := e.tokenForm(code)
			f.Set("grant_type", "client_credentials")
			return f.Encode()
		}, "unsupported_grant_type"},
		{"grant_type password", "application/x-www-form-urlencoded", func(e *env, code string) string {
			f := e.tokenForm(code)
			f.Set("grant_type", "password")
			return f.Encode()
		}, "unsupported_grant_type"},
		{"grant_type missing", "application/x-www-form-urlencoded", func(e *env, code string) string {
			f := e.tokenForm(code)
			f.Del("grant_type")
			return f.Encode()
		}, "invalid_request"},
		{"code missing", "application/x-www-form-urlencoded", func(e *env, code string) string {
			f := e.tokenForm(code)
			f.Del("code")
			return f.Encode()
		}, "invalid_request"},
		{"redirect_uri missing", "application/x-www-form-urlencoded", func(e *env, code string) string {
			f := e.tokenForm(code)
			f.Del("redirect_uri")
			return f.Encode()
		}, "invalid_request"},
		{"JSON body", "application/json", func(e *env, code string) string {
			b, _ := json.Marshal(map[string]string{"grant_type": "authorization_code", "code": code, "redirect_uri": testRedirect,
				"code_verifier": testVerifier, "client_id": e.client.ID, "client_secret": e.secret})
			return string(b)
		}, "invalid_request"},
		{"form body labelled as JSON", "application/json", func(e *env, code string) string {
			return e.tokenForm(code).Encode()
		}, "invalid_request"},
		{"no Content-Type", "", func(e *env, code string) string { return e.tokenForm(code).Encode() }, "invalid_request"},
		{"multipart body", "multipart/form-data; boundary=x", func(e *env, code string) string {
			return "--x\r\nContent-Disposition: form-data; name=\"code\"\r\n\r\n" + code + "\r\n--x--\r\n"
		}, "invalid_request"},
		{"code twice", "application/x-www-form-urlencoded", func(e *env, code string) string {
			f := e.tokenForm(code)
			f.Add("code", code)
			return f.Encode()
		}, "invalid_request"},
		{"grant_type twice", "application/x-www-form-urlencoded", func(e *env, code string) string {
			f := e.tokenForm(code)
			f.Add("grant_type", "authorization_code")
			return f.Encode()
		}, "invalid_request"},
		{"code_verifier twice", "application/x-www-form-urlencoded", func(e *env, code string) string {
			f := e.tokenForm(code)
			f.Add("code_verifier", testVerifier)
			return f.Encode()
		}, "invalid_request"},
		{"client_secret twice", "application/x-www-form-urlencoded", func(e *env, code string) string {
			f := e.tokenForm(code)
			f.Add("client_secret", e.secret)
			return f.Encode()
		}, "invalid_request"},
		{"a malformed form", "application/x-www-form-urlencoded", func(e *env, code string) string {
			return e.tokenForm(code).Encode() + "&bad=%zz"
		}, "invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			code := e.code()
			rec := e.serve(tokenRequest("acme", tc.contentType, tc.body(e, code), nil))
			requireTokenError(t, rec, http.StatusBadRequest, tc.wantError)
			// The request was refused before the code was touched.
			requireIDTokenResponse(t, e.postToken(e.tokenForm(code), nil))
		})
	}
}

func TestTokenMethodNotAllowed(t *testing.T) {
	e := newEnv(t)
	for _, method := range []string{"GET", "HEAD", "PUT", "DELETE", "PATCH"} {
		t.Run(method, func(t *testing.T) {
			rec := httpRecord(e.handler, method, "/token/acme?"+e.tokenForm("c").Encode())
			assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
			assert.Equal(t, "POST", rec.Header().Get("Allow"))
		})
	}
}

// TestTokenResponsesNotCached: every answer of the token endpoint, success or error, carries
// Cache-Control: no-store and Pragma: no-cache, and every error is JSON {error,
// error_description}.
func TestTokenResponsesNotCached(t *testing.T) {
	e := newEnv(t)
	code := e.code()
	answers := []struct {
		name   string
		rec    *httptest.ResponseRecorder
		status int
		error  string
	}{
		{"invalid_client", e.postToken(e.withoutSecret(code), nil), http.StatusUnauthorized, "invalid_client"},
		{"invalid_client by Basic", e.postToken(e.withoutSecret(code), &[2]string{e.client.ID, "x"}), http.StatusUnauthorized, "invalid_client"},
		{"invalid_request", e.serve(tokenRequest("acme", "text/plain", "x", nil)), http.StatusBadRequest, "invalid_request"},
		{"unsupported_grant_type", e.postToken(url.Values{"grant_type": {"refresh_token"}, "client_id": {e.client.ID}, "client_secret": {e.secret}}, nil),
			http.StatusBadRequest, "unsupported_grant_type"},
		{"success", e.postToken(e.tokenForm(code), nil), http.StatusOK, ""},
		{"invalid_grant", e.postToken(e.tokenForm(code), nil), http.StatusBadRequest, "invalid_grant"},
	}
	for _, a := range answers {
		t.Run(a.name, func(t *testing.T) {
			if a.status == http.StatusOK {
				requireIDTokenResponse(t, a.rec)
				return
			}
			requireTokenError(t, a.rec, a.status, a.error)
		})
	}
}

func TestTokenSuccessBody(t *testing.T) {
	tests := []struct {
		name     string
		lifetime time.Duration
		want     int64
	}{
		{"default lifetime", 0, 3600},
		{"15 minutes", 15 * time.Minute, 900},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *oidc2fa.Config) { c.IDTokenLifetime = tc.lifetime })
			rec := e.postToken(e.tokenForm(e.code()), nil)
			requireIDTokenResponse(t, rec)
			d := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
			d.UseNumber()
			var body map[string]any
			require.NoError(t, d.Decode(&body))
			assert.Equal(t, []string{"expires_in", "id_token", "token_type"}, slices.Sorted(maps.Keys(body)),
				"an ID token only: no access_token, no refresh_token")
			assert.Equal(t, "Bearer", body["token_type"])
			assert.Equal(t, number(tc.want), body["expires_in"])
			_, claims := decodeJWT(t, body["id_token"].(string))
			exp, _ := claims["exp"].(json.Number).Int64()
			iat, _ := claims["iat"].(json.Number).Int64()
			assert.Equal(t, tc.want, exp-iat)
		})
	}
}

// number is n as a JSON number, as decoded with UseNumber.
func number(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

func TestTokenConcurrentRedemption(t *testing.T) {
	const n = 20
	e := newEnv(t)
	body := e.tokenForm(e.code()).Encode()
	type result struct {
		status int
		body   string
	}
	results := make(chan result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		req := tokenRequest("acme", "application/x-www-form-urlencoded", body, nil)
		wg.Go(func() {
			<-start
			rec := e.serve(req)
			results <- result{rec.Code, rec.Body.String()}
		})
	}
	close(start)
	wg.Wait()
	close(results)
	statuses := map[int]int{}
	for r := range results {
		statuses[r.status]++
		if r.status != http.StatusOK {
			assert.Contains(t, r.body, `"invalid_grant"`)
		}
	}
	assert.Equal(t, map[int]int{http.StatusOK: 1, http.StatusBadRequest: n - 1}, statuses)
}

func TestTokenReplayLogged(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, func(c *oidc2fa.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	code := e.code()
	requireIDTokenResponse(t, e.postToken(e.tokenForm(code), nil))
	requireTokenError(t, e.postToken(e.tokenForm(code), nil), http.StatusBadRequest, "invalid_grant")

	var replays []map[string]any
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "log line %q", line)
		if rec["level"] == "WARN" && strings.Contains(rec["msg"].(string), "replayed") {
			replays = append(replays, rec)
		}
	}
	require.Len(t, replays, 1, "logs: %s", logs.String())
	assert.Equal(t, "acme", replays[0]["tenant"])
	assert.Equal(t, e.client.ID, replays[0]["client"])
	assert.NotContains(t, logs.String(), code, "the code is never logged")
	assert.NotContains(t, logs.String(), e.secret, "the secret is never logged")
	assert.NotContains(t, logs.String(), testVerifier, "the verifier is never logged")
}

func TestIDTokenClaims(t *testing.T) {
	tests := []struct {
		name      string
		methods   []string // what the authenticator reports
		configAMR []string // Config.AMR
		wantAMR   []any
	}{
		{"amr as the authenticator reports it", nil, nil, []any{"test"}},
		{"amr of several methods", []string{"swk", "user"}, nil, []any{"swk", "user"}},
		{"Config.AMR overrides", []string{"swk", "user"}, []string{"mfa", "pwd"}, []any{"mfa", "pwd"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, func(c *oidc2fa.Config) { c.AMR = tc.configAMR })
			e.auth.Methods = tc.methods
			authTime := e.clock.Now()
			code := e.code()
			e.clock.Advance(7 * time.Second) // the token is issued after the login
			issued := e.clock.Now()
			raw := e.redeem(code)

			header, claims := decodeJWT(t, raw)
			assert.Equal(t, "EdDSA", header["alg"])
			assert.NotEmpty(t, header["kid"])
			keys := jwksKeys(t, e.handler, "acme")
			assert.Contains(t, keys, header["kid"], "the kid is in the JWKS")
			assert.True(t, verifiesWith(t, keys, raw), "the signature verifies with the JWKS key")

			assert.Equal(t, []string{"amr", "aud", "auth_time", "email", "exp", "iat", "iss", "nonce", "preferred_username", "sub"},
				slices.Sorted(maps.Keys(claims)), "exactly these claims: no at_hash")
			assert.Equal(t, "ann@example.com", claims["preferred_username"], "the userName, for the relying party to compare")
			assert.Equal(t, "ann.lee@example.com", claims["email"], "the primary email")
			assert.Equal(t, testBase+"/acme", claims["iss"])
			assert.Equal(t, e.user.ID, claims["sub"])
			assert.Equal(t, e.client.ID, claims["aud"])
			assert.Equal(t, number(issued.Unix()), claims["iat"])
			assert.Equal(t, number(issued.Unix()+3600), claims["exp"])
			assert.Equal(t, number(authTime.Unix()), claims["auth_time"])
			assert.Equal(t, "n-456", claims["nonce"])
			assert.Equal(t, tc.wantAMR, claims["amr"])
		})
	}
	t.Run("nonce echoed as sent", func(t *testing.T) {
		e := newEnv(t)
		p := e.authParams()
		const nonce = `a "quoted" nonce <with> & unicode é ✓`
		p.Set("nonce", nonce)
		_, claims := decodeJWT(t, e.redeem(e.codeFor(p)))
		assert.Equal(t, nonce, claims["nonce"])
	})
}

func TestKeyRotation(t *testing.T) {
	e := newEnv(t)
	before := e.redeem(e.code())
	oldHeader, _ := decodeJWT(t, before)

	newKIDs, err := e.keys.Rotate(context.Background())
	require.NoError(t, err)
	require.Len(t, newKIDs, 1)
	newKID := newKIDs[0]
	require.NotEqual(t, oldHeader["kid"], newKID)

	// The new key is published first; it signs once the JWKS a relying party read before the
	// rotation has expired from its cache.
	keys := jwksKeys(t, e.handler, "acme")
	assert.Contains(t, keys, newKID, "published before it signs")
	during := e.redeem(e.code())
	duringHeader, _ := decodeJWT(t, during)
	assert.Equal(t, oldHeader["kid"], duringHeader["kid"], "the old key signs until the rotation delay has passed")

	e.clock.Advance(oidc2fa.DefaultRotationDelay)
	after := e.redeem(e.code())
	newHeader, _ := decodeJWT(t, after)
	assert.Equal(t, newKID, newHeader["kid"], "the new key signs")

	keys = jwksKeys(t, e.handler, "acme")
	assert.Contains(t, keys, oldHeader["kid"])
	assert.Contains(t, keys, newKID)
	assert.True(t, verifiesWith(t, keys, before), "a token signed before the rotation verifies against the JWKS after it")
	assert.True(t, verifiesWith(t, keys, after))

	// Until the old token expires, its key stays published.
	e.clock.Advance(oidc2fa.DefaultIDTokenLifetime - time.Second)
	keys = jwksKeys(t, e.handler, "acme")
	assert.True(t, verifiesWith(t, keys, before), "the old key is published while its tokens are valid")
}

func TestJWKSFormat(t *testing.T) {
	e := newEnv(t)
	_, err := e.keys.Keys(context.Background(), "acme")
	require.NoError(t, err)
	_, err = e.keys.RotateTenant(context.Background(), "acme")
	require.NoError(t, err)
	rec := httpRecord(e.handler, "GET", "/jwks/acme")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json"))
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &set))
	require.Len(t, set.Keys, 2)
	for _, k := range set.Keys {
		assert.Equal(t, "OKP", k["kty"])
		assert.Equal(t, "Ed25519", k["crv"])
		assert.Equal(t, "EdDSA", k["alg"])
		assert.Equal(t, "sig", k["use"])
		assert.NotEmpty(t, k["kid"])
		x, err := base64.RawURLEncoding.DecodeString(k["x"].(string))
		require.NoError(t, err)
		assert.Len(t, x, 32)
		assert.NotContains(t, k, "d", "no private part")
	}
}

func TestCacheMaxAge(t *testing.T) {
	tests := []struct {
		name           string
		configure      func(*oidc2fa.Config)
		discovery, jwk string
	}{
		{"defaults", func(*oidc2fa.Config) {}, "max-age=3600", "max-age=300"},
		{"configured", func(c *oidc2fa.Config) { c.DiscoveryMaxAge = 10 * time.Minute; c.JWKSMaxAge = time.Minute }, "max-age=600", "max-age=60"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.configure)
			d := httpRecord(e.handler, "GET", "/acme/.well-known/openid-configuration")
			require.Equal(t, http.StatusOK, d.Code)
			assert.Contains(t, d.Header().Get("Cache-Control"), tc.discovery)
			j := httpRecord(e.handler, "GET", "/jwks/acme")
			require.Equal(t, http.StatusOK, j.Code)
			assert.Contains(t, j.Header().Get("Cache-Control"), tc.jwk)
			assert.NotContains(t, j.Header().Get("Cache-Control"), "no-store")
		})
	}
}

// recordingCodes keeps what the provider stores.
type recordingCodes struct {
	store.Codes
	mu      sync.Mutex
	created []store.Code
}

func (r *recordingCodes) Create(ctx context.Context, c store.Code) error {
	r.mu.Lock()
	r.created = append(r.created, c)
	r.mu.Unlock()
	return r.Codes.Create(ctx, c)
}

func TestCodes(t *testing.T) {
	tests := []struct {
		name     string
		lifetime time.Duration // Config.CodeLifetime
		want     time.Duration
	}{
		{"default lifetime", 0, 60 * time.Second},
		{"five minutes", 5 * time.Minute, 5 * time.Minute},
		{"the longest", oidc2fa.MaxCodeLifetime, 10 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc := &recordingCodes{}
			e := newEnv(t, func(c *oidc2fa.Config) {
				rc.Codes = c.Codes
				c.Codes = rc
				c.CodeLifetime = tc.lifetime
			})
			p := e.authParams()
			p.Set("redirect_uri", "http://127.0.0.1:8081/callback")
			issued := e.clock.Now()
			loc, err := url.Parse(e.browser().follow("GET", "/authorize/acme?"+p.Encode(), nil).Header().Get("Location"))
			require.NoError(t, err)
			code := loc.Query().Get("code")
			raw, err := base64.RawURLEncoding.DecodeString(code)
			require.NoError(t, err, "code %q", code)
			assert.Len(t, raw, 32, "32 random bytes")

			require.Len(t, rc.created, 1)
			got := rc.created[0]
			assert.Equal(t, sha256.Sum256([]byte(code)), got.Hash, "stored as its SHA-256")
			assert.NotContains(t, fmt.Sprintf("%+v", got), code, "and only so")
			assert.Equal(t, issued.Add(tc.want), got.Expires)
			assert.Equal(t, "acme", got.Tenant)
			assert.Equal(t, e.client.ID, got.ClientID)
			assert.Equal(t, "http://127.0.0.1:8081/callback", got.RedirectURI)
			assert.Equal(t, testChallenge(), got.Challenge)
			assert.Equal(t, "n-456", got.Nonce)
			assert.Equal(t, e.user.ID, got.Subject)
			assert.Equal(t, issued, got.AuthTime)

			e.clock.Advance(tc.want - time.Second)
			f := e.tokenForm(code)
			f.Set("redirect_uri", "http://127.0.0.1:8081/callback")
			requireIDTokenResponse(t, e.postToken(f, nil))
		})
	}
	t.Run("codes differ", func(t *testing.T) {
		e := newEnv(t)
		seen := map[string]bool{}
		for range 10 {
			c := e.code()
			assert.False(t, seen[c])
			seen[c] = true
		}
	})
	for _, bad := range []time.Duration{oidc2fa.MaxCodeLifetime + time.Second, -time.Second} {
		t.Run("lifetime "+bad.String()+" refused", func(t *testing.T) {
			e := newEnv(t)
			b := e.mem.Backend()
			_, err := oidc2fa.New(oidc2fa.Config{Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes,
				Interactions: b.Interactions, Authenticator: e.auth, Signer: e.keys, BaseURL: testBase, CodeLifetime: bad})
			assert.Error(t, err)
		})
	}
}

func TestClientSecretStoredAsHash(t *testing.T) {
	e := newEnv(t)
	stored, err := e.mem.Backend().Clients.Get(context.Background(), "acme", e.client.ID)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(e.secret, "secret_"))
	assert.Equal(t, sha256.Sum256([]byte(e.secret)), stored.SecretHash)
	assert.NotContains(t, fmt.Sprintf("%+v", *stored), e.secret)

	// After a rotation only the new secret works.
	code := e.code()
	newSecret, _, err := oidc2fa.RotateClientSecret(context.Background(), e.mem.Backend().Clients, "acme", e.client.ID, e.clock.Now())
	require.NoError(t, err)
	requireTokenError(t, e.postToken(e.tokenForm(code), nil), http.StatusUnauthorized, "invalid_client")
	f := e.tokenForm(code)
	f.Set("client_secret", newSecret)
	requireIDTokenResponse(t, e.postToken(f, nil))
}

func TestTokenContentTypeParameters(t *testing.T) {
	for _, ct := range []string{
		"application/x-www-form-urlencoded",
		"application/x-www-form-urlencoded; charset=UTF-8",
		"application/x-www-form-urlencoded;charset=utf-8",
		"Application/X-WWW-Form-URLEncoded",
	} {
		t.Run(ct, func(t *testing.T) {
			e := newEnv(t)
			requireIDTokenResponse(t, e.serve(tokenRequest("acme", ct, e.tokenForm(e.code()).Encode(), nil)))
		})
	}
}
