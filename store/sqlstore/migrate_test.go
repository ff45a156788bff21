package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/sqlstore"
)

// latestVersion is the number of the newest migration file, and migrationFiles the number of
// files (versions may have gaps), as the migrations directory holds them.
var latestVersion, migrationFiles = countMigrations()

// countMigrations reads the SQLite migrations directory (PostgreSQL's has the same versions).
func countMigrations() (latest, files int) {
	entries, err := os.ReadDir("migrations/sqlite")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			panic("migration file " + e.Name() + " is not named NNNN_name.sql")
		}
		latest, files = max(latest, v), files+1
	}
	return latest, files
}

// eachDialect runs fn on SQLite and, when VISID_TEST_POSTGRES_DSN is set, on PostgreSQL, with
// a DSN naming an empty database (a new file, a new schema).
func eachDialect(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		fn(t, "sqlite:"+filepath.Join(t.TempDir(), "visid.db"))
	})
	t.Run("Postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, postgresSchema(t, postgresDSN(t)))
	})
}

func open(t *testing.T, dsn string) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.Config{KeyEncryptionKey: testKEK()}.Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// migrationRows counts the rows of schema_migrations.
func migrationRows(t *testing.T, s *sqlstore.Store) int {
	t.Helper()
	var n int
	require.NoError(t, s.DB().QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n))
	return n
}

// Migrate is idempotent: a second run applies nothing and leaves the data alone.
func TestMigrateIdempotent(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		require.NoError(t, s.Migrate(ctx))
		require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme"}))
		require.NoError(t, s.Migrate(ctx), "second Migrate")
		v, err := s.SchemaVersion(ctx)
		require.NoError(t, err)
		assert.Equal(t, latestVersion, v)
		assert.Equal(t, migrationFiles, migrationRows(t, s))
		_, err = s.Tenants().Get(ctx, "acme")
		require.NoError(t, err, "the data survives a second Migrate")

		again := open(t, dsn) // another instance, later
		require.NoError(t, again.Migrate(ctx))
		assert.Equal(t, migrationFiles, migrationRows(t, again))
	})
}

// Several instances may run Migrate at once on one database: all succeed and the schema is
// applied once.
func TestMigrateConcurrent(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		const n = 4
		stores := make([]*sqlstore.Store, n)
		for i := range stores {
			stores[i] = open(t, dsn)
		}
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Go(func() {
				<-start
				errs[i] = s.Migrate(ctx)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			assert.NoError(t, err, "Migrate %d", i)
		}
		assert.Equal(t, migrationFiles, migrationRows(t, stores[0]))
		require.NoError(t, stores[1].Tenants().Create(ctx, store.Tenant{ID: "acme"}))
		_, err := stores[n-1].Tenants().Get(ctx, "acme")
		require.NoError(t, err)
	})
}

// A database a newer visid migrated makes Migrate fail with ErrSchemaTooNew, and stay as it
// is.
func TestMigrateSchemaTooNew(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		require.NoError(t, s.Migrate(ctx))
		_, err := s.DB().ExecContext(ctx, fmt.Sprintf(
			`INSERT INTO schema_migrations (version, name, applied) VALUES (%d, 'from_the_future.sql', 1)`, latestVersion+1))
		require.NoError(t, err)
		err = s.Migrate(ctx)
		require.ErrorIs(t, err, sqlstore.ErrSchemaTooNew)
		assert.Contains(t, err.Error(), fmt.Sprintf("version %d", latestVersion+1))
		assert.Equal(t, migrationFiles+1, migrationRows(t, s))
	})
}

// Migration 8 counts the members of the groups a database already holds, so Groups.Patch's
// MaxMembers sees them.
func TestMigrateCountsExistingMembers(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		require.NoError(t, s.Migrate(ctx))
		require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme"}))
		var members []store.Member
		for _, name := range []string{"ann", "bob"} {
			u, err := s.Users().Create(ctx, "acme", store.User{UserName: name})
			require.NoError(t, err)
			members = append(members, store.Member{Value: u.ID})
		}
		cy, err := s.Users().Create(ctx, "acme", store.User{UserName: "cy"})
		require.NoError(t, err)
		g, err := s.Groups().Create(ctx, "acme", store.Group{DisplayName: "Staff", Members: members})
		require.NoError(t, err)
		// Back to the schema before migration 8, the members kept.
		for _, q := range []string{
			`DROP INDEX members_pos`,
			`ALTER TABLE groups DROP COLUMN member_count`,
			`DELETE FROM schema_migrations WHERE version = 8`,
		} {
			_, err := s.DB().ExecContext(ctx, q)
			require.NoError(t, err, q)
		}
		require.NoError(t, s.Migrate(ctx))
		_, err = s.Groups().Patch(ctx, "acme", g.ID, store.GroupPatch{Add: []string{cy.ID}, MaxMembers: 2})
		require.ErrorIs(t, err, store.ErrTooManyMembers, "the two members were counted")
		got, err := s.Groups().Patch(ctx, "acme", g.ID, store.GroupPatch{Add: []string{cy.ID}, Remove: []string{members[0].Value}, MaxMembers: 2, WithMembers: true})
		require.NoError(t, err)
		assert.Equal(t, []string{members[1].Value, cy.ID}, []string{got.Members[0].Value, got.Members[1].Value})
	})
}
