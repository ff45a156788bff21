package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/sqlstore"
)

// TestSize: a store's size grows with what it holds, on SQLite and PostgreSQL.
func TestSize(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		require.NoError(t, s.Migrate(ctx))
		empty, err := s.Size(ctx)
		require.NoError(t, err)
		assert.Positive(t, empty, "the schema takes room")
		require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme", Created: time.Now()}))
		for i := range 300 {
			_, err := s.Users().Create(ctx, "acme", store.User{UserName: fmt.Sprintf("user%04d@example.com", i), Active: true,
				DisplayName: "A user with a name long enough to take some room"})
			require.NoError(t, err)
		}
		full, err := s.Size(ctx)
		require.NoError(t, err)
		assert.Greater(t, full, empty, "300 users take room")
	})
}

// BenchmarkStoreBytes reports what a user (created through the store with its event, as SCIM
// creates one) and a change (a PATCH of one attribute of a user, with its event) take in the
// database, in B/user and B/change, on SQLite and PostgreSQL: the figures of
// docs/production.md's sizing table. 200 users; 2,000 with VISID_BENCH_LARGE=1.
func BenchmarkStoreBytes(b *testing.B) {
	n := 200
	if os.Getenv("VISID_BENCH_LARGE") == "1" {
		n = 2000
	}
	for _, dsn := range benchDSNs(b) {
		b.Run(dsn.name, func(b *testing.B) {
			for b.Loop() {
				ctx := context.Background()
				s, err := sqlstore.Config{KeyEncryptionKey: testKEK()}.Open(ctx, dsn.make(b))
				require.NoError(b, err)
				require.NoError(b, s.Migrate(ctx))
				require.NoError(b, s.Tenants().Create(ctx, store.Tenant{ID: "acme", Created: time.Now()}))
				before := settledSize(b, s)
				ids := make([]string, n)
				for i := range n {
					c := store.WithChange(ctx, store.Change{Actor: "key_bench", Time: time.Now()})
					u, err := s.Users().Create(c, "acme", store.User{UserName: fmt.Sprintf("user%06d@example.com", i), Active: true,
						ExternalID: fmt.Sprintf("ext-%06d", i), DisplayName: fmt.Sprintf("User %06d", i),
						Name:   store.Name{GivenName: "Given", FamilyName: fmt.Sprintf("Family%06d", i)},
						Emails: []store.MultiValue{{Value: fmt.Sprintf("user%06d@example.com", i), Type: "work", Primary: true}}})
					require.NoError(b, err)
					ids[i] = u.ID
				}
				users := settledSize(b, s)
				for i := range n {
					c := store.WithChange(ctx, store.Change{Actor: "key_bench", Time: time.Now()})
					_, err := s.Users().Update(c, "acme", ids[i], func(u *store.User) error {
						u.Title = fmt.Sprintf("Title %06d", i)
						return nil
					})
					require.NoError(b, err)
				}
				updated := settledSize(b, s)
				b.ReportMetric(float64(users-before)/float64(n), "B/user")
				b.ReportMetric(float64(updated-users)/float64(n), "B/change")
				s.Close()
			}
		})
	}
}

// settledSize is s's size once SQLite's write-ahead log is folded back into the database (a
// no-op on PostgreSQL, whose size counts the tables' pages).
func settledSize(b *testing.B, s *sqlstore.Store) int64 {
	b.Helper()
	if s.Dialect() == sqlstore.SQLite {
		_, err := s.DB().Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		require.NoError(b, err)
	} else {
		_, err := s.DB().Exec(`VACUUM ANALYZE`)
		require.NoError(b, err)
	}
	n, err := s.Size(context.Background())
	require.NoError(b, err)
	return n
}

// benchDSN names a database for a benchmark and makes a fresh one.
type benchDSN struct {
	name string
	make func(b *testing.B) string
}

// benchDSNs are a new SQLite file and, when VISID_TEST_POSTGRES_DSN is set, a new PostgreSQL
// schema.
func benchDSNs(b *testing.B) []benchDSN {
	out := []benchDSN{{"sqlite", func(b *testing.B) string { return "sqlite:" + filepath.Join(b.TempDir(), "visid.db") }}}
	if os.Getenv("VISID_TEST_POSTGRES_DSN") != "" {
		out = append(out, benchDSN{"postgres", func(b *testing.B) string { return postgresSchema(b, postgresDSN(b)) }})
	}
	return out
}
