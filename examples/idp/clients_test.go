package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// TestClientCommands runs the client subcommands as the command line does. On -db memory the
// store is empty, so a command that gets past its flags finds no tenant.
func TestClientCommands(t *testing.T) {
	const uri = "https://app.example.com/callback"
	for _, tt := range []struct {
		name   string
		args   []string
		stderr []string
		err    string
		usage  bool // the error is a *cli.UsageError (exit status 2, else 1)
	}{
		{
			name:   "create, unknown tenant",
			args:   []string{"client", "create", "--tenant", "acme", "--name", "App", "--redirect-uri", uri, "-db", "memory"},
			stderr: []string{memoryWarning},
			err:    `there is no tenant "acme" in this store`,
		},
		{
			name:   "create, loopback http URIs pass",
			args:   []string{"client", "create", "--redirect-uri", "http://127.0.0.1:8080/cb", "--redirect-uri=http://localhost/cb", "--redirect-uri", "http://[::1]/cb", "--tenant=acme", "--name", "CLI"},
			stderr: []string{memoryWarning},
			err:    `there is no tenant "acme" in this store`,
		},
		{
			name:  "create, no tenant",
			args:  []string{"client", "create", "--name", "App", "--redirect-uri", uri},
			err:   "client create needs --tenant",
			usage: true,
		},
		{
			name:  "create, bad tenant",
			args:  []string{"client", "create", "--tenant", "Acme Corp", "--name", "App", "--redirect-uri", uri},
			err:   `--tenant "Acme Corp" is not a tenant id`,
			usage: true,
		},
		{
			name:  "create, no name",
			args:  []string{"client", "create", "--tenant", "acme", "--redirect-uri", uri},
			err:   "client create needs --name",
			usage: true,
		},
		{
			name:  "create, blank name",
			args:  []string{"client", "create", "--tenant", "acme", "--name", "  ", "--redirect-uri", uri},
			err:   "client create needs --name",
			usage: true,
		},
		{
			name:  "create, no redirect URI",
			args:  []string{"client", "create", "--tenant", "acme", "--name", "App"},
			err:   "client create needs at least one --redirect-uri",
			usage: true,
		},
		{
			name:  "create, http for a host that is not loopback",
			args:  []string{"client", "create", "--tenant", "acme", "--name", "App", "--redirect-uri", "http://app.example.com/cb"},
			err:   `--redirect-uri: redirect URI "http://app.example.com/cb" uses http for a host that is not loopback; use https (` + redirectURIRule + ")",
			usage: true,
		},
		{
			name:  "create, fragment",
			args:  []string{"client", "create", "--tenant", "acme", "--name", "App", "--redirect-uri", uri + "#top"},
			err:   `redirect URI "` + uri + `#top" has a fragment (redirect URIs must be absolute https URLs`,
			usage: true,
		},
		{
			name:  "create, relative",
			args:  []string{"client", "create", "--tenant", "acme", "--name", "App", "--redirect-uri", "/callback"},
			err:   `redirect URI "/callback" is not absolute (redirect URIs must be absolute https URLs`,
			usage: true,
		},
		{
			name:  "create, user info",
			args:  []string{"client", "create", "--tenant", "acme", "--name", "App", "--redirect-uri", "https://me:pw@app.example.com/cb"},
			err:   "carries user info",
			usage: true,
		},
		{
			name:  "create, another scheme",
			args:  []string{"client", "create", "--tenant", "acme", "--name", "App", "--redirect-uri", "ftp://app.example.com/cb"},
			err:   "must use https",
			usage: true,
		},
		{
			name:  "create, the second URI is bad",
			args:  []string{"client", "create", "--tenant", "acme", "--name", "App", "--redirect-uri", uri, "--redirect-uri", "http://evil.example/cb"},
			err:   `redirect URI "http://evil.example/cb" uses http`,
			usage: true,
		},
		{
			name:  "create, an argument",
			args:  []string{"client", "create", "acme", "--name", "App", "--redirect-uri", uri},
			err:   `client create: unexpected argument "acme"`,
			usage: true,
		},
		{
			name:   "list, unknown tenant",
			args:   []string{"client", "list", "--tenant", "acme"},
			stderr: []string{memoryWarning},
			err:    `there is no tenant "acme" in this store`,
		},
		{
			name:  "list, no tenant",
			args:  []string{"client", "list"},
			err:   "client list needs --tenant",
			usage: true,
		},
		{
			name:  "list, tenant as argument",
			args:  []string{"client", "list", "acme"},
			err:   `client list: unexpected argument "acme"; the tenant goes in --tenant`,
			usage: true,
		},
		{
			name:  "list, unsupported db",
			args:  []string{"client", "list", "--tenant", "acme", "-db", "mysql://localhost/idp"},
			err:   `want sqlite:PATH, postgres://… or memory`,
			usage: true,
		},
		{
			name:   "rotate-secret, unknown tenant, flags last",
			args:   []string{"client", "rotate-secret", "client_01m80h520y4ks4ca8hpxn4hyre", "--tenant", "acme"},
			stderr: []string{memoryWarning},
			err:    `there is no tenant "acme" in this store`,
		},
		{
			name:  "rotate-secret, no id",
			args:  []string{"client", "rotate-secret", "--tenant", "acme"},
			err:   "client rotate-secret takes one client id",
			usage: true,
		},
		{
			name:  "rotate-secret, two ids",
			args:  []string{"client", "rotate-secret", "--tenant", "acme", "client_a", "client_b"},
			err:   "client rotate-secret takes one client id",
			usage: true,
		},
		{
			name:  "rotate-secret, not a client id",
			args:  []string{"client", "rotate-secret", "--tenant", "acme", "key_01m80h520y4ks4ca8hpxn4hyre"},
			err:   `"key_01m80h520y4ks4ca8hpxn4hyre" is not a client id`,
			usage: true,
		},
		{
			name:  "rotate-secret, no tenant",
			args:  []string{"client", "rotate-secret", "client_01m80h520y4ks4ca8hpxn4hyre"},
			err:   "client rotate-secret needs --tenant",
			usage: true,
		},
		{
			name:   "delete, unknown tenant",
			args:   []string{"client", "delete", "--tenant", "acme", "client_01m80h520y4ks4ca8hpxn4hyre"},
			stderr: []string{memoryWarning},
			err:    `there is no tenant "acme" in this store`,
		},
		{
			name:  "delete, no id",
			args:  []string{"client", "delete", "--tenant", "acme"},
			err:   "client delete takes one client id",
			usage: true,
		},
		{
			name:  "delete, no tenant",
			args:  []string{"client", "delete", "client_01m80h520y4ks4ca8hpxn4hyre"},
			err:   "client delete needs --tenant",
			usage: true,
		},
		{
			name:   "set-redirect-uris, unknown tenant",
			args:   []string{"client", "set-redirect-uris", "--tenant", "acme", "client_01m80h520y4ks4ca8hpxn4hyre", "--redirect-uri", uri},
			stderr: []string{memoryWarning},
			err:    `there is no tenant "acme" in this store`,
		},
		{
			name:  "set-redirect-uris, no redirect URI",
			args:  []string{"client", "set-redirect-uris", "--tenant", "acme", "client_01m80h520y4ks4ca8hpxn4hyre"},
			err:   "client set-redirect-uris needs at least one --redirect-uri",
			usage: true,
		},
		{
			name:  "set-redirect-uris, bad redirect URI",
			args:  []string{"client", "set-redirect-uris", "--tenant", "acme", "client_01m80h520y4ks4ca8hpxn4hyre", "--redirect-uri", "app.example.com/cb"},
			err:   `redirect URI "app.example.com/cb" is not absolute`,
			usage: true,
		},
		{
			name:  "set-redirect-uris, no id",
			args:  []string{"client", "set-redirect-uris", "--tenant", "acme", "--redirect-uri", uri},
			err:   "client set-redirect-uris takes one client id",
			usage: true,
		},
		{
			name:   "set-require-par, unknown tenant",
			args:   []string{"client", "set-require-par", "--tenant", "acme", "client_01m80h520y4ks4ca8hpxn4hyre", "--require-par=false"},
			stderr: []string{memoryWarning},
			err:    `there is no tenant "acme" in this store`,
		},
		{
			name:  "set-require-par, no id",
			args:  []string{"client", "set-require-par", "--tenant", "acme"},
			err:   "client set-require-par takes one client id",
			usage: true,
		},
		{
			name:  "set-require-par, not a boolean",
			args:  []string{"client", "set-require-par", "--tenant", "acme", "client_01m80h520y4ks4ca8hpxn4hyre", "--require-par=maybe"},
			err:   "invalid boolean value",
			usage: true,
		},
		{
			name:  "unknown flag",
			args:  []string{"client", "create", "--tenant", "acme", "--name", "App", "--redirect-uris", uri},
			err:   "unknown flag --redirect-uris; did you mean --redirect-uri?",
			usage: true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), inMemory(tt.args), &stdout, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			var ue *cli.UsageError
			assert.Equal(t, tt.usage, errors.As(err, &ue), "usage error")
			assert.Empty(t, stdout.String(), "nothing on stdout after an error")
			for _, s := range tt.stderr {
				assert.Contains(t, stderr.String(), s)
			}
			if strings.Contains(stderr.String(), memoryWarning) {
				assert.Equal(t, 1, strings.Count(stderr.String(), "-db memory"), "the warning is one line")
				assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "the warning is one line")
			} else if !tt.usage {
				t.Errorf("no -db memory warning: %q", stderr.String())
			}

			var exitOut bytes.Buffer
			want := 1
			if tt.usage {
				want = 2
			}
			assert.Equal(t, want, exitCode(err, &exitOut))
			if ue == nil || !ue.Printed {
				assert.True(t, strings.HasPrefix(exitOut.String(), "idp: "+err.Error()+"\n"), "%s", exitOut.String())
			}
		})
	}
}

