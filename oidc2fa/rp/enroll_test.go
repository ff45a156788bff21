package rp_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/oidc2fa/rp"
	"github.com/visid/visid/store"
)

// enrolled records whom the test authenticator enrolled; the provider calls add on its
// server's goroutines.
type enrolled struct {
	mu       sync.Mutex
	subjects []string
}

func (e *enrolled) add(tenant, subject string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.subjects = append(e.subjects, tenant+"/"+subject)
}

func (e *enrolled) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.subjects...)
}

// newEnrollIDP is an idp that shows its pages, records whom it enrolled, and also has an
// inactive user, bob.
func newEnrollIDP(t *testing.T) (*idp, *enrolled) {
	t.Helper()
	rec := &enrolled{}
	p := newIDP(t, false, func(c *oidc2fa.Config) {
		c.Authenticator.(*authtest.Authenticator).OnEnroll = rec.add
		_, err := c.Users.Create(context.Background(), "acme", store.User{UserName: "bob@example.com", Active: false})
		require.NoError(t, err)
	})
	return p, rec
}

// loginOnly is an Authenticator that cannot enroll: the embedded interface promotes ServeLogin
// and nothing else.
type loginOnly struct{ oidc2fa.Authenticator }

// beginEnroll runs the RP's enrollment handler: EnrollURL for hint. The flight's authURL is the
// enrollment link.
func (e *rpEnv) beginEnroll(hint string) (*flight, error) {
	rec := httptest.NewRecorder()
	target, err := e.rp.EnrollURL(context.Background(), rec, httptest.NewRequest("POST", "https://app.example.com/settings/2fa", nil), hint)
	return &flight{authURL: target, cookies: rec.Result().Cookies()}, err
}

var (
	formAction = regexp.MustCompile(`action="([^"]+)"`)
	csrfField  = regexp.MustCompile(`name="` + oidc2fa.CSRFField + `" value="([^"]+)"`)
)

// enroll sends a fresh browser to the enrollment link: it presses Continue on the link's page,
// then decision ("enroll" or "cancel") on the enroller's page, and stops when the provider sends
// it back to the RP.
func (p *idp) enroll(t *testing.T, f *flight, decision string) {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			if strings.HasPrefix(req.URL.String(), redirectURI) {
				return http.ErrUseLastResponse
			}
			return nil
		}}
	read := func(resp *http.Response, err error) (*http.Response, string) {
		t.Helper()
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		return resp, string(body)
	}

	resp, body := read(browser.Get(f.authURL))
	require.Equal(t, http.StatusOK, resp.StatusCode, "link page: %s", body)
	require.Contains(t, body, ">Continue</button>")
	action := formAction.FindStringSubmatch(body)
	require.NotNil(t, action, "link page: %s", body)

	// Continue POSTs to the link, which sends the browser to the enroller's page.
	resp, body = read(browser.PostForm(p.srv.URL+html.UnescapeString(action[1]), url.Values{}))
	require.Equal(t, http.StatusOK, resp.StatusCode, "enrollment page: %s", body)
	assert.Contains(t, body, p.user.UserName, "the page names the user")
	action = formAction.FindStringSubmatch(body)
	csrf := csrfField.FindStringSubmatch(body)
	require.NotNil(t, action, "enrollment page: %s", body)
	require.NotNil(t, csrf, "enrollment page: %s", body)

	resp, body = read(browser.PostForm(p.srv.URL+html.UnescapeString(action[1]), url.Values{
		oidc2fa.CSRFField: {html.UnescapeString(csrf[1])}, "decision": {decision}}))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "body: %s", body)
	f.callback, err = url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(f.callback.String(), redirectURI+"?"), "sent back to %s", f.callback)
}

