package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

func TestGroupCommandWithoutSubcommand(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"tenant"}, "tenant needs a subcommand: create, list"},
		{[]string{"apikey"}, "apikey needs a subcommand: create, list, revoke"},
		{[]string{"client"}, "client needs a subcommand: create, list, rotate-secret, delete, set-redirect-uris, set-require-par"},
		{[]string{"user"}, "user needs a subcommand: show, unlock, remove-passkey"},
		{[]string{"webhook"}, "webhook needs a subcommand: add, list, delete, resume"},
		{[]string{"tenant", "delete", "acme"}, `tenant has no subcommand "delete"; its subcommands are create, list`},
		{[]string{"client", "show", "client_x"}, `client has no subcommand "show"; its subcommands are create, list, rotate-secret`},
		{[]string{"client", "--tenant", "acme"}, "client needs a subcommand: create, list"},
		{[]string{"user", "lock", "--tenant", "acme"}, `user has no subcommand "lock"; its subcommands are show, unlock, remove-passkey`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tt.args, &stdout, &stderr)
			var ue *cli.UsageError
			require.ErrorAs(t, err, &ue)
			assert.Empty(t, stdout.String())
			assert.Empty(t, stderr.String(), "not the whole usage")
			var exitOut bytes.Buffer
			assert.Equal(t, 2, exitCode(err, &exitOut))
			assert.True(t, strings.HasPrefix(exitOut.String(), "idp: "+tt.want), "%s", exitOut.String())
			assert.Contains(t, exitOut.String(), `Run "idp help" for usage.`)
		})
	}
	for _, args := range [][]string{{"tenant", "-h"}, {"user", "--help"}, {"user", "unlock", "-h"}, {"apikey", "list", "-h"}, {"tenant", "list", "-help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.NoError(t, run(t.Context(), args, &stdout, &stderr))
			assert.Equal(t, usage, stdout.String())
		})
	}
}

// TestUnknownTenantRefused: every command that takes --tenant refuses a tenant that is not in
// the store with one message and exit status 1, and changes nothing.
func TestUnknownTenantRefused(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "-db", db)
	for _, args := range [][]string{
		{"apikey", "create", "--tenant", "nope"},
		{"apikey", "list", "--tenant", "nope"},
		{"client", "create", "--tenant", "nope", "--name", "App", "--redirect-uri", "https://app.example.com/cb"},
		{"client", "list", "--tenant", "nope"},
		{"client", "rotate-secret", "--tenant", "nope", "client_x"},
		{"client", "delete", "--tenant", "nope", "client_x"},
		{"client", "set-redirect-uris", "--tenant", "nope", "client_x", "--redirect-uri", "https://app.example.com/cb"},
		{"client", "set-require-par", "--tenant", "nope", "client_x"},
		{"enroll-link", "--tenant", "nope", "--user", "ann"},
		{"user", "show", "--tenant", "nope", "--user", "ann"},
		{"user", "unlock", "--tenant", "nope", "--user", "ann"},
		{"user", "remove-passkey", "--tenant", "nope", "--user", "ann", "--passkey", "AQID"},
		{"webhook", "add", "--tenant", "nope", "--url", "https://h.example.com/"},
		{"webhook", "list", "--tenant", "nope"},
		{"webhook", "delete", "--tenant", "nope", "webhook_x"},
		{"webhook", "resume", "--tenant", "nope", "webhook_x"},
		{"events", "--tenant", "nope"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), append(args, "-db", db), &stdout, &stderr)
			require.Error(t, err)
			var exitOut bytes.Buffer
			assert.Equal(t, 1, exitCode(err, &exitOut))
			assert.Equal(t, "idp: there is no tenant \"nope\" in this store (idp tenant create nope makes it)\n", exitOut.String())
			assert.Empty(t, stdout.String())
		})
	}
	var keys bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"apikey", "list", "--tenant", "acme", "-db", db}, &keys, io.Discard))
	assert.Empty(t, keys.String(), "no key was issued")
	var tenants bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"tenant", "list", "-db", db}, &tenants, io.Discard))
	assert.Regexp(t, `^tenant=acme name="" created=\S+\n$`, tenants.String(), "no tenant was made")
}

