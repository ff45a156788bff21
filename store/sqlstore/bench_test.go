package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
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
)

// The benchmarks' data sets are built once per run and shared: benchData holds the SQLite
// files (in benchDir) and the PostgreSQL schemas, which TestMain removes at the end.
var benchData struct {
	sync.Mutex
	dir     string
	sets    map[string]string // set-dialect-size → SQLite path or PostgreSQL schema
	schemas []string
}

func TestMain(m *testing.M) {
	code := m.Run()
	benchData.Lock()
	if benchData.dir != "" {
		os.RemoveAll(benchData.dir)
	}
	if dsn := os.Getenv("VISID_TEST_POSTGRES_DSN"); dsn != "" && len(benchData.schemas) > 0 {
		if db, err := sql.Open("pgx", dsn); err == nil {
			for _, s := range benchData.schemas {
				db.Exec("DROP SCHEMA " + s + " CASCADE")
			}
			db.Close()
		}
	}
	benchData.Unlock()
	os.Exit(code)
}

const benchTenant = "bench"

// benchUserID and benchUserName name the i-th benchmark user (from 1).
func benchUserID(i int) string   { return fmt.Sprintf("user_%08d", i) }
func benchUserName(i int) string { return "user" + strconv.Itoa(i) }

// benchSet describes a benchmark data set.
type benchSet struct {
	name string // the database's name: one per name, dialect and size in a run
	// titles are the titles the users get in turn: user i has titles[(i-1)%len(titles)],
	// where "" is no title. No titles: no user has one.
	titles []string
	// emails is the number of emails of each user: benchEmail(i, 0), benchEmail(i, 1), …,
	// of type work, the first primary.
	emails int
	// bigEmails, when not 0, adds one user (userName "big") with that many emails
	// (benchBigEmail(0), …, the first primary), stored by Users.Create.
	bigEmails int
	// sorted gives the users values to sort by (see bulkUsers): a familyName, shared by many
	// and missing for some, and meta times of their own.
	sorted bool
	// noAnalyze leaves the database without planner statistics, as right after an import
	// before PostgreSQL's autovacuum comes by (which the set turns off for its tables).
	noAnalyze bool
}

// benchEmail is the k-th email of the i-th benchmark user, benchBigEmail the k-th of user big.
func benchEmail(i, k int) string { return fmt.Sprintf("e%d.%s@example.com", k, benchUserName(i)) }
func benchBigEmail(k int) string { return fmt.Sprintf("big%d@example.org", k) }

