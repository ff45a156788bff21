package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/store"
)

// seedPasskey stores a passkey of user in tenant of the store db, as an enrollment would.
func seedPasskey(t *testing.T, db string, p store.Passkey) {
	t.Helper()
	d, err := openDB(t.Context(), db)
	require.NoError(t, err)
	defer d.close()
	if p.PublicKey == nil {
		p.PublicKey = []byte("COSE key of " + p.Name)
	}
	if p.AttestationType == "" {
		p.AttestationType = "none"
	}
	require.NoError(t, d.Passkeys.Create(t.Context(), p))
}

// passkeyUsers makes the store of TestUserShowPasskeys and TestUserRemovePasskey: tenant acme
// with ann (a picture password and two passkeys, the second used), bob (one passkey and no
// picture password) and carol (neither). It returns the store and the users' ids.
func passkeyUsers(t *testing.T) (db string, ids map[string]string) {
	t.Helper()
	db = newStore(t)
	runCmd(t, "tenant", "create", "acme", "-db", db)
	ctx := t.Context()
	d, err := openDB(ctx, db)
	require.NoError(t, err)
	ids = map[string]string{}
	for _, name := range []string{"ann", "bob", "carol"} {
		u, err := d.Users.Create(ctx, "acme", store.User{UserName: name, Active: true,
			Emails: []store.MultiValue{{Value: name + "@example.com", Primary: true}}})
		require.NoError(t, err)
		ids[name] = u.ID
	}
	auth, err := pictureAdmin(d.Backend)
	require.NoError(t, err)
	require.NoError(t, auth.Enroll(ctx, "acme", ids["ann"], demoImage, demoPoints))
	d.close()

	seedPasskey(t, db, store.Passkey{Tenant: "acme", UserID: ids["ann"], ID: []byte{0xfb, 0xff, 0x01, 0x02}, Name: "Phone",
		BackupEligible: true, Created: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)})
	seedPasskey(t, db, store.Passkey{Tenant: "acme", UserID: ids["ann"], ID: []byte("security key 1"), Name: `Key "blue"`,
		SignCount: 41, Created: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)})
	seedPasskey(t, db, store.Passkey{Tenant: "acme", UserID: ids["bob"], ID: []byte("bob's laptop"), Name: "Laptop",
		BackupEligible: true, Created: time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)})
	d, err = openDB(ctx, db)
	require.NoError(t, err)
	require.NoError(t, d.Passkeys.Use(ctx, "acme", ids["ann"], []byte("security key 1"),
		store.PasskeyUse{SignCount: 42, At: time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC), OldSignCount: 41}))
	d.close()
	return db, ids
}

// showUserOut is what idp user show prints for user of tenant acme in db.
func showUserOut(t *testing.T, db, user string) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"user", "show", "--tenant", "acme", "--user", user, "-db", db}, &out, io.Discard))
	return out.String()
}

// TestUserShowPasskeys: user show ends with the count of the user's passkeys and a line for
// each, in the order they were added, with the id user remove-passkey takes; for users with and
// without a picture password, and with none.
func TestUserShowPasskeys(t *testing.T) {
	db, ids := passkeyUsers(t)

	out := showUserOut(t, db, "ann")
	assert.Contains(t, out, "\npicture_enrolled=true\n")
	assert.True(t, strings.HasSuffix(out, "\nlocked_until=no\npasskeys=2\n"+
		`passkey=-_8BAg name="Phone" created=2026-11-01T09:00:00Z last_used=never backup_eligible=true sign_count=0`+"\n"+
		`passkey=c2VjdXJpdHkga2V5IDE name="Key \"blue\"" created=2026-11-02T09:00:00Z last_used=2026-11-20T08:30:00Z backup_eligible=false sign_count=42`+"\n"),
		"%s", out)
	assert.NotContains(t, out, "COSE", "no public key")

	assert.Equal(t, "user_id="+ids["bob"]+"\nuser_name=bob\nactive=true\npicture_enrolled=false\npasskeys=1\n"+
		`passkey=Ym9iJ3MgbGFwdG9w name="Laptop" created=2026-11-03T09:00:00Z last_used=never backup_eligible=true sign_count=0`+"\n",
		showUserOut(t, db, "bob@example.com"))
	assert.Equal(t, "user_id="+ids["carol"]+"\nuser_name=carol\nactive=true\npicture_enrolled=false\npasskeys=0\n",
		showUserOut(t, db, "carol"))
}

