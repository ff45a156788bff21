package scimsvc_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/sqlstore"
)

// backendEnv is an env whose handler runs over one of the stores visid ships.
type backendEnv struct {
	*env
	backend store.Backend
}

// users lists the users of tenant as the store holds them.
func (e *backendEnv) users(tenant string) []store.User {
	e.t.Helper()
	p, err := e.backend.Users.List(context.Background(), tenant, store.Query{StartIndex: 1, Count: -1})
	require.NoError(e.t, err)
	return p.Resources
}

// forEachBackend runs test as a subtest on a fresh handler over memstore, SQLite and PostgreSQL,
// each holding tenants acme and globex and a key for acme. The PostgreSQL run is skipped without
// VISID_TEST_POSTGRES_DSN, and fails without it when VISID_REQUIRE_SERVICES=1. configure may
// change each handler's Config before New.
func forEachBackend(t *testing.T, test func(t *testing.T, e *backendEnv), configure ...func(*scimsvc.Config)) {
	t.Helper()
	backends := []struct {
		name string
		open func(t *testing.T) store.Backend
	}{
		{name: "memstore", open: func(*testing.T) store.Backend { return memstore.New().Backend() }},
		{name: "sqlite", open: func(t *testing.T) store.Backend {
			return openSQL(t, "sqlite:"+filepath.Join(t.TempDir(), "visid.db"))
		}},
		{name: "postgres", open: func(t *testing.T) store.Backend { return openSQL(t, postgresSchema(t)) }},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			test(t, newBackendEnv(t, b.open(t), configure...))
		})
	}
}

// newBackendEnv is newEnv over backend b, recording events in b's log.
func newBackendEnv(t *testing.T, b store.Backend, configure ...func(*scimsvc.Config)) *backendEnv {
	t.Helper()
	ctx := context.Background()
	c := newClock()
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme", Created: c.Now()}))
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "globex", Created: c.Now()}))
	secret, _, err := scimsvc.IssueAPIKey(ctx, b.APIKeys, scimsvc.KeySpec{Name: "test", Tenants: []string{"acme"}, Now: c.Now()})
	require.NoError(t, err)
	cfg := scimsvc.Config{
		Tenants: b.Tenants, Users: b.Users, Groups: b.Groups, APIKeys: b.APIKeys, Events: b.Events,
		BaseURL: testBase,
		Now:     c.Now,
	}
	for _, f := range configure {
		f(&cfg)
	}
	h, err := scimsvc.New(cfg)
	require.NoError(t, err)
	return &backendEnv{env: &env{t: t, clock: c, handler: h, key: secret}, backend: b}
}

// openSQL opens and migrates a sqlstore at dsn, closed when t ends.
func openSQL(t *testing.T, dsn string) store.Backend {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	s.DB().SetMaxOpenConns(4)
	require.NoError(t, s.Migrate(ctx))
	return s.Backend()
}

// postgresSchema returns a DSN of the database VISID_TEST_POSTGRES_DSN names whose connections
// use a schema of t's own, dropped when t ends; it skips t without the variable (fails it when
// VISID_REQUIRE_SERVICES=1).
func postgresSchema(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("VISID_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
			t.Fatal("VISID_TEST_POSTGRES_DSN is not set and VISID_REQUIRE_SERVICES=1")
		}
		t.Skip("VISID_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := fmt.Sprintf("scimsvc_%x", b)
	_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err, "CREATE SCHEMA")
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
