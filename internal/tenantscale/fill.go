// Package tenantscale builds sqlstore databases of many tenants for visid's benchmarks at
// 100,000 tenants, and holds those benchmarks (BenchmarkTenantScale). It is for tests only.
//
// Fill copies a template tenant, made beforehand through the store API the way a host makes
// one, to any number of new tenants with multi-row INSERTs in a few transactions, so that a
// database of 100,000 tenants takes seconds to build instead of the minutes one Tenants.Create
// (and one Users.Create, one IssueAPIKey, …) per row would take.
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
	"encoding/json"
	"errors"
	"fmt"
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
	// Template is the tenant whose rows every new tenant gets a copy of. Required.
	Template string
	// Prefix starts the new tenants' ids: Prefix followed by a number of seven digits, from 1.
	// Empty: "tenant".
	Prefix string
	// Tenants is how many tenants Fill makes.
	Tenants int
	// Keep reports whether Fill returns the details (Tenant) of the i-th new tenant, counted
	// from 0. Nil: none.
	Keep func(i int) bool
}

// Tenant is one tenant that Fill made.
type Tenant struct {
	ID string
	// APIKey is the secret of the tenant's copy of the template's API key, "" if the template
	// has none.
	APIKey string
	// IDs maps the id of each of the template's users, groups, clients and API keys to the id of
	// its copy in this tenant.
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
}

// tables are the tables of a tenant in the order their rows can be inserted in (foreign keys).
// event_heads goes before events: on SQLite a trigger moves a tenant's head as its events are
// inserted, by an upsert that keeps the larger number.
var tables = []table{
	{name: "tenants", where: "id"},
	{name: "event_heads", where: "tenant"},
	{name: "users", where: "tenant", omit: []string{"seq"}, ids: []string{"id"}},
	{name: "groups", where: "tenant", omit: []string{"seq"}, ids: []string{"id"}},
	{name: "members", where: "tenant"},
	{name: "attrs", where: "tenant"},
	{name: "unique_values", where: "tenant"},
	{name: "clients", where: "tenant", omit: []string{"seq"}, ids: []string{"id"}},
	{name: "pictures", where: "tenant"},
	{name: "picture_failures", where: "tenant"},
	{name: "webhooks", where: "tenant", omit: []string{"n"}},
	{name: "events", where: "tenant"},
	{name: "api_keys", where: "tenants", omit: []string{"seq"}, ids: []string{"id"}},
	{name: "signing_keys", where: "tenant"},
}

// transient are the tables with a tenant column whose rows live for minutes (codes, sign-ins
// under way): Fill copies none and refuses a template that has any.
var transient = []string{"codes", "interactions", "pushed_requests", "access_tokens"}

// maxParams bounds the parameters of one INSERT: below SQLite's 32,766 and PostgreSQL's 65,535.
const maxParams = 30000

// chunk is how many tenants go into one transaction.
const chunk = 5000