// TestRedirectURIFlag checks that --redirect-uri repeats, keeps its order, and takes a URI
// with a comma whole.
func TestRedirectURIFlag(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var uris uriList
	fs.Var(&uris, "redirect-uri", "")
	var stderr bytes.Buffer
	pos, err := cli.ParseInterspersed(fs, []string{"--redirect-uri", "https://b.example/cb?x=1,2", "client_x", "--redirect-uri=https://a.example/cb"}, usage, &stderr)
	require.NoError(t, err)
	assert.Equal(t, uriList{"https://b.example/cb?x=1,2", "https://a.example/cb"}, uris)
	assert.Equal(t, []string{"client_x"}, pos)
}

// TestClientAdminOnOneStore runs what the client subcommands do, one after the other, on one
// store, as they will once -db names a persistent store.
func TestClientAdminOnOneStore(t *testing.T) {
	d, err := openDB(t.Context(), "memory")
	require.NoError(t, err)
	ctx := t.Context()
	var out bytes.Buffer
	require.NoError(t, createTenant(ctx, d.Tenants, "acme", "Acme Corp", &out))
	require.NoError(t, createTenant(ctx, d.Tenants, "globex", "", &out))
	lines := func() map[string][]string {
		m := map[string][]string{}
		for line := range strings.Lines(out.String()) {
			k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
			m[k] = append(m[k], v)
		}
		return m
	}
	stored := func(id string) *store.Client {
		c, err := d.Clients.Get(ctx, "acme", id)
		require.NoError(t, err)
		return c
	}

	// create
	out.Reset()
	require.NoError(t, createClient(ctx, d.Backend, oidc2fa.ClientSpec{
		Tenant: "acme", Name: `Acme "portal"`, Description: "the customer portal",
		RedirectURIs: []string{"https://portal.acme.example/cb", "http://127.0.0.1:8080/cb"},
	}, &out))
	assert.Regexp(t, `^client_id=client_[0-9a-z]{26}\nclient_secret=secret_[0-9a-z]{52}\n`+
		`redirect_uri=https://portal\.acme\.example/cb\nredirect_uri=http://127\.0\.0\.1:8080/cb\nrequire_par=false\n`+
		`id_token_alg=EdDSA\naccess_token=false\n$`, out.String())
	vars := lines()
	id, oldSecret := vars["client_id"][0], vars["client_secret"][0]
	c := stored(id)
	assert.Equal(t, sha256.Sum256([]byte(oldSecret)), c.SecretHash, "the store holds the secret's SHA-256")
	assert.Equal(t, `Acme "portal"`, c.Name)
	assert.Equal(t, "the customer portal", c.Description)

	out.Reset()
	require.NoError(t, createClient(ctx, d.Backend, oidc2fa.ClientSpec{
		Tenant: "acme", Name: "CLI", RedirectURIs: []string{"http://localhost/cb"}, RequirePAR: true,
	}, &out))
	other := lines()["client_id"][0]
	assert.Equal(t, []string{"true"}, lines()["require_par"])
	assert.True(t, stored(other).RequirePAR)

	err = createClient(ctx, d.Backend, oidc2fa.ClientSpec{Tenant: "initech", Name: "App", RedirectURIs: []string{"https://x.example/cb"}}, &out)
	require.Error(t, err)
	assert.Equal(t, `there is no tenant "initech" in this store (idp tenant create initech makes it)`, err.Error())

	// list
	out.Reset()
	require.NoError(t, listClients(ctx, d.Backend, "acme", &out))
	assert.Equal(t, fmt.Sprintf("client_id=%s name=\"Acme \\\"portal\\\"\" redirect_uris=https://portal.acme.example/cb,http://127.0.0.1:8080/cb require_par=false id_token_alg=EdDSA access_token=false\n"+
		"client_id=%s name=\"CLI\" redirect_uris=http://localhost/cb require_par=true id_token_alg=EdDSA access_token=false\n", id, other), out.String())
	out.Reset()
	require.NoError(t, listClients(ctx, d.Backend, "globex", &out))
	assert.Empty(t, out.String(), "a tenant without clients lists nothing")

	// rotate-secret
	out.Reset()
	require.NoError(t, rotateClientSecret(ctx, d.Backend, "acme", id, &out))
	assert.Regexp(t, `^client_id=`+id+`\nclient_secret=secret_[0-9a-z]{52}\n$`, out.String())
	newSecret := lines()["client_secret"][0]
	assert.NotEqual(t, oldSecret, newSecret)
	c = stored(id)
	assert.Equal(t, sha256.Sum256([]byte(newSecret)), c.SecretHash, "the store holds the new secret's SHA-256")
	assert.NotEqual(t, sha256.Sum256([]byte(oldSecret)), c.SecretHash, "the old secret is gone")
	assert.False(t, c.SecretRotated.Before(c.Created))

	out.Reset()
	for _, tt := range []struct{ tenant, id, err string }{
		{"acme", "client_01m80h520y4ks4ca8hpxn4hyre", `there is no client "client_01m80h520y4ks4ca8hpxn4hyre" in tenant "acme"`},
		{"globex", id, fmt.Sprintf(`there is no client %q in tenant "globex"`, id)}, // a client is its tenant's
		{"initech", id, `there is no tenant "initech" in this store`},
	} {
		err := rotateClientSecret(ctx, d.Backend, tt.tenant, tt.id, &out)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.err)
		err = setRedirectURIs(ctx, d.Backend, tt.tenant, tt.id, []string{"https://x.example/cb"}, &out)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.err)
		err = deleteClient(ctx, d.Backend, tt.tenant, tt.id, &out)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.err)
	}
	assert.Empty(t, out.String(), "nothing printed for a failure")
	assert.Equal(t, sha256.Sum256([]byte(newSecret)), stored(id).SecretHash, "failures change nothing")

	// set-redirect-uris
	out.Reset()
	require.NoError(t, setRedirectURIs(ctx, d.Backend, "acme", id, []string{"https://portal.acme.example/oidc/cb"}, &out))
	assert.Equal(t, "client_id="+id+"\nredirect_uri=https://portal.acme.example/oidc/cb\n", out.String())
	assert.Equal(t, []string{"https://portal.acme.example/oidc/cb"}, stored(id).RedirectURIs)
	assert.Equal(t, sha256.Sum256([]byte(newSecret)), stored(id).SecretHash, "the secret stays")
	out.Reset()
	require.NoError(t, listClients(ctx, d.Backend, "acme", &out))
	assert.Contains(t, out.String(), "client_id="+id+` name="Acme \"portal\"" redirect_uris=https://portal.acme.example/oidc/cb require_par=false id_token_alg=EdDSA access_token=false`+"\n")

	// delete
	out.Reset()
	require.NoError(t, deleteClient(ctx, d.Backend, "acme", id, &out))
	assert.Equal(t, "client_id="+id+"\ndeleted=true\n", out.String())
	_, err = d.Clients.Get(ctx, "acme", id)
	assert.ErrorIs(t, err, store.ErrNotFound)
	out.Reset()
	require.NoError(t, listClients(ctx, d.Backend, "acme", &out))
	assert.Equal(t, "client_id="+other+" name=\"CLI\" redirect_uris=http://localhost/cb require_par=true id_token_alg=EdDSA access_token=false\n", out.String())

	// set-require-par
	out.Reset()
	require.NoError(t, setRequirePAR(ctx, d.Backend, "acme", other, false, &out))
	assert.Equal(t, "client_id="+other+"\nrequire_par=false\n", out.String())
	assert.False(t, stored(other).RequirePAR)
	err = setRequirePAR(ctx, d.Backend, "acme", id, true, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "there is no client")
	out.Reset()
	err = deleteClient(ctx, d.Backend, "acme", id, &out)
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf("there is no client %q in tenant \"acme\"", id), err.Error())
	err = rotateClientSecret(ctx, d.Backend, "acme", id, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "there is no client")
	assert.Empty(t, out.String())
}

