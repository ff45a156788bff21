package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
)

func TestStartHints(t *testing.T) {
	v := newVisid(t, true)
	a := startApp(t, v)
	require.NoError(t, a.stop(t))
	hints := a.hints.String()
	assert.Contains(t, hints, "Open "+a.url+" in a browser")
	assert.Contains(t, hints, demoEmail)
	assert.Contains(t, hints, demoPassword)
	assert.Contains(t, hints, a.url+"/callback")
	assert.NotContains(t, hints, v.secret, "the secret is never printed")
}

// TestSecretFromEnvironment: without -client-secret, run takes VISID_CLIENT_SECRET, and the
// whole sign-in works with it.
func TestSecretFromEnvironment(t *testing.T) {
	v := newVisid(t, true)
	t.Setenv(secretEnv, v.secret)
	a := runApp(t, "-issuer", v.issuer, "-client-id", v.clientID)
	v.useApp(t, a)
	p := newBrowser(t).signIn(a, demoEmail, demoPassword)
	assert.Contains(t, p.body, signedInAs(demoEmail))
}

func TestParseConfig(t *testing.T) {
	c, err := parseConfig([]string{"-client-id", "client_1"}, io.Discard, "from-env")
	require.NoError(t, err)
	assert.Equal(t, "from-env", c.clientSecret, "the environment, without the flag")
	assert.Equal(t, defaultAddr, c.addr)
	assert.Equal(t, defaultIssuer, c.issuer)
	assert.Equal(t, "server", c.sessions)
	assert.Empty(t, c.baseURL, "known once the app listens")
	assert.Empty(t, c.redirectURI, "base URL + /callback")

	c, err = parseConfig([]string{"-client-id", "client_1", "-client-secret", "from-flag"}, io.Discard, "from-env")
	require.NoError(t, err)
	assert.Equal(t, "from-flag", c.clientSecret, "the flag wins")

	c, err = parseConfig([]string{"-client-id", "c", "-client-secret", "s", "-base-url", "https://app.example.com/"}, io.Discard, "")
	require.NoError(t, err)
	assert.Equal(t, "https://app.example.com", c.baseURL)
}