// TestEnroll runs whole enrollments against the real provider with both Sessions and both client
// authentication methods.
func TestEnroll(t *testing.T) {
	for _, kind := range sessionKinds {
		for _, method := range []rp.AuthMethod{rp.ClientSecretPost, rp.ClientSecretBasic} {
			t.Run(kind.name+"/"+string(method), func(t *testing.T) {
				p, rec := newEnrollIDP(t)
				e := newRP(t, p, kind.make(t, p.clock.Now), func(c *rp.Config) { c.AuthMethod = method })

				f, err := e.beginEnroll("ann@example.com")
				require.NoError(t, err)
				assert.Regexp(t, `^`+regexp.QuoteMeta(p.srv.URL)+`/oidc/enroll/acme/[A-Za-z0-9_-]{43}$`, f.authURL)
				require.Len(t, f.cookies, 1, "one cookie per enrollment")
				assert.True(t, strings.HasPrefix(f.cookies[0].Name, rp.DefaultCookieName+"_"))
				assert.True(t, f.cookies[0].HttpOnly)

				p.enroll(t, f, "enroll")
				q := f.callback.Query()
				assert.Equal(t, "complete", q.Get("enrollment"))
				assert.Equal(t, p.issuer, q.Get("iss"))
				assert.Len(t, q.Get("state"), 43)
				assert.Equal(t, []string{"acme/" + p.user.ID}, rec.list())

				res, set, err := e.finish(f, f.cookies, nil)
				assert.Nil(t, res, "an enrollment signs nobody in")
				var done *rp.EnrollmentComplete
				require.ErrorAs(t, err, &done)
				assert.Equal(t, "ann@example.com", done.LoginHint)
				assert.EqualError(t, err, "rp: the callback finished an enrollment, not a sign-in")
				assert.NotErrorIs(t, err, rp.ErrState)
				require.Len(t, set, 1, "Callback clears the enrollment's cookie")
				assert.Negative(t, set[0].MaxAge)
				assert.Zero(t, p.tokenHits.Load(), "no code is redeemed")
				assert.Zero(t, p.jwksHits.Load())

				// The callback works once.
				res, _, err = e.finish(f, f.cookies, nil)
				assert.Nil(t, res)
				require.ErrorIs(t, err, rp.ErrState)
				assert.False(t, errors.As(err, &done))
			})
		}
	}
}

func TestEnrollCancel(t *testing.T) {
	for _, kind := range sessionKinds {
		t.Run(kind.name, func(t *testing.T) {
			p, rec := newEnrollIDP(t)
			e := newRP(t, p, kind.make(t, p.clock.Now))
			f, err := e.beginEnroll("ann@example.com")
			require.NoError(t, err)
			p.enroll(t, f, "cancel")
			res, _, err := e.finish(f, f.cookies, nil)
			assert.Nil(t, res)
			var denied *rp.AuthError
			require.ErrorAs(t, err, &denied)
			assert.Equal(t, rp.AccessDenied, denied.Code)
			assert.True(t, denied.Enrollment, "the error ended an enrollment")
			var done *rp.EnrollmentComplete
			assert.False(t, errors.As(err, &done))
			assert.Empty(t, rec.list())

			_, _, err = e.finish(f, f.cookies, nil)
			require.ErrorIs(t, err, rp.ErrState, "replayed")
		})
	}
}

func TestEnrollURLRefused(t *testing.T) {
	p, _ := newEnrollIDP(t)
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
	for _, hint := range []string{"nobody@example.com", "user_nobody", "bob@example.com"} {
		t.Run(hint, func(t *testing.T) {
			f, err := e.beginEnroll(hint)
			var refused *rp.AuthError
			require.ErrorAs(t, err, &refused)
			assert.Equal(t, "invalid_request", refused.Code)
			assert.NotEmpty(t, refused.Description)
			assert.Empty(t, f.authURL)
		})
	}
	t.Run("no login hint", func(t *testing.T) {
		f, err := e.beginEnroll("")
		require.Error(t, err)
		assert.Empty(t, f.authURL)
		assert.Empty(t, f.cookies, "nothing was saved")
	})
}

func TestEnrollURLWithoutEnroller(t *testing.T) {
	p := newIDP(t, true, func(c *oidc2fa.Config) { c.Authenticator = loginOnly{c.Authenticator} })
	e := newRP(t, p, sessionKinds[0].make(t, p.clock.Now))
	f, err := e.beginEnroll("ann@example.com")
	require.ErrorIs(t, err, rp.ErrNoEnrollment)
	assert.Empty(t, f.authURL)
	assert.Empty(t, f.cookies, "nothing was saved")

	res, err := e.flow(t)
	require.NoError(t, err, "sign-ins work without enrollment")
	assert.Equal(t, p.user.ID, res.Subject)
}

