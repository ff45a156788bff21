package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"

	"github.com/visid/visid/store"
)

// unavailable wraps as store.ErrUnavailable exactly the errors that say the database cannot
// answer now, and keeps the cause reachable.
func TestUnavailableClassification(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("query: %w", &pgconn.PgError{Code: code}) }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), true},
		{"unexpected EOF", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), true},
		{"bad connection", driver.ErrBadConn, true},
		{"connect error", &pgconn.ConnectError{}, true},
		{"08006 connection_failure", pg("08006"), true},
		{"53300 too_many_connections", pg("53300"), true},
		{"53100 disk_full", pg("53100"), true},
		{"57P01 admin_shutdown", pg("57P01"), true},
		{"57P02 crash_shutdown", pg("57P02"), true},
		{"57P03 cannot_connect_now", pg("57P03"), true},
		{"25006 read_only_sql_transaction", pg("25006"), true},
		{"23505 unique_violation", pg("23505"), false},
		{"57014 query_canceled", pg("57014"), false},
		{"42P01 undefined_table", pg("42P01"), false},
		{"not found", store.ErrNotFound, false},
		{"canceled", context.Canceled, false},
		{"deadline while running", context.DeadlineExceeded, false},
		{"other", errors.New("something else"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := unavailable(tc.err)
			assert.Equal(t, tc.want, errors.Is(got, store.ErrUnavailable))
			assert.ErrorIs(t, got, tc.err, "the cause stays reachable")
		})
	}
	assert.NoError(t, unavailable(nil))
	assert.NoError(t, unavailableWait(nil))
	err := unavailableWait(fmt.Errorf("conn: %w", context.DeadlineExceeded))
	assert.ErrorIs(t, err, store.ErrUnavailable, "a deadline while waiting for a connection")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, unavailableWait(context.Canceled), store.ErrUnavailable, "a client that left")
	once := unavailable(pg("53300"))
	assert.Same(t, once, unavailable(once), "wrapped once")
}
