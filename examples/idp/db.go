package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
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
	return &database{Backend: s.Backend(), persistent: !sqlstore.InMemory(db), kek: kek, close: s.Close}, nil
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