// Fill makes cfg.Tenants new tenants, each with a copy of every row of cfg.Template: the
// tenant's own row, its users with their attributes, unique values, group memberships and
// picture credentials, its groups, clients, webhooks, event log, its API key and its signing
// keys. Rows are written straight to the Store's database with multi-row INSERTs, chunk tenants
// to a transaction. A copy differs from the template where it must:
//
//   - the tenant's id, and the ids of its users, groups, clients and API keys, are new (and
//     replaced wherever the template's text holds the old ones: documents, attributes, events,
//     user names);
//   - an API key has a new secret of the form scimsvc.IssueAPIKey gives (only the secrets of
//     the tenants Keep names are returned);
//   - a signing key is a new Ed25519 key, sealed under cfg.KeyEncryptionKey as sqlstore seals
//     one, its id its RFC 7638 thumbprint as oidc2fa's key ring makes it. The template's keys
//     must be EdDSA keys.
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
	res := &Result{IDs: make([]string, 0, cfg.Tenants), Kept: map[int]*Tenant{}}
	for start := 0; start < cfg.Tenants; start += chunk {
		n := min(chunk, cfg.Tenants-start)
		if err := f.fillChunk(ctx, start, n, res); err != nil {
			return nil, err
		}
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
	// ids are the template's ids that each copy replaces, with their prefixes.
	ids []string
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

// readTemplate reads the template's rows of every table.
func (f *filler) readTemplate(ctx context.Context) error {
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
		arg := f.cfg.Template
		if t.name == "api_keys" {
			b, _ := json.Marshal([]string{f.cfg.Template})
			arg = string(b)
		}
		rows, err := f.db.QueryContext(ctx, `SELECT * FROM `+t.name+` WHERE `+t.where+` = `+f.ph(1), arg)
		if err != nil {
			return fmt.Errorf("tenantscale: reading the template's %s: %w", t.name, err)
		}
		all, err := rows.Columns()
		var keep []int
		var cols []string
		for i, c := range all {
			if !contains(t.omit, c) {
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
				id, _ := row[indexOf(cols, c)].(string)
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
				if alg := row[indexOf(cols, "algorithm")]; alg != "EdDSA" {
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
		if t.name == "tenants" && len(out) != 1 {
			return fmt.Errorf("tenantscale: no tenant %q", f.cfg.Template)
		}
		if t.name == "api_keys" && len(out) > 1 {
			return fmt.Errorf("tenantscale: the template has %d API keys; Fill copies one", len(out))
		}
		f.rows = append(f.rows, out)
		f.cols = append(f.cols, cols)
	}
	return nil
}

// fillChunk makes the new tenants start to start+n-1 in one transaction.
func (f *filler) fillChunk(ctx context.Context, start, n int, res *Result) error {
	batches := make([][][]any, len(tables))
	for i := start; i < start+n; i++ {
		id := fmt.Sprintf("%s%07d", f.cfg.Prefix, i+1)
		res.IDs = append(res.IDs, id)
		pairs := []string{f.cfg.Template, id}
		ids := make(map[string]string, len(f.ids))
		for _, old := range f.ids {
			prefix, _, _ := strings.Cut(old, "_")
			ids[old] = store.NewID(prefix)
			pairs = append(pairs, old, ids[old])
		}
		repl := strings.NewReplacer(pairs...)
		var kept *Tenant
		if f.cfg.Keep != nil && f.cfg.Keep(i) {
			kept = &Tenant{ID: id, IDs: ids}
			res.Kept[i] = kept
		}
		for ti, t := range tables {
			cols := f.cols[ti]
			for _, tmpl := range f.rows[ti] {
				row := make([]any, len(tmpl))
				for c, v := range tmpl {
					if s, ok := v.(string); ok {
						v = repl.Replace(s)
					}
					row[c] = v
				}
				switch t.name {
				case "api_keys":
					keyID := row[indexOf(cols, "id")].(string)
					secret := apiKeySecret(keyID)
					sum := sha256.Sum256([]byte(secret))
					row[indexOf(cols, "secret_hash")] = sum[:]
					if kept != nil {
						kept.APIKey = secret
					}
				case "signing_keys":
					if err := f.newSigningKey(cols, row); err != nil {
						return err
					}
				}
				batches[ti] = append(batches[ti], row)
			}
		}
	}
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("tenantscale: %w", err)
	}
	defer tx.Rollback()
	for ti, t := range tables {
		if err := f.insert(ctx, tx, t.name, f.cols[ti], batches[ti]); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("tenantscale: %w", err)
	}
	return nil
}

// insert writes rows into table with INSERTs of as many rows as maxParams allows.
func (f *filler) insert(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	per := max(1, maxParams/len(cols))
	head := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES `
	args := make([]any, 0, per*len(cols))
	var q strings.Builder
	for len(rows) > 0 {
		batch := rows[:min(per, len(rows))]
		rows = rows[len(batch):]
		q.Reset()
		q.WriteString(head)
		args = args[:0]
		for r, row := range batch {
			if r > 0 {
				q.WriteString(", ")
			}
			q.WriteByte('(')
			for c, v := range row {
				if c > 0 {
					q.WriteString(", ")
				}
				args = append(args, v)
				q.WriteString(f.ph(len(args)))
			}
			q.WriteByte(')')
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("tenantscale: inserting into %s: %w", table, err)
		}
	}
	return nil
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
	row[indexOf(cols, "id")] = kid
	row[indexOf(cols, "private_key")] = seal(f.aead, der, []byte(kid))
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

func indexOf(cols []string, c string) int {
	for i, x := range cols {
		if x == c {
			return i
		}
	}
	panic("tenantscale: no column " + c)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
