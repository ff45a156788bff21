package oidc2fa_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// pushParams are the parameters of a valid pushed authorization request for ann, with the
// client's credentials for client_secret_post.
func (e *env) pushParams() url.Values {
	p := e.authParams()
	p.Set("client_secret", e.secret)
	return p
}

// push sends a pushed authorization request to tenant acme; basic, when not nil, is sent as
// Basic credentials.
func (e *env) push(form url.Values, basic *[2]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/par/acme", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic != nil {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return rec
}

// pushed pushes form and returns the request_uri.
func (e *env) pushed(form url.Values) string {
	e.t.Helper()
	rec := e.push(form, nil)
	require.Equal(e.t, http.StatusCreated, rec.Code, "body: %s", rec.Body)
	var resp struct {
		RequestURI string `json:"request_uri"`
	}
	require.NoError(e.t, json.Unmarshal(rec.Body.Bytes(), &resp))
	return resp.RequestURI
}

// parURL is the authorization URL that brings requestURI, as a client sends the browser to it.
func (e *env) parURL(requestURI string) string {
	return "/authorize/acme?" + url.Values{"client_id": {e.client.ID}, "request_uri": {requestURI}}.Encode()
}

// recordingPushed is the provider's PushedRequests with a copy of every request stored.
type recordingPushed struct {
	store.PushedRequests
	mu     sync.Mutex
	stored []store.PushedRequest
}

func (rp *recordingPushed) Create(ctx context.Context, r store.PushedRequest) error {
	rp.mu.Lock()
	rp.stored = append(rp.stored, r)
	rp.mu.Unlock()
	return rp.PushedRequests.Create(ctx, r)
}

func TestPARResponse(t *testing.T) {
	var rec *recordingPushed
	e := newEnv(t, func(c *oidc2fa.Config) {
		rec = &recordingPushed{PushedRequests: c.Pushed}
		c.Pushed = rec
	})
	for _, method := range []string{"post", "basic"} {
		t.Run(method, func(t *testing.T) {
			form, basic := e.pushParams(), (*[2]string)(nil)
			if method == "basic" {
				form.Del("client_secret")
				basic = &[2]string{e.client.ID, e.secret}
			}
			res := e.push(form, basic)
			require.Equal(t, http.StatusCreated, res.Code, "body: %s", res.Body)
			requireNoStore(t, res)
			var body map[string]any
			require.NoError(t, json.Unmarshal(res.Body.Bytes(), &body))
			assert.Equal(t, []string{"expires_in", "request_uri"}, slices.Sorted(maps.Keys(body)))
			assert.Equal(t, float64(90), body["expires_in"], "90 seconds by default")
			ref, _ := body["request_uri"].(string)
			token, ok := strings.CutPrefix(ref, "urn:ietf:params:oauth:request_uri:")
			require.True(t, ok, "request_uri %q", ref)
			assert.Regexp(t, `^[A-Za-z0-9_-]{43}$`, token, "256 random bits, base64url")

			// The store holds only the hash of the random part.
			rec.mu.Lock()
			last := rec.stored[len(rec.stored)-1]
			rec.mu.Unlock()
			assert.Equal(t, sha256.Sum256([]byte(token)), last.Hash)
			assert.NotContains(t, strings.Join([]string{last.State, last.Nonce, last.LoginHint, last.RedirectURI, last.Challenge}, " "), token)
			assert.Equal(t, e.client.ID, last.ClientID)
			assert.Equal(t, "ann@example.com", last.LoginHint)
			assert.Equal(t, e.clock.Now().Add(90*time.Second), last.Expires)
		})
	}
	t.Run("two pushes give two request_uris", func(t *testing.T) {
		assert.NotEqual(t, e.pushed(e.pushParams()), e.pushed(e.pushParams()))
	})
}

