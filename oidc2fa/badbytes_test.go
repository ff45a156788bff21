package oidc2fa_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/sqlstore"
)

// badTexts are path and credential parts that are not text: NUL, bytes that are not UTF-8, an
// overlong encoding, a surrogate. PostgreSQL refuses them in a text parameter (SQLSTATE 22021).
var badTexts = []string{"\x00", "\xff", "\xc3\x28", "\xc0\xaf", "\xed\xa0\x80"}

// TestBadBytesNever5xx sends every path of the provider, GET and POST, with a session id, link
// token or tenant that holds bytes that are not text, and client credentials (Basic, raw and
// escaped, and form) whose id or secret holds them, to a provider over memstore, SQLite and
// PostgreSQL. No answer is a 5xx, and nothing is logged at ERROR. PostgreSQL answered 500 with
// `invalid byte sequence for encoding "UTF8" (SQLSTATE 22021)` and logged an ERROR line for each.
func TestBadBytesNever5xx(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) store.Backend
	}{
		{"memstore", func(*testing.T) store.Backend { return memstore.New().Backend() }},
		{"sqlite", func(t *testing.T) store.Backend {
			return openSQLBackend(t, "sqlite:"+filepath.Join(t.TempDir(), "visid.db"))
		}},
		{"postgres", func(t *testing.T) store.Backend { return openSQLBackend(t, postgresDSN(t)) }},
	}
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			badBytesNever5xx(t, bk.open(t))
		})
	}
}

func badBytesNever5xx(t *testing.T, b store.Backend) {
	ctx := context.Background()
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	_, err := b.Users.Create(ctx, "acme", store.User{UserName: "ann@example.com", Active: true})
	require.NoError(t, err)
	secret, client, err := oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{
		Tenant: "acme", Name: "App", RedirectURIs: []string{testRedirect}})
	require.NoError(t, err)
	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	require.NoError(t, err)
	var logs strings.Builder
	watched := &notTextLookups{Interactions: b.Interactions}
	h, err := oidc2fa.New(oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: watched,
		Pushed: b.Pushed, Events: b.Events, Authenticator: &authtest.Authenticator{AutoApprove: true},
		Signer: keys, BaseURL: testBase,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	require.NoError(t, err)

	var raw [32]byte
	_, _ = rand.Read(raw[:])
	id := base64.RawURLEncoding.EncodeToString(raw[:]) // the shape of a session id or link token
	var paths []string
	for _, bad := range badTexts {
		esc := url.PathEscape(bad)
		for _, kind := range []string{"login", "enrollment"} {
			paths = append(paths,
				"/"+kind+"/acme/"+id[:42]+esc,       // the length of an id
				"/"+kind+"/acme/"+id+esc,            // one byte more
				"/"+kind+"/acme/"+esc+id[len(bad):], // at the start
				"/"+kind+"/acme/"+id+"/"+esc,        // below the page
				"/"+kind+"/"+esc+"/"+id,             // in the tenant
			)
		}
		paths = append(paths,
			"/enroll/acme/"+id[:42]+esc, "/enroll/"+esc+"/"+id, "/enroll/"+esc,
			"/authorize/"+esc, "/token/"+esc, "/par/"+esc, "/jwks/"+esc, "/"+esc+"/.well-known/openid-configuration",
			"/logo/"+esc+"/"+id[:32], "/logo/acme/"+id[:31]+esc, "/logo/acme/"+esc,
			"/authorize/acme?client_id="+url.QueryEscape(bad)+"&redirect_uri="+url.QueryEscape(testRedirect),
			"/authorize/acme?request_uri=urn:ietf:params:oauth:request_uri:"+url.QueryEscape(bad)+"&client_id="+client.ID,
		)
	}
	check := func(what string, rec *httptest.ResponseRecorder) {
		t.Helper()
		assert.Less(t, rec.Code, 500, "%s: %s", what, rec.Body.String())
	}
	for _, p := range paths {
		for _, method := range []string{"GET", "POST"} {
			req := httptest.NewRequest(method, "/", strings.NewReader("csrf=x"))
			req.URL, err = url.Parse(p)
			require.NoError(t, err, p)
			req.RequestURI = ""
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			check(fmt.Sprintf("%s %q", method, p), rec)
		}
	}

	for _, bad := range badTexts {
		type cred struct{ name, user, pass string }
		creds := []cred{
			{"raw id", client.ID + bad, secret}, {"escaped id", url.QueryEscape(client.ID + bad), secret},
			{"raw secret", client.ID, secret + bad}, {"escaped secret", client.ID, url.QueryEscape(secret + bad)},
			{"only bad", bad, bad},
		}
		for _, endpoint := range []string{"/token/acme", "/par/acme", "/enroll/acme"} {
			form := url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "redirect_uri": {testRedirect},
				"response_type": {"code"}, "scope": {"openid 2fa"}, "login_hint": {"ann@example.com"}}
			for _, c := range creds {
				req := httptest.NewRequest("POST", endpoint, strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.SetBasicAuth(c.user, c.pass)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				check(fmt.Sprintf("%s Basic %s %q", endpoint, c.name, bad), rec)
				if rec.Code == http.StatusUnauthorized || rec.Code == http.StatusBadRequest {
					assert.Contains(t, rec.Body.String(), `"error":"invalid_`, "%s Basic %s", endpoint, c.name)
				}
			}
			f := url.Values{}
			for k, v := range form {
				f[k] = v
			}
			f.Set("client_id", client.ID+bad)
			f.Set("client_secret", secret)
			req := httptest.NewRequest("POST", endpoint, strings.NewReader(f.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			check(fmt.Sprintf("%s form id %q", endpoint, bad), rec)
		}
	}
	assert.Empty(t, logs.String(), "nothing is logged at ERROR")
	assert.Zero(t, watched.n.Load(), "a session id that is not text reached the store")
}

// notTextLookups counts the lookups of interactions by an id that is not text: the provider
// checks an id's shape before any store call.
type notTextLookups struct {
	store.Interactions
	n atomic.Int32
}

func (w *notTextLookups) count(id string) {
	if !utf8.ValidString(id) || strings.IndexByte(id, 0) >= 0 {
		w.n.Add(1)
	}
}

func (w *notTextLookups) Get(ctx context.Context, id string) (*store.Interaction, error) {
	w.count(id)
	return w.Interactions.Get(ctx, id)
}

func (w *notTextLookups) Update(ctx context.Context, id string, fn func(*store.Interaction) error) (*store.Interaction, error) {
	w.count(id)
	return w.Interactions.Update(ctx, id, fn)
}

func (w *notTextLookups) Take(ctx context.Context, id string) (*store.Interaction, error) {
	w.count(id)
	return w.Interactions.Take(ctx, id)
}

// openSQLBackend opens and migrates a sqlstore at dsn, closed when t ends.
func openSQLBackend(t *testing.T, dsn string) store.Backend {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Migrate(ctx))
	return s.Backend()
}

// postgresDSN returns a DSN of the database VISID_TEST_POSTGRES_DSN names whose connections use a
// schema of t's own, dropped when t ends; it skips t without the variable (fails it when
// VISID_REQUIRE_SERVICES=1).
func postgresDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("VISID_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
			t.Fatal("VISID_TEST_POSTGRES_DSN is not set and VISID_REQUIRE_SERVICES=1")
		}
		t.Skip("VISID_TEST_POSTGRES_DSN is not set")
	}
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := fmt.Sprintf("oidc2fa_%x", b)
	_, err = admin.ExecContext(context.Background(), "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("DROP SCHEMA %s: %v", schema, err)
		}
	})
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