func TestTenantAndAPIKeyList(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "globex", "--name", "Globex", "-db", db)
	runCmd(t, "tenant", "create", "acme", "--name", "Acme Corp", "-db", db)
	k1 := runCmd(t, "apikey", "create", "--tenant", "acme", "--name", "Entra ID", "-db", db)
	k2 := runCmd(t, "apikey", "create", "--tenant", "acme", "--name", "Okta", "-db", db)
	runCmd(t, "apikey", "create", "--tenant", "globex", "--name", "Other", "-db", db)
	runCmd(t, "apikey", "revoke", k2["api_key_id"], "-db", db)

	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"tenant", "list", "-db", db}, &out, io.Discard))
	stamp := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	assert.Regexp(t, `^tenant=acme name="Acme Corp" created=`+stamp+`\ntenant=globex name="Globex" created=`+stamp+`\n$`, out.String())

	// The service uses the first key once, so it has a last use.
	d, err := openDB(t.Context(), db)
	require.NoError(t, err)
	require.NoError(t, d.APIKeys.Touch(t.Context(), k1["api_key_id"], time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)))
	d.close()

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"apikey", "list", "--tenant", "acme", "-db", db}, &out, io.Discard))
	assert.Regexp(t, `^api_key_id=`+k1["api_key_id"]+` name="Entra ID" created=`+stamp+` last_used=2026-03-04T05:06:07Z revoked=false\n`+
		`api_key_id=`+k2["api_key_id"]+` name="Okta" created=`+stamp+` last_used=never revoked=true revoked_at=`+stamp+`\n$`, out.String())
	assert.NotContains(t, out.String(), "scimkey_", "no secret")
	assert.NotContains(t, out.String(), strings.TrimPrefix(k1["scim_api_key"], "scimkey_"))

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"apikey", "list"}, "apikey list needs --tenant"},
		{[]string{"apikey", "list", "acme"}, `apikey list: unexpected argument "acme"`},
		{[]string{"tenant", "list", "acme"}, `tenant list: unexpected argument "acme"`},
		{[]string{"apikey", "list", "--tenant", "Not A Tenant"}, `--tenant "Not A Tenant" is not a tenant id`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout bytes.Buffer
			err := run(t.Context(), append(tt.args, "-db", db), &stdout, io.Discard)
			var ue *cli.UsageError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), tt.want)
			assert.Empty(t, stdout.String())
		})
	}
}

// TestUserShowFamiliarNetworks: an operator sees the networks where a user passed lately, the
// most recent first, which the user-wide lock leaves open; one passed 40 days ago is not listed.
func TestUserShowFamiliarNetworks(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "-db", db)
	ctx := t.Context()
	d, err := openDB(ctx, db)
	require.NoError(t, err)
	ann, err := d.Users.Create(ctx, "acme", store.User{UserName: "ann", Active: true})
	require.NoError(t, err)
	auth, err := pictureAdmin(d.Backend)
	require.NoError(t, err)
	require.NoError(t, auth.Enroll(ctx, "acme", ann.ID, demoImage, demoPoints))
	now := time.Now()
	for _, s := range []store.PictureSuccess{
		{Network: "192.0.2.0/24", At: now.Add(-40 * 24 * time.Hour)},
		{Network: "2001:db8:aa::/48", At: now.Add(-48 * time.Hour)},
		{Network: "198.51.100.0/24", At: now.Add(-time.Hour)},
	} {
		s.KeepFamiliar = picture.DefaultFamiliarNetworks
		require.NoError(t, d.Pictures.Succeeded(ctx, "acme", ann.ID, s))
	}
	for i := range picture.DefaultUserLockNetworks {
		_, err := d.Pictures.AddFailure(ctx, "acme", ann.ID, fmt.Sprintf("2001:db8:%d::/48", i), now)
		require.NoError(t, err)
	}
	d.close()

	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"user", "show", "--tenant", "acme", "--user", "ann", "-db", db}, &out, io.Discard))
	stamp := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	assert.Regexp(t, `\nfailures=5\nnetworks=5\nlocked_until=`+stamp+`\nlock=all networks=5 failures=5 until=`+stamp+
		`\nfamiliar=198\.51\.100\.0/24 passed=`+regexp.QuoteMeta(formatTime(now.Add(-time.Hour)))+
		`\nfamiliar=2001:db8:aa::/48 passed=`+regexp.QuoteMeta(formatTime(now.Add(-48*time.Hour)))+`\npasskeys=0\n$`, out.String())
}

