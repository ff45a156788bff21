package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/sqlstore"
)

// Open gives every PostgreSQL connection the statement_timeout of Config.StatementTimeout (30 s
// by default, none when negative), and a statement that runs longer fails.
func TestStatementTimeout(t *testing.T) {
	t.Parallel()
	dsn := postgresSchema(t, postgresDSN(t))
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		want    string
	}{
		{"default", 0, "30s"},
		{"set", 200 * time.Millisecond, "200ms"},
		{"none", -1, "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sqlstore.Config{StatementTimeout: tc.timeout}.Open(ctx, dsn)
			require.NoError(t, err)
			defer s.Close()
			var got string
			require.NoError(t, s.DB().QueryRowContext(ctx, `SHOW statement_timeout`).Scan(&got))
			assert.Equal(t, tc.want, got)
		})
	}

	// The schema is made under the default timeout: ten migrations on a busy machine may take
	// longer than 200ms a statement, which is not what this test is about.
	m, err := sqlstore.Config{}.Open(ctx, dsn)
	require.NoError(t, err)
	require.NoError(t, m.Migrate(ctx))
	require.NoError(t, m.Close())

	s, err := sqlstore.Config{StatementTimeout: 200 * time.Millisecond}.Open(ctx, dsn)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.DB().ExecContext(ctx, `SELECT pg_sleep(5)`)
	var pe *pgconn.PgError
	require.ErrorAs(t, err, &pe, "a statement longer than the timeout")
	assert.Equal(t, "57014", pe.Code, "query_canceled")
	require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme"}), "the store works within the timeout")
}

// A store call whose ctx is done stops: it fails with the ctx's error and stores nothing; and a
// running statement stops when its ctx's deadline passes, on both dialects.
func TestContextStopsQuery(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		require.NoError(t, s.Migrate(ctx))
		require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme"}))

		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err := s.Users().Create(cancelled, "acme", store.User{UserName: "ann"})
		require.ErrorIs(t, err, context.Canceled)
		_, err = s.Users().List(cancelled, "acme", store.Query{Count: -1})
		require.ErrorIs(t, err, context.Canceled)
		p, err := s.Users().List(ctx, "acme", store.Query{Count: -1})
		require.NoError(t, err)
		assert.Zero(t, p.TotalResults, "a cancelled Create stored a user")

		// A statement that would run for minutes: the deadline stops it.
		slow := `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000000) SELECT COUNT(*) FROM n`
		if s.Dialect() == sqlstore.Postgres {
			slow = `SELECT pg_sleep(600)`
		}
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err = s.DB().ExecContext(short, slow)
		require.Error(t, err)
		assert.True(t, errors.Is(err, context.DeadlineExceeded) || short.Err() != nil, "stopped by the deadline: %v", err)
	})
}
