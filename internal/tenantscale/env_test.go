package tenantscale_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/scimbench"
	"github.com/visid/visid/internal/tenantscale"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/sqlstore"
)

// The template tenant every filled tenant copies, and what the URLs start with.
const (
	template     = "tenantscale-template"
	baseURL      = "https://id.example.com"
	redirectURI  = "https://app.example.com/callback"
	codeVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-long-enough-verifier"
	// templateUsers is how many users each tenant has.
	templateUsers = 2
)

// fastArgon keeps a picture login's argon2id to a fraction of a millisecond, so that a sign-in's
// time is the provider's and the store's, which is what may grow with the tenant count.
var fastArgon = picture.Argon2Params{Time: 1, MemoryKiB: 64, Threads: 1}

// points are every enrolled user's points on the harbour.
var points = []picture.Point{{X: 100, Y: 100}, {X: 300, Y: 200}, {X: 500, Y: 400}, {X: 700, Y: 600}, {X: 900, Y: 300}}

// dialect opens a fresh, migrated Store with the key-encryption key kek.
type dialect struct {
	name string
	open func(tb testing.TB, kek []byte) *sqlstore.Store
}

var dialects = []dialect{{"sqlite", openSQLite}, {"postgres", openPostgres}}

// openSQLite is a migrated Store over a new SQLite file in tb's temporary directory.
func openSQLite(tb testing.TB, kek []byte) *sqlstore.Store {
	tb.Helper()
	ctx := context.Background()
	s, err := sqlstore.Config{KeyEncryptionKey: kek}.Open(ctx, "sqlite:"+filepath.Join(tb.TempDir(), "visid.db"))
	require.NoError(tb, err)
	tb.Cleanup(func() { s.Close() })
	require.NoError(tb, s.Migrate(ctx))
	return s
}

// openPostgres is a migrated Store over a schema of its own of VISID_TEST_POSTGRES_DSN's
// database, dropped when tb ends. Without the variable it skips tb (fails it when
// VISID_REQUIRE_SERVICES=1).
func openPostgres(tb testing.TB, kek []byte) *sqlstore.Store {
	tb.Helper()
	dsn := os.Getenv("VISID_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
			tb.Fatal("VISID_TEST_POSTGRES_DSN is not set and VISID_REQUIRE_SERVICES=1")
		}
		tb.Skip("VISID_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", dsn)
	require.NoError(tb, err)
	tb.Cleanup(func() { admin.Close() })
	var b [8]byte
	rand.Read(b[:])
	schema := fmt.Sprintf("t_%x", b)
	_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(tb, err, "CREATE SCHEMA")
	tb.Cleanup(func() {
		if _, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("DROP SCHEMA %s: %v", schema, err)
		}
	})
	u, err := url.Parse(dsn)
	require.NoError(tb, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := sqlstore.Config{KeyEncryptionKey: kek}.Open(ctx, u.String())
	require.NoError(tb, err)
	// Registered after the schema's cleanup, so it runs first: the pool closes before the drop.
	tb.Cleanup(func() { s.Close() })
	require.NoError(tb, s.Migrate(ctx))
	return s
}

// site is a filled store with the handlers a host serves over it.
type site struct {
	tb      testing.TB
	store   *sqlstore.Store
	backend store.Backend
	kek     []byte
	scim    http.Handler
	oidc    http.Handler
	auth    *picture.Authenticator
	// keys is the stored key ring, loaded after the fill.
	keys *oidc2fa.KeyRing
	// tmpl is what the template tenant got; filled, the other tenants (the template not
	// included).
	tmpl   templateTenant
	filled *tenantscale.Result
}

// templateTenant is what makeTemplate made.
type templateTenant struct {
	apiKey       string
	apiKeyID     string
	clientID     string
	clientSecret string
	userIDs      []string
}

// unlimited is a limiter whose limit is never reached.
func unlimited(tb testing.TB) ratelimit.Limiter {
	l, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: 1 << 30, Period: time.Second}})
	require.NoError(tb, err)
	return l
}

