// Package tenantscale builds sqlstore databases of many tenants for visid's benchmarks at
// 100,000 tenants, and holds those benchmarks (BenchmarkTenantScale). It is for tests only.
//
// Fill copies a template tenant, made beforehand through the store API the way a host makes
// one, to any number of new tenants: the database copies the rows in one transaction, so that
// a database of 100,000 tenants takes seconds to build instead of the many minutes that one
// Tenants.Create (and one Users.Create, one IssueAPIKey, …) per row would take.
package tenantscale

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"database/sql"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/sqlstore"
)

// Config says what Fill makes.
type Config struct {
	// Store is the store to fill. Required.
	Store *sqlstore.Store
	// KeyEncryptionKey is the Store's Config.KeyEncryptionKey: each new tenant's signing keys
	// are sealed under it. Required when the template has signing keys.
	KeyEncryptionKey []byte
	// Template is the tenant whose rows the new tenants get copies of. Required.
	Template string
	// Prefix starts the new tenants' ids: Prefix followed by a number of seven digits, from 1.
	// Empty: "tenant".
	Prefix string
	// Tenants is how many tenants Fill makes.
	Tenants int
	// Copy reports whether the i-th new tenant, counted from 0, gets a copy of the template's
	// users, groups, clients, API key, webhooks and event log. Every new tenant gets its own
	// row and signing keys. Nil: every tenant gets everything.
	Copy func(i int) bool
	// Keep reports whether Fill returns the details (Tenant) of the i-th new tenant. Nil: none.
	Keep func(i int) bool
}

// Tenant is one tenant that Fill made.
type Tenant struct {
	ID string
	// APIKey is the secret of the tenant's copy of the template's API key, "" if it has none.
	APIKey string
	// IDs maps the id of each of the template's users, groups, clients and API keys to the id of
	// its copy in this tenant, if it has copies.
	IDs map[string]string
}

// Result is what Fill made.
type Result struct {
	// IDs are the new tenants' ids, in the order they were made.
	IDs []string
	// Kept are the tenants Config.Keep asked for, by their index.
	Kept map[int]*Tenant
}

// A table Fill copies: the template's rows are those whose column where equals the template
// (for api_keys, whose tenants list is the template alone); omit are columns the database
// numbers itself.
type table struct {
	name  string
	where string
	omit  []string
	// ids are the columns that hold ids Fill gives fresh values in each copy.
	ids []string
	// always: every new tenant gets a copy, not only those Config.Copy names.
	always bool
}

// tables are the tables of a tenant in the order their rows can be inserted in (foreign keys).
// event_heads goes before events: on SQLite a trigger moves a tenant's head as its events are
// inserted, by an upsert that keeps the larger number. signing_keys is last.
var tables = []table{
	{name: "tenants", where: "id", always: true},
	{name: "event_heads", where: "tenant"},
	{name: "users", where: "tenant", omit: []string{"seq"}, ids: []string{"id"}},
	{name: "groups", where: "tenant", omit: []string{"seq"}, ids: []string{"id"}},
	{name: "members", where: "tenant"},
	{name: "attrs", where: "tenant"},
	{name: "unique_values", where: "tenant"},
	{name: "clients", where: "tenant", omit: []string{"seq"}, ids: []string{"id"}},
	{name: "pictures", where: "tenant"},
	{name: "picture_failures", where: "tenant"},
	{name: "picture_familiar", where: "tenant"},
	{name: "passkeys", where: "tenant"},
	{name: "webhooks", where: "tenant", omit: []string{"n"}},
	{name: "events", where: "tenant"},
	{name: "api_keys", where: "tenants", omit: []string{"seq"}, ids: []string{"id"}},
	{name: "signing_keys", where: "tenant", always: true},
}

// transient are the tables with a tenant column whose rows live for minutes (codes, sign-ins
// under way): Fill copies none and refuses a template that has any.
var transient = []string{"codes", "interactions", "pushed_requests", "access_tokens"}

// maxParams bounds the parameters of one INSERT: below SQLite's 32,766 and PostgreSQL's 65,535.
const maxParams = 30000

