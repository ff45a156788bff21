package sqlstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/sqlstore"
)

// Open bounds a PostgreSQL pool by Config.MaxOpenConns (DefaultMaxOpenConns when zero), and the
// DSN's pool_max_conns, which pgx's driver would refuse, sets it instead and goes no further.
func TestPoolBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := postgresSchema(t, postgresDSN(t))
	for _, tc := range []struct {
		name string
		cfg  sqlstore.Config
		dsn  string
		want int
	}{
		{"default", sqlstore.Config{}, dsn, sqlstore.DefaultMaxOpenConns},
		{"Config", sqlstore.Config{MaxOpenConns: 3}, dsn, 3},
		{"DSN", sqlstore.Config{MaxOpenConns: 3}, dsn + "&pool_max_conns=2&pool_max_conn_lifetime=10m", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.cfg.Open(ctx, tc.dsn)
			require.NoError(t, err)
			defer s.Close()
			assert.Equal(t, tc.want, s.DB().Stats().MaxOpenConnections)
		})
	}
	for _, bad := range []string{"pool_max_conns=0", "pool_max_conns=ten", "pool_max_conn_idle_time=5"} {
		_, err := sqlstore.Open(ctx, dsn+"&"+bad)
		name, _, _ := strings.Cut(bad, "=")
		assert.ErrorContains(t, err, name, "%s is refused", bad)
	}
}

// With every connection of the pool busy, a store call waits for one until its deadline and
// then fails with store.ErrUnavailable, not later.
func TestPoolExhausted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := postgresSchema(t, postgresDSN(t))
	s, err := sqlstore.Open(ctx, dsn+"&pool_max_conns=1")
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme"}))

	held, err := s.DB().Conn(ctx)
	require.NoError(t, err)
	for _, call := range []struct {
		name string
		do   func(ctx context.Context) error
	}{
		{"read", func(ctx context.Context) error { _, err := s.Tenants().Get(ctx, "acme"); return err }},
		{"write", func(ctx context.Context) error { return s.Tenants().Create(ctx, store.Tenant{ID: "globex"}) }},
		{"statement", func(ctx context.Context) error {
			_, err := s.Users().Create(ctx, "acme", store.User{UserName: "ann"})
			return err
		}},
	} {
		t.Run(call.name, func(t *testing.T) {
			cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := call.do(cctx)
			assert.Less(t, time.Since(start), 2*time.Second, "it fails at its deadline")
			require.ErrorIs(t, err, store.ErrUnavailable)
			assert.True(t, errors.Is(err, context.DeadlineExceeded))
		})
	}
	require.NoError(t, held.Close())
	_, err = s.Tenants().Get(ctx, "acme")
	require.NoError(t, err, "the connection came free")
}