// TestCallbackKindComesFromTheSession: whether a callback ends a sign-in or an enrollment is
// what the session saved under its state says, never what the callback's parameters say.
func TestCallbackKindComesFromTheSession(t *testing.T) {
	for _, kind := range sessionKinds {
		t.Run(kind.name, func(t *testing.T) {
			p, rec := newEnrollIDP(t)
			e := newRP(t, p, kind.make(t, p.clock.Now))
			forge := func(f *flight, state string, params url.Values) {
				q := url.Values{"state": {state}, "iss": {p.issuer}}
				for k, vs := range params {
					q[k] = vs
				}
				var err error
				f.callback, err = url.Parse(redirectURI + "?" + q.Encode())
				require.NoError(t, err)
			}
			var done *rp.EnrollmentComplete

			t.Run("a sign-in's callback with enrollment=complete", func(t *testing.T) {
				f := e.begin(t)
				u, err := url.Parse(f.authURL)
				require.NoError(t, err)
				forge(f, u.Query().Get("state"), url.Values{"enrollment": {"complete"}})
				res, _, err := e.finish(f, f.cookies, nil)
				require.Error(t, err)
				assert.Nil(t, res)
				assert.False(t, errors.As(err, &done), "a sign-in cannot finish as an enrollment")
				var authErr *rp.AuthError
				assert.False(t, errors.As(err, &authErr))
				assert.NotErrorIs(t, err, rp.ErrState)
			})

			// stateOf learns an enrollment's state: it travels in the RP's POST to the
			// provider, not in the link, and comes back in the provider's callback.
			stateOf := func(f *flight) string {
				p.enroll(t, f, "enroll")
				return f.callback.Query().Get("state")
			}
			for _, tt := range []struct {
				name   string
				params url.Values
			}{
				{"a code instead", url.Values{"code": {"some-code"}}},
				{"a code and enrollment=complete, but twice", url.Values{"code": {"c"}, "enrollment": {"complete", "complete"}}},
				{"another enrollment value", url.Values{"enrollment": {"started"}}},
				{"nothing", url.Values{}},
			} {
				t.Run("an enrollment's callback with "+tt.name, func(t *testing.T) {
					f, err := e.beginEnroll("ann@example.com")
					require.NoError(t, err)
					state := stateOf(f)
					forge(f, state, tt.params)
					res, _, err := e.finish(f, f.cookies, nil)
					require.Error(t, err)
					assert.Nil(t, res)
					assert.False(t, errors.As(err, &done))
					assert.NotErrorIs(t, err, rp.ErrState)
				})
			}
			t.Run("an enrollment's callback from another issuer", func(t *testing.T) {
				f, err := e.beginEnroll("ann@example.com")
				require.NoError(t, err)
				p.enroll(t, f, "enroll")
				_, _, err = e.finish(f, f.cookies, func(q url.Values) { q.Set("iss", "https://evil.example/acme") })
				require.ErrorIs(t, err, rp.ErrIssuer)
				assert.False(t, errors.As(err, &done))
			})
			t.Run("an enrollment's callback in another browser", func(t *testing.T) {
				f, err := e.beginEnroll("ann@example.com")
				require.NoError(t, err)
				p.enroll(t, f, "enroll")
				_, _, err = e.finish(f, nil, nil)
				require.ErrorIs(t, err, rp.ErrState)
				assert.False(t, errors.As(err, &done))
			})
			assert.Zero(t, p.tokenHits.Load(), "no code was ever redeemed")
			assert.NotEmpty(t, rec.list())
		})
	}
}

func TestSessionsKeepEnroll(t *testing.T) {
	for _, kind := range sessionKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := kind.make(t, newClock().Now)
			enroll := rp.Session{State: "e", LoginHint: "ann@example.com", Enroll: true}
			got, _, err := take(s, "e", save(t, s, enroll))
			require.NoError(t, err)
			assert.Equal(t, enroll, got)

			got, _, err = take(s, "a", save(t, s, session("a")))
			require.NoError(t, err)
			assert.Equal(t, session("a"), got)
			assert.False(t, got.Enroll)
		})
	}
}