func TestPARLifetime(t *testing.T) {
	e := newEnv(t, func(c *oidc2fa.Config) { c.PushedRequestLifetime = 30 * time.Second })
	res := e.push(e.pushParams(), nil)
	require.Equal(t, http.StatusCreated, res.Code, "body: %s", res.Body)
	assert.Contains(t, res.Body.String(), `"expires_in":30`)

	for _, d := range []time.Duration{-time.Second, 10*time.Minute + time.Second} {
		mem := newEnv(t).mem.Backend()
		_, err := oidc2fa.New(oidc2fa.Config{
			Tenants: mem.Tenants, Users: mem.Users, Clients: mem.Clients, Codes: mem.Codes, Interactions: mem.Interactions,
			Pushed: mem.Pushed, Authenticator: newEnv(t).auth, Signer: newEnv(t).keys, BaseURL: testBase,
			PushedRequestLifetime: d,
		})
		assert.Error(t, err, "PushedRequestLifetime %s", d)
	}
}

func TestPARClientAuthentication(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name      string
		change    func(url.Values)
		basic     *[2]string
		status    int
		code      string
		challenge bool // WWW-Authenticate expected
	}{
		{"no authentication", func(p url.Values) { p.Del("client_secret") }, nil, 401, "invalid_client", false},
		{"wrong secret in the form", func(p url.Values) { p.Set("client_secret", "secret_wrong") }, nil, 401, "invalid_client", false},
		{"unknown client", func(p url.Values) { p.Set("client_id", "client_unknown") }, nil, 401, "invalid_client", false},
		{"wrong secret as Basic", func(p url.Values) { p.Del("client_secret") }, &[2]string{"", "secret_wrong"}, 401, "invalid_client", true},
		{"two methods", func(url.Values) {}, &[2]string{"", ""}, 400, "invalid_request", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			form := e.pushParams()
			tc.change(form)
			basic := tc.basic
			if basic != nil {
				basic = &[2]string{e.client.ID, tc.basic[1]}
				if basic[1] == "" {
					basic[1] = e.secret
				}
			}
			rec := e.push(form, basic)
			requireTokenError(t, rec, tc.status, tc.code)
			if tc.challenge {
				assert.Equal(t, `Basic realm="`+testBase+`/acme"`, rec.Header().Get("WWW-Authenticate"))
			}
			assert.Empty(t, rec.Header().Values("Location"), "never a redirect")
		})
	}
}

func TestPARRequestErrors(t *testing.T) {
	tests := []struct {
		name   string
		change func(url.Values)
		code   string
	}{
		{"request_uri inside", func(p url.Values) { p.Set("request_uri", "urn:ietf:params:oauth:request_uri:abc") }, "invalid_request"},
		{"request object", func(p url.Values) { p.Set("request", "eyJhbGciOiJub25lIn0.e30.") }, "request_not_supported"},
		{"redirect_uri missing", func(p url.Values) { p.Del("redirect_uri") }, "invalid_request"},
		{"redirect_uri not registered", func(p url.Values) { p.Set("redirect_uri", "https://evil.example/cb") }, "invalid_request"},
		{"response_type token", func(p url.Values) { p.Set("response_type", "token") }, "unsupported_response_type"},
		{"scope without 2fa", func(p url.Values) { p.Set("scope", "openid") }, "invalid_scope"},
		{"prompt none", func(p url.Values) { p.Set("prompt", "none") }, "login_required"},
		{"code_challenge missing", func(p url.Values) { p.Del("code_challenge") }, "invalid_request"},
		{"code_challenge_method plain", func(p url.Values) { p.Set("code_challenge_method", "plain") }, "invalid_request"},
		{"state missing", func(p url.Values) { p.Del("state") }, "invalid_request"},
		{"nonce missing", func(p url.Values) { p.Del("nonce") }, "invalid_request"},
		{"login_hint missing", func(p url.Values) { p.Del("login_hint") }, "invalid_request"},
		{"state of 513 bytes", func(p url.Values) { p.Set("state", strings.Repeat("s", 513)) }, "invalid_request"},
		{"nonce of 513 bytes", func(p url.Values) { p.Set("nonce", strings.Repeat("n", 513)) }, "invalid_request"},
		{"login_hint of 513 bytes", func(p url.Values) { p.Set("login_hint", strings.Repeat("h", 513)) }, "invalid_request"},
		{"NUL in state", func(p url.Values) { p.Set("state", "st\x00") }, "invalid_request"},
		{"invalid UTF-8 in login_hint", func(p url.Values) { p.Set("login_hint", "ann\xff@example.com") }, "invalid_request"},
		{"NUL in client_id", func(p url.Values) { p.Set("client_id", "client\x00") }, "invalid_request"},
		{"state twice", func(p url.Values) { p.Add("state", "again") }, "invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rec *recordingPushed
			e := newEnv(t, func(c *oidc2fa.Config) {
				rec = &recordingPushed{PushedRequests: c.Pushed}
				c.Pushed = rec
			})
			form := e.pushParams()
			tc.change(form)
			res := e.push(form, nil)
			requireTokenError(t, res, http.StatusBadRequest, tc.code)
			assert.Empty(t, res.Header().Values("Location"), "never a redirect")
			assert.Empty(t, rec.stored, "nothing stored")
		})
	}
}

