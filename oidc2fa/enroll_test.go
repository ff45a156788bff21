package oidc2fa_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
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

// recordingInteractions is the provider's Interactions with a record of every interaction
// created, so that a test can see what the store holds.
type recordingInteractions struct {
	store.Interactions
	mu  sync.Mutex
	ids []string
}

func (ri *recordingInteractions) Create(ctx context.Context, i store.Interaction) error {
	err := ri.Interactions.Create(ctx, i)
	if err == nil {
		ri.mu.Lock()
		ri.ids = append(ri.ids, i.ID)
		ri.mu.Unlock()
	}
	return err
}

// created returns the ids of every interaction ever stored, in order.
func (ri *recordingInteractions) created() []string {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	return slices.Clone(ri.ids)
}

// stored returns the interactions the store still holds, in creation order.
func (ri *recordingInteractions) stored(t testing.TB) []*store.Interaction {
	t.Helper()
	var out []*store.Interaction
	for _, id := range ri.created() {
		in, err := ri.Interactions.Get(context.Background(), id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		require.NoError(t, err)
		out = append(out, in)
	}
	return out
}

// purposes lists the purposes of the stored interactions.
func (ri *recordingInteractions) purposes(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, in := range ri.stored(t) {
		out = append(out, in.Purpose)
	}
	return out
}

// enrollEnv is an env whose store records the interactions it creates, whose Config is kept for
// NewEnrollmentLink, and whose authenticator records each Enroll.
type enrollEnv struct {
	*env
	cfg          oidc2fa.Config
	interactions *recordingInteractions
	enrolled     []string // "tenant/subject" of each OnEnroll; the handler runs on the test goroutine
}

func newEnrollEnv(t testing.TB, configure ...func(*oidc2fa.Config)) *enrollEnv {
	t.Helper()
	e := &enrollEnv{}
	record := func(c *oidc2fa.Config) {
		e.interactions = &recordingInteractions{Interactions: c.Interactions}
		c.Interactions = e.interactions
	}
	keep := func(c *oidc2fa.Config) { e.cfg = *c }
	e.env = newEnv(t, append(append([]func(*oidc2fa.Config){record}, configure...), keep)...)
	e.auth.OnEnroll = func(tenant, subject string) { e.enrolled = append(e.enrolled, tenant+"/"+subject) }
	return e
}

// loginOnly is an Authenticator without enrollment: the embedded interface promotes ServeLogin
// and nothing else.
type loginOnly struct{ oidc2fa.Authenticator }

func withoutEnroller(c *oidc2fa.Config) { c.Authenticator = loginOnly{c.Authenticator} }

// enrollForm is a valid request of the enrollment endpoint for ann with client_secret_post.
func (e *enrollEnv) enrollForm() url.Values {
	return url.Values{
		"client_id":     {e.client.ID},
		"client_secret": {e.secret},
		"login_hint":    {"ann@example.com"},
		"redirect_uri":  {testRedirect},
		"state":         {"st-enroll"},
	}
}

// postEnroll sends form to tenant's enrollment endpoint as the client's backend does; basic,
// when not nil, is sent as Basic credentials.
func (e *env) postEnroll(tenant string, form url.Values, basic *[2]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/enroll/"+tenant, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic != nil {
		req.SetBasicAuth(url.QueryEscape(basic[0]), url.QueryEscape(basic[1]))
	}
	return e.serve(req)
}

// enrollResponse is the enrollment endpoint's answer.
type enrollResponse struct {
	URL       string `json:"enrollment_url"`
	ExpiresIn int64  `json:"expires_in"`
}

// linkPattern matches an enrollment link: BaseURL, the tenant and a 256-bit token.
var linkPattern = regexp.MustCompile(`^` + regexp.QuoteMeta(testBase) + `/enroll/acme/([A-Za-z0-9_-]{43})$`)

// requireLink checks a successful answer of the enrollment endpoint and returns the link's path
// relative to the handler.
func requireLink(t testing.TB, rec *httptest.ResponseRecorder) (path string, resp enrollResponse) {
	t.Helper()
	require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
	requireNoStore(t, rec)
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp), "body: %s", rec.Body)
	require.Regexp(t, linkPattern, resp.URL)
	return strings.TrimPrefix(resp.URL, testBase), resp
}

// clientLink asks the enrollment endpoint for a link with form and returns its path relative to
// the handler.
func (e *enrollEnv) clientLink(form url.Values) string {
	e.t.Helper()
	path, _ := requireLink(e.t, e.postEnroll("acme", form, nil))
	return path
}

// adminLink makes an administrator's link for ann, without a client, and returns its path
// relative to the handler.
func (e *enrollEnv) adminLink() string {
	e.t.Helper()
	link, err := oidc2fa.NewEnrollmentLink(context.Background(), e.cfg, oidc2fa.EnrollmentRequest{Tenant: "acme", User: "ann@example.com"})
	require.NoError(e.t, err)
	require.Regexp(e.t, linkPattern, link.URL)
	return strings.TrimPrefix(link.URL, testBase)
}

// link makes a link for ann: a client's ("client") or an administrator's ("admin").
func (e *enrollEnv) link(kind string) string {
	e.t.Helper()
	if kind == "client" {
		return e.clientLink(e.enrollForm())
	}
	return e.adminLink()
}

// linkToken is the token of a link path: its last segment.
func linkToken(path string) string { return path[strings.LastIndexByte(path, '/')+1:] }