// TestCookieSessionsOlderCookie: a cookie sealed before sessions could be enrollments (its
// payload has no enrollment field) opens as a sign-in.
func TestCookieSessionsOlderCookie(t *testing.T) {
	c := newClock()
	s, err := rp.NewCookieSessions(rp.CookieSessionsConfig{Key: testKey, Now: c.Now})
	require.NoError(t, err)
	seal := func(state string, payload map[string]any) string {
		plain, err := json.Marshal(payload)
		require.NoError(t, err)
		block, err := aes.NewCipher(testKey)
		require.NoError(t, err)
		aead, err := cipher.NewGCM(block)
		require.NoError(t, err)
		nonce := make([]byte, aead.NonceSize())
		_, _ = rand.Read(nonce)
		return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte("visid rp session v1\x00"+state)))
	}
	old := session("old")
	cookies := save(t, s, old) // for the cookie's name; its value is replaced
	require.Len(t, cookies, 1)
	value := seal("old", map[string]any{"s": old.State, "n": old.Nonce, "v": old.Verifier, "h": old.LoginHint,
		"e": c.Now().Add(time.Minute).Unix()})
	got, _, err := take(s, "old", []*http.Cookie{{Name: cookies[0].Name, Value: value}})
	require.NoError(t, err)
	assert.Equal(t, old, got)
	assert.False(t, got.Enroll)
}

// fakeEnrollmentProvider serves a discovery document with an enrollment endpoint whose answer
// the test chooses, and records the requests it gets. Its handler runs on the server's
// goroutines: no testify there.
type fakeEnrollmentProvider struct {
	srv    *httptest.Server
	issuer string

	mu     sync.Mutex
	status int
	ctype  string
	body   string
	forms  []url.Values
	basics [][2]string
}

func newFakeEnrollmentProvider(t *testing.T, endpoint func(base string) string) *fakeEnrollmentProvider {
	t.Helper()
	f := &fakeEnrollmentProvider{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	f.issuer = f.srv.URL + "/acme"
	doc := map[string]any{
		"issuer":                                f.issuer,
		"authorization_endpoint":                f.srv.URL + "/authorize/acme",
		"token_endpoint":                        f.srv.URL + "/token/acme",
		"jwks_uri":                              f.srv.URL + "/jwks/acme",
		"id_token_signing_alg_values_supported": []string{"EdDSA"},
		"authorization_response_iss_parameter_supported": true,
	}
	if ep := endpoint(f.srv.URL); ep != "" {
		doc["enrollment_endpoint"] = ep
	}
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	f.answer(http.StatusOK, "application/json", string(raw)) // the first request is discovery
	return f
}

func (f *fakeEnrollmentProvider) answer(status int, ctype, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.ctype, f.body = status, ctype, body
}

func (f *fakeEnrollmentProvider) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method == http.MethodPost {
		raw, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(raw))
		if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			form = nil
		}
		f.forms = append(f.forms, form)
		user, pass, _ := r.BasicAuth()
		f.basics = append(f.basics, [2]string{user, pass})
	}
	w.Header().Set("Content-Type", f.ctype)
	w.WriteHeader(f.status)
	_, _ = io.WriteString(w, f.body)
}

// last returns the last POST's form and Basic credentials.
func (f *fakeEnrollmentProvider) last() (url.Values, [2]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.forms) == 0 {
		return nil, [2]string{}
	}
	return f.forms[len(f.forms)-1], f.basics[len(f.basics)-1]
}

func (f *fakeEnrollmentProvider) newRP(t *testing.T, method rp.AuthMethod) *rp.RP {
	t.Helper()
	r, err := rp.New(context.Background(), rp.Config{Issuer: f.issuer, ClientID: "client_1", ClientSecret: "secret_1",
		RedirectURI: redirectURI, Sessions: sessionKinds[0].make(t, nil), AuthMethod: method})
	require.NoError(t, err)
	return r
}

// TestEnrollURLRequest checks what EnrollURL sends to the enrollment endpoint.
func TestEnrollURLRequest(t *testing.T) {
	for _, method := range []rp.AuthMethod{rp.ClientSecretPost, rp.ClientSecretBasic} {
		t.Run(string(method), func(t *testing.T) {
			f := newFakeEnrollmentProvider(t, func(base string) string { return base + "/enroll/acme?x=1" })
			r := f.newRP(t, method)
			link := f.srv.URL + "/enroll/acme/" + strings.Repeat("t", 43)
			f.answer(http.StatusOK, "application/json", `{"enrollment_url":"`+link+`","expires_in":600}`)
			rec := httptest.NewRecorder()
			got, err := r.EnrollURL(context.Background(), rec, httptest.NewRequest("POST", "https://app.example.com/settings/2fa", nil), "ann@example.com")
			require.NoError(t, err)
			assert.Equal(t, link, got)

			form, basic := f.last()
			require.NotNil(t, form, "a form body")
			assert.Equal(t, "ann@example.com", form.Get("login_hint"))
			assert.Equal(t, redirectURI, form.Get("redirect_uri"))
			assert.Len(t, form.Get("state"), 43)
			if method == rp.ClientSecretPost {
				assert.Equal(t, "client_1", form.Get("client_id"))
				assert.Equal(t, "secret_1", form.Get("client_secret"))
				assert.Equal(t, [2]string{}, basic)
			} else {
				assert.NotContains(t, form, "client_secret")
				assert.Equal(t, [2]string{"client_1", "secret_1"}, basic)
			}
			assert.Len(t, rec.Result().Cookies(), 1, "the enrollment's session was saved")
		})
	}
}

