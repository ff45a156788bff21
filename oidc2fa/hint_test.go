package oidc2fa_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/testclock"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/oidc2fa/rp"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// forEachHintBackend runs test as a subtest on each store visid ships: memstore, SQLite and
// PostgreSQL (skipped without VISID_TEST_POSTGRES_DSN, failed without it when
// VISID_REQUIRE_SERVICES=1).
func forEachHintBackend(t *testing.T, test func(t *testing.T, b store.Backend)) {
	t.Helper()
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
		t.Run(bk.name, func(t *testing.T) { test(t, bk.open(t)) })
	}
}

// logBuffer collects log lines; safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// hintEnv is the provider of newEnv over backend b, with PAR offered, access tokens for the
// UserInfo endpoint, the auto-approving test authenticator and its log kept in logs.
type hintEnv struct {
	*env
	users store.Users
	logs  *logBuffer
}

func newHintEnv(t *testing.T, b store.Backend) *hintEnv {
	t.Helper()
	ctx := context.Background()
	c := testclock.At(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme", Created: c.Now()}))
	secret, client, err := oidc2fa.RegisterClient(ctx, b.Clients, oidc2fa.ClientSpec{
		Tenant: "acme", Name: "App", RedirectURIs: []string{testRedirect}, Now: c.Now(), AccessToken: true})
	require.NoError(t, err)
	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{Now: c.Now})
	require.NoError(t, err)
	auth := &authtest.Authenticator{AutoApprove: true, Now: c.Now}
	logs := &logBuffer{}
	h, err := oidc2fa.New(oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Pushed: b.Pushed, AccessTokens: b.AccessTokens, Authenticator: auth, Signer: keys, BaseURL: testBase, Now: c.Now,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	require.NoError(t, err)
	return &hintEnv{env: &env{t: t, clock: c, auth: auth, keys: keys, handler: h, client: client, secret: secret},
		users: b.Users, logs: logs}
}

// user creates an active user of tenant acme with userName name and primary email email ("" for
// none).
func (e *hintEnv) user(name, email string) *store.User {
	e.t.Helper()
	u := store.User{UserName: name, Active: true}
	if email != "" {
		u.Emails = []store.MultiValue{{Value: email, Primary: true, Type: "work"}}
	}
	created, err := e.users.Create(context.Background(), "acme", u)
	require.NoError(e.t, err)
	return created
}

// signIn runs a sign-in for hint, by a plain authorization request or a pushed one, with the
// auto-approving authenticator, and returns the callback's parameters.
func (e *hintEnv) signIn(hint string, pushed bool) url.Values {
	e.t.Helper()
	p := e.authParams()
	p.Set("login_hint", hint)
	target := "/authorize/acme?" + p.Encode()
	if pushed {
		p.Set("client_secret", e.secret)
		target = e.parURL(e.pushed(p))
	}
	return callback(e.t, e.browser().follow("GET", target, nil))
}

// TestHintNamingTwoUsersNamesNobody: a login_hint that is one user's userName and another's
// primary email (or one user's id and another's userName), compared with the store's folding,
// names nobody: the sign-in ends as for an unknown user, by a plain or a pushed request. Hints
// that name one user still do.
func TestHintNamingTwoUsersNamesNobody(t *testing.T) {
	forEachHintBackend(t, func(t *testing.T, b store.Backend) {
		e := newHintEnv(t, b)
		alice := e.user("alice", "alice@example.com")
		twin := e.user("alice@example.com", "mallory@example.com") // alice's email as a userName
		ross := e.user("ross", "ross@example.com")
		rossTwin := e.user("roſſ@example.com", "other@example.com") // folds to ross's email
		e.user(strings.ToUpper(ross.ID), "")                        // ross's id as a userName
		for _, hint := range []string{
			"alice@example.com", "ALICE@EXAMPLE.COM", "Alice@Example.com",
			"ross@example.com", "ROSS@example.com", "roſſ@example.com", "ROſſ@EXAMPLE.COM",
			ross.ID, strings.ToUpper(ross.ID),
		} {
			for _, pushed := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s pushed=%v", hint, pushed), func(t *testing.T) {
					q := e.signIn(hint, pushed)
					assert.Equal(t, "access_denied", q.Get("error"), "callback: %v", q)
					assert.Empty(t, q.Get("code"), "nobody passed")
				})
			}
		}
		// The log says why, and names neither the hint nor a user.
		logs := strings.ToLower(e.logs.String())
		assert.Contains(t, logs, "the login_hint names more than one user")
		for _, name := range []string{"alice", "mallory", "ross", "roſſ", ross.ID, alice.ID, twin.ID, rossTwin.ID} {
			assert.False(t, strings.Contains(logs, strings.ToLower(name)), "the log names %q", name)
		}
		for hint, want := range map[string]*store.User{
			"alice": alice, "ALICE": alice, alice.ID: alice,
			"mallory@example.com": twin, "MALLORY@example.com": twin,
			"ross": ross, "other@example.com": rossTwin,
		} {
			t.Run(hint+" names one user", func(t *testing.T) {
				q := e.signIn(hint, true)
				require.NotEmpty(t, q.Get("code"), "callback: %v", q)
				_, claims := decodeJWT(t, e.redeem(q.Get("code")))
				assert.Equal(t, want.ID, claims["sub"])
			})
		}
	})
}