// newSite opens a store of d and fills it with tenants tenants, the template included: the
// template as a host makes a tenant (Tenants.Create, an API key, a client, templateUsers users
// provisioned through the SCIM API and enrolled in the picture login, the tenant's EdDSA
// signing key made by the stored key ring as it signs), then tenants-1 copies of it by Fill,
// whose Config.Copy and Keep are copied and keep. The SCIM handler and the provider are those
// of examples/idp, with limits that never bite and a picture login with fastArgon.
func newSite(tb testing.TB, d dialect, tenants int, copied, keep func(int) bool) *site {
	tb.Helper()
	ctx := context.Background()
	s := &site{tb: tb, kek: make([]byte, 32)}
	rand.Read(s.kek)
	s.store = d.open(tb, s.kek)
	s.backend = s.store.Backend()
	b := s.backend
	discard := slog.New(slog.DiscardHandler)
	var err error
	s.scim, err = scimsvc.New(scimsvc.Config{
		Tenants: b.Tenants, Users: b.Users, Groups: b.Groups, APIKeys: b.APIKeys, Events: b.Events,
		BaseURL: baseURL + "/scim/v2", RateLimiter: unlimited(tb), AddressLimiter: unlimited(tb), Logger: discard,
	})
	require.NoError(tb, err)
	s.auth, err = picture.New(picture.Config{
		Credentials: b.Pictures, Peppers: []picture.Pepper{{ID: "p1", Key: bytes.Repeat([]byte{7}, 32)}},
		Argon2: fastArgon, Logger: discard,
	})
	require.NoError(tb, err)

	s.tmpl = s.makeTemplate(ctx)
	start := time.Now()
	s.filled, err = tenantscale.Fill(ctx, tenantscale.Config{
		Store: s.store, KeyEncryptionKey: s.kek, Template: template, Tenants: tenants - 1, Copy: copied, Keep: keep,
	})
	require.NoError(tb, err)
	if s.store.Dialect() == sqlstore.Postgres {
		// What autovacuum does for a database in use; the tables of the set only, as a bare
		// ANALYZE would read every schema of the database.
		_, err := s.store.DB().ExecContext(ctx, "ANALYZE tenants, users, attrs, unique_values, events, event_heads, clients, api_keys, pictures, signing_keys")
		require.NoError(tb, err)
	}
	tb.Logf("%s: %d tenants filled in %v", d.name, tenants, time.Since(start).Round(time.Millisecond))

	// The key ring loads every published key once, as a host's does at start.
	start = time.Now()
	s.keys, err = oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, b.SigningKeys)
	require.NoError(tb, err)
	tb.Logf("%s: the key ring of %d tenants loaded in %v", d.name, tenants, time.Since(start).Round(time.Millisecond))
	s.oidc, err = oidc2fa.New(oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Pushed: b.Pushed, AccessTokens: b.AccessTokens, Events: b.Events, Authenticator: s.auth, Signer: s.keys,
		BaseURL: baseURL + "/oidc", AddressLimiter: unlimited(tb), Logger: discard,
	})
	require.NoError(tb, err)
	return s
}

// makeTemplate makes the template tenant through the API a host uses.
func (s *site) makeTemplate(ctx context.Context) templateTenant {
	tb := s.tb
	b := s.backend
	now := time.Now()
	require.NoError(tb, b.Tenants.Create(ctx, store.Tenant{ID: template, DisplayName: "Tenant " + template, Created: now}))
	var t templateTenant
	var err error
	var key *store.APIKey
	t.apiKey, key, err = scimsvc.IssueAPIKey(ctx, b.APIKeys, scimsvc.KeySpec{Name: "Entra ID provisioning", Tenants: []string{template}, Now: now})
	require.NoError(tb, err)
	t.apiKeyID = key.ID
	var client *store.Client
	t.clientSecret, client, err = oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{
		Tenant: template, Name: "App", RedirectURIs: []string{redirectURI}, Now: now})
	require.NoError(tb, err)
	t.clientID = client.ID
	for i := range templateUsers {
		body := strings.ReplaceAll(scimbench.UserJSON(int64(i)), "@example.com", "@"+template+".example.com")
		rec := s.serveSCIM(t.apiKey, "POST", template, "/Users", body)
		require.Equal(tb, http.StatusCreated, rec.Code, "body: %s", rec.Body)
		id := jsonField(tb, rec.Body.Bytes(), "id")
		t.userIDs = append(t.userIDs, id)
		require.NoError(tb, s.auth.Enroll(ctx, template, id, "harbour", points))
	}
	// A key ring makes a tenant's EdDSA key when the tenant first signs; a stored one stores it.
	keys, err := oidc2fa.LoadKeyRing(ctx, oidc2fa.KeyRingConfig{}, b.SigningKeys)
	require.NoError(tb, err)
	_, err = keys.Sign(ctx, template, []byte(`{}`))
	require.NoError(tb, err)
	return t
}