func TestPARFlow(t *testing.T) {
	e := newEnv(t)
	form := e.pushParams()
	form.Set("state", "pushed-state")
	form.Set("nonce", "pushed-nonce")
	ref := e.pushed(form)

	// The browser adds and changes parameters: all are ignored, the pushed request stands.
	target := e.parURL(ref) + "&" + url.Values{
		"login_hint": {"bob@example.com"}, "state": {"browser-state"}, "nonce": {"browser-nonce"},
		"redirect_uri": {"http://127.0.0.1:8081/callback"}, "scope": {"openid"}, "prompt": {"none"},
		"code_challenge": {"x"},
	}.Encode()
	q := callback(t, e.browser().follow("GET", target, nil))
	assert.Equal(t, "pushed-state", q.Get("state"))
	assert.Equal(t, testBase+"/acme", q.Get("iss"))
	require.NotEmpty(t, q.Get("code"), "callback: %v", q)

	_, claims := decodeJWT(t, e.redeem(q.Get("code")))
	assert.Equal(t, e.user.ID, claims["sub"], "the pushed login_hint's user, not the browser's")
	assert.Equal(t, "ann@example.com", claims["preferred_username"])
	assert.Equal(t, "pushed-nonce", claims["nonce"])
}

func TestPARByPOST(t *testing.T) {
	e := newEnv(t)
	ref := e.pushed(e.pushParams())
	rec := e.browser().follow("POST", "/authorize/acme", url.Values{"client_id": {e.client.ID}, "request_uri": {ref}})
	q := callback(t, rec)
	assert.NotEmpty(t, q.Get("code"))
}

func TestPARRequestURIRefused(t *testing.T) {
	tests := []struct {
		name   string
		target func(e *env) string
	}{
		{"used", func(e *env) string {
			ref := e.pushed(e.pushParams())
			callback(t, e.browser().follow("GET", e.parURL(ref), nil))
			return e.parURL(ref)
		}},
		{"expired", func(e *env) string {
			ref := e.pushed(e.pushParams())
			e.clock.Advance(90 * time.Second)
			return e.parURL(ref)
		}},
		{"unknown", func(e *env) string {
			return e.parURL("urn:ietf:params:oauth:request_uri:" + randomCode())
		}},
		{"malformed", func(e *env) string {
			return e.parURL("urn:ietf:params:oauth:request_uri:short")
		}},
		{"another client's", func(e *env) string {
			ref := e.pushed(e.pushParams())
			_, other, err := oidc2fa.RegisterClient(context.Background(), e.mem.Backend().Clients, oidc2fa.ClientSpec{
				Tenant: "acme", Name: "Other", RedirectURIs: []string{testRedirect}})
			require.NoError(t, err)
			return "/authorize/acme?" + url.Values{"client_id": {other.ID}, "request_uri": {ref}}.Encode()
		}},
		{"given twice", func(e *env) string {
			ref := e.pushed(e.pushParams())
			return e.parURL(ref) + "&request_uri=" + url.QueryEscape(ref)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			rec := e.browser().do("GET", tc.target(e), nil)
			requirePage(t, rec, http.StatusBadRequest)
			assert.Empty(t, rec.Result().Cookies(), "no interaction is started")
		})
	}
}

