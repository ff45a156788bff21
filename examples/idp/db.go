package main

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/sqlstore"
)

// defaultDB is the -db every command uses unless told otherwise: a SQLite file in the working
// directory.
const defaultDB = "sqlite:idp.db"

// kekEnv holds the key-encryption key, base64-encoded (32 bytes), when it is not in a file.
const kekEnv = "VISID_KEY_ENCRYPTION_KEY"

// dbUsage is the help text of -db.
const dbUsage = `the store: sqlite:PATH, postgres://… or memory`

// database is an open store.
type database struct {
	store.Backend
	// persistent reports whether what is written outlives the process.
	persistent bool
	// kek is the key-encryption key: it encrypts the signing keys in the store, and the
	// pepper and the cookie key derive from it.
	kek []byte
	// close releases the store.
	close func() error
	// probe checks that the store takes writes, leaving nothing behind (sqlstore.Store.Probe);
	// nil for the in-memory store.
	probe func(context.Context) error
	// size returns the bytes the store's data takes (sqlstore.Store.Size); nil for the
	// in-memory store.
	size func(context.Context) (int64, error)
}

// openDB opens the store that a -db value names and brings its schema up to date:
//
//   - "memory": an empty store that lives as long as the process, with a random
//     key-encryption key;
//   - "sqlite:PATH": the SQLite file PATH, created if missing; the key-encryption key comes from
//     $VISID_KEY_ENCRYPTION_KEY, or else from the file PATH.key, made on first use (mode 0600);
//   - "sqlite::memory:": an empty SQLite database that lives as long as the process, with a
//     random key-encryption key (no key file);
//   - "postgres://…": PostgreSQL; the key-encryption key must be in $VISID_KEY_ENCRYPTION_KEY.
func openDB(ctx context.Context, db string) (*database, error) {
	switch {
	case db == "memory":
		return &database{Backend: memstore.New().Backend(), kek: randomKEK(), close: func() error { return nil }}, nil
	case strings.HasPrefix(db, "sqlite:"), strings.HasPrefix(db, "postgres://"), strings.HasPrefix(db, "postgresql://"):
	default:
		return nil, &cli.UsageError{Msg: fmt.Sprintf(`-db %q: want sqlite:PATH, postgres://… or memory`, db)}
	}
	kek, err := loadKEK(db)
	if err != nil {
		return nil, err
	}
	s, err := sqlstore.Config{KeyEncryptionKey: kek}.Open(ctx, db)
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	d := &database{Backend: s.Backend(), persistent: !sqlstore.InMemory(db), kek: kek, close: s.Close, probe: s.Probe, size: s.Size}
	if err := checkKEK(ctx, d, db); err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// errNoStore is what openExistingDB returns when -db names no visid store.
var errNoStore = errors.New("no visid store")

// openExistingDB opens the store of an admin command: as openDB does, but it never makes one.
// A SQLite file that is missing, or a database or schema without visid's tables, is an error
// wrapping errNoStore that names where it looked; a missing key file is an error, not a new key;
// and the key-encryption key must open the store's signing keys, as the service checks at start.
// "memory" and "sqlite::memory:" are empty stores, as for openDB.
func openExistingDB(ctx context.Context, db string) (*database, error) {
	if db == "memory" || sqlstore.InMemory(db) {
		return openDB(ctx, db)
	}
	path, sqlite := strings.CutPrefix(db, "sqlite:")
	path, _, _ = strings.Cut(path, "?")
	switch {
	case sqlite:
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, noStore(db, path)
		} else if err != nil {
			return nil, fmt.Errorf("-db %s: %w", db, err)
		}
	case strings.HasPrefix(db, "postgres://"), strings.HasPrefix(db, "postgresql://"):
	default:
		return nil, &cli.UsageError{Msg: fmt.Sprintf(`-db %q: want sqlite:PATH, postgres://… or memory`, db)}
	}
	raw, err := sqlstore.Config{}.Open(ctx, db)
	if err != nil {
		return nil, err
	}
	d, err := existingStore(ctx, raw, db, path)
	if err != nil {
		raw.Close()
		return nil, err
	}
	return d, nil
}

// existingStore is the rest of openExistingDB once raw, without a key-encryption key, is open:
// it checks that visid's tables are there, finds the key-encryption key without making one,
// brings the schema up to date as the service would, and checks the key.
func existingStore(ctx context.Context, raw *sqlstore.Store, db, path string) (*database, error) {
	where := path
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`
	if raw.Dialect() == sqlstore.Postgres {
		var schema sql.NullString
		if err := raw.DB().QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return nil, fmt.Errorf("-db %s: %w", redactDSN(db), err)
		}
		where = fmt.Sprintf("%s (schema %s)", redactDSN(db), schema.String)
		q = `SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migrations'`
	}
	var n int
	if err := raw.DB().QueryRowContext(ctx, q).Scan(&n); err != nil {
		return nil, fmt.Errorf("-db %s: %w", redactDSN(db), err)
	}
	if n == 0 {
		return nil, noStore(db, where)
	}
	kek, err := existingKEK(db, path)
	if err != nil {
		return nil, err
	}
	s, err := sqlstore.New(sqlstore.Config{DB: raw.DB(), Dialect: raw.Dialect(), KeyEncryptionKey: kek})
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		return nil, err
	}
	d := &database{Backend: s.Backend(), persistent: true, kek: kek, close: raw.Close, probe: s.Probe, size: s.Size}
	if err := checkKEK(ctx, d, db); err != nil {
		return nil, err
	}
	return d, nil
}