// benchStore returns a Store of the dialect over the database of set, holding n users in tenant
// bench, built once per run with bulk INSERT … SELECT statements (not through Users.Create), so
// that a million users take a minute. It skips PostgreSQL without VISID_TEST_POSTGRES_DSN.
func benchStore(b *testing.B, d dialect, set benchSet, n int) *Store {
	b.Helper()
	ctx := context.Background()
	key := fmt.Sprintf("%s-%d-%d", set.name, d, n)
	var dsn string
	if d == postgresDialect {
		dsn = os.Getenv("VISID_TEST_POSTGRES_DSN")
		if dsn == "" {
			b.Skip("VISID_TEST_POSTGRES_DSN is not set")
		}
	}
	benchData.Lock()
	defer benchData.Unlock()
	if benchData.sets == nil {
		benchData.sets = map[string]string{}
	}
	where, ok := benchData.sets[key]
	if !ok {
		var err error
		if d == sqliteDialect {
			if benchData.dir == "" {
				if benchData.dir, err = os.MkdirTemp("", "visid-sqlstore-bench-"); err != nil {
					b.Fatal(err)
				}
			}
			where = filepath.Join(benchData.dir, key+".db")
		} else {
			var r [6]byte
			rand.Read(r[:])
			where = fmt.Sprintf("bench_%x", r)
			benchData.schemas = append(benchData.schemas, where)
		}
		start := time.Now()
		s := openBench(b, d, dsn, where, true)
		if err := s.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		if set.noAnalyze && d == postgresDialect {
			for _, table := range []string{"users", "attrs", "members", "groups"} {
				if _, err := s.db.ExecContext(ctx, "ALTER TABLE "+table+" SET (autovacuum_enabled = false)"); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := bulkUsers(ctx, s, n, set.titles, set.emails, set.sorted); err != nil {
			b.Fatal(err)
		}
		if set.bigEmails > 0 {
			big := store.User{UserName: "big", Active: true}
			for k := range set.bigEmails {
				big.Emails = append(big.Emails, store.MultiValue{Value: benchBigEmail(k), Type: "work", Primary: k == 0})
			}
			if _, err := s.Users().Create(ctx, benchTenant, big); err != nil {
				b.Fatal(err)
			}
		}
		// As after any bulk import: statistics for the planners (PostgreSQL's autovacuum
		// would gather them too, a little later).
		if !set.noAnalyze {
			// On PostgreSQL the set's tables only: a bare ANALYZE would also give statistics to
			// the other sets' schemas.
			analyze := "ANALYZE"
			if d == postgresDialect {
				analyze = "ANALYZE tenants, users, groups, members, attrs"
			}
			if _, err := s.db.ExecContext(ctx, analyze); err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
		b.Logf("built %d users (%v) in %v", n, Dialect(d), time.Since(start).Round(time.Millisecond))
		benchData.sets[key] = where
	}
	s := openBench(b, d, dsn, where, false)
	b.Cleanup(func() { s.Close() })
	return s
}

// openBench opens the SQLite file path or the PostgreSQL schema where (created when create).
func openBench(b testing.TB, d dialect, dsn, where string, create bool) *Store {
	b.Helper()
	ctx := context.Background()
	if d == sqliteDialect {
		s, err := Open(ctx, "sqlite:"+where)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	if create {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			b.Fatal(err)
		}
		_, err = db.Exec("CREATE SCHEMA " + where)
		db.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	u, err := url.Parse(dsn)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", where)
	u.RawQuery = q.Encode()
	var cfg Config
	if create {
		// Building a million users takes longer than DefaultStatementTimeout on a busy machine.
		cfg.StatementTimeout = -1
	}
	s, err := cfg.Open(ctx, u.String())
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// bulkUsers adds n users to tenant bench: user i has id benchUserID(i), userName
// benchUserName(i), title titles[(i-1)%len(titles)] ("" or no titles: none), the emails
// benchEmail(i, 0) … benchEmail(i, emails-1) of type work (the first primary) and is active;
// it was created at 2024-01-01T00:00:00Z. When sorted is set, user i instead was created i
// nanoseconds later, was last modified at benchLastModified(i), and has the familyName
// benchFamilyName(i) (none for one user in 10). The users are written by INSERT … SELECT over a
// series, and their attrs rows by one INSERT … SELECT per row that attrRows gives a template
// user, with the template's id, userName and familyName replaced by each user's, and the title
// rows by one more, from those of each title.
func bulkUsers(ctx context.Context, s *Store, n int, titles []string, emails int, sorted bool) error {
	if err := s.Tenants().Create(ctx, store.Tenant{ID: benchTenant, DisplayName: "Benchmark"}); err != nil {
		return err
	}
	const idMark, nameMark, familyMark = "\x01id", "\x01name", "\x01family"
	created := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	quote := func(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }
	tmpl := store.User{ID: idMark, UserName: nameMark, Active: true, Meta: store.Meta{Created: created}}
	if sorted {
		tmpl.Name.FamilyName = familyMark
		tmpl.Meta.LastModified = benchLastModified(0)
	}
	for k := range emails {
		// benchEmail with the userName marked, which text replaces by each user's.
		tmpl.Emails = append(tmpl.Emails, store.MultiValue{Value: fmt.Sprintf("e%d.%s@example.com", k, nameMark), Type: "work", Primary: k == 0})
	}
	// emailsJSON is the doc's "Emails" member of user i.
	emailsJSON := `''`
	if emails > 0 {
		v, err := json.Marshal(tmpl.Emails)
		if err != nil {
			return err
		}
		emailsJSON = `',"Emails":' || replace(` + quote(string(v)) + `, ` + quote(`\u0001name`) + `, 'user' || i)`
	}
	series := `WITH RECURSIVE series(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM series WHERE i < ` + strconv.Itoa(n) + `) `
	pad := `printf('%08d', i)`
	pad9 := func(x string) string { return `printf('%09d', ` + x + `)` }
	from := ` FROM series`
	if s.d == postgresDialect {
		series, pad, from = ``, `lpad(i::text, 8, '0')`, ` FROM generate_series(1::bigint, `+strconv.Itoa(n)+`) AS series(i)`
		pad9 = func(x string) string { return `lpad((` + x + `)::text, 9, '0')` }
	}
	// The sort columns of user i, the doc's "Name" member and its meta times.
	familyCol, emailCol, createdCol, modifiedCol := `NULL`, `NULL`, strconv.FormatInt(created.UnixNano(), 10), `NULL`
	nameJSON, metaJSON := `''`, quote(`,"Meta":{"Created":"`+created.Format(time.RFC3339Nano)+`"}}`)
	if emails > 0 {
		emailCol = `'e0.user' || i || '@example.com'`
	}
	if sorted {
		familyCol = `CASE WHEN ` + benchHasFamilyName(`i`) + ` THEN ` + benchFamilyNameSQL(`i`, true) + ` END`
		nameJSON = `CASE WHEN ` + benchHasFamilyName(`i`) + ` THEN ',"Name":{"FamilyName":"' || ` + benchFamilyNameSQL(`i`, false) + ` || '"}' ELSE '' END`
		createdCol = strconv.FormatInt(created.UnixNano(), 10) + ` + i`
		modifiedCol = strconv.FormatInt(benchLastModified(0).UnixNano(), 10) + ` + ` + benchModifiedNanosSQL(`i`)
		metaJSON = `',"Meta":{"Created":"2024-01-01T00:00:00.' || ` + pad9(`i`) + ` || 'Z","LastModified":"` +
			benchLastModified(0).Format("2006-01-02T15:04:05") + `.' || ` + pad9(benchModifiedNanosSQL(`i`)) + ` || 'Z"}}'`
	}
	// titleJSON is the doc's "Title" member of user i, titleOf the number of user u's title.
	titleJSON := `''`
	userNumber := `CAST(substr(u.user_name, 5) AS BIGINT)`
	titleOf := `(` + userNumber + ` - 1) % ` + strconv.Itoa(max(len(titles), 1))
	if len(titles) > 0 {
		titleJSON = `CASE (i - 1) % ` + strconv.Itoa(len(titles))
		for j, title := range titles {
			if title != "" {
				v, err := json.Marshal(title)
				if err != nil {
					return err
				}
				titleJSON += ` WHEN ` + strconv.Itoa(j) + ` THEN ` + quote(`,"Title":`+string(v))
			}
		}
		titleJSON += ` ELSE '' END`
	}
	return s.write(ctx, func(t *txn) error {
		if _, err := t.exec(ctx, series+`INSERT INTO users (tenant, id, user_name, user_name_fold, external_id, doc, `+sortColumnNames(kindUser)+`)
			SELECT '`+benchTenant+`', 'user_' || `+pad+`, 'user' || i, 'user' || i, '',
				'{"ID":"user_' || `+pad+` || '","UserName":"user' || i || '"' || `+nameJSON+` || `+titleJSON+` || ',"Active":true' || `+emailsJSON+` || `+metaJSON+`,
				`+familyCol+`, `+emailCol+`, `+createdCol+`, `+modifiedCol+from+` ORDER BY i`); err != nil {
			return fmt.Errorf("bulk users: %w", err)
		}
		text := func(v sql.NullString, folded bool) string {
			switch {
			case !v.Valid:
				return "NULL"
			case v.String == idMark:
				return "u.id"
			case v.String == nameMark:
				return "u.user_name"
			case v.String == familyMark:
				return benchFamilyNameSQL(userNumber, folded)
			case strings.Contains(v.String, nameMark):
				before, after, _ := strings.Cut(v.String, nameMark)
				return quote(before) + " || u.user_name || " + quote(after)
			}
			return quote(v.String)
		}
		for _, r := range attrRows(kindUser, &tmpl) {
			cols := []string{text(r.S, false), text(r.SF, true), "NULL", "NULL", "NULL"}
			if r.N.Valid {
				cols[2] = strconv.FormatFloat(r.N.Float64, 'g', -1, 64)
			}
			if r.B.Valid {
				cols[3] = strconv.FormatBool(r.B.Bool)
			}
			if r.T.Valid {
				cols[4] = strconv.FormatInt(r.T.Int64, 10)
			}
			where := ``
			switch {
			case sorted && r.Attr == "meta" && r.Sub == "created":
				cols[4] += ` + ` + userNumber
			case sorted && r.Attr == "meta" && r.Sub == "lastModified":
				cols[4] += ` + ` + benchModifiedNanosSQL(userNumber)
			case r.Attr == "name":
				where = ` AND ` + benchHasFamilyName(userNumber)
			}
			if _, err := t.exec(ctx, `INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf, n, b, t)
				SELECT u.tenant, 'u', u.id, '`+r.Attr+`', '`+r.Sub+`', `+strconv.Itoa(r.Idx)+`, `+strings.Join(cols, ", ")+`
				FROM users u WHERE u.tenant = '`+benchTenant+`'`+where); err != nil {
				return fmt.Errorf("bulk attrs %s.%s: %w", r.Attr, r.Sub, err)
			}
		}
		// The title rows of every title, in one statement: user u gets those of title titleOf.
		var values []string
		for j, title := range titles {
			titled := tmpl
			titled.Title = title
			for _, r := range attrRows(kindUser, &titled) {
				if r.Attr != "title" {
					continue
				}
				if !r.S.Valid || r.N.Valid || r.B.Valid || r.T.Valid {
					return fmt.Errorf("bulk attrs: title %q is not a string row", title)
				}
				values = append(values, `(`+strconv.Itoa(j)+`, `+quote(r.Sub)+`, `+strconv.Itoa(r.Idx)+`, `+text(r.S, false)+`, `+text(r.SF, true)+`)`)
			}
		}
		if len(values) == 0 {
			return nil
		}
		if _, err := t.exec(ctx, `INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf, n, b, t)
			SELECT u.tenant, 'u', u.id, 'title', v.column2, v.column3, v.column4, v.column5, NULL, NULL, NULL
			FROM users u JOIN (VALUES `+strings.Join(values, ", ")+`) v ON v.column1 = `+titleOf+`
			WHERE u.tenant = '`+benchTenant+`'`); err != nil {
			return fmt.Errorf("bulk attrs title: %w", err)
		}
		return nil
	})
}

// benchFamilyName is the familyName of the i-th benchmark user of a sorted set, when
// benchHasFamilyName: one of 1000 names, each shared by a thousandth of the users.
func benchFamilyName(i int) string { return fmt.Sprintf("Family%d", (i-1)%1000) }

// benchFamilyNameSQL is benchFamilyName of the user whose number is the SQL expression i, or
// its schema.Fold when folded.
func benchFamilyNameSQL(i string, folded bool) string {
	prefix := "'Family'"
	if folded {
		prefix = "'family'"
	}
	return prefix + ` || (((` + i + `) - 1) % 1000)`
}

// benchHasFamilyName is the SQL condition that the user whose number is the SQL expression i
// has a familyName in a sorted set: all but one in 10.
func benchHasFamilyName(i string) string { return `(` + i + `) % 10 <> 0` }

// benchLastModified is when the i-th benchmark user of a sorted set was last modified: in the
// second after 2024-06-01T00:00:00Z, in an order unrelated to i.
func benchLastModified(i int) time.Time {
	return time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(int64(i) * 7919 % 999999937))
}

// benchModifiedNanosSQL is the nanoseconds of benchLastModified of the user whose number is
// the SQL expression i.
func benchModifiedNanosSQL(i string) string { return `((` + i + `) * 7919) % 999999937` }

// TestBulkUsers checks that the users bulkUsers writes are those Users.Create would write: the
// documents say what bulkUsers promises and the attrs rows and sort columns are those attrRows
// and sortColumnArgs give them, so the benchmarks measure the data the store makes.
func TestBulkUsers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, open := range testStores() {
		for _, sorted := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/sorted=%v", name, sorted), func(t *testing.T) {
				t.Parallel()
				s := open(t)
				require.NoError(t, s.Migrate(ctx))
				titles := benchTitles()
				const n = 25
				require.NoError(t, bulkUsers(ctx, s, n, titles, 3, sorted))
				page, err := s.Users().List(ctx, benchTenant, store.Query{Count: -1})
				require.NoError(t, err)
				require.Len(t, page.Resources, n)
				for i, u := range page.Resources {
					assert.Equal(t, benchUserID(i+1), u.ID)
					assert.Equal(t, benchUserName(i+1), u.UserName)
					assert.Equal(t, titles[i%len(titles)], u.Title, "user %d", i+1)
					assert.True(t, u.Active)
					require.Len(t, u.Emails, 3)
					for k, e := range u.Emails {
						assert.Equal(t, store.MultiValue{Value: benchEmail(i+1, k), Type: "work", Primary: k == 0}, e)
					}
					created := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
					switch {
					case !sorted:
						assert.Equal(t, store.Meta{Created: created}, u.Meta, "user %d", i+1)
						assert.Empty(t, u.Name.FamilyName)
					default:
						assert.True(t, u.Meta.Created.Equal(created.Add(time.Duration(i+1))), "user %d created %v", i+1, u.Meta.Created)
						assert.True(t, u.Meta.LastModified.Equal(benchLastModified(i+1)), "user %d modified %v", i+1, u.Meta.LastModified)
						family := benchFamilyName(i + 1)
						if (i+1)%10 == 0 {
							family = ""
						}
						assert.Equal(t, family, u.Name.FamilyName, "user %d", i+1)
					}
				}
				checkAttrs(t, s, "after bulkUsers")
			})
		}
	}
}

