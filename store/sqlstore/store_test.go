package sqlstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/sqlstore"
)

// New refuses a Config it cannot work with, and opens no connection.
func TestNewConfig(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "never-created", "x.db"))
	require.NoError(t, err)
	defer db.Close()
	for name, cfg := range map[string]sqlstore.Config{
		"no DB":           {},
		"short KEK":       {DB: db, KeyEncryptionKey: make([]byte, 16)},
		"unknown dialect": {DB: db, Dialect: 7},
	} {
		_, err := sqlstore.New(cfg)
		assert.Error(t, err, name)
	}
	s, err := sqlstore.New(sqlstore.Config{DB: db})
	require.NoError(t, err, "a directory that does not exist: New must not connect")
	assert.Equal(t, sqlstore.SQLite, s.Dialect(), "detected from the driver")
	require.NoError(t, s.Close())
	assert.Equal(t, 0, db.Stats().OpenConnections, "New opened a connection")

	_, err = sqlstore.Open(context.Background(), "mysql://x")
	assert.Error(t, err)
	_, err = sqlstore.Config{DB: db}.Open(context.Background(), "sqlite:x.db")
	assert.Error(t, err, "Config.Open with a DB")
}

// Close closes only what Open opened.
func TestCloseLeavesHostDB(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "x.db"))
	require.NoError(t, err)
	defer db.Close()
	s, err := sqlstore.New(sqlstore.Config{DB: db})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, db.Ping(), "the host's DB is still open")
}

// Signing keys need the key-encryption key they were sealed with.
func TestSigningKeysSealed(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		require.NoError(t, s.Migrate(ctx))
		k := store.SigningKey{ID: "k1", Algorithm: "EdDSA", PrivateKey: []byte("a private key"), Created: time.Now()}
		require.NoError(t, s.SigningKeys().Add(ctx, k))
		var sealed []byte
		require.NoError(t, s.DB().QueryRow(`SELECT private_key FROM signing_keys`).Scan(&sealed))
		assert.NotContains(t, string(sealed), "a private key")

		other := open(t, dsn) // another key-encryption key
		_, err := other.SigningKeys().List(ctx, "")
		require.Error(t, err, "a key sealed under another key-encryption key")

		none, err := sqlstore.New(sqlstore.Config{DB: s.DB()})
		require.NoError(t, err)
		_, err = none.SigningKeys().List(ctx, "")
		require.ErrorIs(t, err, sqlstore.ErrNoKeyEncryptionKey)
		require.ErrorIs(t, none.SigningKeys().Add(ctx, k), sqlstore.ErrNoKeyEncryptionKey)
		require.NoError(t, none.SigningKeys().Retire(ctx, "k1", time.Now()), "Retire needs no key material")
	})
}

// "sqlite::memory:" is one private database on one connection.
func TestOpenMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, "sqlite::memory:")
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Tenants().Create(ctx, store.Tenant{ID: "acme"}))
	_, err = s.Users().Create(ctx, "acme", store.User{UserName: "ann"})
	require.NoError(t, err)
	p, err := s.Users().List(ctx, "acme", store.Query{Count: -1})
	require.NoError(t, err)
	assert.Equal(t, 1, p.TotalResults)
}
