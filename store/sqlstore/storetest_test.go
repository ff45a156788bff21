package sqlstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/sqlstore"
	"github.com/visid/visid/store/storetest"
)

func TestConformanceSQLite(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Backend { return newSQLite(t).Backend() })
}

func TestConformancePostgres(t *testing.T) {
	t.Parallel()
	dsn := postgresDSN(t)
	storetest.Run(t, func(t *testing.T) store.Backend { return newPostgres(t, dsn).Backend() })
}

// testKEK is a fresh key-encryption key.
func testKEK() []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}

// newSQLite returns a migrated Store over a new SQLite file in t's temporary directory: a copy
// of a database migrated once per test binary (Migrate then finds nothing to do).
func newSQLite(t testing.TB) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	template, err := migratedSQLite()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "visid.db")
	require.NoError(t, os.WriteFile(path, template, 0o600))
	s, err := sqlstore.Config{KeyEncryptionKey: testKEK()}.Open(ctx, "sqlite:"+path)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Migrate(ctx))
	return s
}

// migratedSQLite returns the bytes of an empty, migrated SQLite database.
var migratedSQLite = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "visid-sqlstore-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	s, err := sqlstore.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		return nil, err
	}
	err = s.Migrate(context.Background())
	if cerr := s.Close(); err == nil {
		err = cerr // closing the last connection checkpoints the WAL into the file
	}
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// postgresDSN returns VISID_TEST_POSTGRES_DSN, or skips t without it (fails it when
// VISID_REQUIRE_SERVICES=1).
func postgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("VISID_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
			t.Fatal("VISID_TEST_POSTGRES_DSN is not set and VISID_REQUIRE_SERVICES=1")
		}
		t.Skip("VISID_TEST_POSTGRES_DSN is not set")
	}
	return dsn
}

// postgresSchema creates a schema of its own for t and returns a DSN whose connections use it;
// the schema is dropped when t ends.
func postgresSchema(t testing.TB, dsn string) string {
	t.Helper()
	ctx := context.Background()
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	var b [8]byte
	rand.Read(b[:])
	schema := fmt.Sprintf("t_%x", b)
	_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err, "CREATE SCHEMA")
	t.Cleanup(func() {
		_, err := admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		if err != nil {
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

// newPostgres returns a migrated Store over a new schema of the database dsn names.
func newPostgres(t testing.TB, dsn string) *sqlstore.Store {
	t.Helper()
	ctx := context.Background()
	s, err := sqlstore.Config{KeyEncryptionKey: testKEK()}.Open(ctx, postgresSchema(t, dsn))
	require.NoError(t, err)
	// Registered after the schema's cleanup, so it runs first: the pool closes before the drop.
	t.Cleanup(func() { s.Close() })
	// Parallel tests share the server's connections.
	s.DB().SetMaxOpenConns(4)
	require.NoError(t, s.Migrate(ctx))
	return s
}