func TestPARJustBeforeExpiry(t *testing.T) {
	e := newEnv(t)
	ref := e.pushed(e.pushParams())
	e.clock.Advance(89 * time.Second)
	assert.NotEmpty(t, callback(t, e.browser().follow("GET", e.parURL(ref), nil)).Get("code"))
}

func TestPARAnotherClientLeavesItToItsOwner(t *testing.T) {
	e := newEnv(t)
	ref := e.pushed(e.pushParams())
	_, other, err := oidc2fa.RegisterClient(context.Background(), e.mem.Backend().Clients, oidc2fa.ClientSpec{
		Tenant: "acme", Name: "Other", RedirectURIs: []string{testRedirect}})
	require.NoError(t, err)
	rec := e.browser().do("GET", "/authorize/acme?"+url.Values{"client_id": {other.ID}, "request_uri": {ref}}.Encode(), nil)
	requirePage(t, rec, http.StatusBadRequest)
	assert.NotEmpty(t, callback(t, e.browser().follow("GET", e.parURL(ref), nil)).Get("code"),
		"the request is still there for the client that pushed it")
}

func TestPARAnotherTenant(t *testing.T) {
	e := newEnv(t)
	ref := e.pushed(e.pushParams())
	rec := e.browser().do("GET", "/authorize/globex?"+url.Values{"client_id": {e.client.ID}, "request_uri": {ref}}.Encode(), nil)
	requirePage(t, rec, http.StatusBadRequest)
}

func TestPARSingleUseUnderConcurrency(t *testing.T) {
	e := newEnv(t)
	ref := e.pushed(e.pushParams())
	const n = 20
	results := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("GET", e.parURL(ref), nil)
			req.RemoteAddr = "192.0.2.77:1234"
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			results <- rec.Code
		}()
	}
	wg.Wait()
	close(results)
	counts := map[int]int{}
	for c := range results {
		counts[c]++
	}
	assert.Equal(t, map[int]int{http.StatusSeeOther: 1, http.StatusBadRequest: n - 1}, counts)
}

func TestPARRequired(t *testing.T) {
	t.Run("provider-wide", func(t *testing.T) {
		e := newEnv(t, func(c *oidc2fa.Config) { c.RequirePAR = true })
		q := requireAuthError(t, e.sendAuthorize("GET", "acme", e.authParams()), "invalid_request", "st-123")
		assert.Equal(t, "pushed authorization request required", q.Get("error_description"))
		assert.NotEmpty(t, callback(t, e.browser().follow("GET", e.parURL(e.pushed(e.pushParams())), nil)).Get("code"))

		_, doc := discover(t, e.handler, "acme")
		assert.Equal(t, true, doc["require_pushed_authorization_requests"])
	})
	t.Run("per client", func(t *testing.T) {
		e := newEnv(t)
		_, err := oidc2fa.SetRequirePAR(context.Background(), e.mem.Backend().Clients, "acme", e.client.ID, true)
		require.NoError(t, err)
		requireAuthError(t, e.sendAuthorize("GET", "acme", e.authParams()), "invalid_request", "st-123")
		assert.NotEmpty(t, callback(t, e.browser().follow("GET", e.parURL(e.pushed(e.pushParams())), nil)).Get("code"))

		// Another client without the setting still sends plain requests.
		secret, other, err := oidc2fa.RegisterClient(context.Background(), e.mem.Backend().Clients, oidc2fa.ClientSpec{
			Tenant: "acme", Name: "Plain", RedirectURIs: []string{testRedirect}})
		require.NoError(t, err)
		_ = secret
		p := e.authParams()
		p.Set("client_id", other.ID)
		assert.NotEmpty(t, callback(t, e.browser().follow("GET", "/authorize/acme?"+p.Encode(), nil)).Get("code"))

		_, doc := discover(t, e.handler, "acme")
		assert.Equal(t, false, doc["require_pushed_authorization_requests"], "required of one client, not of all")
	})
	t.Run("registered with it", func(t *testing.T) {
		e := newEnv(t)
		_, c, err := oidc2fa.RegisterClient(context.Background(), e.mem.Backend().Clients, oidc2fa.ClientSpec{
			Tenant: "acme", Name: "Strict", RedirectURIs: []string{testRedirect}, RequirePAR: true})
		require.NoError(t, err)
		assert.True(t, c.RequirePAR)
		p := e.authParams()
		p.Set("client_id", c.ID)
		requireAuthError(t, e.sendAuthorize("GET", "acme", p), "invalid_request", "st-123")
	})
}