// hashID is the id under which the store keeps the link with token: its SHA-256, base64url
// (store.PurposeEnrollLink).
func hashID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// enrollmentURL matches the enrollment pages' URL the link sends the browser to.
var enrollmentURL = regexp.MustCompile(`^/oidc/enrollment/acme/([A-Za-z0-9_-]{43})$`)

// openLink presses Continue on the link's page (a POST to the link) and follows the browser to
// the enroller's page; it returns the page's path relative to the handler, and the page.
func (b *browser) openLink(link string) (path string, page *httptest.ResponseRecorder) {
	t := b.e.t
	t.Helper()
	rec := b.do("POST", link, url.Values{})
	require.Equal(t, http.StatusSeeOther, rec.Code, "body: %s", rec.Body)
	loc := rec.Header().Get("Location")
	require.Regexp(t, enrollmentURL, loc)
	path = strings.TrimPrefix(loc, "/oidc")
	page = b.do("GET", path, nil)
	require.Equal(t, http.StatusOK, page.Code, "body: %s", page.Body)
	return path, page
}

// requireGone checks the page of a used, expired or unknown link.
func requireGone(t testing.TB, rec *httptest.ResponseRecorder) {
	t.Helper()
	requirePage(t, rec, http.StatusNotFound)
	assert.Contains(t, rec.Body.String(), "enrollment link")
	assert.Empty(t, rec.Result().Cookies(), "no enrollment is bound to the browser")
}

func TestEnrollEndpoint(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(e *enrollEnv, f url.Values) (basic *[2]string)
		redirect string
		state    string
	}{
		{"userName, client_secret_post", func(*enrollEnv, url.Values) *[2]string { return nil }, testRedirect, "st-enroll"},
		{"primary email", func(_ *enrollEnv, f url.Values) *[2]string {
			f.Set("login_hint", "ann.lee@example.com")
			return nil
		}, testRedirect, "st-enroll"},
		{"user id", func(e *enrollEnv, f url.Values) *[2]string {
			f.Set("login_hint", e.user.ID)
			return nil
		}, testRedirect, "st-enroll"},
		{"client_secret_basic", func(e *enrollEnv, f url.Values) *[2]string {
			f.Del("client_id")
			f.Del("client_secret")
			return &[2]string{e.client.ID, e.secret}
		}, testRedirect, "st-enroll"},
		{"the other registered redirect URI, no state", func(_ *enrollEnv, f url.Values) *[2]string {
			f.Set("redirect_uri", "http://127.0.0.1:8081/callback")
			f.Del("state")
			return nil
		}, "http://127.0.0.1:8081/callback", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnrollEnv(t)
			f := e.enrollForm()
			basic := tt.edit(e, f)
			rec := e.postEnroll("acme", f, basic)
			path, resp := requireLink(t, rec)
			assert.EqualValues(t, 600, resp.ExpiresIn)
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))

			// The store holds the link under the hash of its token, with what it was asked for.
			stored := e.interactions.stored(t)
			require.Len(t, stored, 1)
			in := stored[0]
			assert.Equal(t, hashID(linkToken(path)), in.ID)
			assert.Equal(t, store.PurposeEnrollLink, in.Purpose)
			assert.Equal(t, "acme", in.Tenant)
			assert.Equal(t, e.client.ID, in.ClientID)
			assert.Equal(t, tt.redirect, in.RedirectURI)
			assert.Equal(t, tt.state, in.State)
			assert.Equal(t, e.user.ID, in.Subject)
			assert.Equal(t, f.Get("login_hint"), in.LoginHint, "the hint as sent")
			assert.Equal(t, e.clock.Now(), in.Created)
			assert.Equal(t, e.clock.Now().Add(oidc2fa.DefaultEnrollmentLinkLifetime), in.Expires)

			// Each request makes a new link.
			again, _ := requireLink(t, e.postEnroll("acme", e.enrollForm(), nil))
			assert.NotEqual(t, path, again)
		})
	}
}

func TestEnrollEndpointLifetime(t *testing.T) {
	t.Run("configured", func(t *testing.T) {
		e := newEnrollEnv(t, func(c *oidc2fa.Config) { c.EnrollmentLinkLifetime = 90 * time.Second })
		_, resp := requireLink(t, e.postEnroll("acme", e.enrollForm(), nil))
		assert.EqualValues(t, 90, resp.ExpiresIn)
	})
	t.Run("a clock that moves while the link is made", func(t *testing.T) {
		var mu sync.Mutex
		now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
		e := newEnrollEnv(t, func(c *oidc2fa.Config) {
			c.Now = func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				now = now.Add(time.Millisecond)
				return now
			}
		})
		_, resp := requireLink(t, e.postEnroll("acme", e.enrollForm(), nil))
		assert.EqualValues(t, 600, resp.ExpiresIn, "not 599 because a millisecond passed")
	})
}