// TestIDTokenNamesOnlyItsUser: the ID token's preferred_username and email claims, and
// UserInfo's, are there only when they name their user and nobody else, so a relying party that
// compares its first factor's user with them, in either response, can only accept that user. One
// rule decides both: UserInfo says exactly what the ID token says. mallory, whose primary email
// is alice's (in another case, or folded), passes her own second factor with the hint "mallory":
// neither response carries an email, and rp's CheckUser refuses her for alice. Every shape of
// collision is covered: a userName that is another's primary email, a primary email that is
// another's userName, a primary email two users share, a userName that is another's id, each in
// other cases and Unicode folds.
func TestIDTokenNamesOnlyItsUser(t *testing.T) {
	forEachHintBackend(t, func(t *testing.T, b store.Backend) {
		e := newHintEnv(t, b)
		alice := e.user("alice", "alice@example.com")
		mallory := e.user("mallory", "ALICE@example.com")
		ross := e.user("ross", "ross@example.com")
		mallory2 := e.user("mallory2", "ROſſ@Example.com")
		idTwin := e.user(strings.ToUpper(ross.ID), "idtwin@example.com")
		carol := e.user("carol", "carol@example.com")
		nameTwin := e.user("carol.lee@example.com", "nametwin@example.com") // a userName that is erin's email
		erin := e.user("erin", "Carol.Lee@Example.com")
		dave := e.user("dave", "dave@example.com")
		daveTwin := e.user("davetwin", "DAVE") // a primary email that is dave's userName
		kelvin := e.user("kelvin", "kate@example.com")
		kTwin := e.user("ktwin", "Kate@example.com") // KELVIN SIGN folds to k: kelvin's email
		tests := []struct {
			hint          string
			user          *store.User
			name, email   string // the claims; "" for none
			refused, pass []string
		}{
			{"mallory", mallory, "mallory", "", []string{"alice@example.com", "ALICE@example.com", "alice"}, []string{"mallory", mallory.ID}},
			{"mallory2", mallory2, "mallory2", "", []string{"ross@example.com", "ROSS@EXAMPLE.COM", "roſſ@example.com"}, []string{"MALLORY2"}},
			{"alice", alice, "alice", "", []string{"alice@example.com", "mallory"}, []string{"alice", alice.ID}},
			{"idtwin@example.com", idTwin, "", "idtwin@example.com", []string{ross.ID, strings.ToUpper(ross.ID)}, []string{"IDTWIN@example.com"}},
			{"carol", carol, "carol", "carol@example.com", []string{"alice@example.com"}, []string{"carol", "Carol@Example.com"}},
			{"nametwin@example.com", nameTwin, "", "nametwin@example.com", []string{"carol.lee@example.com", "erin"}, []string{"NAMETWIN@example.com"}},
			{"erin", erin, "erin", "", []string{"carol.lee@example.com", "CAROL.LEE@EXAMPLE.COM"}, []string{"erin"}},
			{"dave@example.com", dave, "", "dave@example.com", []string{"davetwin"}, []string{"dave@example.com"}},
			{"davetwin", daveTwin, "davetwin", "", []string{"dave", "DAVE"}, []string{"davetwin"}},
			{"kelvin", kelvin, "kelvin", "", []string{"kate@example.com", "ktwin"}, []string{"kelvin"}},
			{"ktwin", kTwin, "ktwin", "", []string{"kate@example.com", "\u212aate@example.com", "kelvin"}, []string{"ktwin"}},
		}
		for _, tc := range tests {
			for _, pushed := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s pushed=%v", tc.hint, pushed), func(t *testing.T) {
					q := e.signIn(tc.hint, pushed)
					require.NotEmpty(t, q.Get("code"), "callback: %v", q)
					resp := e.tokenResponse(q.Get("code"))
					_, claims := decodeJWT(t, resp["id_token"].(string))
					assert.Equal(t, tc.user.ID, claims["sub"])
					rec := e.userinfo("GET", "acme", "Bearer "+resp["access_token"].(string))
					require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
					var info map[string]any
					require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &info))
					assert.Equal(t, tc.user.ID, info["sub"])
					for _, r := range []struct {
						what   string
						claims map[string]any
					}{{"ID token", claims}, {"UserInfo", info}} {
						res := &rp.Result{Subject: fmt.Sprint(r.claims["sub"])}
						if tc.name == "" {
							assert.NotContains(t, r.claims, "preferred_username", r.what)
						} else {
							assert.Equal(t, tc.name, r.claims["preferred_username"], r.what)
							res.PreferredUsername = tc.name
						}
						if tc.email == "" {
							assert.NotContains(t, r.claims, "email", r.what)
						} else {
							assert.Equal(t, tc.email, r.claims["email"], r.what)
							res.Email = tc.email
						}
						for _, u := range tc.refused {
							assert.ErrorIs(t, res.CheckUser(u), rp.ErrWrongUser, "%s: the claims of %s must not pass for %q", r.what, tc.hint, u)
						}
						for _, u := range tc.pass {
							assert.NoError(t, res.CheckUser(u), "%s: the claims of %s pass for %q", r.what, tc.hint, u)
						}
					}
				})
			}
		}
	})
}

