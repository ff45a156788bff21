package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
)

// inMemory adds -db memory to args unless they name a store: the tests' admin commands work on
// an empty store of their own, and never on the default file.
func inMemory(args []string) []string {
	if slices.Contains(args, "-db") {
		return args
	}
	n := 1 // after the command, and its subcommand if it has one; first for the service
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		n = 0
	} else if len(args) > 1 && (args[0] == "tenant" || args[0] == "apikey" || args[0] == "client") {
		n = 2
	}
	n = min(n, len(args))
	return slices.Concat(args[:n], []string{"-db", "memory"}, args[n:])
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// memoryWarning is how the warning of an admin command on -db memory starts.
const memoryWarning = "idp: warning: -db memory is an empty store that lives only while this command runs"

func TestAdminCommands(t *testing.T) {
	for _, tt := range []struct {
		name   string
		args   []string
		stdout string // a regular expression for all of stdout
		stderr []string
		err    string // "" for success
		usage  bool   // the error is a *cli.UsageError (exit status 2)
	}{
		{
			name:   "tenant create",
			args:   []string{"tenant", "create", "acme", "--name", "Acme Corp", "-db", "memory"},
			stdout: `^tenant=acme\n$`,
			stderr: []string{memoryWarning},
		},
		{
			name:   "tenant create, flags first",
			args:   []string{"tenant", "create", "-name=Acme", "acme"},
			stdout: `^tenant=acme\n$`,
		},
		{
			name:  "tenant create, no id",
			args:  []string{"tenant", "create", "--name", "Acme"},
			err:   "one tenant id",
			usage: true,
		},
		{
			name:  "tenant create, two ids",
			args:  []string{"tenant", "create", "acme", "globex"},
			err:   "one tenant id",
			usage: true,
		},
		{
			name:  "tenant create, bad id",
			args:  []string{"tenant", "create", "--", "-Acme"},
			err:   `"-Acme" is not a tenant id`,
			usage: true,
		},
		{
			name:   "apikey create, unknown tenant",
			args:   []string{"apikey", "create", "--tenant", "acme", "--name", "Entra ID"},
			stderr: []string{memoryWarning},
			err:    `there is no tenant "acme" in this store (idp tenant create acme makes it)`,
		},
		{
			name:  "apikey create, no tenant",
			args:  []string{"apikey", "create", "--name", "Entra ID"},
			err:   "needs --tenant",
			usage: true,
		},
		{
			name:  "apikey create, tenant as argument",
			args:  []string{"apikey", "create", "acme"},
			err:   "--tenant",
			usage: true,
		},
		{
			name:   "apikey revoke, unknown key",
			args:   []string{"apikey", "revoke", "key_01m80h520y4ks4ca8hpxn4hyre"},
			stderr: []string{memoryWarning},
			err:    `there is no API key "key_01m80h520y4ks4ca8hpxn4hyre" in this store`,
		},
		{
			name:  "apikey revoke, not a key id",
			args:  []string{"apikey", "revoke", "acme"},
			err:   "not an API key id",
			usage: true,
		},
		{
			name:  "apikey revoke, no id",
			args:  []string{"apikey", "revoke"},
			err:   "one key id",
			usage: true,
		},
		{
			name:  "unsupported db",
			args:  []string{"tenant", "create", "acme", "-db", "mysql://localhost/idp"},
			err:   `want sqlite:PATH, postgres://… or memory`,
			usage: true,
		},
		{
			name:  "unknown flag",
			args:  []string{"apikey", "create", "--tenant", "acme", "--scope", "scim"},
			err:   "unknown flag --scope",
			usage: true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), inMemory(tt.args), &stdout, &stderr)
			if tt.err == "" {
				require.NoError(t, err)
				assert.Regexp(t, tt.stdout, stdout.String())
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				var ue *cli.UsageError
				assert.Equal(t, tt.usage, errors.As(err, &ue), "usage error")
				assert.Empty(t, stdout.String())
			}
			for _, s := range tt.stderr {
				assert.Contains(t, stderr.String(), s)
			}
			if strings.Contains(stderr.String(), memoryWarning) {
				assert.Equal(t, 1, strings.Count(stderr.String(), "-db memory"), "the warning is one line")
			}
		})
	}
}

func TestAPIKeyCreateIDMatchesSecret(t *testing.T) {
	d, err := openDB(t.Context(), "memory")
	require.NoError(t, err)
	var stdout bytes.Buffer
	require.NoError(t, createTenant(t.Context(), d.Tenants, "acme", "", io.Discard))
	require.NoError(t, issueKey(t.Context(), d.Backend, "acme", "", &stdout))
	m := map[string]string{}
	for line := range strings.Lines(stdout.String()) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		m[k] = v
	}
	assert.True(t, strings.HasPrefix(m["scim_api_key"], "scimkey_"+strings.TrimPrefix(m["api_key_id"], "key_")+"_"),
		"a secret names its key: %v", m)
}