func TestEnrollEndpointRefuses(t *testing.T) {
	tests := []struct {
		name    string
		tenant  string
		edit    func(e *enrollEnv, f url.Values)
		basic   func(e *enrollEnv) *[2]string
		ctype   string // "" keeps application/x-www-form-urlencoded
		status  int
		code    string
		wwwAuth bool
	}{
		{name: "no client authentication", edit: func(_ *enrollEnv, f url.Values) { f.Del("client_secret") },
			status: 401, code: "invalid_client"},
		{name: "wrong secret (post)", edit: func(_ *enrollEnv, f url.Values) { f.Set("client_secret", "secret_wrong") },
			status: 401, code: "invalid_client"},
		{name: "unknown client", edit: func(_ *enrollEnv, f url.Values) { f.Set("client_id", "client_nobody") },
			status: 401, code: "invalid_client"},
		{name: "wrong secret (basic)", edit: func(_ *enrollEnv, f url.Values) { f.Del("client_id"); f.Del("client_secret") },
			basic:  func(e *enrollEnv) *[2]string { return &[2]string{e.client.ID, "secret_wrong"} },
			status: 401, code: "invalid_client", wwwAuth: true},
		{name: "the client of another tenant", tenant: "globex",
			status: 401, code: "invalid_client"},
		{name: "two authentication methods", edit: func(*enrollEnv, url.Values) {},
			basic:  func(e *enrollEnv) *[2]string { return &[2]string{e.client.ID, e.secret} },
			status: 400, code: "invalid_request"},
		{name: "JSON body", ctype: "application/json", status: 400, code: "invalid_request"},
		{name: "no content type", ctype: "none", status: 400, code: "invalid_request"},
		{name: "missing login_hint", edit: func(_ *enrollEnv, f url.Values) { f.Del("login_hint") },
			status: 400, code: "invalid_request"},
		{name: "empty login_hint", edit: func(_ *enrollEnv, f url.Values) { f.Set("login_hint", "") },
			status: 400, code: "invalid_request"},
		{name: "missing redirect_uri", edit: func(_ *enrollEnv, f url.Values) { f.Del("redirect_uri") },
			status: 400, code: "invalid_request"},
		{name: "unregistered redirect_uri", edit: func(_ *enrollEnv, f url.Values) { f.Set("redirect_uri", "https://evil.example/callback") },
			status: 400, code: "invalid_request"},
		{name: "redirect_uri with a trailing slash", edit: func(_ *enrollEnv, f url.Values) { f.Set("redirect_uri", testRedirect+"/") },
			status: 400, code: "invalid_request"},
		{name: "unknown user", edit: func(_ *enrollEnv, f url.Values) { f.Set("login_hint", "nobody@example.com") },
			status: 400, code: "invalid_request"},
		{name: "unknown user id", edit: func(_ *enrollEnv, f url.Values) { f.Set("login_hint", "user_nobody") },
			status: 400, code: "invalid_request"},
		{name: "inactive user", edit: func(_ *enrollEnv, f url.Values) { f.Set("login_hint", "bob@example.com") },
			status: 400, code: "invalid_request"},
		{name: "inactive user by id", edit: func(e *enrollEnv, f url.Values) { f.Set("login_hint", e.inactive.ID) },
			status: 400, code: "invalid_request"},
		{name: "a parameter twice", edit: func(_ *enrollEnv, f url.Values) { f.Add("login_hint", "ann@example.com") },
			status: 400, code: "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnrollEnv(t)
			f := e.enrollForm()
			if tt.edit != nil {
				tt.edit(e, f)
			}
			tenant := tt.tenant
			if tenant == "" {
				tenant = "acme"
			}
			req := httptest.NewRequest("POST", "/enroll/"+tenant, strings.NewReader(f.Encode()))
			switch tt.ctype {
			case "":
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			case "none":
			default:
				req.Header.Set("Content-Type", tt.ctype)
			}
			if tt.basic != nil {
				b := tt.basic(e)
				req.SetBasicAuth(url.QueryEscape(b[0]), url.QueryEscape(b[1]))
			}
			rec := e.serve(req)
			requireTokenError(t, rec, tt.status, tt.code)
			if tt.wwwAuth {
				assert.Equal(t, `Basic realm="`+testBase+`/`+tenant+`"`, rec.Header().Get("WWW-Authenticate"))
			} else {
				assert.Empty(t, rec.Header().Get("WWW-Authenticate"))
			}
			assert.Empty(t, e.interactions.created(), "no link was stored")
		})
	}
}

// TestEnrollEndpointUnknownAndInactiveLookAlike: the client's backend cannot tell an unknown
// user from an inactive one.
func TestEnrollEndpointUnknownAndInactiveLookAlike(t *testing.T) {
	e := newEnrollEnv(t)
	body := func(hint string) string {
		f := e.enrollForm()
		f.Set("login_hint", hint)
		return e.postEnroll("acme", f, nil).Body.String()
	}
	assert.Equal(t, body("nobody@example.com"), body("bob@example.com"))
}

func TestEnrollLinkPage(t *testing.T) {
	for _, kind := range []string{"client", "admin"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnrollEnv(t)
			link := e.link(kind)
			b := e.browser()
			for range 2 {
				rec := b.do("GET", link, nil)
				require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
				body := rec.Body.String()
				assert.Contains(t, body, `<form method="post" action="/oidc`+link+`">`)
				assert.Contains(t, body, `id="continue">Continue</button>`)
				assert.Contains(t, body, `<main class="page">`)
				requireInlineStyleAllowed(t, rec)
				if kind == "client" {
					assert.Contains(t, body, "for App")
				} else {
					assert.NotContains(t, body, " for ")
				}
				assert.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
				assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
				assert.Equal(t, "DENY", rec.Header().Get("X-Frame-Options"))
				assert.Equal(t, "no-referrer", rec.Header().Get("Referrer-Policy"))
				assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'")
				assert.Empty(t, rec.Result().Cookies(), "GET binds nothing")
			}
			// GET used nothing up: the link is still stored, and Continue works.
			assert.Equal(t, []string{store.PurposeEnrollLink}, e.interactions.purposes(t))
			b.openLink(link)
			assert.Equal(t, []string{store.PurposeEnroll}, e.interactions.purposes(t))
		})
	}
}

