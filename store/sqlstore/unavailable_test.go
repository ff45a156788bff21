package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/sqlstore"
)

// sqliteFile writes an empty migrated database to a new file and returns its path.
func sqliteFile(t *testing.T) string {
	t.Helper()
	template, err := migratedSQLite()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "visid.db")
	require.NoError(t, os.WriteFile(path, template, 0o600))
	return path
}

// A SQLite database whose disk is full (here: whose file may grow no further, PRAGMA
// max_page_count) fails writes with store.ErrUnavailable, SQLITE_FULL as its cause, and still
// answers reads.
func TestUnavailableSQLiteFull(t *testing.T) {
	ctx := context.Background()
	path := sqliteFile(t)
	s, err := sqlstore.Open(ctx, "sqlite:"+path)
	require.NoError(t, err)
	require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme"}))
	var pages int
	require.NoError(t, s.DB().QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages))
	require.NoError(t, s.Close())

	s, err = sqlstore.Open(ctx, fmt.Sprintf("sqlite:%s?_pragma=max_page_count(%d)", path, pages+2))
	require.NoError(t, err)
	defer s.Close()
	long := strings.Repeat("x", 2000)
	for i := 0; ; i++ {
		require.Less(t, i, 1000, "the database never filled up")
		_, err = s.Users().Create(ctx, "acme", store.User{UserName: fmt.Sprintf("user%d", i), DisplayName: long})
		if err != nil {
			break
		}
	}
	require.ErrorIs(t, err, store.ErrUnavailable)
	var se *sqlite.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, sqlite3.SQLITE_FULL, se.Code()&0xff)
	_, err = s.Tenants().Get(ctx, "acme")
	assert.NoError(t, err, "reads go on")
}

// A read-only SQLite database (here: PRAGMA query_only) fails writes with
// store.ErrUnavailable.
func TestUnavailableSQLiteReadOnly(t *testing.T) {
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, "sqlite:"+sqliteFile(t)+"?_pragma=query_only(1)")
	require.NoError(t, err)
	defer s.Close()
	err = s.Tenants().Create(ctx, store.Tenant{ID: "acme"})
	require.ErrorIs(t, err, store.ErrUnavailable)
	var se *sqlite.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, sqlite3.SQLITE_READONLY, se.Code()&0xff)
}

// A SQLite database that another process keeps locked past the busy timeout fails writes with
// store.ErrUnavailable.
func TestUnavailableSQLiteBusy(t *testing.T) {
	ctx := context.Background()
	path := sqliteFile(t)
	holder, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	defer holder.Close()
	lock, err := holder.Conn(ctx)
	require.NoError(t, err)
	defer lock.Close()
	_, err = lock.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)
	defer lock.ExecContext(ctx, "ROLLBACK")

	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(20)&_pragma=journal_mode(WAL)")
	require.NoError(t, err)
	defer db.Close()
	s, err := sqlstore.New(sqlstore.Config{DB: db})
	require.NoError(t, err)
	err = s.Tenants().Create(ctx, store.Tenant{ID: "acme"})
	require.ErrorIs(t, err, store.ErrUnavailable)
	var se *sqlite.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, sqlite3.SQLITE_BUSY, se.Code()&0xff)
}

// A PostgreSQL transaction that may not write (a standby, or default_transaction_read_only)
// fails writes with store.ErrUnavailable (SQLSTATE 25006).
func TestUnavailablePostgresReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := postgresSchema(t, postgresDSN(t))
	m, err := sqlstore.Open(ctx, dsn)
	require.NoError(t, err)
	require.NoError(t, m.Migrate(ctx))
	require.NoError(t, m.Close())

	s, err := sqlstore.Open(ctx, dsn+"&default_transaction_read_only=on")
	require.NoError(t, err)
	defer s.Close()
	err = s.Tenants().Create(ctx, store.Tenant{ID: "acme"})
	require.ErrorIs(t, err, store.ErrUnavailable)
	_, err = s.Tenants().Get(ctx, "acme")
	require.ErrorIs(t, err, store.ErrNotFound, "reads go on")
}