func TestUsageErrors(t *testing.T) {
	creds := []string{"-client-id", "client_1", "-client-secret", "secret_1"}
	for _, tt := range []struct {
		name      string
		args      []string
		mentioned []string // in the error or on stderr
	}{
		{"no credentials", nil, []string{"-client-id", "-client-secret", secretEnv, "go run ./examples/idp", "client_id=", "client_secret="}},
		{"no secret", []string{"-client-id", "client_1"}, []string{"missing -client-secret (or " + secretEnv + ")", "client_secret="}},
		{"no client id", []string{"-client-secret", "secret_1"}, []string{"missing -client-id.", "client_id="}},
		{"log level", append([]string{"-log-level", "loud"}, creds...), []string{"debug, info, warn or error"}},
		{"sessions", append([]string{"-sessions", "redis"}, creds...), []string{`"server" or "cookie"`}},
		{"base url with path", append([]string{"-base-url", "https://app.example.com/app"}, creds...), []string{"-base-url"}},
		{"base url not absolute", append([]string{"-base-url", "app.example.com"}, creds...), []string{"-base-url"}},
		{"issuer", append([]string{"-issuer", "localhost:8080/oidc/demo"}, creds...), []string{"-issuer"}},
		{"redirect uri", append([]string{"-redirect-uri", "/callback"}, creds...), []string{"-redirect-uri"}},
		{"unknown flag", []string{"-port", "80"}, []string{"unknown flag -port", `Run "rp -h" for usage.`}},
		{"argument", append([]string{"serve"}, creds...), []string{`"serve"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tt.args, &stdout, &stderr)
			var ue *cli.UsageError
			require.True(t, errors.As(err, &ue), "want a usage error, got %v", err)
			assert.Equal(t, 2, exitCode(err, &stderr))
			for _, m := range tt.mentioned {
				assert.Contains(t, stderr.String(), m)
			}
			assert.Empty(t, stdout.String(), "nothing for scripts on stdout")
		})
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-h"}, &stdout, &stderr))
	assert.Equal(t, usage, stdout.String())
	assert.Empty(t, stderr.String())
}

// TestVisidUnusable: the app does not start when visid is not there, or does not answer as an
// OpenID provider at -issuer; it says why and what to do.
func TestVisidUnusable(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // nothing listens at its address any more
	notVisid := httptest.NewServer(http.NotFoundHandler())
	defer notVisid.Close()

	for _, tt := range []struct {
		name, issuer string
		mentioned    []string
	}{
		{"unreachable", closed.URL + "/oidc/demo", []string{"visid is not reachable at " + closed.URL + "/oidc/demo", "go run ./examples/idp"}},
		{"not a provider", notVisid.URL + "/oidc/demo", []string{"404", "Check -issuer"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-issuer", tt.issuer,
				"-client-id", "client_1", "-client-secret", "secret_1"}, &stdout, &stderr)
			require.Error(t, err)
			assert.Equal(t, 1, exitCode(err, &stderr))
			for _, m := range tt.mentioned {
				assert.Contains(t, stderr.String(), m)
			}
			assert.NotContains(t, stderr.String(), "secret_1")
			assert.Empty(t, stdout.String(), "no rp_url: the app did not start")
		})
	}
}

func TestUsersFileErrors(t *testing.T) {
	v := newVisid(t, true)
	path := t.TempDir() + "/users"
	writeFile(t, path, "bob\n")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-issuer", v.issuer, "-client-id", v.clientID,
		"-client-secret", v.secret, "-users", path}, &stdout, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-users: "+path+":1: want email:password")
	assert.Empty(t, stdout.String())
}

// TestRedirectURIFlag: -redirect-uri is what goes to visid; the app keeps serving /callback.
func TestRedirectURIFlag(t *testing.T) {
	v := newVisid(t, false)
	a := runApp(t, "-issuer", v.issuer, "-client-id", v.clientID, "-client-secret", v.secret,
		"-redirect-uri", "http://localhost:1/back")
	b := newBrowser(t)
	p := b.signIn(a, demoEmail, demoPassword)
	// visid refuses a redirect URI it does not know, on a page of its own.
	assert.Equal(t, http.StatusBadRequest, p.status)
	assert.True(t, strings.HasPrefix(p.url, v.srv.URL+"/oidc/authorize/demo?"), p.url)
	u, err := url.Parse(p.url)
	require.NoError(t, err)
	assert.Equal(t, "http://localhost:1/back", u.Query().Get("redirect_uri"))
}

// TestWrongClientCredentials: the app checks its client id and secret with visid at the start
// and refuses to start with credentials visid does not accept, before any user signs in.
func TestWrongClientCredentials(t *testing.T) {
	v := newVisid(t, true)
	for _, tt := range []struct {
		name, clientID, secret string
	}{
		{"wrong secret", v.clientID, v.secret + "x"},
		{"secret of another store", v.clientID, "secret_01m80h520y4ks4ca8hpxn4hyre_abcdefghijklmnop"},
		{"unknown client", "client_01m80h520y4ks4ca8hpxn4hyre", v.secret},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-issuer", v.issuer,
				"-client-id", tt.clientID, "-client-secret", tt.secret}, &stdout, &stderr)
			require.Error(t, err)
			assert.Equal(t, 1, exitCode(err, &stderr))
			assert.Contains(t, stderr.String(), "visid at "+v.issuer+" does not accept -client-id "+tt.clientID+" with this client secret.")
			assert.Contains(t, stderr.String(), "client_secret=")
			assert.Contains(t, stderr.String(), "go run ./examples/idp client create --tenant demo")
			assert.NotContains(t, stderr.String(), tt.secret, "the secret is never printed")
			assert.Empty(t, stdout.String(), "no rp_url: the app did not start")
		})
	}
}