func TestEnrollLinkIsOneTime(t *testing.T) {
	e := newEnrollEnv(t)
	link := e.clientLink(e.enrollForm())
	b := e.browser()

	rec := b.do("POST", link, url.Values{})
	require.Equal(t, http.StatusSeeOther, rec.Code, "body: %s", rec.Body)
	require.Regexp(t, enrollmentURL, rec.Header().Get("Location"))
	cookies := rec.Result().Cookies()
	require.Len(t, cookies, 1, "one binding cookie")
	c := cookies[0]
	assert.Equal(t, rec.Header().Get("Location"), c.Path, "the cookie is sent to this enrollment only")
	assert.True(t, c.HttpOnly)
	assert.True(t, c.Secure, "BaseURL is https")
	assert.Equal(t, http.SameSiteLaxMode, c.SameSite)

	// The link is gone: the store holds the enrollment only, under a new id.
	stored := e.interactions.stored(t)
	require.Len(t, stored, 1)
	in := stored[0]
	assert.Equal(t, store.PurposeEnroll, in.Purpose)
	assert.Equal(t, "/oidc/enrollment/acme/"+in.ID, rec.Header().Get("Location"))
	assert.NotEqual(t, linkToken(link), in.ID)
	assert.NotEqual(t, hashID(linkToken(link)), in.ID)
	assert.Equal(t, e.user.ID, in.Subject)
	assert.Equal(t, e.client.ID, in.ClientID)
	assert.Equal(t, testRedirect, in.RedirectURI)
	assert.Equal(t, "st-enroll", in.State)
	assert.Equal(t, e.clock.Now().Add(oidc2fa.DefaultInteractionLifetime), in.Expires)

	requireGone(t, b.do("POST", link, url.Values{}))
	requireGone(t, e.browser().do("POST", link, url.Values{}))
	requireGone(t, b.do("GET", link, nil))
	assert.Len(t, e.interactions.created(), 2, "the link and one enrollment, nothing more")
}

func TestEnrollLinkExpires(t *testing.T) {
	tests := []struct {
		name     string
		lifetime time.Duration // Config.EnrollmentLinkLifetime
		valid    time.Duration // how long the link works
	}{
		{"default", 0, 10 * time.Minute},
		{"configured", 2 * time.Minute, 2 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, kind := range []string{"client", "admin"} {
				t.Run(kind, func(t *testing.T) {
					e := newEnrollEnv(t, func(c *oidc2fa.Config) { c.EnrollmentLinkLifetime = tt.lifetime })
					link := e.link(kind)
					e.clock.Advance(tt.valid - time.Second)
					assert.Equal(t, http.StatusOK, e.browser().do("GET", link, nil).Code, "still valid a second before")
					e.clock.Advance(time.Second)
					requireGone(t, e.browser().do("GET", link, nil))
					requireGone(t, e.browser().do("POST", link, url.Values{}))
					assert.NotContains(t, e.interactions.purposes(t), store.PurposeEnroll, "no enrollment was stored")
				})
			}
		})
	}
}

// TestEnrollmentExpires: an opened link gives InteractionLifetime to enroll, however late it
// was opened.
func TestEnrollmentExpires(t *testing.T) {
	e := newEnrollEnv(t, func(c *oidc2fa.Config) { c.InteractionLifetime = 5 * time.Minute })
	link := e.clientLink(e.enrollForm())
	e.clock.Advance(9 * time.Minute)
	b := e.browser()
	path, page := b.openLink(link)
	e.clock.Advance(5*time.Minute - time.Second)
	assert.Equal(t, http.StatusOK, b.do("GET", path, nil).Code, "still open a second before")
	e.clock.Advance(time.Second)
	requireAuthError(t, b.decide(path, csrfToken(t, page), "enroll"), "access_denied", "st-enroll")
	assert.Empty(t, e.enrolled)
	assert.Empty(t, e.interactions.stored(t))
}

func TestEnrollLinkRefused(t *testing.T) {
	e := newEnrollEnv(t)
	link := e.clientLink(e.enrollForm())
	token := linkToken(link)
	for _, tt := range []struct{ name, path string }{
		{"another tenant", "/enroll/globex/" + token},
		{"an unknown tenant", "/enroll/nope/" + token},
		{"the hash under which it is stored", "/enroll/acme/" + hashID(token)},
		{"an unknown token", "/enroll/acme/" + strings.Repeat("A", 43)},
		{"a short token", "/enroll/acme/" + token[:42]},
		{"a long token", "/enroll/acme/" + token + "A"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			requireGone(t, e.browser().do("GET", tt.path, nil))
			requireGone(t, e.browser().do("POST", tt.path, url.Values{}))
			assert.NotContains(t, e.interactions.purposes(t), store.PurposeEnroll, "no enrollment was stored")
		})
	}
}

// TestEnrollLinkStoredAsHash: the store never holds a usable link.
func TestEnrollLinkStoredAsHash(t *testing.T) {
	e := newEnrollEnv(t)
	for _, link := range []string{e.clientLink(e.enrollForm()), e.adminLink()} {
		token := linkToken(link)
		assert.NotContains(t, e.interactions.created(), token)
		_, err := e.cfg.Interactions.Get(context.Background(), token)
		assert.ErrorIs(t, err, store.ErrNotFound)
		in, err := e.cfg.Interactions.Get(context.Background(), hashID(token))
		require.NoError(t, err)
		assert.Equal(t, store.PurposeEnrollLink, in.Purpose)
		for _, in := range e.interactions.stored(t) {
			assert.NotEqual(t, token, in.ID)
			assert.NotContains(t, in.State+in.LoginHint+in.RedirectURI+string(in.AuthState), token)
		}
	}
}