// TestUserRemovePasskey: user remove-passkey removes the passkey that user show names, which user
// show then no longer lists, and records it as the administrator's secondfactor.passkey_removed;
// an id the user does not hold is one line and exit status 1, a malformed or missing one a usage
// error (exit status 2).
func TestUserRemovePasskey(t *testing.T) {
	db, ids := passkeyUsers(t)
	ctx := t.Context()

	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"user", "remove-passkey", "--tenant", "acme", "--user", "ann@example.com",
		"--passkey", "-_8BAg", "-db", db}, &out, io.Discard))
	assert.Equal(t, "user_id="+ids["ann"]+"\nremoved_passkey=-_8BAg\npasskeys_left=1\n", out.String())
	show := showUserOut(t, db, "ann")
	assert.Contains(t, show, "\npasskeys=1\npasskey=c2VjdXJpdHkga2V5IDE ")
	assert.NotContains(t, show, "-_8BAg")

	// Padding is allowed; bob's last passkey leaves him none.
	out.Reset()
	require.NoError(t, run(ctx, []string{"user", "remove-passkey", "--tenant=acme", "--user=bob", "--passkey=Ym9iJ3MgbGFwdG9w", "-db", db}, &out, io.Discard))
	assert.Equal(t, "user_id="+ids["bob"]+"\nremoved_passkey=Ym9iJ3MgbGFwdG9w\npasskeys_left=0\n", out.String())
	assert.True(t, strings.HasSuffix(showUserOut(t, db, "bob"), "\npicture_enrolled=false\npasskeys=0\n"))

	out.Reset()
	require.NoError(t, run(ctx, []string{"events", "--tenant", "acme", "-db", db}, &out, io.Discard))
	var removed []map[string]any
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		if m["type"] == string(store.EventPasskeyRemoved) {
			removed = append(removed, m)
		}
	}
	require.Len(t, removed, 2, "%s", out.String())
	assert.Equal(t, "admin", removed[0]["actor"])
	assert.Equal(t, map[string]any{"kind": "user", "id": ids["ann"]}, removed[0]["subject"])
	assert.Equal(t, map[string]any{"passkey": "-_8BAg", "name": "Phone"}, removed[0]["data"])
	assert.Equal(t, ids["bob"], removed[1]["subject"].(map[string]any)["id"])

	for _, tt := range []struct {
		name  string
		args  []string
		want  string
		usage bool // a *cli.UsageError (exit status 2); else exit status 1
	}{
		{"removed already", []string{"--user", "ann", "--passkey", "-_8BAg"},
			`idp: user "ann" has no passkey -_8BAg (idp user show --tenant acme --user ann lists them)`, false},
		{"another user's", []string{"--user", "carol", "--passkey", "c2VjdXJpdHkga2V5IDE"},
			`idp: user "carol" has no passkey c2VjdXJpdHkga2V5IDE`, false},
		{"unknown user", []string{"--user", "dave", "--passkey", "c2VjdXJpdHkga2V5IDE"},
			`idp: tenant "acme" has no user with the userName, primary email or id "dave"`, false},
		{"not base64url", []string{"--user", "ann", "--passkey", "c2V+jdXJ/pdHk"},
			`idp: --passkey "c2V+jdXJ/pdHk": want a passkey id in base64url`, true},
		{"not base64 at all", []string{"--user", "ann", "--passkey", "a"},
			`idp: --passkey "a": want a passkey id in base64url`, true},
		{"missing", []string{"--user", "ann"}, "idp: user remove-passkey needs --passkey", true},
		{"misspelt flag", []string{"--user", "ann", "--passkey-id", "c2VjdXJpdHkga2V5IDE"},
			"idp: unknown flag --passkey-id; did you mean --passkey?", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(ctx, append([]string{"user", "remove-passkey", "--tenant", "acme", "-db", db}, tt.args...), &stdout, &stderr)
			require.Error(t, err)
			var ue *cli.UsageError
			assert.Equal(t, tt.usage, errors.As(err, &ue), "%v", err)
			status := exitCode(err, &stderr)
			first, _, _ := strings.Cut(stderr.String(), "\n")
			assert.True(t, strings.HasPrefix(first, tt.want), "%q", stderr.String())
			if tt.usage {
				assert.Equal(t, 2, status)
				assert.Equal(t, "Run \"idp help user\" for usage.\n", strings.TrimPrefix(stderr.String(), first+"\n"))
			} else {
				assert.Equal(t, 1, status)
				assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
			}
			assert.Empty(t, stdout.String())
		})
	}
	assert.Contains(t, showUserOut(t, db, "ann"), "\npasskeys=1\npasskey=c2VjdXJpdHkga2V5IDE ", "the refusals removed nothing")
}

// TestPasskeyOfferedOnEnrollmentPage: the service started as the README says (on 127.0.0.1, no
// -base-url) offers "Add a passkey" on an enrollment link's page once the tenant allows passkeys,
// and not before.
func TestPasskeyOfferedOnEnrollmentPage(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "idp.db")
	s := startService(t, "-db", db)
	base := strings.TrimSuffix(s.vars["issuer"], "/oidc/demo")
	require.Regexp(t, `^http://localhost:\d+$`, base)

	enrollmentPage := func() string {
		t.Helper()
		link := runCmd(t, "enroll-link", "--tenant", "demo", "--user", "alice", "-base-url", base, "-db", db)["enrollment_url"]
		require.True(t, strings.HasPrefix(link, base+"/oidc/enroll/demo/"), "%q", link)
		jar, err := cookiejar.New(nil)
		require.NoError(t, err)
		browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := browser.Get(link)
		require.NoError(t, err)
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", page)
		form := url.Values{}
		for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`).FindAllSubmatch(page, -1) {
			form.Set(string(m[1]), string(m[2]))
		}
		resp, err = browser.PostForm(link, form)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		next, err := resp.Location()
		require.NoError(t, err)
		resp, err = browser.Get(next.String())
		require.NoError(t, err)
		defer resp.Body.Close()
		page, _ = io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", page)
		return string(page)
	}

	assert.NotContains(t, enrollmentPage(), `id="passkey-start"`, "the demo tenant allows the picture password only")
	runCmd(t, "tenant", "set", "--tenant", "demo", "--passkeys", "allowed", "-db", db)
	assert.Contains(t, enrollmentPage(), `id="passkey-start"`, "Add a passkey, on localhost")
}
