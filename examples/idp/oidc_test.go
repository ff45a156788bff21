package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/oidc2fa/rp"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// TestServeSecondFactor follows the README's walk-through with what the service printed: the
// demo client asks for alice's second factor, alice clicks demo_points on her picture, and
// the client gets a verified ID token.
func TestServeSecondFactor(t *testing.T) {
	s := startService(t)
	res := signInAlice(t, s.vars)
	assert.Equal(t, "alice@example.com", res.LoginHint)
	assert.True(t, strings.HasPrefix(res.Subject, "user_"))
	assert.Equal(t, []string{"pwd"}, res.AMR)
}

// signInAlice signs the demo user alice in through the service whose key=value lines are vars,
// as examples/rp and a browser would, with her demo points, and returns what the relying party
// got.
func signInAlice(t *testing.T, vars map[string]string) *rp.Result {
	t.Helper()
	ctx := t.Context()
	sessions, err := rp.NewServerSessions(rp.ServerSessionsConfig{})
	require.NoError(t, err)
	relying, err := rp.New(ctx, rp.Config{
		Issuer: vars["issuer"], ClientID: vars["client_id"], ClientSecret: vars["client_secret"],
		RedirectURI: vars["redirect_uri"], Sessions: sessions,
	})
	require.NoError(t, err, "discovery of the printed issuer")

	appReq := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8081/login", nil)
	appResp := httptest.NewRecorder()
	target, err := relying.AuthCodeURL(appResp, appReq, "alice@example.com")
	require.NoError(t, err)

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string, form url.Values) (*http.Response, string) {
		t.Helper()
		var resp *http.Response
		var err error
		if form == nil {
			resp, err = browser.Get(u)
		} else {
			resp, err = browser.PostForm(u, form)
		}
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	resp, _ := get(target, nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	loginURL, err := resp.Location()
	require.NoError(t, err)
	resp, page := get(loginURL.String(), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, page, "Your picture: Harbour")
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	require.NotNil(t, csrf)
	resp, _ = get(loginURL.String(), url.Values{"csrf": {csrf[1]}, "points": {vars["demo_points"]}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	callback := resp.Header.Get("Location")
	require.True(t, strings.HasPrefix(callback, "http://127.0.0.1:8081/callback?"), callback)

	cb := httptest.NewRequest(http.MethodGet, callback, nil)
	for _, c := range appResp.Result().Cookies() {
		cb.AddCookie(c)
	}
	res, err := relying.Callback(ctx, httptest.NewRecorder(), cb)
	require.NoError(t, err)
	return res
}

func TestEnrollLink(t *testing.T) {
	ctx := context.Background()
	d, err := openDB(t.Context(), "memory")
	require.NoError(t, err)
	require.NoError(t, d.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	_, err = d.Users.Create(ctx, "acme", store.User{UserName: "ann", Active: true,
		Emails: []store.MultiValue{{Value: "ann@example.com", Primary: true}}})
	require.NoError(t, err)
	_, err = d.Users.Create(ctx, "acme", store.User{UserName: "bob", Active: false})
	require.NoError(t, err)

	var out bytes.Buffer
	require.NoError(t, makeEnrollLink(ctx, d.Backend, "https://id.example.com", "acme", "ann@example.com", &out))
	assert.Regexp(t, `^enrollment_url=https://id\.example\.com/oidc/enroll/acme/[A-Za-z0-9_-]{43}\nexpires=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$`, out.String())

	for name, c := range map[string]struct{ tenant, user, want string }{
		"unknown user":   {"acme", "nobody", `tenant "acme" has no active user with the userName, primary email or id "nobody"`},
		"inactive user":  {"acme", "bob", `no active user`},
		"unknown tenant": {"globex", "ann", `there is no tenant "globex"`},
	} {
		out.Reset()
		err := makeEnrollLink(ctx, d.Backend, "https://id.example.com", c.tenant, c.user, &out)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
		assert.Empty(t, out.String(), name)
	}

	var stdout, stderr bytes.Buffer
	err = run(ctx, []string{"enroll-link", "--tenant", "acme"}, &stdout, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--user")
}

// TestSweep: the service removes expired codes and interactions (enrollment links too), and
// events older than the retention, on its own, and keeps the others.
func TestSweep(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	d, err := openDB(t.Context(), "memory")
	require.NoError(t, err)
	require.NoError(t, d.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	past, future := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	for i, exp := range []time.Time{past, future} {
		require.NoError(t, d.Codes.Create(ctx, store.Code{Hash: [32]byte{byte(i + 1)}, Tenant: "acme", Expires: exp}))
		require.NoError(t, d.Interactions.Create(ctx, store.Interaction{ID: fmt.Sprint("in", i), Purpose: store.PurposeEnrollLink,
			Tenant: "acme", Expires: exp}))
	}
	for _, at := range []time.Time{time.Now().Add(-2 * time.Hour), time.Now()} {
		_, err := d.Users.Create(store.WithChange(ctx, store.Change{Actor: "admin", Time: at}), "acme",
			store.User{UserName: fmt.Sprint("u", at.UnixNano()), Active: true})
		require.NoError(t, err)
	}
	done := make(chan struct{})
	go func() { sweep(ctx, d.Backend, 5*time.Millisecond, time.Hour, discardLogger()); close(done) }()
	require.Eventually(t, func() bool {
		_, err := d.Interactions.Get(ctx, "in0")
		return errors.Is(err, store.ErrNotFound)
	}, 5*time.Second, 5*time.Millisecond)
	cancel()
	<-done
	_, err = d.Interactions.Get(t.Context(), "in1")
	assert.NoError(t, err, "an unexpired interaction stays")
	_, err = d.Codes.Consume(t.Context(), [32]byte{1})
	assert.ErrorIs(t, err, store.ErrNotFound, "the expired code went")
	_, err = d.Codes.Consume(t.Context(), [32]byte{2})
	assert.NoError(t, err, "the unexpired code stays")
	events, err := d.Events.List(t.Context(), "acme", "", 10)
	require.NoError(t, err)
	require.Len(t, events, 1, "the event older than the retention went")
	assert.WithinDuration(t, time.Now(), events[0].Time, time.Minute)
}

// TestServeRestart: on a SQLite file, the demo is made on the first start only; a later start
// prints no secrets, and publishes the same signing key, so tokens stay verifiable.
func TestServeRestart(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "idp.db")
	jwks := func(s *service) string {
		resp, err := http.Get(s.vars["issuer"][:strings.LastIndex(s.vars["issuer"], "/")] + "/jwks/demo")
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return string(body)
	}
	first := startService(t, "-db", db)
	require.Contains(t, first.vars, "client_secret")
	keys := jwks(first)
	require.NoError(t, first.stop(t))

	second := startService(t, "-db", db)
	assert.Equal(t, []string{"tenant", "scim_base_url", "issuer"}, keysOf(second.lines))
	assert.Equal(t, keys, jwks(second), "the same signing key")
	assert.Eventually(t, func() bool { return strings.Contains(second.hints.String(), "already exists") }, 5*time.Second, 10*time.Millisecond)
}

func keysOf(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _, _ = strings.Cut(l, "=")
	}
	return out
}

// TestServeRedisLimits: with -redis, the SCIM API's 200 requests a minute per key are counted
// in Redis.
func TestServeRedisLimits(t *testing.T) {
	addr := serviceEnv(t, "VISID_TEST_REDIS_ADDR")
	s := startService(t, "-db", "memory", "-redis", "redis://"+addr+"/0")
	start, ok := time.Now(), 0
	for ok <= 2*scimsvc.DefaultRequestsPerMinute {
		resp, _ := scimRequest(t, "GET", s.vars["scim_base_url"]+"/ServiceProviderConfig", s.vars["scim_api_key"], "")
		if resp.StatusCode == http.StatusTooManyRequests {
			break
		}
		require.Equal(t, http.StatusOK, resp.StatusCode)
		ok++
	}
	assertWithinLimit(t, ok, time.Since(start))

	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-db", "memory", "-redis", "http://nope"}, &stdout, &stderr)
	var ue *cli.UsageError
	assert.ErrorAs(t, err, &ue)
}

// assertWithinLimit checks that ok requests of one key succeeded in a run of elapsed: the
// whole budget of DefaultRequestsPerMinute, plus at most the one request the limit gives back
// every 300 ms (a minute / DefaultRequestsPerMinute) the run lasted. A run shorter than 300 ms
// must admit exactly DefaultRequestsPerMinute.
func assertWithinLimit(t *testing.T, ok int, elapsed time.Duration) {
	t.Helper()
	refills := int(elapsed / (time.Minute / scimsvc.DefaultRequestsPerMinute))
	t.Logf("%d requests succeeded in %v (the limit gave back %d in that time)", ok, elapsed, refills)
	assert.GreaterOrEqual(t, ok, scimsvc.DefaultRequestsPerMinute, "the whole budget is usable")
	assert.LessOrEqual(t, ok, scimsvc.DefaultRequestsPerMinute+refills, "no more than the budget and what came back")
}