func TestPARDiscovery(t *testing.T) {
	e := newEnv(t)
	_, doc := discover(t, e.handler, "acme")
	assert.Equal(t, testBase+"/par/acme", doc["pushed_authorization_request_endpoint"])
	assert.Equal(t, false, doc["require_pushed_authorization_requests"])
	assert.Equal(t, false, doc["request_uri_parameter_supported"], "request objects are never fetched from a URL")

	t.Run("without a store for pushed requests", func(t *testing.T) {
		e := newEnv(t, func(c *oidc2fa.Config) { c.Pushed = nil })
		_, doc := discover(t, e.handler, "acme")
		assert.NotContains(t, doc, "pushed_authorization_request_endpoint")
		assert.Equal(t, http.StatusNotFound, e.push(e.pushParams(), nil).Code)

		b := e.mem.Backend()
		_, err := oidc2fa.New(oidc2fa.Config{
			Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
			Authenticator: e.auth, Signer: e.keys, BaseURL: testBase, RequirePAR: true,
		})
		assert.ErrorContains(t, err, "RequirePAR")
	})
}

// TestTamperedLoginHint is the attack of a stolen first factor: the browser edits login_hint in
// the authorization URL to name another user of the tenant, whose second factor the attacker
// can pass. With PAR the edit is ignored; without it, the ID token names the user who passed,
// so the relying party can see that it is not the user of its first factor.
func TestTamperedLoginHint(t *testing.T) {
	ctx := context.Background()
	t.Run("with PAR the edit is ignored", func(t *testing.T) {
		e := newEnv(t)
		e.manual()
		b := e.browser()
		ref := e.pushed(e.pushParams())
		path, page := b.start(url.Values{"client_id": {e.client.ID}, "request_uri": {ref}, "login_hint": {"mallory@example.com"}})
		assert.Contains(t, page.Body.String(), "User: ann@example.com", "the login pages are for the pushed user")
		q := callback(t, b.decide(path, csrfToken(t, page), "approve"))
		_, claims := decodeJWT(t, e.redeem(q.Get("code")))
		assert.Equal(t, e.user.ID, claims["sub"])
		assert.Equal(t, "ann@example.com", claims["preferred_username"])
	})
	t.Run("without PAR the token names who passed", func(t *testing.T) {
		e := newEnv(t)
		mallory, err := e.mem.Backend().Users.Create(ctx, "acme", store.User{UserName: "mallory@example.com", Active: true,
			Emails: []store.MultiValue{{Value: "mallory@example.com", Primary: true}}})
		require.NoError(t, err)
		p := e.authParams()
		p.Set("login_hint", "mallory@example.com") // edited in the browser
		_, claims := decodeJWT(t, e.redeem(e.codeFor(p)))
		assert.Equal(t, mallory.ID, claims["sub"])
		assert.Equal(t, "mallory@example.com", claims["preferred_username"], "not ann: the relying party's check fails")
		assert.Equal(t, "mallory@example.com", claims["email"])
	})
}

// TestPARLogsNoSecrets checks that neither the request_uri nor the client secret reaches the log.
func TestPARLogsNoSecrets(t *testing.T) {
	var buf bytes.Buffer // the handler runs on the test goroutine
	e := newEnv(t, func(c *oidc2fa.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	ref := e.pushed(e.pushParams())
	callback(t, e.browser().follow("GET", e.parURL(ref), nil))
	e.browser().do("GET", e.parURL(ref), nil) // refused: used
	token := strings.TrimPrefix(ref, "urn:ietf:params:oauth:request_uri:")
	assert.NotContains(t, buf.String(), token)
	assert.NotContains(t, buf.String(), e.secret)
	assert.Contains(t, buf.String(), "request_uri refused")
}
