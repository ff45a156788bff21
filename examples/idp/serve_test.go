package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/examples/internal/httpserve"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// service is a run of the service in this process.
type service struct {
	lines  []string          // the key=value lines, in order
	vars   map[string]string // the same, by key
	cancel context.CancelFunc
	done   chan error
	hints  *syncBuffer // stdout after the blank line
}

// startService runs the service on a free port with extra flags and reads its key=value lines.
// It is stopped when the test ends, unless stop was called.
func startService(t *testing.T, extra ...string) *service {
	t.Helper()
	return startServiceLogging(t, t.Output(), extra...)
}

// startServiceLogging is startService with the service's log written to stderr.
func startServiceLogging(t *testing.T, stderr io.Writer, extra ...string) *service {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	s := &service{cancel: cancel, done: make(chan error, 1), hints: &syncBuffer{}}
	args := []string{"-addr", "127.0.0.1:0"}
	if !slices.Contains(extra, "-admin-addr") {
		args = append(args, "-admin-addr", "127.0.0.1:0") // tests run side by side: never the default port
	}
	if !slices.Contains(extra, "-db") {
		args = append(args, "-db", "sqlite:"+filepath.Join(t.TempDir(), "idp.db"))
	}
	go func() {
		err := run(ctx, append(args, extra...), pw, stderr)
		pw.CloseWithError(fmt.Errorf("run returned %v", err))
		s.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
	})
	r := bufio.NewReader(pr)
	var err error
	s.lines, s.vars, err = readVars(r)
	require.NoError(t, err)
	go func() { _, _ = io.Copy(s.hints, r) }() // the service must never block on stdout
	return s
}

// stop cancels the service's context and returns what run returned.
func (s *service) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
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

// scimRequest makes one SCIM request; key "" sends no Authorization header.
func scimRequest(t *testing.T, method, url, key, body string) (*http.Response, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/scim+json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	}
	return resp, out
}

