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
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
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

// Migration 10 gives the users and groups written before it the attrs rows of schemas, so a
// filter on schemas finds them: the core URN for all, the enterprise extension's for the users
// with a value in it.
func TestMigrateSchemasRows(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		require.NoError(t, s.Migrate(ctx))
		b := s.Backend()
		require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
		plain, err := b.Users.Create(ctx, "acme", store.User{UserName: "plain"})
		require.NoError(t, err)
		ext, err := b.Users.Create(ctx, "acme", store.User{UserName: "ext", Enterprise: store.EnterpriseUser{Department: "R&D"}})
		require.NoError(t, err)
		_, err = b.Groups.Create(ctx, "acme", store.Group{DisplayName: "g"})
		require.NoError(t, err)
		// The database as a version before 10 left it.
		_, err = s.DB().ExecContext(ctx, `DELETE FROM attrs WHERE attr = 'schemas'`)
		require.NoError(t, err)
		_, err = s.DB().ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = 10`)
		require.NoError(t, err)
		require.NoError(t, s.Migrate(ctx))

		users := func(f string) []string {
			e, err := filter.Parse(f, schema.User())
			require.NoError(t, err)
			p, err := b.Users.List(ctx, "acme", store.Query{Filter: e, Count: -1})
			require.NoError(t, err)
			var ids []string
			for _, u := range p.Resources {
				ids = append(ids, u.ID)
			}
			return ids
		}
		assert.Equal(t, []string{plain.ID, ext.ID}, users(`schemas eq "urn:ietf:params:scim:schemas:core:2.0:User"`))
		assert.Equal(t, []string{ext.ID}, users(`schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"`))
		e, err := filter.Parse(`schemas eq "urn:ietf:params:scim:schemas:core:2.0:Group"`, schema.Group())
		require.NoError(t, err)
		p, err := b.Groups.List(ctx, "acme", store.Query{Filter: e, Count: -1})
		require.NoError(t, err)
		assert.Equal(t, 1, p.TotalResults)
	})
}

// Migration 13 gives the users and groups written before it the attrs rows of the host-defined
// extensions their schemas list, after the enterprise extension's, so a filter on schemas
// finds them.
func TestMigrateExtensionSchemasRows(t *testing.T) {
	t.Parallel()
	const userURN, otherURN = "urn:example:Ext:2.0:User", "urn:example:Another:2.0:User"
	const groupURN = "urn:example:Ext:2.0:Group"
	rt, err := schema.User().WithExtensions(
		schema.Extension{Schema: &schema.Schema{ID: userURN, Attributes: []*schema.Attribute{{Name: "code", Type: schema.String}}}},
		schema.Extension{Schema: &schema.Schema{ID: otherURN, Attributes: []*schema.Attribute{{Name: "code", Type: schema.String}}}})
	require.NoError(t, err)
	grt, err := schema.Group().WithExtensions(schema.Extension{Schema: &schema.Schema{ID: groupURN, Attributes: []*schema.Attribute{{Name: "code", Type: schema.String}}}})
	require.NoError(t, err)
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		require.NoError(t, s.Migrate(ctx))
		b := s.Backend()
		require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
		plain, err := b.Users.Create(ctx, "acme", store.User{UserName: "plain"})
		require.NoError(t, err)
		one, err := b.Users.Create(ctx, "acme", store.User{UserName: "one", Extensions: store.Extensions{userURN: {"code": "a"}}})
		require.NoError(t, err)
		both, err := b.Users.Create(ctx, "acme", store.User{UserName: "both", Enterprise: store.EnterpriseUser{Department: "R&D"},
			Extensions: store.Extensions{userURN: {"code": "b"}, otherURN: {"code": "c"}}})
		require.NoError(t, err)
		_, err = b.Groups.Create(ctx, "acme", store.Group{DisplayName: "g", Extensions: store.Extensions{groupURN: {"code": "g"}}})
		require.NoError(t, err)
		// The database as a version before 13 left it.
		for _, q := range []string{
			`DELETE FROM attrs WHERE attr = 'schemas' AND s LIKE 'urn:example:%'`,
			`DROP TABLE unique_values`,
			`DELETE FROM schema_migrations WHERE version = 13`,
		} {
			_, err := s.DB().ExecContext(ctx, q)
			require.NoError(t, err, q)
		}
		require.NoError(t, s.Migrate(ctx))

		users := func(f string) []string {
			e, err := filter.Parse(f, rt)
			require.NoError(t, err)
			p, err := b.Users.List(ctx, "acme", store.Query{Filter: e, Count: -1})
			require.NoError(t, err)
			ids := []string{}
			for _, u := range p.Resources {
				ids = append(ids, u.ID)
			}
			return ids
		}
		assert.Equal(t, []string{plain.ID, one.ID, both.ID}, users(`schemas eq "urn:ietf:params:scim:schemas:core:2.0:User"`))
		assert.Equal(t, []string{both.ID}, users(`schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"`))
		assert.Equal(t, []string{one.ID, both.ID}, users(`schemas eq "`+userURN+`"`))
		assert.Equal(t, []string{both.ID}, users(`schemas eq "`+otherURN+`"`))
		e, err := filter.Parse(`schemas eq "`+groupURN+`"`, grt)
		require.NoError(t, err)
		p, err := b.Groups.List(ctx, "acme", store.Query{Filter: e, Count: -1})
		require.NoError(t, err)
		assert.Equal(t, 1, p.TotalResults)

		// The rows are those a write gives: rewriting the users changes none of them.
		var before []string
		read := func() []string {
			rows, err := s.DB().QueryContext(ctx, `SELECT rid || ' ' || idx || ' ' || s || ' ' || sf FROM attrs WHERE attr = 'schemas' ORDER BY rid, idx`)
			require.NoError(t, err)
			defer rows.Close()
			var out []string
			for rows.Next() {
				var r string
				require.NoError(t, rows.Scan(&r))
				out = append(out, r)
			}
			require.NoError(t, rows.Err())
			return out
		}
		before = read()
		for _, id := range []string{one.ID, both.ID} {
			_, err := b.Users.Update(ctx, "acme", id, func(u *store.User) error {
				u.Title = "rewritten"
				return nil
			})
			require.NoError(t, err)
		}
		assert.Equal(t, before, read())
	})
}