// serveSCIM sends one SCIM request with the API key secret to tenant's path.
func (s *site) serveSCIM(secret, method, tenant, path, body string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "/"+tenant+path, r)
	req.Header.Set("Authorization", "Bearer "+secret)
	if body != "" {
		req.Header.Set("Content-Type", "application/scim+json")
	}
	rec := httptest.NewRecorder()
	s.scim.ServeHTTP(rec, req)
	return rec
}

// jsonField is the string value of a top-level field of a JSON object.
func jsonField(tb testing.TB, body []byte, name string) string {
	tb.Helper()
	var m map[string]any
	require.NoError(tb, json.Unmarshal(body, &m))
	v, ok := m[name].(string)
	require.True(tb, ok, "no string %q in %s", name, body)
	return v
}

// signIn is one whole second-factor sign-in of the user userName of tenant at client with its
// secret: the authorization request (PKCE, login_hint), the picture login's page, its picture
// and the attempt with the enrolled points, then the token request. It fails tb unless an ID
// token comes back.
func (s *site) signIn(tb testing.TB, tenant, clientID, secret, userName string) {
	br := &browser{tb: tb, h: s.oidc, cookies: map[string]*http.Cookie{}}
	sum := sha256.Sum256([]byte(codeVerifier))
	q := url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI},
		"scope": {"openid 2fa"}, "state": {"st"}, "nonce": {"n"}, "login_hint": {userName},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	rec := br.do("GET", "/oidc/authorize/"+tenant+"?"+q.Encode(), nil)
	if rec.Code != http.StatusSeeOther {
		tb.Fatalf("authorize: status %d: %s", rec.Code, rec.Body)
	}
	login := localPath(tb, rec.Header().Get("Location"))
	page := br.do("GET", login, nil)
	if page.Code != http.StatusOK {
		tb.Fatalf("login page: status %d: %s", page.Code, page.Body)
	}
	m := csrfPattern.FindSubmatch(page.Body.Bytes())
	if m == nil {
		tb.Fatalf("no CSRF field in the login page: %s", page.Body)
	}
	if img := br.do("GET", login+"/image", nil); img.Code != http.StatusOK {
		tb.Fatalf("login image: status %d", img.Code)
	}
	rec = br.do("POST", login, url.Values{oidc2fa.CSRFField: {string(m[1])}, "points": {picture.FormatPoints(points)}})
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), redirectURI+"?") {
		tb.Fatalf("login: status %d, Location %q: %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	cb, err := url.Parse(rec.Header().Get("Location"))
	if err != nil {
		tb.Fatal(err)
	}
	rec = br.do("POST", "/oidc/token/"+tenant, url.Values{
		"grant_type": {"authorization_code"}, "code": {cb.Query().Get("code")}, "redirect_uri": {redirectURI},
		"code_verifier": {codeVerifier}, "client_id": {clientID}, "client_secret": {secret},
	})
	if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"id_token"`)) {
		tb.Fatalf("token: status %d: %s", rec.Code, rec.Body)
	}
}

var csrfPattern = regexp.MustCompile(`name="` + oidc2fa.CSRFField + `" value="([^"]+)"`)

// localPath is the path and query of a URL of the site.
func localPath(tb testing.TB, loc string) string {
	u, err := url.Parse(loc)
	if err != nil {
		tb.Fatal(err)
	}
	if u.RawQuery != "" {
		return u.Path + "?" + u.RawQuery
	}
	return u.Path
}

// browser sends requests to the provider, mounted at /oidc/, keeping the cookies it sets.
type browser struct {
	tb      testing.TB
	h       http.Handler
	cookies map[string]*http.Cookie
}

func (b *browser) do(method, target string, form url.Values) *httptest.ResponseRecorder {
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	for _, c := range b.cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	http.StripPrefix("/oidc", b.h).ServeHTTP(rec, req)
	for _, c := range rec.Result().Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	return rec
}