// TestServe: the service started with -addr 127.0.0.1:0 and no -base-url prints the demo's
// lines, with its URLs on localhost (a passkey needs a domain), and answers SCIM there.
func TestServe(t *testing.T) {
	s := startService(t)

	require.Len(t, s.lines, 10, "%q", s.lines)
	assert.Equal(t, "tenant=demo", s.lines[0])
	assert.Regexp(t, `^scim_base_url=http://localhost:[1-9][0-9]*/scim/v2/demo$`, s.lines[1])
	assert.Regexp(t, `^scim_api_key=scimkey_[0-9a-z]+_[0-9a-z]+$`, s.lines[2])
	assert.Regexp(t, `^issuer=http://localhost:[1-9][0-9]*/oidc/demo$`, s.lines[3])
	assert.Regexp(t, `^client_id=client_[0-9a-z]+$`, s.lines[4])
	assert.Regexp(t, `^client_secret=secret_[0-9A-Za-z_-]+$`, s.lines[5])
	assert.Equal(t, "redirect_uri=http://127.0.0.1:8081/callback", s.lines[6])
	assert.Equal(t, "demo_user=alice", s.lines[7])
	assert.Equal(t, "demo_image=harbour", s.lines[8])
	assert.Equal(t, "demo_points=700,78;100,158;420,495;900,515;265,700", s.lines[9])
	base, key := s.vars["scim_base_url"], s.vars["scim_api_key"]

	resp, user := scimRequest(t, "POST", base+"/Users", key,
		`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"ann@example.com"}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode, "%v", user)
	id, _ := user["id"].(string)
	require.NotEmpty(t, id)
	assert.Equal(t, base+"/Users/"+id, resp.Header.Get("Location"), "locations come from the base URL")

	resp, list := scimRequest(t, "GET", base+"/Users?filter="+url.QueryEscape(`userName eq "ANN@example.com"`), key, "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", list)
	assert.EqualValues(t, 1, list["totalResults"])
	require.Len(t, list["Resources"], 1)
	assert.Equal(t, id, list["Resources"].([]any)[0].(map[string]any)["id"])

	resp, body := scimRequest(t, "GET", base+"/Users", "", "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%v", body)

	require.NoError(t, s.stop(t), "a cancelled context is a graceful shutdown")
	_, err := http.Get(base + "/Users")
	assert.Error(t, err, "the listener is closed")

	hints := s.hints.String()
	assert.Contains(t, hints, "KEY="+key+"\n", "the hints use the actual values")
	assert.Contains(t, hints, "BASE="+base+"\n")
	assert.Contains(t, hints, tryIt)
}

func TestServeBaseURL(t *testing.T) {
	s := startService(t, "-base-url", "https://id.example.com/")
	assert.Equal(t, "https://id.example.com/scim/v2/demo", s.vars["scim_base_url"])
	require.NoError(t, s.stop(t))
}

// TestDefaultBaseURL: without -base-url, a service listening on 127.0.0.1 or ::1 is reached at
// localhost (passkeys need a domain), one on an unspecified address too; on any other address,
// at that address.
func TestDefaultBaseURL(t *testing.T) {
	for _, tt := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "http://localhost:8080"},
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1").To4(), Port: 8080}, "http://localhost:8080"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 9000}, "http://localhost:9000"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "http://localhost:8080"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "http://localhost:8080"},
		// localhost does not reach the rest of 127.0.0.0/8.
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 8080}, "http://127.0.0.2:8080"},
		{&net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 8080}, "http://192.0.2.10:8080"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8::1"), Port: 8080}, "http://[2001:db8::1]:8080"},
	} {
		assert.Equal(t, tt.want, defaultBaseURL(tt.addr), "%v", tt.addr)
	}
}

func TestServeFlagErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()

	for _, tt := range []struct {
		name      string
		args      []string
		usage     bool     // a *cli.UsageError, exit status 2
		mentioned []string // in the error
	}{
		{"db", []string{"-db", "mysql://localhost/idp"}, true, []string{"memory", "sqlite:PATH", "postgres://"}},
		{"log level", []string{"-log-level", "verbose"}, true, []string{"debug, info, warn or error"}},
		{"access log delay negative", []string{"-access-log-delay", "-1ms"}, true, []string{"-access-log-delay", "10s"}},
		{"access log delay too long", []string{"-access-log-delay", "1h"}, true, []string{"-access-log-delay", "10s"}},
		{"base url not absolute", []string{"-base-url", "id.example.com"}, true, []string{"-base-url"}},
		{"base url with query", []string{"-base-url", "https://id.example.com/?x=1"}, true, []string{"-base-url"}},
		{"unknown flag", []string{"-port", "80"}, true, []string{"-port"}},
		{"argument", []string{"-addr", "127.0.0.1:0", "extra"}, true, []string{`"extra"`}},
		{"address in use", []string{"-addr", busy.Addr().String()}, false, []string{busy.Addr().String()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), inMemory(tt.args), &stdout, &stderr)
			require.Error(t, err)
			var ue *cli.UsageError
			assert.Equal(t, tt.usage, errors.As(err, &ue), "%v", err)
			for _, m := range tt.mentioned {
				assert.Contains(t, err.Error()+stderr.String(), m)
			}
			assert.Empty(t, stdout.String(), "nothing for scripts on stdout")
		})
	}
}

func TestEnsureDemo(t *testing.T) {
	ctx := t.Context()
	d, err := openDB(t.Context(), "memory")
	require.NoError(t, err)
	log := discardLogger()
	sec, err := newSecrets(ctx, d.Backend, randomKEK())
	require.NoError(t, err)
	svc, err := newServices(d.Backend, "http://localhost:8080", sec, limiters{}, false, false, nil, log, nil)
	require.NoError(t, err)

	dm, err := ensureDemo(ctx, d.Backend, svc, log)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(dm.apiKey, "scimkey_"))
	assert.True(t, strings.HasPrefix(dm.clientSecret, "secret_"))
	client, err := d.Clients.Get(ctx, demoTenant, dm.clientID)
	require.NoError(t, err)
	assert.Equal(t, []string{demoRedirect}, client.RedirectURIs)
	users, err := d.Users.List(ctx, demoTenant, store.Query{Count: -1})
	require.NoError(t, err)
	require.Len(t, users.Resources, 1)
	alice := users.Resources[0]
	assert.Equal(t, "alice", alice.UserName)
	assert.True(t, alice.Active)
	assert.False(t, alice.Meta.Created.IsZero(), "the store gave alice meta.created")
	assert.True(t, alice.Meta.LastModified.Equal(alice.Meta.Created), "and meta.lastModified")
	dated, err := filter.Parse(`meta.created gt "2020-01-01T00:00:00Z" and meta.lastModified ge "2020-01-01T00:00:00Z"`, schema.User())
	require.NoError(t, err)
	found, err := d.Users.List(ctx, demoTenant, store.Query{Filter: dated, Count: -1})
	require.NoError(t, err)
	assert.Equal(t, 1, found.TotalResults, "date filters find alice")
	cred, err := d.Pictures.Get(ctx, demoTenant, alice.ID)
	require.NoError(t, err, "alice is enrolled")
	assert.Equal(t, demoImage, cred.Image)

	again, err := ensureDemo(ctx, d.Backend, svc, log)
	require.NoError(t, err, "a tenant that exists is no error")
	assert.Equal(t, &demo{}, again, "and gets no new secrets")
	keys, err := d.APIKeys.List(ctx)
	require.NoError(t, err)
	assert.Len(t, keys, 1)
	clients, err := d.Clients.List(ctx, demoTenant)
	require.NoError(t, err)
	assert.Len(t, clients, 1)
}

func TestPrintStartTenantExists(t *testing.T) {
	var out bytes.Buffer
	printStart(&out, "https://id.example.com", &demo{}, "sqlite:/var/lib/idp.db", true)
	first, rest, _ := strings.Cut(out.String(), "\n\n")
	assert.Equal(t, "tenant=demo\nscim_base_url=https://id.example.com/scim/v2/demo\nissuer=https://id.example.com/oidc/demo", first)
	assert.Contains(t, rest, "already exists")
	assert.Contains(t, rest, "apikey create --tenant demo -db sqlite:/var/lib/idp.db")
	assert.NotContains(t, out.String(), "scim_api_key")
	assert.NotContains(t, out.String(), "client_secret")
}

// TestREADMEQuickStart checks that the commands the service prints are the README's.
func TestREADMEQuickStart(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	for line := range strings.Lines(tryIt) {
		line = strings.TrimPrefix(line, "  ")
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "#") {
			assert.True(t, strings.Contains(string(readme), line), "README.md lacks the quick start's line %q", line)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"scimkey_01abc_xyz":                   "scimkey_01abc_xyz",
		"http://localhost:8080/scim/v2/demo":  "http://localhost:8080/scim/v2/demo",
		"https://id.example.com/a b":          "'https://id.example.com/a b'",
		"https://id.example.com/it's/v2/demo": `'https://id.example.com/it'\''s/v2/demo'`,
		"":                                    "''",
	} {
		assert.Equal(t, want, shellQuote(in), "%q", in)
	}
}

// -db sqlite::memory: is a SQLite database that lives as long as the process: it is not
// persistent (the start says so) and leaves no file behind, no key file either.
func TestOpenDBSQLiteMemory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv(kekEnv, "")
	d, err := openDB(t.Context(), "sqlite::memory:")
	require.NoError(t, err)
	t.Cleanup(func() { d.close() })
	assert.False(t, d.persistent)
	assert.Len(t, d.kek, 32)
	require.NoError(t, d.Tenants.Create(t.Context(), store.Tenant{ID: "acme"}))
	_, err = d.Tenants.Get(t.Context(), "acme")
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "files made by an in-memory store")
}