// Fill makes cfg.Tenants new tenants with copies of cfg.Template's rows: each its own tenant
// row and signing keys, and those cfg.Copy names the rest: the users with their attributes,
// unique values, group memberships, picture credentials and passkeys, the groups, clients,
// webhooks, event log and API key. The database copies the rows itself, in one transaction: for
// each table one INSERT … SELECT joins the template's rows with a temporary table of the new
// tenants and their new ids, which multi-row INSERTs have filled. A copy differs from the template where
// it must:
//
//   - the tenant's id, and the ids of its users, groups, clients and API keys, are new (and
//     replaced wherever the template's text holds the old ones: documents, attributes, events,
//     user names);
//   - an API key has a new secret of the form scimsvc.IssueAPIKey gives (only the secrets of
//     the tenants Keep names are returned);
//   - a signing key is a new Ed25519 key, sealed under cfg.KeyEncryptionKey as sqlstore seals
//     one, its id its RFC 7638 thumbprint as oidc2fa's key ring makes it. The template's keys
//     must be EdDSA keys. They are made on every core while the database copies the rest.
//
// A client's secret hash is the template's, so the template client's secret authenticates
// every copy. A picture credential's hash binds its tenant and user, so a copy's credential
// does not verify: a benchmark that signs in enrolls the user it signs in. The template must
// have no rows in the transient tables (codes, interactions, pushed requests, access tokens).
func Fill(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Store == nil || cfg.Template == "" {
		return nil, errors.New("tenantscale: Config.Store and Template are required")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "tenant"
	}
	if !store.ValidTenantID(cfg.Prefix + "0000000") {
		return nil, fmt.Errorf("tenantscale: tenant ids with prefix %q are not valid", cfg.Prefix)
	}
	f := &filler{cfg: cfg, db: cfg.Store.DB(), pg: cfg.Store.Dialect() == sqlstore.Postgres}
	if err := f.readTemplate(ctx); err != nil {
		return nil, err
	}
	res := &Result{IDs: make([]string, cfg.Tenants), Kept: map[int]*Tenant{}}
	for i := range res.IDs {
		res.IDs[i] = fmt.Sprintf("%s%07d", cfg.Prefix, i+1)
	}
	keys := f.signingKeys(res.IDs)

	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("tenantscale: %w", err)
	}
	defer tx.Rollback()
	if err := f.newIDs(ctx, tx, res); err != nil {
		return nil, err
	}
	for ti, t := range tables {
		if t.name == "signing_keys" || len(f.rows[ti]) == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, f.copyQuery(ti), cfg.Template); err != nil {
			return nil, fmt.Errorf("tenantscale: copying %s: %w", t.name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE fill_ids`); err != nil {
		return nil, fmt.Errorf("tenantscale: %w", err)
	}
	ti := len(tables) - 1 // signing_keys
	rows, err := keys()
	if err != nil {
		return nil, err
	}
	if err := f.insert(ctx, tx, tables[ti].name, f.cols[ti], rows); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("tenantscale: %w", err)
	}
	return res, nil
}

type filler struct {
	cfg Config
	db  *sql.DB
	pg  bool
	// rows are the template's rows of each table of tables, and cols their columns.
	rows [][][]any
	cols [][]string
	// ids are the template's ids that each copy replaces.
	ids []string
	// apiKey is the id of the template's API key, "" for none.
	apiKey string
	// aead seals signing keys.
	aead cipher.AEAD
}

// ph is the n-th (from 1) placeholder of the dialect.
func (f *filler) ph(n int) string {
	if f.pg {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// readTemplate reads the template's rows of every table. It fails when the schema has a table
// with a tenant column that Fill does not know, so that a table a migration adds is not left
// out of the copies unseen.
func (f *filler) readTemplate(ctx context.Context) error {
	q := `SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name = 'tenant'`
	if f.pg {
		q = `SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'tenant'`
	}
	rows, err := f.db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("tenantscale: listing the tables: %w", err)
	}
	var unknown []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		known := slices.Contains(transient, name) || slices.ContainsFunc(tables, func(t table) bool { return t.name == name })
		if !known {
			unknown = append(unknown, name)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(unknown) > 0 {
		return fmt.Errorf("tenantscale: tables with a tenant column that Fill does not know: %v", unknown)
	}
	for _, name := range transient {
		var n int
		q := `SELECT count(*) FROM ` + name + ` WHERE tenant = ` + f.ph(1)
		if err := f.db.QueryRowContext(ctx, q, f.cfg.Template).Scan(&n); err != nil {
			return fmt.Errorf("tenantscale: %s: %w", name, err)
		}
		if n > 0 {
			return fmt.Errorf("tenantscale: the template has %d rows in %s, which Fill does not copy", n, name)
		}
	}
	seen := map[string]bool{}
	for _, t := range tables {
		rows, err := f.db.QueryContext(ctx, `SELECT * FROM `+t.name+` WHERE `+f.where(t, ""), f.cfg.Template)
		if err != nil {
			return fmt.Errorf("tenantscale: reading the template's %s: %w", t.name, err)
		}
		all, err := rows.Columns()
		var keep []int
		var cols []string
		for i, c := range all {
			if !slices.Contains(t.omit, c) {
				keep = append(keep, i)
				cols = append(cols, c)
			}
		}
		var out [][]any
		for err == nil && rows.Next() {
			vals := make([]any, len(all))
			ptrs := make([]any, len(all))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err = rows.Scan(ptrs...); err != nil {
				break
			}
			row := make([]any, len(keep))
			for i, k := range keep {
				row[i] = vals[k]
			}
			for _, c := range t.ids {
				id, _ := row[slices.Index(cols, c)].(string)
				if id == "" || !strings.Contains(id, "_") {
					err = fmt.Errorf("tenantscale: %s has a row whose %s is %q, not a prefixed id", t.name, c, id)
					break
				}
				if !seen[id] {
					seen[id] = true
					f.ids = append(f.ids, id)
				}
			}
			if t.name == "signing_keys" {
				if alg := row[slices.Index(cols, "algorithm")]; alg != "EdDSA" {
					err = fmt.Errorf("tenantscale: the template has a signing key of %v; Fill copies EdDSA keys only", alg)
				}
				if err == nil && f.aead == nil {
					f.aead, err = newAEAD(f.cfg.KeyEncryptionKey)
				}
			}
			out = append(out, row)
		}
		if err == nil {
			err = rows.Err()
		}
		rows.Close()
		if err != nil {
			return fmt.Errorf("tenantscale: reading the template's %s: %w", t.name, err)
		}
		switch {
		case t.name == "tenants" && len(out) != 1:
			return fmt.Errorf("tenantscale: no tenant %q", f.cfg.Template)
		case t.name == "api_keys" && len(out) > 1:
			return fmt.Errorf("tenantscale: the template has %d API keys; Fill copies one", len(out))
		case t.name == "api_keys" && len(out) == 1:
			f.apiKey = out[0][slices.Index(cols, "id")].(string)
		}
		f.rows = append(f.rows, out)
		f.cols = append(f.cols, cols)
	}
	return nil
}

// where is the condition on the template's rows of t, with the template's id as parameter 1;
// alias, if not "", names the table. The API key of a tenant is the one whose tenant list is
// that tenant alone.
func (f *filler) where(t table, alias string) string {
	if alias != "" {
		alias += "."
	}
	if t.name == "api_keys" {
		return alias + `tenants = '["' || ` + f.ph(1) + ` || '"]'`
	}
	return alias + t.where + ` = ` + f.ph(1)
}

// newIDs fills the temporary table fill_ids with a row for each new tenant: its number n, its
// id, whether it gets copies of the template's users and the rest (copied: 1 or 0), a fresh id
// for each of the template's (columns i0, i1, …) and, when the template has an API key, the
// SHA-256 of the copy's new secret (key_hash).
func (f *filler) newIDs(ctx context.Context, tx *sql.Tx, res *Result) error {
	text, blob, integer := "TEXT", "BLOB", "INTEGER"
	if f.pg {
		text, blob, integer = `TEXT COLLATE "C"`, "BYTEA", "BIGINT"
	}
	cols := []string{"n", "tenant", "copied"}
	def := []string{"n " + integer + " PRIMARY KEY", "tenant " + text + " NOT NULL", "copied " + integer + " NOT NULL"}
	for i := range f.ids {
		cols = append(cols, "i"+strconv.Itoa(i))
		def = append(def, "i"+strconv.Itoa(i)+" "+text+" NOT NULL")
	}
	if f.apiKey != "" {
		cols = append(cols, "key_hash")
		def = append(def, "key_hash "+blob+" NOT NULL")
	}
	if _, err := tx.ExecContext(ctx, `CREATE TEMPORARY TABLE fill_ids (`+strings.Join(def, ", ")+`)`); err != nil {
		return fmt.Errorf("tenantscale: %w", err)
	}
	rows := make([][]any, len(res.IDs))
	for i, id := range res.IDs {
		copied := f.cfg.Copy == nil || f.cfg.Copy(i)
		row := make([]any, 0, len(cols))
		row = append(row, i+1, id, 0)
		if copied {
			row[2] = 1
		}
		var ids map[string]string
		kept := f.cfg.Keep != nil && f.cfg.Keep(i)
		if kept && copied {
			ids = make(map[string]string, len(f.ids))
		}
		var secret string
		for _, old := range f.ids {
			prefix, _, _ := strings.Cut(old, "_")
			n := store.NewID(prefix)
			row = append(row, n)
			if ids != nil {
				ids[old] = n
			}
			if old == f.apiKey {
				secret = apiKeySecret(n)
			}
		}
		if f.apiKey != "" {
			sum := sha256.Sum256([]byte(secret))
			row = append(row, sum[:])
		}
		rows[i] = row
		if kept {
			t := &Tenant{ID: id, IDs: ids}
			if copied {
				t.APIKey = secret
			}
			res.Kept[i] = t
		}
	}
	return f.insert(ctx, tx, "fill_ids", cols, rows)
}

// copyQuery is the INSERT … SELECT that copies the template's rows of tables[ti] to the tenants
// of fill_ids that get them, in the order of the tenants and, within one, of the template's
// rows. Only the columns whose template values hold the template's ids are rewritten.
func (f *filler) copyQuery(ti int) string {
	t := tables[ti]
	cols := f.cols[ti]
	olds := append([]string{f.cfg.Template}, f.ids...)
	news := []string{"f.tenant"}
	for i := range f.ids {
		news = append(news, "f.i"+strconv.Itoa(i))
	}
	exprs := make([]string, len(cols))
	for c, name := range cols {
		alone := true // the column holds the template's id alone
		e := "src." + name
		for _, row := range f.rows[ti] {
			alone = alone && row[c] == f.cfg.Template
		}
		switch {
		case t.name == "api_keys" && name == "secret_hash":
			e = "f.key_hash"
		case alone:
			e = "f.tenant"
		default:
			for i, old := range olds {
				if slices.ContainsFunc(f.rows[ti], func(row []any) bool {
					v, ok := row[c].(string)
					return ok && strings.Contains(v, old)
				}) {
					e = "replace(" + e + ", " + quote(old) + ", " + news[i] + ")"
				}
			}
		}
		exprs[c] = e
	}
	where := f.where(t, "src")
	if !t.always {
		where += " AND f.copied = 1"
	}
	order := "f.n"
	if len(t.omit) > 0 {
		order += ", src." + t.omit[0]
	}
	return `INSERT INTO ` + t.name + ` (` + strings.Join(cols, ", ") + `) SELECT ` + strings.Join(exprs, ", ") +
		` FROM fill_ids f CROSS JOIN ` + t.name + ` src WHERE ` + where + ` ORDER BY ` + order
}

// quote is s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// signingKeys starts making the signing_keys rows of the tenants ids, on every core, and returns
// a function that waits for them.
func (f *filler) signingKeys(ids []string) func() ([][]any, error) {
	ti := len(tables) - 1
	tmpl, cols := f.rows[ti], f.cols[ti]
	out := make([][]any, len(ids)*len(tmpl))
	if len(tmpl) == 0 {
		return func() ([][]any, error) { return out, nil }
	}
	workers := runtime.GOMAXPROCS(0)
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			var err error
			for i := w; i < len(ids) && err == nil; i += workers {
				for r, row := range tmpl {
					c := slices.Clone(row)
					c[slices.Index(cols, "tenant")] = ids[i]
					err = f.newSigningKey(cols, c)
					out[i*len(tmpl)+r] = c
				}
			}
			errs <- err
		}()
	}
	return func() ([][]any, error) {
		var err error
		for range workers {
			err = errors.Join(err, <-errs)
		}
		return out, err
	}
}

// insert writes rows into table with INSERTs of as many rows as maxParams allows, one prepared
// statement for all but the last.
func (f *filler) insert(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	per := max(1, maxParams/len(cols))
	var stmt *sql.Stmt
	args := make([]any, 0, per*len(cols))
	for len(rows) > 0 {
		batch := rows[:min(per, len(rows))]
		rows = rows[len(batch):]
		args = args[:0]
		for _, row := range batch {
			args = append(args, row...)
		}
		var err error
		switch {
		case len(batch) < per:
			_, err = tx.ExecContext(ctx, f.insertQuery(table, cols, len(batch)), args...)
		case stmt == nil:
			if stmt, err = tx.PrepareContext(ctx, f.insertQuery(table, cols, per)); err == nil {
				defer stmt.Close()
				_, err = stmt.ExecContext(ctx, args...)
			}
		default:
			_, err = stmt.ExecContext(ctx, args...)
		}
		if err != nil {
			return fmt.Errorf("tenantscale: inserting into %s: %w", table, err)
		}
	}
	return nil
}

// insertQuery is an INSERT of n rows into table's columns cols.
func (f *filler) insertQuery(table string, cols []string, n int) string {
	var q strings.Builder
	q.WriteString(`INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES `)
	p := 0
	for r := range n {
		if r > 0 {
			q.WriteString(", ")
		}
		q.WriteByte('(')
		for c := range cols {
			if c > 0 {
				q.WriteString(", ")
			}
			p++
			q.WriteString(f.ph(p))
		}
		q.WriteByte(')')
	}
	return q.String()
}

// newSigningKey puts a new Ed25519 key in the signing_keys row: its thumbprint as id, its
// PKCS #8 form sealed as private_key.
func (f *filler) newSigningKey(cols []string, row []any) error {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return err
	}
	kid := thumbprint(pub)
	row[slices.Index(cols, "id")] = kid
	row[slices.Index(cols, "private_key")] = seal(f.aead, der, []byte(kid))
	return nil
}

// thumbprint is the RFC 7638 JWK thumbprint (SHA-256, base64url) of an Ed25519 public key: what
// oidc2fa's key ring uses as a key's id.
func thumbprint(pub ed25519.PublicKey) string {
	jwk := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(jwk))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// newAEAD is AES-256-GCM under kek, as sqlstore seals signing keys.
func newAEAD(kek []byte) (cipher.AEAD, error) {
	if len(kek) != 32 {
		return nil, errors.New("tenantscale: the template has signing keys: Config.KeyEncryptionKey (32 bytes) is required")
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal is sqlstore's sealed form of a private key: a version byte (1), a random 12-byte nonce,
// then the AES-256-GCM ciphertext with its tag, the key's id as additional data.
func seal(aead cipher.AEAD, plain, ad []byte) []byte {
	sealed := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(plain)+aead.Overhead())
	sealed[0] = 1
	rand.Read(sealed[1:])
	return aead.Seal(sealed, sealed[1:], plain, ad)
}

// apiKeySecret is a new secret for the API key id, of the form scimsvc.IssueAPIKey gives:
// scimkey_<id without "key_">_<32 random bytes, base32, lower case>.
func apiKeySecret(id string) string {
	var raw [32]byte
	rand.Read(raw[:])
	return "scimkey_" + strings.TrimPrefix(id, "key_") + "_" +
		strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:]))
}