func TestEnrollmentBoundToBrowser(t *testing.T) {
	e := newEnrollEnv(t)
	b := e.browser()
	path, page := b.openLink(e.clientLink(e.enrollForm()))
	csrf := csrfToken(t, page)

	t.Run("another browser", func(t *testing.T) {
		for _, method := range []string{"GET", "POST"} {
			var form url.Values
			if method == "POST" {
				form = url.Values{oidc2fa.CSRFField: {csrf}, "decision": {"enroll"}}
			}
			rec := e.browser().do(method, path, form)
			requirePage(t, rec, http.StatusForbidden)
			assert.Contains(t, rec.Body.String(), "another browser")
		}
	})
	t.Run("a forged cookie", func(t *testing.T) {
		other := b.clone()
		for _, c := range other.cookies {
			c.Value = flip(c.Value)
		}
		requirePage(t, other.do("GET", path, nil), http.StatusForbidden)
	})
	t.Run("POST without the CSRF token", func(t *testing.T) {
		rec := b.do("POST", path, url.Values{"decision": {"enroll"}})
		requirePage(t, rec, http.StatusForbidden)
		assert.Contains(t, rec.Body.String(), "could not be verified")
	})
	t.Run("POST with another CSRF token", func(t *testing.T) {
		requirePage(t, b.do("POST", path, url.Values{oidc2fa.CSRFField: {flip(csrf)}, "decision": {"enroll"}}), http.StatusForbidden)
	})
	t.Run("another tenant's path", func(t *testing.T) {
		requirePage(t, b.do("GET", strings.Replace(path, "/acme/", "/globex/", 1), nil), http.StatusBadRequest)
	})

	// None of that enrolled or ended anything: the browser that opened the link still can.
	assert.Empty(t, e.enrolled)
	assert.Equal(t, []string{store.PurposeEnroll}, e.interactions.purposes(t))
	q := callback(t, b.decide(path, csrf, "enroll"))
	assert.Equal(t, "complete", q.Get("enrollment"))
}

func TestEnrollmentPage(t *testing.T) {
	e := newEnrollEnv(t)
	link := e.clientLink(url.Values{"client_id": {e.client.ID}, "client_secret": {e.secret},
		"login_hint": {"ann.lee@example.com"}, "redirect_uri": {testRedirect}})
	path, page := e.browser().openLink(link)
	body := page.Body.String()
	assert.Contains(t, body, "ann@example.com", "the page names the user by userName, whatever the hint")
	assert.Contains(t, body, `action="/oidc`+path+`"`)
	assert.Contains(t, body, `>Enroll</button>`)
	assert.Contains(t, body, `>Cancel</button>`)
	assert.NotEmpty(t, csrfToken(t, page))
	assert.Equal(t, "DENY", page.Header().Get("X-Frame-Options"))
	assert.Equal(t, "no-store", page.Header().Get("Cache-Control"))
	assert.Equal(t, "no-referrer", page.Header().Get("Referrer-Policy"))
	assert.Equal(t, "frame-ancestors 'none'", page.Header().Get("Content-Security-Policy"))
}

func TestEnrollFlow(t *testing.T) {
	tests := []struct {
		name  string
		hint  func(e *enrollEnv) string
		state string
	}{
		{"by userName", func(*enrollEnv) string { return "ann@example.com" }, "st-enroll"},
		{"by email", func(*enrollEnv) string { return "ann.lee@example.com" }, "st-enroll"},
		{"by id", func(e *enrollEnv) string { return e.user.ID }, "st-enroll"},
		{"without state", func(*enrollEnv) string { return "ann@example.com" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnrollEnv(t)
			f := e.enrollForm()
			f.Set("login_hint", tt.hint(e))
			if tt.state == "" {
				f.Del("state")
			}
			b := e.browser()
			path, page := b.openLink(e.clientLink(f))
			assert.Empty(t, e.enrolled, "nothing enrolled before the button")

			rec := b.decide(path, csrfToken(t, page), "enroll")
			q := callback(t, rec)
			assert.Equal(t, "complete", q.Get("enrollment"))
			assert.Equal(t, testBase+"/acme", q.Get("iss"))
			if tt.state == "" {
				assert.NotContains(t, q, "state")
			} else {
				assert.Equal(t, tt.state, q.Get("state"))
			}
			for _, p := range []string{"code", "error", "id_token"} {
				assert.NotContains(t, q, p)
			}
			assert.Equal(t, []string{"acme/" + e.user.ID}, e.enrolled)
			assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))

			// The enrollment ended: its cookie is cleared, the store holds nothing, and a
			// second press changes nothing.
			cleared := rec.Result().Cookies()
			require.Len(t, cleared, 1)
			assert.Negative(t, cleared[0].MaxAge)
			assert.Empty(t, e.interactions.stored(t))
			requirePage(t, b.decide(path, csrfToken(t, page), "enroll"), http.StatusBadRequest)
			assert.Len(t, e.enrolled, 1)
		})
	}
}

