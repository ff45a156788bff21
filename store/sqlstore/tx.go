package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/visid/visid/store"
)

// querier is what *sql.Tx, *sql.Conn and *sql.DB have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// txn is one transaction. Its queries are written with '?' placeholders.
type txn struct {
	q querier
	d dialect
}

func (t *txn) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.q.ExecContext(ctx, t.d.rebind(query), args...)
}

func (t *txn) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.q.QueryContext(ctx, t.d.rebind(query), args...)
}

func (t *txn) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return t.q.QueryRowContext(ctx, t.d.rebind(query), args...)
}

// affected runs an exec and returns how many rows it changed.
func (t *txn) affected(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// exists reports whether query returns a row.
func (t *txn) exists(ctx context.Context, query string, args ...any) (bool, error) {
	var one int
	err := t.queryRow(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// rebind turns '?' placeholders into PostgreSQL's $1, $2, …. Queries hold no '?' elsewhere.
func (d dialect) rebind(query string) string {
	if d != postgresDialect || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// forUpdate is the clause that locks the rows a SELECT reads until the transaction ends. SQLite
// needs none: its write transactions hold the database's write lock from BEGIN IMMEDIATE on.
func (d dialect) forUpdate() string {
	if d == postgresDialect {
		return " FOR UPDATE"
	}
	return ""
}

// maxAttempts bounds how often a write transaction is retried after a deadlock or a
// serialization failure (PostgreSQL) or a busy database (SQLite).
const maxAttempts = 8

// write runs fn in a write transaction and commits it; an error from fn rolls it back and is
// returned as it is. On SQLite the transaction starts with BEGIN IMMEDIATE, so it holds the
// write lock from its first read, and the Store's writers take turns. On PostgreSQL it is READ
// COMMITTED: fn locks what it reads to change (SELECT … FOR UPDATE). A transaction that fails on
// a deadlock or a busy database is run again, fn included.
//
// A text parameter that PostgreSQL refuses (not UTF-8, or NUL) fails the write with
// store.ErrInvalid, never an internal error.
func (s *Store) write(ctx context.Context, fn func(t *txn) error) error {
	return unavailable(textError(retryWrite(ctx, func() error {
		if s.d == sqliteDialect {
			return s.writeSQLite(ctx, fn)
		}
		return s.writePostgres(ctx, fn)
	}), store.ErrInvalid))
}

// writeStatement runs fn, whose first statement makes the whole write, outside an explicit
// transaction: the statement is a transaction of its own, which on PostgreSQL saves the round
// trips of BEGIN and COMMIT. What fn runs after that statement (to tell why it failed, say)
// runs in transactions of its own, so fn must change nothing after its first statement. It is
// run again after a deadlock or a busy database, as write's transactions are.
func (s *Store) writeStatement(ctx context.Context, fn func(t *txn) error) error {
	return unavailable(textError(retryWrite(ctx, func() error {
		// A connection of its own, taken first, so that a deadline that passes while the
		// pool has none to give is told apart from one that passes while the statement runs.
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return unavailableWait(err)
		}
		defer conn.Close()
		return fn(&txn{q: conn, d: s.d})
	}), store.ErrInvalid))
}

// retryWrite runs write, and again after a retryable error, up to maxAttempts times.
func retryWrite(ctx context.Context, write func() error) error {
	for attempt := 1; ; attempt++ {
		err := write()
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *Store) writeSQLite(ctx context.Context, fn func(t *txn) error) (err error) {
	select {
	case s.wsem <- struct{}{}:
	case <-ctx.Done():
		return unavailableWait(ctx.Err())
	}
	defer func() { <-s.wsem }()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return unavailableWait(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	done := false
	defer func() {
		if done {
			return
		}
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			// The connection's state is unknown: do not let the pool hand it out again.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if err := fn(&txn{q: conn, d: sqliteDialect}); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	done = true
	return nil
}

func (s *Store) writePostgres(ctx context.Context, fn func(t *txn) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return unavailableWait(err)
	}
	if err := fn(&txn{q: tx, d: postgresDialect}); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// read runs fn in a read-only transaction, so that its queries see one state of the database.
// A text parameter that PostgreSQL refuses (not UTF-8, or NUL) names nothing stored, as no
// stored value can hold it: the read fails with store.ErrNotFound.
func (s *Store) read(ctx context.Context, fn func(t *txn) error) error {
	return unavailable(textError(s.readTx(ctx, fn), store.ErrNotFound))
}

func (s *Store) readTx(ctx context.Context, fn func(t *txn) error) error {
	opts := &sql.TxOptions{}
	if s.d == postgresDialect {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	for attempt := 1; ; attempt++ {
		tx, err := s.db.BeginTx(ctx, opts)
		if err != nil {
			return unavailableWait(err)
		}
		err = fn(&txn{q: tx, d: s.d})
		if err != nil {
			tx.Rollback()
		} else {
			err = tx.Commit()
		}
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
}

// retryable reports whether err means that running the transaction again may succeed.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01" // serialization_failure, deadlock_detected
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqlite3.SQLITE_BUSY || se.Code()&0xff == sqlite3.SQLITE_LOCKED
	}
	return false
}

// isBadText reports whether err is PostgreSQL refusing a text parameter: bytes that are not
// UTF-8, or NUL (SQLSTATE 22021, character_not_in_repertoire), or a character the database's
// encoding lacks (22P05, untranslatable_character). SQLite stores such bytes as they are.
func isBadText(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "22021" || pe.Code == "22P05")
}

// textError returns err, or, when isBadText(err), an error that wraps as (store.ErrNotFound or
// store.ErrInvalid) instead of the database's.
func textError(err error, as error) error {
	if err != nil && isBadText(err) {
		return fmt.Errorf("sqlstore: a text parameter is not valid UTF-8 or holds NUL: %w", as)
	}
	return err
}

// isUnique reports whether err is a violated unique or primary-key constraint.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// violatedTable returns the table of the constraint a PostgreSQL error names, or "".
func violatedTable(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.TableName
	}
	return ""
}

// isForeignKey reports whether err is a violated foreign key: what it refers to is gone.
func isForeignKey(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23503"
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	}
	return false
}

// Instants are stored as Unix nanoseconds, NULL for the zero time, and read back in UTC.

func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// placeholders returns n '?' separated by commas.
func placeholders(n int) string {
	if n == 0 {
		return ""
	}
	return strings.Repeat("?,", n-1) + "?"
}

// storableText reports whether s can be a text parameter of every dialect: valid UTF-8 without
// NUL. A key that is not can name no stored row.
func storableText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}