// Migration 14 marks the endpoints written before it that have events to deliver as due, and
// counts every tenant's endpoints, so that a new event wakes them.
func TestMigrateMarksDueWebhooks(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		require.NoError(t, s.Migrate(ctx))
		appendOne := func(tenant string) {
			require.NoError(t, s.Events().Append(ctx, tenant, store.Event{Type: store.EventSecondFactorSucceeded,
				Actor: "client_a", SubjectKind: store.SubjectUser, SubjectID: "user_a"}))
		}
		hooks := map[string]string{}
		for _, tenant := range []string{"caughtup", "behind", "failing", "waiting", "quiet"} {
			require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: tenant}))
			if tenant != "quiet" {
				appendOne(tenant)
			}
			d := store.WebhookDelivery{}
			switch tenant {
			case "failing":
				d.Failing = true
			case "waiting":
				d.NextAttempt = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			}
			e, err := s.Webhooks().Create(ctx, store.WebhookEndpoint{Tenant: tenant, URL: "https://hooks.example.com/" + tenant,
				Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", Delivery: d})
			require.NoError(t, err)
			hooks[tenant] = e.ID
			if tenant != "caughtup" && tenant != "quiet" {
				appendOne(tenant) // after the endpoint's cursor
			}
		}
		// Back to the schema before migration 14, the endpoints kept.
		for _, q := range []string{
			`DROP INDEX webhooks_due`,
			`DROP INDEX event_heads_woken`,
			`ALTER TABLE webhooks DROP COLUMN due_at`,
			`ALTER TABLE event_heads DROP COLUMN hooks`,
			`ALTER TABLE event_heads DROP COLUMN woken_at`,
			`DELETE FROM event_heads WHERE last = 0`,
			`DELETE FROM schema_migrations WHERE version = 14`,
		} {
			_, err := s.DB().ExecContext(ctx, q)
			require.NoError(t, err, q)
		}
		require.NoError(t, s.Migrate(ctx))
		due := func(now time.Time) []string {
			list, err := s.Webhooks().Due(ctx, now, 10)
			require.NoError(t, err)
			var ids []string
			for _, e := range list {
				ids = append(ids, e.Tenant)
			}
			return ids
		}
		assert.Equal(t, []string{"behind"}, due(time.Now()))
		assert.Equal(t, []string{"behind", "waiting"}, due(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))
		appendOne("caughtup")
		appendOne("quiet")
		assert.ElementsMatch(t, []string{"behind", "caughtup", "quiet"}, due(time.Now()), "new events wake the endpoints")
	})
}