// TestEnrollmentHintNamingTwoUsers: an enrollment for a name that matches two users enrolls
// nobody: the client's request and an administrator's link are refused as for an unknown user.
func TestEnrollmentHintNamingTwoUsers(t *testing.T) {
	forEachHintBackend(t, func(t *testing.T, b store.Backend) {
		e := newHintEnv(t, b)
		e.user("alice", "alice@example.com")
		e.user("ALICE@example.com", "twin@example.com")
		post := func(hint string) (int, string) {
			rec := e.postEnroll("acme", url.Values{"client_id": {e.client.ID}, "client_secret": {e.secret},
				"login_hint": {hint}, "redirect_uri": {testRedirect}, "state": {"st"}}, nil)
			return rec.Code, rec.Body.String()
		}
		unknownStatus, unknownBody := post("nobody@example.com")
		require.Equal(t, http.StatusBadRequest, unknownStatus, unknownBody)
		for _, hint := range []string{"alice@example.com", "Alice@EXAMPLE.com"} {
			status, body := post(hint)
			assert.Equal(t, unknownStatus, status, hint)
			assert.Equal(t, unknownBody, body, hint)
			_, err := oidc2fa.NewEnrollmentLink(context.Background(), oidc2fa.Config{
				Users: b.Users, Clients: b.Clients, Interactions: b.Interactions, BaseURL: testBase,
				Authenticator: e.auth,
			}, oidc2fa.EnrollmentRequest{Tenant: "acme", User: hint})
			assert.ErrorIs(t, err, oidc2fa.ErrUnknownUser, hint)
		}
		status, body := post("alice")
		assert.Equal(t, http.StatusOK, status, "a name of one user still enrolls: %s", body)
	})
}
