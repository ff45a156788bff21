package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// migrations holds the schema, one directory per dialect, one file per version:
// NNNN_name.sql, applied in order.
//
//go:embed migrations
var migrations embed.FS

// ErrSchemaTooNew is returned by Migrate for a database migrated by a newer version of visid.
var ErrSchemaTooNew = errors.New("sqlstore: the database's schema is newer than this version of visid")

// migration is one version of the schema.
type migration struct {
	version int
	name    string
	sql     string
}

// migrationsOf returns the dialect's migrations in version order.
func migrationsOf(d dialect) ([]migration, error) {
	dir := "migrations/sqlite"
	if d == postgresDialect {
		dir = "migrations/postgres"
	}
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("sqlstore: migration file %q is not named NNNN_name.sql", e.Name())
		}
		b, err := migrations.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	return out, nil
}

// Migrate brings the database's schema to the latest version, applying in one transaction each
// migration the schema_migrations table does not list. It is safe to run from several instances
// at once: PostgreSQL takes a transaction-scoped advisory lock (one per schema), SQLite the
// database's write lock (BEGIN IMMEDIATE); whoever comes second finds the work done.
//
// A database that a newer visid has migrated (it lists a version this one does not know) is
// left as it is, and Migrate returns an error wrapping ErrSchemaTooNew: this binary would
// write without knowing of the newer schema's rules.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := migrationsOf(s.d)
	if err != nil {
		return err
	}
	err = s.write(ctx, func(t *txn) error {
		if t.d == postgresDialect {
			// Two int4 keys: a constant for "visid migrations" and the schema's hash, so that
			// schemas of one database migrate independently.
			if _, err := t.exec(ctx, `SELECT pg_advisory_xact_lock(1449745668, hashtext(current_schema()))`); err != nil {
				return err
			}
		}
		if _, err := t.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version BIGINT PRIMARY KEY,
			name    TEXT NOT NULL,
			applied BIGINT NOT NULL
		)`); err != nil {
			return err
		}
		applied := map[int]bool{}
		rows, err := t.query(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return err
			}
			applied[v] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		known := ms[len(ms)-1].version
		for v := range applied {
			if v > known {
				return fmt.Errorf("%w: the database has version %d, this binary knows up to %d", ErrSchemaTooNew, v, known)
			}
		}
		for _, m := range ms {
			if applied[m.version] {
				continue
			}
			if _, err := t.q.ExecContext(ctx, m.sql); err != nil { // several statements, no placeholders
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := t.exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)`,
				m.version, m.name, time.Now().UnixNano()); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlstore: Migrate: %w", err)
	}
	return nil
}

// SchemaVersion returns the latest migration applied to the database, 0 for none.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := s.read(ctx, func(t *txn) error {
		return t.queryRow(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v)
	})
	if err != nil {
		return 0, fmt.Errorf("sqlstore: SchemaVersion: %w", err)
	}
	return int(v.Int64), nil
}