// noStore is the error of a -db that names no visid store; where says where it looked.
func noStore(db, where string) error {
	if db == defaultDB {
		return fmt.Errorf("%w at %s (the default -db %s, in the working directory): start the service once "+
			"(idp, or go run ./examples/idp), or pass -db", errNoStore, where, defaultDB)
	}
	return fmt.Errorf("%w at %s: start the service once with this -db, or pass the -db of your store", errNoStore, where)
}

// existingKEK finds the key-encryption key of an existing store, as loadKEK does, but never
// makes a key file.
func existingKEK(db, path string) ([]byte, error) {
	if v := os.Getenv(kekEnv); v != "" {
		return decodeKEK(kekEnv, v)
	}
	if !strings.HasPrefix(db, "sqlite:") {
		return loadKEK(db) // PostgreSQL: the error that asks for $VISID_KEY_ENCRYPTION_KEY
	}
	data, err := os.ReadFile(path + ".key")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the store %s has no key-encryption key: neither $%s nor %s holds it; "+
			"set $%s to the key the service uses", path, kekEnv, path+".key", kekEnv)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the key-encryption key: %w", err)
	}
	return decodeKEK(path+".key", string(data))
}

// checkKEK checks that the key-encryption key of d opens the signing keys stored in it: a
// wrong key is refused at once, by the service and the admin commands alike, rather than
// when the first token is signed. It opens the keys of one tenant (and the shared keys of
// earlier versions), however many tenants the store holds.
func checkKEK(ctx context.Context, d *database, db string) error {
	err := openSigningKeys(ctx, d.SigningKeys)
	if err == nil {
		return nil
	}
	source := "$" + kekEnv
	if path, ok := strings.CutPrefix(db, "sqlite:"); ok && os.Getenv(kekEnv) == "" {
		path, _, _ = strings.Cut(path, "?")
		source = path + ".key"
	}
	return fmt.Errorf("reading the signing keys of -db %s with the key-encryption key from %s "+
		"(it must be the key the store was made with): %w", redactDSN(db), source, err)
}

// openSigningKeys reads and opens the shared signing keys and those of the first tenant that has
// keys: a bounded read that fails when the store is away or its keys do not open.
func openSigningKeys(ctx context.Context, keys store.SigningKeys) error {
	if _, err := keys.List(ctx, ""); err != nil {
		return err
	}
	first, err := keys.Tenants(ctx, "", 1)
	if err == nil && len(first) > 0 {
		_, err = keys.List(ctx, first[0])
	}
	return err
}

// redactDSN is db with the password of a PostgreSQL URL hidden, for messages.
func redactDSN(db string) string {
	if !strings.HasPrefix(db, "postgres") {
		return db
	}
	u, err := url.Parse(db)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}

// loadKEK finds the key-encryption key of the store db names; a SQLite in-memory database,
// which lives as long as the process, gets a random one.
func loadKEK(db string) ([]byte, error) {
	if sqlstore.InMemory(db) {
		return randomKEK(), nil
	}
	if v := os.Getenv(kekEnv); v != "" {
		return decodeKEK(kekEnv, v)
	}
	path, ok := strings.CutPrefix(db, "sqlite:")
	if !ok {
		return nil, fmt.Errorf("a PostgreSQL store needs its key-encryption key in $%s: 32 random bytes, base64-encoded "+
			"(openssl rand -base64 32); every instance needs the same", kekEnv)
	}
	path, _, _ = strings.Cut(path, "?")
	keyFile := path + ".key"
	data, err := os.ReadFile(keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		kek := randomKEK()
		f, err := os.OpenFile(keyFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return loadKEK(db) // another process made it first
		}
		if err != nil {
			return nil, fmt.Errorf("creating the key-encryption key: %w", err)
		}
		_, err = f.WriteString(base64.StdEncoding.EncodeToString(kek) + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("writing the key-encryption key: %w", err)
		}
		return kek, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the key-encryption key: %w", err)
	}
	return decodeKEK(keyFile, string(data))
}

// decodeKEK decodes a base64 key-encryption key read from where.
func decodeKEK(where, v string) ([]byte, error) {
	v = strings.TrimSpace(v)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(v); err == nil && len(k) == 32 {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%s does not hold a key-encryption key: want 32 bytes, base64-encoded", where)
}