// benchDialects are the dialects the benchmarks run on.
var benchDialects = []dialect{sqliteDialect, postgresDialect}

func dialectName(d dialect) string {
	if d == sqliteDialect {
		return "sqlite"
	}
	return "postgres"
}

// BenchmarkSQLUserNameEq lists the user `userName eq "…"` names among 1k and among 1M users:
// the lookup goes through an index (attrs_lookup), so 1M costs about what 1k does. The million
// (minutes to build per dialect) runs only with VISID_BENCH_LARGE=1:
//
//	VISID_BENCH_LARGE=1 go test ./store/sqlstore -run '^$' -bench BenchmarkSQLUserNameEq
func BenchmarkSQLUserNameEq(b *testing.B) {
	ctx := context.Background()
	sizes := []int{1_000}
	if os.Getenv("VISID_BENCH_LARGE") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	for _, d := range benchDialects {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/users=%d", dialectName(d), n), func(b *testing.B) {
				s := benchStore(b, d, benchSet{name: "read"}, n)
				users := s.Users()
				filters := make([]filter.Expr, 256)
				for i := range filters {
					k := 1 + (i*7919)%n
					e, err := filter.Parse(`userName eq "USER`+strconv.Itoa(k)+`"`, schema.User())
					if err != nil {
						b.Fatal(err)
					}
					filters[i] = e
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					p, err := users.List(ctx, benchTenant, store.Query{Filter: filters[i%len(filters)], Count: 10})
					if err != nil {
						b.Fatal(err)
					}
					if p.TotalResults != 1 || len(p.Resources) != 1 {
						b.Fatalf("found %d users, want 1", p.TotalResults)
					}
				}
			})
		}
	}
}

