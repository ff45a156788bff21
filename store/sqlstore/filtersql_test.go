package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// ftDB is a database holding only a resource table res(tenant, kind, id, seq) and the attrs
// table of dialect.go, so whereFilter is tested without the Store.
type ftDB struct {
	d  dialect
	db *sql.DB
	// textBytes says whether text columns keep any bytes (NUL, invalid UTF-8): SQLite does,
	// PostgreSQL refuses them.
	textBytes bool
	seq       int
}

// ftEachDialect runs fn on a fresh SQLite database and, when VISID_TEST_POSTGRES_DSN is set, on
// a fresh PostgreSQL schema.
func ftEachDialect(t *testing.T, fn func(t *testing.T, db *ftDB)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, ftSQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, ftPostgres(t))
	})
}

func ftSQLite(t *testing.T) *ftDB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+ftRandom()+"?mode=memory")
	require.NoError(t, err)
	db.SetMaxOpenConns(1) // one connection: the in-memory database lives as long as it does
	t.Cleanup(func() { db.Close() })
	for _, s := range []string{
		`CREATE TABLE res (tenant TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL,
			PRIMARY KEY (tenant, kind, id))`,
		`CREATE TABLE attrs (
			tenant TEXT NOT NULL, kind TEXT NOT NULL, rid TEXT NOT NULL, attr TEXT NOT NULL, sub TEXT NOT NULL,
			idx INTEGER NOT NULL, s TEXT, sf TEXT, n REAL, b INTEGER, t INTEGER,
			PRIMARY KEY (tenant, kind, rid, attr, sub, idx)) WITHOUT ROWID`,
		`CREATE INDEX attrs_lookup ON attrs (tenant, kind, attr, sub, sf)`,
		`CREATE INDEX attrs_exact ON attrs (tenant, kind, attr, sub, s) WHERE s IS NOT NULL AND sf IS NULL`,
	} {
		_, err := db.Exec(s)
		require.NoError(t, err)
	}
	return &ftDB{d: sqliteDialect, db: db, textBytes: true}
}

// ftPostgresSchema opens a schema of its own in the database of VISID_TEST_POSTGRES_DSN, dropped
// when the test ends. It skips t without VISID_TEST_POSTGRES_DSN, or fails it when
// VISID_REQUIRE_SERVICES=1.
func ftPostgresSchema(t *testing.T) *sql.DB {
	t.Helper()
	dsn := os.Getenv("VISID_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
			t.Fatal("VISID_REQUIRE_SERVICES=1 but VISID_TEST_POSTGRES_DSN is not set")
		}
		t.Skip("VISID_TEST_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	name := "t_" + ftRandom()
	_, err = admin.ExecContext(ctx, "CREATE SCHEMA "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := admin.ExecContext(ctx, "DROP SCHEMA "+name+" CASCADE")
		assert.NoError(t, err)
	})
	db, err := sql.Open("pgx", ftSearchPath(t, dsn, name))
	require.NoError(t, err)
	// Registered after the drop, so it runs first: the pool closes before the schema goes.
	t.Cleanup(func() { db.Close() })
	return db
}