// A PostgreSQL server that is out of connections (SQLSTATE 53300), stopped, and started again:
// the store answers store.ErrUnavailable while it cannot reach the server, and works again
// once it can. The test runs a server of its own (privatePostgres), never the shared one.
func TestUnavailablePostgresServer(t *testing.T) {
	pg := privatePostgres(t, "-c", "max_connections=3", "-c", "superuser_reserved_connections=0")
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, pg.dsn)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme"}))

	t.Run("too many clients", func(t *testing.T) {
		hog, err := sql.Open("pgx", pg.dsn)
		require.NoError(t, err)
		defer hog.Close()
		var held []*sql.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for len(held) < 5 {
			c, err := hog.Conn(ctx)
			if err != nil {
				break
			}
			require.NoError(t, c.PingContext(ctx))
			held = append(held, c)
		}
		require.Less(t, len(held), 5, "the server took more connections than max_connections")
		db, err := sql.Open("pgx", pg.dsn)
		require.NoError(t, err)
		defer db.Close()
		fresh, err := sqlstore.New(sqlstore.Config{DB: db})
		require.NoError(t, err)
		_, err = fresh.Tenants().Get(ctx, "acme")
		require.ErrorIs(t, err, store.ErrUnavailable)
		assert.Contains(t, err.Error(), "53300")
	})

	t.Run("stopped", func(t *testing.T) {
		pg.stop(t)
		_, err := s.Tenants().Get(ctx, "acme")
		require.ErrorIs(t, err, store.ErrUnavailable)
		err = s.Tenants().Create(ctx, store.Tenant{ID: "other"})
		require.ErrorIs(t, err, store.ErrUnavailable)
	})

	t.Run("started again", func(t *testing.T) {
		pg.start(t)
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if _, err = s.Tenants().Get(ctx, "acme"); err == nil || !errors.Is(err, store.ErrUnavailable) {
				break
			}
		}
		require.NoError(t, err)
	})
}

// Probe succeeds on a database that takes writes and leaves nothing behind; it fails with
// store.ErrUnavailable on one that is full or read-only.
func TestProbe(t *testing.T) {
	ctx := context.Background()
	path := sqliteFile(t)
	s, err := sqlstore.Open(ctx, "sqlite:"+path)
	require.NoError(t, err)
	require.NoError(t, s.Probe(ctx))
	n, err := s.Tenants().Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "the probe leaves no row")
	var pages int
	require.NoError(t, s.DB().QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages))
	require.NoError(t, s.Close())

	full, err := sqlstore.Open(ctx, fmt.Sprintf("sqlite:%s?_pragma=max_page_count(%d)", path, pages))
	require.NoError(t, err)
	defer full.Close()
	require.ErrorIs(t, full.Probe(ctx), store.ErrUnavailable, "full")
	_, err = full.Tenants().Get(ctx, "acme")
	require.ErrorIs(t, err, store.ErrNotFound, "while reads go on")

	ro, err := sqlstore.Open(ctx, "sqlite:"+path+"?_pragma=query_only(1)")
	require.NoError(t, err)
	defer ro.Close()
	require.ErrorIs(t, ro.Probe(ctx), store.ErrUnavailable, "read-only")
}

// Probe on PostgreSQL: a write rolled back; store.ErrUnavailable when transactions are
// read-only.
func TestProbePostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := postgresSchema(t, postgresDSN(t))
	s, err := sqlstore.Open(ctx, dsn)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Probe(ctx))
	n, err := s.Tenants().Count(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "the probe leaves no row")

	ro, err := sqlstore.Open(ctx, dsn+"&default_transaction_read_only=on")
	require.NoError(t, err)
	defer ro.Close()
	require.ErrorIs(t, ro.Probe(ctx), store.ErrUnavailable)
}