// benchNewUser is the user the write benchmarks store, the i-th of the run.
func benchNewUser(prefix string, i int) store.User {
	name := fmt.Sprintf("%s%d", prefix, i)
	return store.User{
		ID: store.NewID("user"), UserName: name, Active: true, DisplayName: "Bench " + name,
		ExternalID: "ext-" + name,
		Emails:     []store.MultiValue{{Value: name + "@example.com", Type: "work", Primary: true}},
		Meta:       store.Meta{Created: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
}

// BenchmarkSQLCreateUser stores users through Users.Create: a transaction that checks the
// tenant, inserts the row and its attrs rows. Compare with BenchmarkSQLRawInsert.
func BenchmarkSQLCreateUser(b *testing.B) {
	ctx := context.Background()
	for _, d := range benchDialects {
		b.Run(dialectName(d), func(b *testing.B) {
			s := benchStore(b, d, benchSet{name: "write"}, 1_000)
			users := s.Users()
			prefix := fmt.Sprintf("create%d-", time.Now().UnixNano())
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := users.Create(ctx, benchTenant, benchNewUser(prefix, i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSQLRawInsert is the baseline of BenchmarkSQLCreateUser: one INSERT of the same user
// row (columns and JSON document) through the same *sql.DB, no transaction, no attrs.
func BenchmarkSQLRawInsert(b *testing.B) {
	ctx := context.Background()
	for _, d := range benchDialects {
		b.Run(dialectName(d), func(b *testing.B) {
			s := benchStore(b, d, benchSet{name: "write"}, 1_000)
			query := d.rebind(`INSERT INTO users (tenant, id, user_name, user_name_fold, external_id, doc) VALUES (?, ?, ?, ?, ?, ?)`)
			prefix := fmt.Sprintf("raw%d-", time.Now().UnixNano())
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				u := benchNewUser(prefix, i)
				doc, err := userDoc(&u)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.db.ExecContext(ctx, query, benchTenant, u.ID, u.UserName, schema.Fold(u.UserName), u.ExternalID, doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchTitles are the titles of the users of BenchmarkSQLListFiltered, in turn: 3 in 10
// contain "eng" (case-insensitively), 1 in 10 users has none.
func benchTitles() []string {
	return []string{
		"Engineer", "Account manager", "Senior engineering manager", "Designer", "Sales representative",
		"", "Software Engineer", "Product manager", "Accountant", "Support specialist",
	}
}

// BenchmarkSQLListFiltered lists the first 100 users of `title co "eng"` among 100k users, 30k
// of whom match. No index serves co: the filter reads the title of every titled user to count
// the matches (totalResults), then the first page's. It reports ms/op besides ns/op.
func BenchmarkSQLListFiltered(b *testing.B) {
	ctx := context.Background()
	const n = 100_000
	e, err := filter.Parse(`title co "eng"`, schema.User())
	if err != nil {
		b.Fatal(err)
	}
	titles := benchTitles()
	want := 0
	for i := 1; i <= n; i++ {
		if strings.Contains(schema.Fold(titles[(i-1)%len(titles)]), "eng") {
			want++
		}
	}
	for _, d := range benchDialects {
		b.Run(fmt.Sprintf("%s/users=%d", dialectName(d), n), func(b *testing.B) {
			s := benchStore(b, d, benchSet{name: "titled", titles: titles}, n)
			users := s.Users()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				p, err := users.List(ctx, benchTenant, store.Query{Filter: e, Count: 100})
				if err != nil {
					b.Fatal(err)
				}
				if p.TotalResults != want || len(p.Resources) != 100 {
					b.Fatalf("found %d users (%d on the page), want %d (100)", p.TotalResults, len(p.Resources), want)
				}
				if t := p.Resources[0].Title; !strings.Contains(schema.Fold(t), "eng") {
					b.Fatalf("the first user's title is %q", t)
				}
			}
			b.ReportMetric(float64(b.Elapsed())/float64(time.Millisecond)/float64(b.N), "ms/op")
		})
	}
}

// emailSet is the data set of the benchmarks of filters on emails: 100k users with 3 emails
// each, and user big with 30k. emailSetNoStats is the same without planner statistics.
var (
	emailSet        = benchSet{name: "emails", emails: 3, bigEmails: 30_000}
	emailSetNoStats = benchSet{name: "emails-nostats", emails: 3, bigEmails: 30_000, noAnalyze: true}
)

// BenchmarkSQLListEmails lists the first 100 users of filters that compare emails.value (a
// sub-attribute of a multi-valued attribute, 330k values) with an order or a part, which no
// index answers for one user: each comparison must be evaluated over the values once, not once
// per user, with planner statistics and without. It reports ms/op besides ns/op.
func BenchmarkSQLListEmails(b *testing.B) {
	ctx := context.Background()
	const n = 100_000
	for _, tc := range []struct {
		name   string
		filter string
		match  func(email string) bool // whether an email satisfies the filter
	}{
		{"gt", `emails.value gt "a"`, func(v string) bool { return v > "a" }},
		{"co", `emails.value co "9.user1"`, func(v string) bool { return strings.Contains(v, "9.user1") }},
		{"sw", `emails.value sw "E2.USER1"`, func(v string) bool { return strings.HasPrefix(v, "e2.user1") }},
		{"pr", `emails.value pr`, func(string) bool { return true }},
		{"value-path-gt", `emails[type eq "work" and value gt "e2.user5"]`, func(v string) bool { return v > "e2.user5" }},
	} {
		e, err := filter.Parse(tc.filter, schema.User())
		if err != nil {
			b.Fatal(err)
		}
		want := countEmailMatches(n, tc.match)
		for _, set := range []benchSet{emailSet, emailSetNoStats} {
			for _, d := range benchDialects {
				b.Run(fmt.Sprintf("%s/%s/%s/users=%d", tc.name, set.name, dialectName(d), n), func(b *testing.B) {
					s := benchStore(b, d, set, n)
					users := s.Users()
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						p, err := users.List(ctx, benchTenant, store.Query{Filter: e, Count: 100})
						if err != nil {
							b.Fatal(err)
						}
						if p.TotalResults != want || len(p.Resources) != min(want, 100) {
							b.Fatalf("found %d users (%d on the page), want %d", p.TotalResults, len(p.Resources), want)
						}
					}
					b.ReportMetric(float64(b.Elapsed())/float64(time.Millisecond)/float64(b.N), "ms/op")
				})
			}
		}
	}
}

// countEmailMatches counts the users of emailSet with an email that match keeps.
func countEmailMatches(n int, match func(string) bool) int {
	count := 0
	for i := 1; i <= n; i++ {
		for k := range emailSet.emails {
			if match(benchEmail(i, k)) {
				count++
				break
			}
		}
	}
	for k := range emailSet.bigEmails {
		if match(benchBigEmail(k)) {
			return count + 1
		}
	}
	return count
}

// BenchmarkSQLLoginHint runs the lookups with which oidc2fa finds the user a login hint names by
// email, `userName eq "…"` and `emails[value eq "…" and primary eq true]`, for the primary email
// of user big (30k emails) and of an ordinary user, among 100k users: on emailSet (with planner
// statistics) and on the same data without statistics. It reports ms/op besides ns/op.
func BenchmarkSQLLoginHint(b *testing.B) {
	ctx := context.Background()
	const n = 100_000
	for _, set := range []benchSet{emailSet, emailSetNoStats} {
		for _, hint := range []struct{ name, email string }{{"big", benchBigEmail(0)}, {"ordinary", benchEmail(4242, 0)}} {
			var filters []filter.Expr
			for _, f := range []string{`userName eq "` + hint.email + `"`, `emails[value eq "` + hint.email + `" and primary eq true]`} {
				e, err := filter.Parse(f, schema.User())
				if err != nil {
					b.Fatal(err)
				}
				filters = append(filters, e)
			}
			for _, d := range benchDialects {
				b.Run(fmt.Sprintf("%s/%s/%s/users=%d", set.name, hint.name, dialectName(d), n), func(b *testing.B) {
					s := benchStore(b, d, set, n)
					users := s.Users()
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						found := 0
						for _, e := range filters {
							p, err := users.List(ctx, benchTenant, store.Query{Filter: e, StartIndex: 1, Count: 2})
							if err != nil {
								b.Fatal(err)
							}
							found += p.TotalResults
						}
						if found != 1 {
							b.Fatalf("found %d users, want 1", found)
						}
					}
					b.ReportMetric(float64(b.Elapsed())/float64(time.Millisecond)/float64(b.N), "ms/op")
				})
			}
		}
	}
}

// BenchmarkSQLUpdateBigUser adds 35k emails to a user that has 35k, as a big PATCH does, while
// another writer of the same tenant updates a small user in a loop. It reports the Update's
// ms/op and the longest wait of one of the other writer's updates (max-wait-ms): how long the
// big Update holds back the tenant's writes (on SQLite, every write of the database).
func BenchmarkSQLUpdateBigUser(b *testing.B) {
	ctx := context.Background()
	const n = 35_000
	for _, d := range benchDialects {
		b.Run(dialectName(d), func(b *testing.B) {
			s := benchStore(b, d, benchSet{name: "bigpatch"}, 10)
			users := s.Users()
			var maxWait time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				big := store.User{UserName: fmt.Sprintf("big%d", i)}
				for k := range n {
					big.Emails = append(big.Emails, store.MultiValue{Value: fmt.Sprintf("old%d@example.com", k), Type: "work"})
				}
				u, err := users.Create(ctx, benchTenant, big)
				if err != nil {
					b.Fatal(err)
				}
				done := make(chan struct{})
				waited := make(chan time.Duration)
				go func() {
					var longest time.Duration
					for k := 0; ; k++ {
						select {
						case <-done:
							waited <- longest
							return
						default:
						}
						start := time.Now()
						if _, err := users.Update(ctx, benchTenant, benchUserID(1), func(u *store.User) error {
							u.DisplayName = strconv.Itoa(k)
							return nil
						}); err != nil {
							panic(err)
						}
						longest = max(longest, time.Since(start))
					}
				}()
				b.StartTimer()
				if _, err := users.Update(ctx, benchTenant, u.ID, func(u *store.User) error {
					seen := make(map[string]bool, len(u.Emails))
					for _, e := range u.Emails {
						seen[schema.Fold(e.Value)] = true
					}
					for k := range n {
						v := fmt.Sprintf("new%d@example.com", k)
						if !seen[v] {
							u.Emails = append(u.Emails, store.MultiValue{Value: v, Type: "work"})
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				close(done)
				maxWait = max(maxWait, <-waited)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed())/float64(time.Millisecond)/float64(b.N), "ms/op")
			b.ReportMetric(float64(maxWait)/float64(time.Millisecond), "max-wait-ms")
		})
	}
}