// TestAdminOnOneStore runs what the subcommands do on one store that the service then serves,
// as they will once -db names a persistent store.
func TestAdminOnOneStore(t *testing.T) {
	d, err := openDB(t.Context(), "memory")
	require.NoError(t, err)
	ctx := t.Context()
	var out bytes.Buffer

	require.NoError(t, createTenant(ctx, d.Tenants, "acme", "Acme Corp", &out))
	assert.Equal(t, "tenant=acme\n", out.String())
	err = createTenant(ctx, d.Tenants, "acme", "", &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `tenant "acme" already exists`)

	out.Reset()
	require.NoError(t, issueKey(ctx, d.Backend, "acme", "Entra ID", &out))
	vars := map[string]string{}
	for line := range strings.Lines(out.String()) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		vars[k] = v
	}

	sec, err := newSecrets(ctx, d.Backend, randomKEK())
	require.NoError(t, err)
	svc, err := newServices(d.Backend, "https://id.example.com", sec, limiters{}, false, false, nil, discardLogger(), nil)
	require.NoError(t, err)
	srv := httptest.NewServer(svc.handler())
	defer srv.Close()
	get := func() int {
		req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/scim/v2/acme/Users", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+vars["scim_api_key"])
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, get(), "the new key works")

	out.Reset()
	require.NoError(t, revokeKey(ctx, d.APIKeys, vars["api_key_id"], &out))
	assert.Regexp(t, `^api_key_id=`+vars["api_key_id"]+`\nrevoked_at=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$`, out.String())
	assert.Equal(t, http.StatusUnauthorized, get(), "a revoked key is refused")
}

func TestHelpAndUnknownCommands(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"-addr", ":0", "-h"}, {"tenant", "create", "-h"}, {"apikey", "revoke", "--help"},
		{"client", "create", "-h"}, {"client", "list", "--help"}, {"client", "rotate-secret", "-h"},
		{"client", "delete", "-help"}, {"client", "set-redirect-uris", "client_x", "-h"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			require.NoError(t, run(t.Context(), args, &stdout, &stderr))
			assert.Equal(t, usage, stdout.String(), "usage goes to stdout when asked for")
			assert.Empty(t, stderr.String())
		})
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `idp: unknown command "frobnicate"`},
		{[]string{"events-all"}, `idp: unknown command "events-all"`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tt.args, &stdout, &stderr)
			var ue *cli.UsageError
			require.ErrorAs(t, err, &ue)
			assert.Empty(t, stdout.String())
			assert.True(t, strings.HasPrefix(stderr.String(), tt.want+"\n"), "%s", stderr.String())
			assert.True(t, strings.HasSuffix(stderr.String(), usage), "usage follows")

			var exitOut bytes.Buffer
			assert.Equal(t, 2, exitCode(err, &exitOut))
			assert.Empty(t, exitOut.String(), "the message is printed once")
		})
	}
}

func TestExitCode(t *testing.T) {
	for _, tt := range []struct {
		name   string
		err    error
		code   int
		stderr string
	}{
		{"success", nil, 0, ""},
		{"failure", errors.New("listen tcp: address in use"), 1, "idp: listen tcp: address in use\n"},
		{"usage", &cli.UsageError{Msg: `-log-level "x": use debug, info, warn or error`}, 2,
			"idp: -log-level \"x\": use debug, info, warn or error\nRun \"idp help\" for usage.\n"},
		{"usage already printed", &cli.UsageError{Msg: "flag provided but not defined: -x", Printed: true}, 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			assert.Equal(t, tt.code, exitCode(tt.err, &stderr))
			assert.Equal(t, tt.stderr, stderr.String())
		})
	}
}

func TestParseFlags(t *testing.T) {
	for _, tt := range []struct {
		args       []string
		name       string
		positional []string
	}{
		{[]string{"acme"}, "", []string{"acme"}},
		{[]string{"acme", "--name", "Acme Corp"}, "Acme Corp", []string{"acme"}},
		{[]string{"--name=Acme", "acme", "globex"}, "Acme", []string{"acme", "globex"}},
		{[]string{"acme", "--", "--name", "x"}, "", []string{"acme", "--name", "x"}},
		{[]string{}, "", nil},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			name := fs.String("name", "", "")
			var stderr bytes.Buffer
			pos, err := cli.ParseInterspersed(fs, tt.args, usage, &stderr)
			require.NoError(t, err)
			assert.Equal(t, tt.name, *name)
			assert.Equal(t, tt.positional, pos)
		})
	}
}