// ftPostgres returns a ftDB in a schema of its own (ftPostgresSchema). The string columns get a
// collation that does not order by bytes, when the server has one, so the test shows that
// whereFilter does not depend on the columns' collation.
func ftPostgres(t *testing.T) *ftDB {
	t.Helper()
	ctx := context.Background()
	db := ftPostgresSchema(t)
	collate := ""
	var icu bool
	require.NoError(t, db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')`).Scan(&icu))
	if icu {
		collate = ` COLLATE "und-x-icu"`
	}
	for _, s := range []string{
		`CREATE TABLE res (tenant TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, seq BIGINT NOT NULL,
			PRIMARY KEY (tenant, kind, id))`,
		`CREATE TABLE attrs (
			tenant TEXT NOT NULL, kind TEXT NOT NULL, rid TEXT NOT NULL, attr TEXT NOT NULL, sub TEXT NOT NULL,
			idx BIGINT NOT NULL, s TEXT` + collate + `, sf TEXT` + collate + `, n DOUBLE PRECISION, b BOOLEAN, t BIGINT,
			PRIMARY KEY (tenant, kind, rid, attr, sub, idx))`,
		`CREATE INDEX attrs_lookup ON attrs (tenant, kind, attr, sub, sf)`,
		`CREATE INDEX attrs_exact ON attrs (tenant, kind, attr, sub, s) WHERE s IS NOT NULL AND sf IS NULL`,
	} {
		_, err := db.ExecContext(ctx, s)
		require.NoError(t, err)
	}
	return &ftDB{d: postgresDialect, db: db}
}

// ftSearchPath adds search_path to a URL or key=value DSN.
func ftSearchPath(t *testing.T, dsn, schemaName string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		require.NoError(t, err)
		q := u.Query()
		q.Set("search_path", schemaName)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schemaName
}

func ftRandom() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ftRebind turns '?' into $n for PostgreSQL.
func ftRebind(d dialect, q string) string {
	if d != postgresDialect {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// insert stores a resource's rows; resources are listed in the order they were inserted.
func (db *ftDB) insert(t *testing.T, tx *sql.Tx, tenant string, kind resourceKind, id string, rows []attrRow) {
	t.Helper()
	ctx := context.Background()
	db.seq++
	_, err := tx.ExecContext(ctx, ftRebind(db.d, `INSERT INTO res (tenant, kind, id, seq) VALUES (?, ?, ?, ?)`), tenant, string(kind), id, db.seq)
	require.NoError(t, err)
	q := ftRebind(db.d, `INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf, n, b, t) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	for _, r := range rows {
		_, err := tx.ExecContext(ctx, q, tenant, string(kind), id, r.Attr, r.Sub, r.Idx, r.S, r.SF, r.N, r.B, r.T)
		require.NoError(t, err, "row %+v", r)
	}
}

// load stores resources of kind in tenant, in order, with their ids.
func (db *ftDB) load(t *testing.T, tenant string, kind resourceKind, rt *schema.ResourceType, ids []string, rs []filter.Resource) {
	t.Helper()
	tx, err := db.db.Begin()
	require.NoError(t, err)
	for i, r := range rs {
		db.insert(t, tx, tenant, kind, ids[i], resourceAttrRows(rt, r))
	}
	require.NoError(t, tx.Commit())
}

// list returns the ids of tenant's resources of kind that e matches in the database, in order.
func (db *ftDB) list(t *testing.T, tenant string, kind resourceKind, e filter.Expr) ([]string, string) {
	t.Helper()
	where, args, err := whereFilter(db.d, kind, tenant, e)
	require.NoError(t, err, "filter %s", e)
	q := `SELECT r.id FROM res r WHERE r.tenant = ? AND r.kind = ? AND (` + where + `) ORDER BY r.seq`
	rows, err := db.db.Query(ftRebind(db.d, q), append([]any{tenant, string(kind)}, args...)...)
	require.NoError(t, err, "filter %s: %s", e, where)
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	return ids, where
}

// ftMatch returns the ids of the resources e matches, in order.
func ftMatch(e filter.Expr, ids []string, rs []filter.Resource) []string {
	out := []string{}
	for i, r := range rs {
		if filter.Match(e, r) {
			out = append(out, ids[i])
		}
	}
	return out
}

func ftTime(t *testing.T, s string) time.Time {
	at, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	return at
}

// ftUsers is the users of TestFilterSQL, in creation order.
func ftUsers(t *testing.T) []*store.User {
	return []*store.User{{
		ID: "u1", UserName: "Alice", ExternalID: "ext-1", Active: true, Title: "Engineer",
		Name:         store.Name{GivenName: "Alice", FamilyName: "Liddell"},
		Emails:       []store.MultiValue{{Value: "alice@Example.com", Type: "work", Primary: true}, {Value: "a@home.org", Type: "home"}},
		PhoneNumbers: []store.MultiValue{{Value: "+1 555 0100", Type: "mobile"}},
		Groups:       []store.GroupRef{{Value: "g1", Display: "Admins", Type: "direct"}},
		Enterprise: store.EnterpriseUser{EmployeeNumber: "1001", Department: "R&D",
			Manager: store.Manager{Value: "u2", DisplayName: "Émile"}},
		Meta: store.Meta{Created: ftTime(t, "2024-01-01T00:00:00.000000001Z"), LastModified: ftTime(t, "2024-06-01T12:00:00Z")},
	}, {
		ID: "u2", UserName: "ÉMILE", ExternalID: "EXT-2",
		Emails:     []store.MultiValue{{Value: "emile@example.com", Type: "Work"}},
		Addresses:  []store.Address{{Locality: "Paris", Country: "FR", Primary: true}},
		Groups:     []store.GroupRef{{Value: "g1", Display: "Admins", Type: "direct"}},
		Enterprise: store.EnterpriseUser{EmployeeNumber: "999", Department: "r&d"},
		Meta:       store.Meta{Created: ftTime(t, "2024-01-01T00:00:00Z")},
	}, {
		ID: "u3", UserName: "Straße", Active: true, Title: "Ingenieur",
		Emails:    []store.MultiValue{{Type: "work"}, {Value: "x%y_z@example.com", Type: "other"}},
		Roles:     []store.MultiValue{{}},
		Addresses: []store.Address{{Locality: "Berlin", Country: "DE"}},
		Groups:    []store.GroupRef{{Value: "g3", Display: "Ops", Type: "direct"}},
		Meta:      store.Meta{Created: ftTime(t, "2023-12-31T23:59:59.999999999Z")},
	}, {
		ID: "u4", UserName: "zed", Title: "engineer", DisplayName: "Zed",
		Enterprise: store.EnterpriseUser{CostCenter: "CC-7", Manager: store.Manager{DisplayName: "nobody"}},
	}, {
		ID: "u5", UserName: "\u212Aelvin", NickName: "σοφία", // KELVIN SIGN folds to k
		Meta: store.Meta{Created: ftTime(t, "1970-01-01T00:00:00Z")},
	}}
}

func ftGroups() []*store.Group {
	return []*store.Group{
		{ID: "g1", DisplayName: "Admins", ExternalID: "G-1", Members: []store.Member{
			{Value: "u1", Display: "Alice", Type: "User"}, {Value: "u2", Display: "ÉMILE", Type: "User"}}},
		{ID: "g2", DisplayName: "Empty"},
		{ID: "g3", DisplayName: "Ops", Members: []store.Member{{Value: "u3", Display: "Straße", Type: "User"}, {}}},
	}
}

// ftLoadFixture stores the users and groups in tenant "t1", and in tenant "t2" users with the
// same ids and other values, which no t1 query may see.
func ftLoadFixture(t *testing.T, db *ftDB) (users, groups []filter.Resource) {
	var uids, gids []string
	for _, u := range ftUsers(t) {
		users = append(users, u)
		uids = append(uids, u.ID)
	}
	for _, g := range ftGroups() {
		groups = append(groups, g)
		gids = append(gids, g.ID)
	}
	db.load(t, "t1", kindUser, schema.User(), uids, users)
	db.load(t, "t1", kindGroup, schema.Group(), gids, groups)
	var others []filter.Resource
	for _, id := range uids {
		others = append(others, &store.User{ID: id, UserName: "bob-" + id, Title: "Intruder", Active: true,
			Emails: []store.MultiValue{{Value: "bob@example.com", Type: "work", Primary: true}}})
	}
	db.load(t, "t2", kindUser, schema.User(), uids, others)
	return users, groups
}

const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:"

func TestFilterSQL(t *testing.T) {
	t.Parallel()
	users := []string{"u1", "u2", "u3", "u4", "u5"}
	none := []string{}
	userCases := []struct {
		filter string
		want   []string
	}{
		// Strings, folded: ASCII, accents, ß and ẞ, the Kelvin sign, final sigma.
		{`userName eq "alice"`, []string{"u1"}},
		{`userName eq "ALICE"`, []string{"u1"}},
		{`userName eq "émile"`, []string{"u2"}},
		{`userName eq "Émile"`, []string{"u2"}},
		{`userName eq "emile"`, none},
		{`userName eq "STRAẞE"`, []string{"u3"}},
		{`userName eq "strasse"`, none},
		{`userName eq "kelvin"`, []string{"u5"}},
		{`userName eq "\u212Aelvin"`, []string{"u5"}},
		{`nickName eq "ΣΟΦΊΑ"`, []string{"u5"}},
		{`nickName eq "σοφίας"`, none},
		{`userName ne "alice"`, []string{"u2", "u3", "u4", "u5"}},
		{`userName co "LI"`, []string{"u1"}},
		{`userName co "MI"`, []string{"u2"}},
		{`userName co ""`, users},
		{`userName sw "é"`, []string{"u2"}},
		{`userName sw "É"`, []string{"u2"}},
		{`userName sw ""`, users},
		{`userName ew "E"`, []string{"u1", "u2", "u3"}},
		{`userName ew "SSE"`, none},
		{`userName ew "ẞe"`, []string{"u3"}},
		{`userName ew "xalice"`, none},
		{`userName ew ""`, users},
		// Byte order of the folded forms: "é" (0xC3 0xA9) sorts after every ASCII letter.
		{`userName gt "m"`, []string{"u2", "u3", "u4"}},
		{`userName ge "zed"`, []string{"u2", "u4"}},
		{`userName gt "zed"`, []string{"u2"}},
		{`userName le "zed"`, []string{"u1", "u3", "u4", "u5"}},
		{`userName lt "ALICE"`, none},
		{`userName le "ALICE"`, []string{"u1"}},
		{`userName lt "zed\u0000"`, []string{"u1", "u3", "u4", "u5"}},
		{`userName gt "zed\u0000"`, []string{"u2"}},
		{`userName eq "zed\u0000"`, none},
		{`userName ne "zed\u0000"`, users},
		{`userName co "e\u0000"`, none},
		// LIKE's wildcards and escape are plain characters.
		{`emails.value co "%"`, []string{"u3"}},
		{`emails.value co "_"`, []string{"u3"}},
		{`emails.value sw "x%y"`, []string{"u3"}},
		{`emails.value sw "%"`, none},
		{`emails.value ew "_z@example.com"`, []string{"u3"}},
		{`emails.value co "\\"`, none},
		// Absent values: empty strings have no value; only eq null and not (…) hold for them.
		{`title pr`, []string{"u1", "u3", "u4"}},
		{`title eq null`, []string{"u2", "u5"}},
		{`title ne null`, []string{"u1", "u3", "u4"}},
		{`title ne "engineer"`, []string{"u3"}},
		{`not (title eq "engineer")`, []string{"u2", "u3", "u5"}},
		{`title eq "ENGINEER"`, []string{"u1", "u4"}},
		{`displayName pr`, []string{"u4"}},
		// caseExact strings compare as written.
		{`externalId eq "ext-1"`, []string{"u1"}},
		{`externalId eq "EXT-1"`, none},
		{`external_id eq "EXT-2"`, []string{"u2"}},
		{`externalId gt "Z"`, []string{"u1"}},
		{`externalId co "XT"`, []string{"u2"}},
		{`id eq "u3"`, []string{"u3"}},
		{`id eq "U3"`, none},
		{`id sw "u"`, users},
		// Booleans are always present.
		{`active eq true`, []string{"u1", "u3"}},
		{`active eq false`, []string{"u2", "u4", "u5"}},
		{`active ne true`, []string{"u2", "u4", "u5"}},
		{`active eq "TRUE"`, []string{"u1", "u3"}},
		{`active pr`, users},
		{`active eq null`, none},
		// Multi-valued: any value satisfies.
		{`emails.value co "example.com"`, []string{"u1", "u2", "u3"}},
		{`emails.type eq "work"`, []string{"u1", "u2", "u3"}},
		{`emails.type eq "work" and emails.primary eq true`, []string{"u1"}},
		{`emails.primary eq false`, []string{"u1", "u2", "u3"}},
		{`emails.value pr`, []string{"u1", "u2", "u3"}},
		{`emails.value eq null`, []string{"u4", "u5"}},
		{`emails pr`, []string{"u1", "u2", "u3"}},
		{`emails eq null`, []string{"u4", "u5"}},
		{`emails co "HOME"`, []string{"u1"}},
		{`roles pr`, none},                        // u3's only role is empty: an element, but no value
		{`roles[not (value pr)]`, []string{"u3"}}, // … which a value path still visits
		{`roles eq null`, users},
		{`phoneNumbers.value sw "+1"`, []string{"u1"}},
		// Value paths: one element satisfies the whole filter.
		{`emails[type eq "work" and primary eq true]`, []string{"u1"}},
		{`emails[type eq "work" and value pr]`, []string{"u1", "u2"}},
		{`emails[type eq "work" and not (value pr)]`, []string{"u3"}},
		{`emails[not (value pr)]`, []string{"u3"}},
		{`emails[value eq null]`, []string{"u3"}},
		{`emails[type eq "home" or primary eq true]`, []string{"u1"}},
		{`emails[type eq "home" and primary eq true]`, none},
		{`emails[not (type eq "work")]`, []string{"u1", "u3"}},
		{`not (emails[type eq "work"])`, []string{"u4", "u5"}},
		{`emails[type eq "work"] and emails[type eq "home"]`, []string{"u1"}},
		{`addresses[locality eq "PARIS" and primary eq true]`, []string{"u2"}},
		{`addresses[locality eq "berlin" and primary eq true]`, none},
		{`addresses.country eq "fr" or addresses.country eq "de"`, []string{"u2", "u3"}},
		// Value filters inside attribute paths.
		{`emails[type eq "work"].value ew ".COM"`, []string{"u1", "u2"}},
		{`emails[type eq "work"].value eq "x%y_z@example.com"`, none},
		{`emails[type eq "other"].value eq "x%y_z@example.com"`, []string{"u3"}},
		{`emails[type eq "work"].value pr`, []string{"u1", "u2"}},
		{`emails[type eq "work"].value eq null`, []string{"u3", "u4", "u5"}},
		{`emails[not (type eq "work")].primary eq false`, []string{"u1", "u3"}},
		// not, nested, with and/or precedence.
		{`not (emails.value co "example")`, []string{"u4", "u5"}},
		{`not (not (active eq true))`, []string{"u1", "u3"}},
		{`not (active eq true or title pr)`, []string{"u2", "u5"}},
		{`userName eq "alice" or active eq false and title pr`, []string{"u1", "u4"}},
		{`(userName eq "alice" or active eq false) and title pr`, []string{"u1", "u4"}},
		{`(userName eq "alice" or active eq false) and not (title pr)`, []string{"u2", "u5"}},
		{`name pr`, []string{"u1"}},
		{`name.givenName sw "AL" and name.familyName ew "dell"`, []string{"u1"}},
		{`name eq null`, []string{"u2", "u3", "u4", "u5"}},
		// dateTime, to the nanosecond, in any zone, beyond the stored range.
		{`meta.created gt "2024-01-01T00:00:00Z"`, []string{"u1"}},
		{`meta.created ge "2024-01-01T00:00:00Z"`, []string{"u1", "u2"}},
		{`meta.created eq "2024-01-01T00:00:00.000000001Z"`, []string{"u1"}},
		{`meta.created eq "2024-01-01T01:00:00.000000001+01:00"`, []string{"u1"}},
		{`meta.created lt "2024-01-01T00:00:00Z"`, []string{"u3", "u5"}},
		{`meta.created le "2023-12-31T23:59:59.999999999Z"`, []string{"u3", "u5"}},
		{`meta.created ne "2024-01-01T00:00:00Z"`, []string{"u1", "u3", "u5"}},
		{`meta.created eq "1970-01-01T00:00:00Z"`, []string{"u5"}},
		{`meta.created pr`, []string{"u1", "u2", "u3", "u5"}},
		{`meta.created eq null`, []string{"u4"}},
		{`meta.created gt "0001-01-01T00:00:00Z"`, []string{"u1", "u2", "u3", "u5"}},
		{`meta.created lt "1000-01-01T00:00:00Z"`, none},
		{`meta.created lt "9999-12-31T23:59:59Z"`, []string{"u1", "u2", "u3", "u5"}},
		{`meta.created ne "9999-12-31T23:59:59Z"`, []string{"u1", "u2", "u3", "u5"}},
		{`meta.created eq "9999-12-31T23:59:59Z"`, none},
		{`meta.lastModified ge "2024-06-01T12:00:00Z"`, []string{"u1"}},
		{`meta.resourceType eq "User"`, users},
		{`meta.resourceType eq "user"`, none},
		{`meta pr`, users},
		// The enterprise extension, qualified or not.
		{enterprise + `department eq "R&D"`, []string{"u1", "u2"}},
		{`department eq "r&d"`, []string{"u1", "u2"}},
		{enterprise + `employeeNumber gt "1000"`, []string{"u1", "u2"}},
		{`employeeNumber lt "1000"`, none},
		{enterprise + `manager.value eq "u2"`, []string{"u1"}},
		{enterprise + `manager.value eq "U2"`, none},
		{`manager.displayName eq "ÉMILE"`, []string{"u1"}},
		{enterprise + `manager pr`, []string{"u1", "u4"}},
		{enterprise + `manager eq null`, []string{"u2", "u3", "u4", "u5"}},
		{`costCenter pr and not (manager.value pr)`, []string{"u4"}},
		// groups, as the store derives them.
		{`groups.value eq "g1"`, []string{"u1", "u2"}},
		{`groups[display eq "OPS"]`, []string{"u3"}},
		{`groups pr`, []string{"u1", "u2", "u3"}},
		// SQL in a literal is a literal.
		{`userName eq "x' OR '1'='1"`, none},
		{`userName eq "x\" OR 1=1 --"`, none},
	}
	groupCases := []struct {
		filter string
		want   []string
	}{
		{`displayName eq "ADMINS"`, []string{"g1"}},
		{`members.value eq "u1"`, []string{"g1"}},
		{`members.value eq "U1"`, none},
		{`members[value eq "u3"]`, []string{"g3"}},
		{`members[not (value pr)]`, []string{"g3"}},
		{`members pr`, []string{"g1", "g3"}},
		{`members eq null`, []string{"g2"}},
		{`members.display eq "straße"`, []string{"g3"}},
		{`members[display sw "é"].value eq "u2"`, []string{"g1"}},
		{`not (members.value eq "u2")`, []string{"g2", "g3"}},
		{`externalId eq "G-1" and meta.resourceType eq "Group"`, []string{"g1"}},
		{`displayName gt "b"`, []string{"g2", "g3"}},
	}
	ftEachDialect(t, func(t *testing.T, db *ftDB) {
		users, groups := ftLoadFixture(t, db)
		uids := []string{"u1", "u2", "u3", "u4", "u5"}
		gids := []string{"g1", "g2", "g3"}
		check := func(t *testing.T, kind resourceKind, rt *schema.ResourceType, ids []string, rs []filter.Resource, f string, want []string) {
			e, err := filter.Parse(f, rt)
			require.NoError(t, err)
			got, where := db.list(t, "t1", kind, e)
			assert.Equal(t, want, ftMatch(e, ids, rs), "filter.Match of %s", f)
			assert.Equal(t, want, got, "SQL of %s:\n%s", f, where)
			assert.NotContains(t, where, "'", "a literal in the SQL of %s", f)
		}
		for _, c := range userCases {
			t.Run(c.filter, func(t *testing.T) { check(t, kindUser, schema.User(), uids, users, c.filter, c.want) })
		}
		for _, c := range groupCases {
			t.Run(c.filter, func(t *testing.T) { check(t, kindGroup, schema.Group(), gids, groups, c.filter, c.want) })
		}
	})
}

// ftNumbers is a resource of ftNumberType: numbers are in no store resource type.
type ftNumbers struct {
	score, level *float64
	tags         []ftTag
}

type ftTag struct {
	weight *float64
	label  string
}

func ftNum(f float64) *float64 { return &f }

func ftNumberValue(f *float64) filter.Value {
	if f == nil {
		return filter.Value{}
	}
	return filter.NumberValue(*f)
}

func (r *ftNumbers) FilterValue(a, sub *schema.Attribute, i int) (filter.Value, bool) {
	switch a.Name {
	case "score":
		return ftNumberValue(r.score), true
	case "level":
		return ftNumberValue(r.level), true
	case "tags":
		if i >= len(r.tags) {
			return filter.Value{}, false
		}
		tag := r.tags[i]
		switch {
		case sub == nil:
			return filter.ComplexValue(tag.weight != nil || tag.label != ""), true
		case sub.Name == "weight":
			return ftNumberValue(tag.weight), true
		}
		return filter.StringValue(tag.label), true
	}
	return filter.Value{}, i == 0
}

// ftNumberType is a resource type with a decimal, an integer and a multi-valued complex
// attribute with a decimal sub-attribute.
func ftNumberType() *schema.ResourceType {
	const urn = "urn:example:params:scim:schemas:Numbers"
	tags := &schema.Attribute{Name: "tags", Type: schema.Complex, MultiValued: true, Schema: urn}
	tags.SubAttributes = []*schema.Attribute{
		{Name: "weight", Type: schema.Decimal, Schema: urn, Parent: tags},
		{Name: "label", Type: schema.String, Schema: urn, Parent: tags},
	}
	return &schema.ResourceType{Name: "Numbers", Schema: &schema.Schema{ID: urn, Attributes: []*schema.Attribute{
		{Name: "score", Type: schema.Decimal, Schema: urn},
		{Name: "level", Type: schema.Integer, Schema: urn},
		tags,
	}}}
}

func TestFilterSQLNumbers(t *testing.T) {
	t.Parallel()
	rt := ftNumberType()
	const kind resourceKind = "n"
	ids := []string{"n1", "n2", "n3", "n4", "n5"}
	sum := 0.1
	sum += 0.2 // 0.30000000000000004, not the constant 0.3
	rs := []filter.Resource{
		&ftNumbers{score: ftNum(1.5), level: ftNum(3), tags: []ftTag{{weight: ftNum(2), label: "x"}, {label: "y"}}},
		&ftNumbers{score: ftNum(-0.0), level: ftNum(9007199254740993)},
		&ftNumbers{score: ftNum(1e300), tags: []ftTag{{}}},
		&ftNumbers{score: ftNum(-2.5e-300), level: ftNum(-3), tags: []ftTag{{weight: ftNum(sum)}}},
		&ftNumbers{},
	}
	none := []string{}
	cases := []struct {
		filter string
		want   []string
	}{
		{`score gt 1.5`, []string{"n3"}},
		{`score ge 1.5`, []string{"n1", "n3"}},
		{`score eq 0`, []string{"n2"}},
		{`score eq -0`, []string{"n2"}},
		{`score lt 0`, []string{"n4"}},
		{`score le -2.5e-300`, []string{"n4"}},
		{`score ne 1.5`, []string{"n2", "n3", "n4"}},
		{`score eq 1E300`, []string{"n3"}},
		{`score pr`, []string{"n1", "n2", "n3", "n4"}},
		{`score eq null`, []string{"n5"}},
		{`level eq 3`, []string{"n1"}},
		{`level eq 9007199254740992`, []string{"n2"}}, // the same float64
		{`level gt -3.0000001`, []string{"n1", "n2", "n4"}},
		{`tags.weight eq 0.30000000000000004`, []string{"n4"}},
		{`tags.weight eq 0.3`, none},
		{`tags[weight ge 2 and label eq "X"]`, []string{"n1"}},
		{`tags[weight pr]`, []string{"n1", "n4"}},
		{`tags[not (weight pr)]`, []string{"n1", "n3"}},
		{`tags pr`, []string{"n1", "n4"}},
		{`tags[label eq "y"].weight pr`, none},
		{`not (tags.weight lt 1)`, []string{"n1", "n2", "n3", "n5"}},
	}
	ftEachDialect(t, func(t *testing.T, db *ftDB) {
		db.load(t, "t1", kind, rt, ids, rs)
		for _, c := range cases {
			t.Run(c.filter, func(t *testing.T) {
				e, err := filter.Parse(c.filter, rt)
				require.NoError(t, err)
				got, where := db.list(t, "t1", kind, e)
				assert.Equal(t, c.want, ftMatch(e, ids, rs), "filter.Match")
				assert.Equal(t, c.want, got, "SQL:\n%s", where)
			})
		}
	})
}

// TestFilterSQLQueryPlan checks that the common lookups are index lookups on SQLite.
func TestFilterSQLQueryPlan(t *testing.T) {
	t.Parallel()
	db := ftSQLite(t)
	ftLoadFixture(t, db)
	cases := []struct {
		rt     *schema.ResourceType
		kind   resourceKind
		filter string
		index  string
	}{
		{schema.User(), kindUser, `userName eq "alice"`, "attrs_lookup (tenant=? AND kind=? AND attr=? AND sub=? AND sf=?"},
		{schema.User(), kindUser, `emails.value eq "alice@example.com"`, "attrs_lookup (tenant=? AND kind=? AND attr=? AND sub=? AND sf=?"},
		{schema.User(), kindUser, `externalId eq "ext-1"`, "attrs_exact (tenant=? AND kind=? AND attr=? AND sub=? AND s=?"},
		// Presence tests are lookups of the resource's rows by primary key, never scans.
		{schema.User(), kindUser, `emails.value pr`, "USING PRIMARY KEY (tenant=? AND kind=? AND rid=? AND attr=? AND sub=?)"},
		{schema.User(), kindUser, `title eq null`, "USING PRIMARY KEY (tenant=? AND kind=? AND rid=? AND attr=? AND sub=?)"},
		{schema.User(), kindUser, `emails pr`, "USING PRIMARY KEY (tenant=? AND kind=? AND rid=? AND attr=? AND sub=?)"},
		{schema.Group(), kindGroup, `members.value eq "u1"`, "attrs_exact (tenant=? AND kind=? AND attr=? AND sub=? AND s=?"},
	}
	for _, c := range cases {
		t.Run(c.filter, func(t *testing.T) {
			e, err := filter.Parse(c.filter, c.rt)
			require.NoError(t, err)
			where, args, err := whereFilter(sqliteDialect, c.kind, "t1", e)
			require.NoError(t, err)
			rows, err := db.db.Query(`EXPLAIN QUERY PLAN SELECT r.id FROM res r WHERE r.tenant = ? AND r.kind = ? AND (`+where+`) ORDER BY r.seq`,
				append([]any{"t1", string(c.kind)}, args...)...)
			require.NoError(t, err)
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
				plan = append(plan, detail)
			}
			require.NoError(t, rows.Err())
			joined := strings.Join(plan, "\n")
			assert.Contains(t, joined, c.index, joined)
		})
	}
}

// TestFilterSQLSemiJoin checks that on SQLite an order or a part is a subquery evaluated once, not one correlated with each resource (inside a
// value filter, one with each element, looked up by its whole key): SQLite
// answered those by scanning the attribute's rows in attrs_lookup once per resource, which took
// minutes over 100k email rows.
func TestFilterSQLSemiJoin(t *testing.T) {
	t.Parallel()
	db := ftSQLite(t)
	ftLoadFixture(t, db)
	for _, f := range []string{
		`emails.value gt "a"`,
		`emails.value co "example"`,
		`emails.value sw "alice"`,
		`emails.value ew ".org"`,
		`title ne "Engineer"`,
		`meta.created ge "2024-01-01T00:00:00Z"`,
		`emails[type eq "work"].value gt "a"`,
	} {
		t.Run(f, func(t *testing.T) {
			e, err := filter.Parse(f, schema.User())
			require.NoError(t, err)
			where, args, err := whereFilter(sqliteDialect, kindUser, "t1", e)
			require.NoError(t, err)
			rows, err := db.db.Query(`EXPLAIN QUERY PLAN SELECT r.id FROM res r WHERE r.tenant = ? AND r.kind = ? AND (`+where+`) ORDER BY r.seq`,
				append([]any{"t1", string(kindUser)}, args...)...)
			require.NoError(t, err)
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
				plan = append(plan, detail)
			}
			require.NoError(t, rows.Err())
			joined := strings.Join(plan, "\n")
			assert.Contains(t, joined, "LIST SUBQUERY", joined)
			for _, step := range plan {
				// A correlated lookup is one of an element's values, by the whole key.
				if strings.Contains(step, "EXISTS") {
					assert.Contains(t, step, "rid=? AND idx=?", joined)
				}
			}
		})
	}
}

// TestFilterSQLErrors checks the expressions whereFilter refuses rather than mistranslate.
func TestFilterSQLErrors(t *testing.T) {
	t.Parallel()
	userName, _, err := schema.User().Lookup("userName")
	require.NoError(t, err)
	created, createdSub, err := schema.User().Lookup("meta.created")
	require.NoError(t, err)
	for name, e := range map[string]filter.Expr{
		"nil":              nil,
		"nil inside and":   &filter.And{Left: &filter.Compare{Attr: userName, Op: filter.Pr}},
		"no attribute":     &filter.Compare{Op: filter.Pr},
		"unknown operator": &filter.Compare{Attr: userName, Op: "xx", Value: filter.Literal{Kind: filter.KindString, Str: "a"}},
		"bad dateTime":     &filter.Compare{Attr: created, Sub: createdSub, Op: filter.Eq, Value: filter.Literal{Kind: filter.KindString, Str: "yesterday"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := whereFilter(sqliteDialect, kindUser, "t1", e)
			assert.Error(t, err)
		})
	}
	_, _, err = whereFilter(0, kindUser, "t1", &filter.Compare{Attr: userName, Op: filter.Pr})
	assert.Error(t, err)
}

// TestFilterSQLAttrRows checks the rows of one user: names, folding, markers, clamped times.
func TestFilterSQLAttrRows(t *testing.T) {
	t.Parallel()
	u := &store.User{ID: "u1", UserName: "Straße", ExternalID: "X",
		Emails:     []store.MultiValue{{}, {Value: "A@B"}},
		Enterprise: store.EnterpriseUser{Department: "D"},
		Meta:       store.Meta{Created: ftTime(t, "1500-01-01T00:00:00Z"), LastModified: ftTime(t, "2024-01-01T00:00:00.000000001Z")},
	}
	rows := attrRows(kindUser, u)
	find := func(attr, sub string, idx int) *attrRow {
		i := slices.IndexFunc(rows, func(r attrRow) bool { return r.Attr == attr && r.Sub == sub && r.Idx == idx })
		if i < 0 {
			return nil
		}
		return &rows[i]
	}
	if r := find("userName", "", 0); assert.NotNil(t, r) {
		assert.Equal(t, sql.NullString{String: "Straße", Valid: true}, r.S)
		assert.Equal(t, sql.NullString{String: "straße", Valid: true}, r.SF)
	}
	if r := find("externalId", "", 0); assert.NotNil(t, r) {
		assert.False(t, r.SF.Valid, "externalId is caseExact")
	}
	if r := find("emails", "", 0); assert.NotNil(t, r, "marker of an empty element") {
		assert.Equal(t, attrRow{Attr: "emails", Idx: 0}, *r)
	}
	if r := find("emails", "", 1); assert.NotNil(t, r) {
		assert.Equal(t, sql.NullBool{Bool: true, Valid: true}, r.B)
	}
	assert.Nil(t, find("emails", "value", 0))
	assert.NotNil(t, find("emails", "primary", 0), "false is a value")
	assert.NotNil(t, find(enterprise+"department", "", 0))
	assert.Nil(t, find("department", "", 0))
	assert.Nil(t, find("password", "", 0))
	assert.Nil(t, find("title", "", 0))
	if r := find("meta", "created", 0); assert.NotNil(t, r) {
		assert.Equal(t, sql.NullInt64{Int64: -1 << 63, Valid: true}, r.T)
	}
	if r := find("meta", "lastModified", 0); assert.NotNil(t, r) {
		assert.Equal(t, sql.NullInt64{Int64: 1704067200000000001, Valid: true}, r.T)
	}
}
