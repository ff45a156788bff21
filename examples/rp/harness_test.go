package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/httpserve"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// visid is an in-process identity service: the real oidc2fa provider over a memstore, mounted
// under /oidc/ of an httptest server with http.StripPrefix. Its tenant demo has the active
// users alice@example.com and bob@example.com and a client for the app; the test Authenticator
// approves or denies as the test says, without a picture.
type visid struct {
	srv      *httptest.Server
	issuer   string
	clients  store.Clients
	clientID string
	secret   string
	users    map[string]*store.User // by userName
}

func newVisid(t *testing.T, autoApprove bool, configure ...func(*oidc2fa.Config, store.Backend)) *visid {
	t.Helper()
	ctx := context.Background()
	mux := http.NewServeMux()
	v := &visid{srv: httptest.NewServer(mux), users: map[string]*store.User{}}
	t.Cleanup(v.srv.Close)
	v.issuer = v.srv.URL + "/oidc/demo"

	b := memstore.New().Backend()
	v.clients = b.Clients
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "demo", DisplayName: "Demo"}))
	for _, name := range []string{"alice@example.com", "bob@example.com"} {
		u, err := b.Users.Create(ctx, "demo", store.User{UserName: name, Active: true})
		require.NoError(t, err)
		v.users[name] = u
	}
	// The app's redirect URI is known once it listens: useApp puts it in place.
	secret, client, err := oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{
		Tenant: "demo", Name: "Example app", RedirectURIs: []string{"http://127.0.0.1/not-yet"}})
	require.NoError(t, err)
	v.clientID, v.secret = client.ID, secret
	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	require.NoError(t, err)
	cfg := oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Authenticator: &authtest.Authenticator{AutoApprove: autoApprove},
		Signer:        keys,
		BaseURL:       v.srv.URL + "/oidc",
		Logger:        slog.New(slog.NewTextHandler(t.Output(), nil)).With("side", "visid"),
	}
	for _, f := range configure {
		f(&cfg, b)
	}
	provider, err := oidc2fa.New(cfg)
	require.NoError(t, err)
	mux.Handle("/oidc/", http.StripPrefix("/oidc", provider))
	return v
}

// useApp registers the app's redirect URI for the client, as the identity service's admin
// would.
func (v *visid) useApp(t *testing.T, a *appRun) {
	t.Helper()
	_, err := v.clients.Update(context.Background(), "demo", v.clientID, func(c *store.Client) error {
		c.RedirectURIs = []string{a.url + "/callback"}
		return nil
	})
	require.NoError(t, err)
}

// appRun is a run of the app in this process.
type appRun struct {
	url    string // rp_url
	cancel context.CancelFunc
	done   chan error
	hints  *syncBuffer // stdout after the blank line
}

// startApp runs the app on a free port against v, with extra flags, and registers its
// redirect URI with v. It is stopped when the test ends, unless stop was called.
func startApp(t *testing.T, v *visid, extra ...string) *appRun {
	t.Helper()
	// The app checks its callback with visid at start (when visid offers pushed requests), so
	// it is registered first, on a port free a moment ago.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	v.useApp(t, &appRun{url: "http://" + addr})
	a := runApp(t, append([]string{"-addr", addr, "-issuer", v.issuer, "-client-id", v.clientID, "-client-secret", v.secret}, extra...)...)
	v.useApp(t, a)
	return a
}

// runApp runs the app on a free port with args and reads its rp_url line.
func runApp(t *testing.T, args ...string) *appRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	a := &appRun{cancel: cancel, done: make(chan error, 1), hints: &syncBuffer{}}
	go func() {
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw, t.Output())
		pw.CloseWithError(fmt.Errorf("run returned %v", err))
		a.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		<-a.done
	})
	r := bufio.NewReader(pr)
	vars := map[string]string{}
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err, "reading the app's stdout")
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, "not a key=value line: %q", line)
		vars[k] = v
	}
	go func() { _, _ = io.Copy(a.hints, r) }() // the app must never block on stdout
	a.url = vars["rp_url"]
	require.Regexp(t, `^http://127\.0\.0\.1:[1-9][0-9]*$`, a.url)
	return a
}

// stop cancels the app's context and returns what run returned.
func (a *appRun) stop(t *testing.T) error {
	t.Helper()
	a.cancel()
	select {
	case err := <-a.done:
		a.done <- err // for the cleanup
		return err
	case <-time.After(httpserve.ShutdownTimeout + 5*time.Second):
		t.Fatal("run did not return after its context was cancelled")
		return nil
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// browser is a person's browser: a cookie jar (shared by every port of 127.0.0.1, as in a real
// browser) and redirects followed.
type browser struct {
	t      *testing.T
	follow *http.Client
	stay   *http.Client // the same jar; stops at the first redirect
}

func newBrowser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &browser{
		t:      t,
		follow: &http.Client{Jar: jar, Timeout: 10 * time.Second},
		stay: &http.Client{Jar: jar, Timeout: 10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

// page is a response as the browser shows it: after the redirects, at url.
type page struct {
	status   int
	body     string
	url      string
	location string // of a redirect the browser did not follow
}

func (b *browser) do(c *http.Client, method, target string, form url.Values) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(b.t.Context(), method, target, body)
	require.NoError(b.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	return page{status: resp.StatusCode, body: string(raw), url: resp.Request.URL.String(),
		location: resp.Header.Get("Location")}
}

func (b *browser) get(target string) page { b.t.Helper(); return b.do(b.follow, "GET", target, nil) }

func (b *browser) post(target string, form url.Values) page {
	b.t.Helper()
	return b.do(b.follow, "POST", target, form)
}

// signIn fills in the app's password form and submits it, following every redirect.
func (b *browser) signIn(a *appRun, email, password string) page {
	b.t.Helper()
	form := b.get(a.url + "/")
	require.Equal(b.t, http.StatusOK, form.status, form.body)
	return b.post(a.url+"/login", url.Values{"csrf": {csrfOf(b.t, form)}, "email": {email}, "password": {password}})
}

// decide presses a button of the test Authenticator's login page p, following the redirects
// when follow is set.
func (b *browser) decide(v *visid, p page, decision string, follow bool) page {
	b.t.Helper()
	action := regexp.MustCompile(`action="([^"]+)"`).FindStringSubmatch(p.body)
	require.NotNil(b.t, action, "not the visid login page: %s", p.body)
	c := b.stay
	if follow {
		c = b.follow
	}
	return b.do(c, "POST", v.srv.URL+html.UnescapeString(action[1]),
		url.Values{oidc2fa.CSRFField: {csrfOf(b.t, p)}, "decision": {decision}})
}

// csrfOf is the CSRF token of the form of p (the app's and visid's fields have the same name).
func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(p.body)
	require.NotNil(t, m, "no CSRF token on the page: %s", p.body)
	return html.UnescapeString(m[1])
}
