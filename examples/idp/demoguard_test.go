package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// TestDemoRefusesProductionStore: a store started once with -demo=false and given a tenant of
// its own is a production store; a restart without -demo=false (demo mode being SQLite's
// default) refuses to start with exit status 2 and one line naming -demo=false, and writes
// nothing: no tenant demo, no API key, no client, no alice.
func TestDemoRefusesProductionStore(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "prod.db")
	s := startService(t, "-db", db, "-demo=false")
	runCmd(t, "tenant", "create", "acme", "--name", "Acme Corp", "-db", db)
	require.NoError(t, s.stop(t))

	for _, flags := range [][]string{nil, {"-demo"}} {
		var out, errOut bytes.Buffer
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a service that starts stops here
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0", "-admin-addr", "", "-db", db}, flags...), &out, &errOut)
		cancel()
		require.Error(t, err, "flags %q: the service started; it printed %q", flags, out.String())
		assert.Equal(t, 2, exitCode(err, &errOut))
		assert.Empty(t, out.String(), "no secrets printed")
		msg := errOut.String()
		assert.Equal(t, 1, strings.Count(msg, "\n"), "one line: %q", msg)
		assert.Contains(t, msg, "-demo=false")
		assert.Contains(t, msg, "acme")
	}

	d, err := openExistingDB(t.Context(), db)
	require.NoError(t, err)
	defer d.close()
	tenants, err := d.Tenants.List(t.Context(), "", store.MaxTenantPage)
	require.NoError(t, err)
	require.Len(t, tenants, 1)
	assert.Equal(t, "acme", tenants[0].ID)
	keys, err := d.APIKeys.List(t.Context())
	require.NoError(t, err)
	assert.Empty(t, keys)
	_, err = d.Clients.List(t.Context(), demoTenant)
	assert.ErrorIs(t, err, store.ErrNotFound, "no tenant demo, so no client of it")
}

// TestDemoRestartKeepsDemoStore: a store that holds only the demo tenant starts in demo mode
// again, and one that is empty too.
func TestDemoRestartKeepsDemoStore(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "idp.db")
	s := startService(t, "-db", db)
	assert.Equal(t, demoKeys, keysOfLines(s.lines))
	require.NoError(t, s.stop(t))
	again := startService(t, "-db", db)
	assert.Equal(t, "tenant=demo", again.lines[0])
	assert.Contains(t, again.hintsAfter(t, "already exists"), "already exists")
}