// TestClientAlgorithmAndAccessTokenCommands: client create --id-token-alg and --access-token,
// client set-id-token-alg and set-access-token, on one store; a bad algorithm is a usage error.
func TestClientAlgorithmAndAccessTokenCommands(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "-db", db)
	reg := runCmd(t, "client", "create", "--tenant", "acme", "--name", "Go", "--redirect-uri", "https://app.example.com/cb",
		"--id-token-alg", "RS256", "--access-token", "-db", db)
	assert.Equal(t, "RS256", reg["id_token_alg"])
	assert.Equal(t, "true", reg["access_token"])
	id := reg["client_id"]

	got := runCmd(t, "client", "set-id-token-alg", "--tenant", "acme", id, "ES256", "-db", db)
	assert.Equal(t, map[string]string{"client_id": id, "id_token_alg": "ES256"}, got)
	got = runCmd(t, "client", "set-access-token", "--tenant", "acme", id, "--access-token=false", "-db", db)
	assert.Equal(t, map[string]string{"client_id": id, "access_token": "false"}, got)
	var out, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"client", "list", "--tenant", "acme", "-db", db}, &out, &errOut))
	assert.Contains(t, out.String(), " id_token_alg=ES256 access_token=false\n")

	for _, args := range [][]string{
		{"client", "create", "--tenant", "acme", "--name", "X", "--redirect-uri", "https://x.example/cb", "--id-token-alg", "HS256"},
		{"client", "set-id-token-alg", "--tenant", "acme", id, "none"},
		{"client", "set-id-token-alg", "--tenant", "acme", id},
	} {
		err := run(t.Context(), append(args, "-db", db), &out, &errOut)
		var usageErr *cli.UsageError
		require.ErrorAs(t, err, &usageErr, "%v", args)
	}
	err := run(t.Context(), []string{"client", "set-id-token-alg", "--tenant", "acme", "client_01m80h520y4ks4ca8hpxn4hyre", "RS256", "-db", db}, &out, &errOut)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "there is no client")
}

// TestKeyRotateCommand: idp key rotate gives every tenant, or the one named, new signing keys;
// the old ones stay in the store, retired.
func TestKeyRotateCommand(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "-db", db)
	runCmd(t, "tenant", "create", "globex", "-db", db)
	one := runCmd(t, "key", "rotate", "--tenant", "acme", "-db", db)
	require.NotEmpty(t, one["new_kid"], "a tenant without a key gets one")
	var out, errOut bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"key", "rotate", "-db", db}, &out, &errOut))
	assert.Equal(t, 1, strings.Count(out.String(), "new_kid="), "only acme signs yet: %s", out.String())
	err := run(t.Context(), []string{"key", "rotate", "--tenant", "initech", "-db", db}, &out, &errOut)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `there is no tenant "initech"`)
}