// TestEnrollURLProviderAnswers feeds EnrollURL answers it must refuse.
func TestEnrollURLProviderAnswers(t *testing.T) {
	f := newFakeEnrollmentProvider(t, func(base string) string { return base + "/enroll/acme" })
	r := f.newRP(t, "")
	host := strings.TrimPrefix(f.srv.URL, "http://")
	linkJSON := func(u string) string { return `{"enrollment_url":"` + u + `","expires_in":600}` }
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
		code   string // the *AuthError's Code; "": not an AuthError
	}{
		{"another host", 200, "application/json", linkJSON("http://evil.example/enroll/acme/secret-token"), ""},
		{"a host that only starts like the issuer's", 200, "application/json", linkJSON("http://" + host + ".evil.example/enroll/acme/secret-token"), ""},
		{"another scheme", 200, "application/json", linkJSON("https://" + host + "/enroll/acme/secret-token"), ""},
		{"relative", 200, "application/json", linkJSON("/enroll/acme/secret-token"), ""},
		{"scheme-relative", 200, "application/json", linkJSON("//" + host + "/enroll/acme/secret-token"), ""},
		{"javascript", 200, "application/json", linkJSON("javascript:alert(1)//secret-token"), ""},
		{"user info", 200, "application/json", linkJSON("http://user@" + host + "/enroll/acme/secret-token"), ""},
		{"no URL", 200, "application/json", `{"expires_in":600}`, ""},
		{"not JSON", 200, "text/html", "<html>secret-token</html>", ""},
		{"a server error", 500, "text/plain", "internal error", ""},
		{"invalid_request", 400, "application/json", `{"error":"invalid_request","error_description":"login_hint names no active user"}`, "invalid_request"},
		{"invalid_client", 401, "application/json", `{"error":"invalid_client","error_description":"client authentication failed"}`, "invalid_client"},
		{"404 of a provider without enrollment", 404, "application/json", `{"error":"invalid_request","error_description":"this provider offers no enrollment"}`, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.answer(tt.status, tt.ctype, tt.body)
			got, err := r.EnrollURL(context.Background(), httptest.NewRecorder(), httptest.NewRequest("POST", "https://app.example.com/settings/2fa", nil), "ann@example.com")
			require.Error(t, err)
			assert.Empty(t, got)
			assert.NotContains(t, err.Error(), "secret-token", "the link is a secret: errors do not quote it")
			var authErr *rp.AuthError
			if tt.code == "" {
				assert.False(t, errors.As(err, &authErr), "%v", err)
			} else {
				require.ErrorAs(t, err, &authErr)
				assert.Equal(t, tt.code, authErr.Code)
				assert.NotEmpty(t, authErr.Description)
			}
		})
	}
}

func TestNewEnrollmentEndpoint(t *testing.T) {
	for _, tt := range []struct {
		name     string
		endpoint func(base string) string
		ok       bool
	}{
		{"absent", func(string) string { return "" }, true},
		{"absolute", func(base string) string { return base + "/enroll/acme" }, true},
		{"relative", func(string) string { return "/enroll/acme" }, false},
		{"not http", func(string) string { return "ftp://id.example.com/enroll/acme" }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEnrollmentProvider(t, tt.endpoint)
			_, err := rp.New(context.Background(), rp.Config{Issuer: f.issuer, ClientID: "client_1", ClientSecret: "secret_1",
				RedirectURI: redirectURI, Sessions: sessionKinds[0].make(t, nil)})
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, rp.ErrDiscovery)
			}
		})
	}
	t.Run("absent: EnrollURL refuses", func(t *testing.T) {
		f := newFakeEnrollmentProvider(t, func(string) string { return "" })
		_, err := f.newRP(t, "").EnrollURL(context.Background(), httptest.NewRecorder(), httptest.NewRequest("POST", "/", nil), "ann@example.com")
		require.ErrorIs(t, err, rp.ErrNoEnrollment)
	})
}