func TestEnrollCancel(t *testing.T) {
	t.Run("client", func(t *testing.T) {
		e := newEnrollEnv(t)
		b := e.browser()
		path, page := b.openLink(e.clientLink(e.enrollForm()))
		q := requireAuthError(t, b.decide(path, csrfToken(t, page), "cancel"), "access_denied", "st-enroll")
		assert.NotContains(t, q, "enrollment")
		assert.Empty(t, e.enrolled)
		assert.Empty(t, e.interactions.stored(t))
	})
	t.Run("admin", func(t *testing.T) {
		e := newEnrollEnv(t)
		b := e.browser()
		path, page := b.openLink(e.adminLink())
		rec := b.decide(path, csrfToken(t, page), "cancel")
		requirePage(t, rec, http.StatusOK)
		body := rec.Body.String()
		assert.Contains(t, body, "<h1>Set-up cancelled</h1>")
		assert.Contains(t, body, "You cancelled setting up your second factor. Nothing was changed.")
		assert.NotContains(t, body, "sign-in", "an enrollment is not a sign-in")
		assert.Contains(t, body, `<p class="support">Error code for support: <code>access_denied</code></p>`, "the code, small, for support")
		requireInlineStyleAllowed(t, rec)
		assert.Empty(t, e.enrolled)
		assert.Empty(t, e.interactions.stored(t))
	})
}

// requireInlineStyleAllowed checks that the inline style sheet of the page rec is the one its
// Content-Security-Policy allows by hash, so that a browser applies it.
func requireInlineStyleAllowed(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(rec.Body.String())
	require.NotNil(t, m, "the page has its style sheet")
	sum := sha256.Sum256([]byte(m[1]))
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"),
		"style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
}

func TestEnrollAdminLink(t *testing.T) {
	e := newEnrollEnv(t)
	link, err := oidc2fa.NewEnrollmentLink(context.Background(), e.cfg, oidc2fa.EnrollmentRequest{Tenant: "acme", User: e.user.ID})
	require.NoError(t, err)
	assert.Regexp(t, linkPattern, link.URL)
	assert.Equal(t, e.user.ID, link.Subject)
	assert.Equal(t, e.clock.Now().Add(oidc2fa.DefaultEnrollmentLinkLifetime), link.Expires)

	b := e.browser()
	path, page := b.openLink(strings.TrimPrefix(link.URL, testBase))
	assert.Contains(t, page.Body.String(), "ann@example.com")
	rec := b.decide(path, csrfToken(t, page), "enroll")
	assert.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
	assert.Empty(t, rec.Header().Values("Location"), "nowhere to go back to")
	assert.Contains(t, rec.Body.String(), "Enrolled.")
	assert.Equal(t, []string{"acme/" + e.user.ID}, e.enrolled)
	assert.Empty(t, e.interactions.stored(t))
}

// TestEnrollDoubleSubmit: when two presses of Enroll race, one finishes the enrollment and the
// other gets an error page — and only that, not the error page and the enroller's own page.
func TestEnrollDoubleSubmit(t *testing.T) {
	for _, kind := range []string{"client", "admin"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnrollEnv(t)
			link := e.link(kind)
			b := e.browser()
			path, page := b.openLink(link)
			csrf := csrfToken(t, page)
			var second *httptest.ResponseRecorder
			calls := 0
			e.auth.OnEnroll = func(string, string) {
				calls++
				if calls == 1 {
					// The second press arrives while the first stores the factor.
					second = b.clone().decide(path, csrf, "enroll")
				}
			}
			first := b.decide(path, csrf, "enroll")
			require.NotNil(t, second)
			if kind == "client" {
				assert.Equal(t, "complete", callback(t, second).Get("enrollment"))
			} else {
				assert.Equal(t, http.StatusOK, second.Code)
				assert.Contains(t, second.Body.String(), "Enrolled.")
			}
			requirePage(t, first, http.StatusBadRequest)
			assert.NotContains(t, first.Body.String(), "Enrolled.")
		})
	}
}

func TestNewEnrollmentLinkErrors(t *testing.T) {
	tests := []struct {
		name    string
		req     func(e *enrollEnv) oidc2fa.EnrollmentRequest
		cfg     func(c *oidc2fa.Config)
		want    error
		wantAny bool // any error will do
	}{
		{name: "unknown user", req: func(*enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "acme", User: "nobody@example.com"}
		}, want: oidc2fa.ErrUnknownUser},
		{name: "unknown user id", req: func(*enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "acme", User: "user_nobody"}
		}, want: oidc2fa.ErrUnknownUser},
		{name: "no user", req: func(*enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "acme"}
		}, want: oidc2fa.ErrUnknownUser},
		{name: "inactive user", req: func(*enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "acme", User: "bob@example.com"}
		}, want: oidc2fa.ErrUnknownUser},
		{name: "a user of another tenant", req: func(*enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "globex", User: "ann@example.com"}
		}, want: oidc2fa.ErrUnknownUser},
		{name: "unknown tenant", req: func(*enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "nope", User: "ann@example.com"}
		}, want: store.ErrNotFound},
		{name: "invalid tenant", req: func(*enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "../acme", User: "ann@example.com"}
		}, want: store.ErrNotFound},
		{name: "unknown client", req: func(*enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "acme", User: "ann@example.com", ClientID: "client_nobody", RedirectURI: testRedirect}
		}, want: oidc2fa.ErrUnknownClient},
		{name: "the client of another tenant", req: func(e *enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "globex", User: "ann@example.com", ClientID: e.client.ID, RedirectURI: testRedirect}
		}, want: oidc2fa.ErrUnknownClient},
		{name: "unregistered redirect URI", req: func(e *enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "acme", User: "ann@example.com", ClientID: e.client.ID, RedirectURI: "https://evil.example/callback"}
		}, want: oidc2fa.ErrRedirectURI},
		{name: "a client without a redirect URI", req: func(e *enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "acme", User: "ann@example.com", ClientID: e.client.ID}
		}, want: oidc2fa.ErrRedirectURI},
		{name: "a redirect URI without a client", req: func(*enrollEnv) oidc2fa.EnrollmentRequest {
			return oidc2fa.EnrollmentRequest{Tenant: "acme", User: "ann@example.com", RedirectURI: testRedirect}
		}, want: oidc2fa.ErrRedirectURI},
		{name: "an Authenticator that is not an Enroller", cfg: withoutEnroller, want: oidc2fa.ErrNoEnrollment},
		{name: "no Authenticator", cfg: func(c *oidc2fa.Config) { c.Authenticator = nil }, want: oidc2fa.ErrNoEnrollment},
		{name: "no Users", cfg: func(c *oidc2fa.Config) { c.Users = nil }, wantAny: true},
		{name: "no Clients", cfg: func(c *oidc2fa.Config) { c.Clients = nil }, wantAny: true},
		{name: "no BaseURL", cfg: func(c *oidc2fa.Config) { c.BaseURL = "" }, wantAny: true},
		{name: "a relative BaseURL", cfg: func(c *oidc2fa.Config) { c.BaseURL = "/oidc" }, wantAny: true},
		{name: "a negative lifetime", cfg: func(c *oidc2fa.Config) { c.EnrollmentLinkLifetime = -time.Second }, wantAny: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnrollEnv(t)
			cfg := e.cfg
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			req := oidc2fa.EnrollmentRequest{Tenant: "acme", User: "ann@example.com"}
			if tt.req != nil {
				req = tt.req(e)
			}
			link, err := oidc2fa.NewEnrollmentLink(context.Background(), cfg, req)
			require.Error(t, err)
			assert.Nil(t, link)
			if !tt.wantAny {
				assert.ErrorIs(t, err, tt.want)
			}
			assert.Empty(t, e.interactions.created(), "no link was stored")
		})
	}
}