// TestUserShowAndUnlock: an operator sees that a user's factor is locked, unlocks it, and the
// unlock is the administrator's secondfactor.unlocked event.
func TestUserShowAndUnlock(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "-db", db)
	ctx := t.Context()
	d, err := openDB(ctx, db)
	require.NoError(t, err)
	ann, err := d.Users.Create(ctx, "acme", store.User{UserName: "ann", Active: true,
		Emails: []store.MultiValue{{Value: "ann@example.com", Primary: true}}})
	require.NoError(t, err)
	_, err = d.Users.Create(ctx, "acme", store.User{UserName: "bob", Active: true})
	require.NoError(t, err)
	auth, err := pictureAdmin(d.Backend)
	require.NoError(t, err)
	require.NoError(t, auth.Enroll(ctx, "acme", ann.ID, demoImage, demoPoints))
	// An outsider's five failures lock one network; failures from four more make the
	// user-wide lock (picture.DefaultUserLockNetworks).
	for range 5 {
		_, err := d.Pictures.AddFailure(ctx, "acme", ann.ID, "203.0.113.0/24", time.Now())
		require.NoError(t, err)
	}
	d.close()

	stamp := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	for _, who := range []string{"ann", "ANN", "ann@example.com", ann.ID} {
		t.Run("show locked "+who, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, run(ctx, []string{"user", "show", "--tenant", "acme", "--user", who, "-db", db}, &out, io.Discard))
			assert.Regexp(t, `^user_id=`+ann.ID+`\nuser_name=ann\nactive=true\npicture_enrolled=true\nimage=`+demoImage+
				`\nenrolled=`+stamp+`\nfailures=5\nnetworks=1\nlocked_until=`+stamp+`\nlock=203\.0\.113\.0/24 failures=5 until=`+stamp+`\npasskeys=0\n$`,
				out.String())
		})
	}

	d, err = openDB(ctx, db)
	require.NoError(t, err)
	for i := range 4 {
		_, err := d.Pictures.AddFailure(ctx, "acme", ann.ID, fmt.Sprintf("198.51.%d.0/24", i), time.Now())
		require.NoError(t, err)
	}
	d.close()
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"user", "show", "--tenant", "acme", "--user", "ann", "-db", db}, &out, io.Discard))
	assert.Regexp(t, `\nfailures=9\nnetworks=5\nlocked_until=`+stamp+`\nlock=all networks=5 failures=9 until=`+stamp+
		`\nlock=203\.0\.113\.0/24 failures=5 until=`+stamp+`\npasskeys=0\n$`, out.String(), "the user-wide lock first, then each locked network")

	out.Reset()
	require.NoError(t, run(ctx, []string{"user", "unlock", "--tenant", "acme", "--user", "ann@example.com", "-db", db}, &out, io.Discard))
	assert.Equal(t, "user_id="+ann.ID+"\nfailures_before=9\nlocks_before=2\nunlocked=true\n", out.String())

	out.Reset()
	require.NoError(t, run(ctx, []string{"user", "show", "--tenant", "acme", "--user", "ann", "-db", db}, &out, io.Discard))
	assert.True(t, strings.HasSuffix(out.String(), "failures=0\nnetworks=0\nlocked_until=no\npasskeys=0\n"), "no lock left: %s", out.String())

	out.Reset()
	require.NoError(t, run(ctx, []string{"events", "--tenant", "acme", "-db", db}, &out, io.Discard))
	var unlocked []map[string]any
	for line := range strings.Lines(out.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		if m["type"] == string(store.EventSecondFactorUnlocked) {
			unlocked = append(unlocked, m)
		}
	}
	require.Len(t, unlocked, 1, "%s", out.String())
	assert.Equal(t, "admin", unlocked[0]["actor"])
	assert.Equal(t, ann.ID, unlocked[0]["subject"].(map[string]any)["id"])

	out.Reset()
	require.NoError(t, run(ctx, []string{"user", "show", "--tenant", "acme", "--user", "bob", "-db", db}, &out, io.Discard))
	assert.Regexp(t, `^user_id=user_\w+\nuser_name=bob\nactive=true\npicture_enrolled=false\npasskeys=0\n$`, out.String())

	for _, tt := range []struct {
		args  []string
		want  string
		usage bool
	}{
		{[]string{"user", "unlock", "--tenant", "acme", "--user", "bob"}, `user "bob" has no picture password to unlock`, false},
		{[]string{"user", "unlock", "--tenant", "acme", "--user", "carol"}, `tenant "acme" has no user with the userName, primary email or id "carol"`, false},
		{[]string{"user", "show", "--tenant", "acme", "--user", `a"b\`}, `tenant "acme" has no user`, false},
		{[]string{"user", "show", "--tenant", "acme", "--user", "user_01m80h520y4ks4ca8hpxn4hyre"}, `has no user`, false},
		{[]string{"user", "show", "--tenant", "acme"}, "user show needs --user", true},
		{[]string{"user", "unlock", "--user", "ann"}, "user unlock needs --tenant", true},
		{[]string{"user", "unlock", "--tenant", "acme", "ann"}, `unexpected argument "ann"; the user goes in --user`, true},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout bytes.Buffer
			err := run(ctx, append(tt.args, "-db", db), &stdout, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var ue *cli.UsageError
			assert.Equal(t, tt.usage, errors.As(err, &ue))
			assert.Empty(t, stdout.String())
		})
	}
}
