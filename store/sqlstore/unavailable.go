package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/visid/visid/store"
)

// unavailable returns err wrapped as store.ErrUnavailable when it says that the database cannot
// answer now through no fault of the request, and err as it is otherwise. It is the one place
// where sqlstore decides that; every read and write passes its error through it. The cause stays
// reachable with errors.Is and errors.As.
//
// Unavailable are:
//   - a connection that cannot be made or broke: refused, reset, a broken pipe, an unexpected
//     end of the stream, a connection the driver gave up as bad;
//   - PostgreSQL errors of SQLSTATE class 08 (connection exception) and 53 (insufficient
//     resources: too many clients, disk full, out of memory), 57P01 admin_shutdown, 57P02
//     crash_shutdown, 57P03 cannot_connect_now (starting up or shutting down) and 25006
//     read_only_sql_transaction (a standby, or a server made read-only);
//   - SQLite's SQLITE_FULL, SQLITE_READONLY, SQLITE_BUSY and SQLITE_LOCKED (still locked when
//     the busy timeout and the Store's retries ran out), SQLITE_IOERR and SQLITE_CANTOPEN.
//
// A deadline that passes while the request waits for a connection is unavailableWait's.
func unavailable(err error) error {
	if err == nil || errors.Is(err, store.ErrUnavailable) || !isUnavailable(err) {
		return err
	}
	return fmt.Errorf("sqlstore: the database is unavailable: %w: %w", store.ErrUnavailable, err)
}

// unavailableWait is unavailable for the error of taking a connection (or SQLite's write
// turn): a deadline that passed while the request waited for one means the pool is exhausted or
// the database slow to answer, which is the store's state, not the request's fault.
func unavailableWait(err error) error {
	if err != nil && errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, store.ErrUnavailable) {
		return fmt.Errorf("sqlstore: no database connection came free before the deadline: %w: %w", store.ErrUnavailable, err)
	}
	return unavailable(err)
}

func isUnavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code[:2] == "53"):
			return true
		case pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", pe.Code == "25006":
			return true
		}
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED,
			sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne *net.OpError
	switch {
	case errors.As(err, &ce), errors.As(err, &ne):
		return true
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}