func TestNewEnrollmentLinkWithClient(t *testing.T) {
	e := newEnrollEnv(t)
	link, err := oidc2fa.NewEnrollmentLink(context.Background(), e.cfg, oidc2fa.EnrollmentRequest{
		Tenant: "acme", User: "ann.lee@example.com", ClientID: e.client.ID, RedirectURI: testRedirect, State: "st-admin"})
	require.NoError(t, err)
	b := e.browser()
	path, page := b.openLink(strings.TrimPrefix(link.URL, testBase))
	q := callback(t, b.decide(path, csrfToken(t, page), "enroll"))
	assert.Equal(t, "complete", q.Get("enrollment"))
	assert.Equal(t, "st-admin", q.Get("state"))
}

// TestEnrollmentEndsWhenTheUserOrClientGoes: the checks run on every request, so a user
// deactivated, or a client deleted, after the link was made cannot enroll.
func TestEnrollmentEndsWhenTheUserOrClientGoes(t *testing.T) {
	ctx := context.Background()
	deactivate := func(e *enrollEnv) {
		_, err := e.mem.Users().Update(ctx, "acme", e.user.ID, func(u *store.User) error { u.Active = false; return nil })
		require.NoError(t, err)
	}
	deleteUser := func(e *enrollEnv) { require.NoError(t, e.mem.Users().Delete(ctx, "acme", e.user.ID)) }
	deleteClient := func(e *enrollEnv) { require.NoError(t, e.mem.Clients().Delete(ctx, "acme", e.client.ID)) }
	for _, tt := range []struct {
		name   string
		change func(e *enrollEnv)
	}{
		{"user deactivated", deactivate},
		{"user deleted", deleteUser},
		{"client deleted", deleteClient},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Run("before Continue", func(t *testing.T) {
				e := newEnrollEnv(t)
				link := e.clientLink(e.enrollForm())
				tt.change(e)
				b := e.browser()
				rec := b.do("POST", link, url.Values{})
				require.Equal(t, http.StatusSeeOther, rec.Code, "body: %s", rec.Body)
				requireAuthError(t, b.do("GET", strings.TrimPrefix(rec.Header().Get("Location"), "/oidc"), nil), "access_denied", "st-enroll")
				assert.Empty(t, e.enrolled)
				assert.Empty(t, e.interactions.stored(t))
			})
			t.Run("before Enroll", func(t *testing.T) {
				e := newEnrollEnv(t)
				b := e.browser()
				path, page := b.openLink(e.clientLink(e.enrollForm()))
				tt.change(e)
				requireAuthError(t, b.decide(path, csrfToken(t, page), "enroll"), "access_denied", "st-enroll")
				assert.Empty(t, e.enrolled)
				assert.Empty(t, e.interactions.stored(t))
			})
		})
	}
	t.Run("admin link, user deactivated", func(t *testing.T) {
		e := newEnrollEnv(t)
		b := e.browser()
		path, page := b.openLink(e.adminLink())
		deactivate(e)
		rec := b.decide(path, csrfToken(t, page), "enroll")
		requirePage(t, rec, http.StatusBadRequest)
		assert.Contains(t, rec.Body.String(), "access_denied")
		assert.Empty(t, e.enrolled)
	})
}

