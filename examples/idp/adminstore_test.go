package main

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdminCommandsNeverMakeAStore: an admin command on a -db that holds no visid store
// refuses, naming where it looked and what to do, with exit status 1, and leaves nothing
// behind: no SQLite file or key file, no tables in PostgreSQL.
func TestAdminCommandsNeverMakeAStore(t *testing.T) {
	commands := [][]string{
		{"tenant", "list"},
		{"tenant", "create", "acme"},
		{"apikey", "create", "--tenant", "acme"},
		{"client", "list", "--tenant", "acme"},
		{"events", "--tenant", "acme"},
	}
	check := func(t *testing.T, args []string, where string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), args, &stdout, &stderr)
		require.ErrorIs(t, err, errNoStore)
		var exitOut bytes.Buffer
		assert.Equal(t, 1, exitCode(err, &exitOut))
		assert.Contains(t, exitOut.String(), "idp: no visid store at "+where)
		assert.Contains(t, exitOut.String(), "start the service once")
		assert.Contains(t, exitOut.String(), "-db")
		assert.Empty(t, stdout.String())
	}
	t.Run("default file in the working directory", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		t.Setenv(kekEnv, "")
		for _, args := range commands {
			check(t, args, "idp.db (the default -db sqlite:idp.db, in the working directory)")
		}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "files made by admin commands")
	})
	t.Run("sqlite file", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "prod.db")
		for _, args := range commands {
			check(t, append(args, "-db", "sqlite:"+path), path)
		}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "files made by admin commands")
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := pgStore(t)
		u, err := url.Parse(dsn)
		require.NoError(t, err)
		schema := u.Query().Get("search_path")
		for _, args := range commands {
			check(t, append(args, "-db", dsn), dsn+" (schema "+schema+")")
		}
		db, err := sql.Open("pgx", dsn)
		require.NoError(t, err)
		defer db.Close()
		var tables int
		require.NoError(t, db.QueryRowContext(t.Context(), `SELECT count(*) FROM pg_tables WHERE schemaname = $1`, schema).Scan(&tables))
		assert.Zero(t, tables, "tables made by admin commands")
	})
	t.Run("a password is not printed", func(t *testing.T) {
		u, err := url.Parse(pgStore(t))
		require.NoError(t, err)
		u.User = url.UserPassword("postgres", "s3cret")
		var stdout, stderr bytes.Buffer
		err = run(t.Context(), []string{"tenant", "list", "-db", u.String()}, &stdout, &stderr)
		require.ErrorIs(t, err, errNoStore)
		assert.NotContains(t, err.Error(), "s3cret")
		assert.Contains(t, err.Error(), "postgres:xxxxx@")
	})
}

// TestAdminCommandsCheckTheKey: an admin command refuses a key-encryption key that does not
// open the store's signing keys, as the service refuses to start with it, and a SQLite store
// whose key file is gone gets no new one.
func TestAdminCommandsCheckTheKey(t *testing.T) {
	otherKey := base64.StdEncoding.EncodeToString(randomKEK())
	for _, tt := range []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string {
			t.Setenv(kekEnv, "") // the key file idp.db.key
			return "sqlite:" + filepath.Join(t.TempDir(), "idp.db")
		}},
		{"postgres", pgStore},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := tt.db(t)
			s := startService(t, "-db", db, "-demo=false") // makes the store
			require.NoError(t, s.stop(t))
			// Signing keys are per tenant: a tenant and its key, sealed with the right key. (A
			// store with no signing key holds nothing sealed, so there is nothing to check.)
			runCmd(t, "tenant", "create", "acme", "-db", db)
			runCmd(t, "key", "rotate", "--tenant", "acme", "-db", db)
			runCmd(t, "tenant", "list", "-db", db) // the right key

			t.Setenv(kekEnv, otherKey)
			var stdout, stderr bytes.Buffer
			adminErr := run(t.Context(), []string{"tenant", "list", "-db", db}, &stdout, &stderr)
			require.Error(t, adminErr)
			assert.Contains(t, adminErr.Error(), "does not open under the key-encryption key")
			assert.Contains(t, adminErr.Error(), "$"+kekEnv)
			assert.Empty(t, stdout.String())
			serveErr := run(t.Context(), []string{"-db", db, "-addr", "127.0.0.1:0", "-admin-addr", ""}, &stdout, &stderr)
			require.Error(t, serveErr, "the service refuses the key too")
			assert.Equal(t, serveErr.Error(), adminErr.Error(), "with the same message")
		})
	}
	t.Run("sqlite without its key file", func(t *testing.T) {
		t.Setenv(kekEnv, "")
		db := newStore(t)
		path := db[len("sqlite:"):]
		require.NoError(t, os.Remove(path+".key"))
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), []string{"tenant", "list", "-db", db}, &stdout, &stderr)
		require.Error(t, err)
		assert.False(t, errors.Is(err, errNoStore))
		assert.Contains(t, err.Error(), "has no key-encryption key")
		assert.Contains(t, err.Error(), "$"+kekEnv)
		_, err = os.Stat(path + ".key")
		assert.ErrorIs(t, err, os.ErrNotExist, "no new key file")
	})
}

// TestFlagsBeforeTheCommand: flags work before the command, between a command and its
// subcommand, and after them.
func TestFlagsBeforeTheCommand(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "-db", db)
	for _, args := range [][]string{
		{"-db", db, "tenant", "list"},
		{"-db=" + db, "tenant", "list"},
		{"tenant", "-db", db, "list"},
		{"tenant", "list", "-db", db},
	} {
		var stdout, stderr bytes.Buffer
		require.NoError(t, run(t.Context(), args, &stdout, &stderr), "%q: %s", args, stderr.String())
		assert.Regexp(t, `^tenant=acme name="" created=\S+\n$`, stdout.String(), "%q", args)
	}
	vars := runCmd(t, "-db", db, "apikey", "create", "--tenant", "acme")
	assert.Regexp(t, `^scimkey_`, vars["scim_api_key"])

	var stdout, stderr bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-db", "memory", "tenant", "list"}, &stdout, &stderr), "the issue's example")
	assert.Contains(t, stderr.String(), memoryWarning)
}