// TestEnrollmentAndLoginDoNotMix: an interaction serves only the pages of its purpose.
func TestEnrollmentAndLoginDoNotMix(t *testing.T) {
	e := newEnrollEnv(t)
	e.manual()
	b := e.browser()
	loginPath, loginPage := b.start(e.authParams())
	loginID := linkToken(loginPath)
	link := e.clientLink(e.enrollForm())
	enrollPath, enrollPage := b.openLink(link)
	enrollID := linkToken(enrollPath)
	other := e.clientLink(e.enrollForm()) // a link not yet opened

	for _, tt := range []struct{ name, path string }{
		{"a login on the enrollment pages", "/enrollment/acme/" + loginID},
		{"an enrollment on the login pages", "/login/acme/" + enrollID},
		{"an unopened link's stored id on the enrollment pages", "/enrollment/acme/" + hashID(linkToken(other))},
		{"an unopened link's stored id on the login pages", "/login/acme/" + hashID(linkToken(other))},
		{"a link's token on the enrollment pages", "/enrollment/acme/" + linkToken(other)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			requirePage(t, b.do("GET", tt.path, nil), http.StatusBadRequest)
			requirePage(t, b.do("POST", tt.path, url.Values{oidc2fa.CSRFField: {csrfToken(t, loginPage)}, "decision": {"approve"}}), http.StatusBadRequest)
			requirePage(t, b.do("POST", tt.path, url.Values{oidc2fa.CSRFField: {csrfToken(t, enrollPage)}, "decision": {"enroll"}}), http.StatusBadRequest)
		})
	}

	// Nothing was used up: each still works on its own pages.
	assert.ElementsMatch(t, []string{store.PurposeLogin, store.PurposeEnroll, store.PurposeEnrollLink}, e.interactions.purposes(t))
	assert.Empty(t, e.enrolled)
	assert.NotEmpty(t, callback(t, b.decide(loginPath, csrfToken(t, loginPage), "approve")).Get("code"))
	assert.Equal(t, "complete", callback(t, b.decide(enrollPath, csrfToken(t, enrollPage), "enroll")).Get("enrollment"))
	b.openLink(other)
}

func TestEnrollDiscovery(t *testing.T) {
	e := newEnrollEnv(t)
	_, doc := discover(t, e.handler, "acme")
	assert.Equal(t, testBase+"/enroll/acme", doc["enrollment_endpoint"])
	_, doc = discover(t, e.handler, "globex")
	assert.Equal(t, testBase+"/enroll/globex", doc["enrollment_endpoint"])

	without := newEnrollEnv(t, withoutEnroller)
	rec, doc := discover(t, without.handler, "acme")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.NotContains(t, doc, "enrollment_endpoint")
	assert.NotContains(t, rec.Body.String(), "enroll")
}

func TestEnrollWithoutEnroller(t *testing.T) {
	e := newEnrollEnv(t, withoutEnroller)

	rec := e.postEnroll("acme", e.enrollForm(), nil)
	assert.Equal(t, http.StatusNotFound, rec.Code, "body: %s", rec.Body)
	requireNoStore(t, rec)

	// A link made while the provider had an Enroller (on the same store) does not work.
	withEnroller := e.cfg
	withEnroller.Authenticator = e.auth
	link, err := oidc2fa.NewEnrollmentLink(context.Background(), withEnroller, oidc2fa.EnrollmentRequest{Tenant: "acme", User: "ann@example.com"})
	require.NoError(t, err)
	path := strings.TrimPrefix(link.URL, testBase)
	requirePage(t, e.browser().do("GET", path, nil), http.StatusNotFound)
	requirePage(t, e.browser().do("POST", path, url.Values{}), http.StatusNotFound)
	assert.Equal(t, []string{store.PurposeEnrollLink}, e.interactions.purposes(t), "the link was not used up")

	// Nor do enrollment pages, even of an enrollment opened while it had one.
	withHandler, err := oidc2fa.New(withEnroller)
	require.NoError(t, err)
	opener := &env{t: t, clock: e.clock, handler: withHandler}
	b := opener.browser()
	enrollPath, _ := b.openLink(path)
	b.e = e.env
	assert.Equal(t, http.StatusNotFound, b.do("GET", enrollPath, nil).Code)
	assert.Equal(t, http.StatusNotFound, b.do("GET", "/enrollment/acme/"+strings.Repeat("A", 43), nil).Code)
	_, err = oidc2fa.NewEnrollmentLink(context.Background(), e.cfg, oidc2fa.EnrollmentRequest{Tenant: "acme", User: "ann@example.com"})
	assert.ErrorIs(t, err, oidc2fa.ErrNoEnrollment)
	assert.Len(t, e.interactions.created(), 2, "the link and the enrollment the other provider made")
}

func TestEnrollMethods(t *testing.T) {
	e := newEnrollEnv(t)
	token := linkToken(e.clientLink(e.enrollForm()))
	for _, tt := range []struct {
		method, path, allow string
	}{
		{"GET", "/enroll/acme", "POST"},
		{"PUT", "/enroll/acme", "POST"},
		{"HEAD", "/enroll/acme/" + token, "GET, POST"},
		{"DELETE", "/enroll/acme/" + token, "GET, POST"},
		{"PUT", "/enrollment/acme/" + token, "GET, POST"},
	} {
		t.Run(tt.method+" "+strings.Split(tt.path, "/")[1], func(t *testing.T) {
			rec := httpRecord(e.handler, tt.method, tt.path)
			assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
			assert.Equal(t, tt.allow, rec.Header().Get("Allow"))
		})
	}
	assert.Equal(t, []string{store.PurposeEnrollLink}, e.interactions.purposes(t), "the link is still there")
}

// TestEnrollLinkStoreFailure: a store that cannot create interactions makes a 500 that says
// nothing internal.
func TestEnrollLinkStoreFailure(t *testing.T) {
	e := newEnrollEnv(t, func(c *oidc2fa.Config) { c.Interactions = failingInteractions{c.Interactions} })
	rec := e.postEnroll("acme", e.enrollForm(), nil)
	requireTokenError(t, rec, http.StatusInternalServerError, "server_error")
	assert.NotContains(t, rec.Body.String(), "fire")
}
