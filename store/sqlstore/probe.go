package sqlstore

import (
	"context"
	"errors"
	"strings"
)

// probeTenant is the id of the row Probe writes: no valid tenant id (store.ValidTenantID), so it
// can collide with no tenant.
const probeTenant = "~probe"

// probeSize is the size of the row Probe writes: larger than a page of either database, so the
// write needs room a full database lacks.
const probeSize = 16 << 10

// errProbeRollback ends Probe's transaction without committing it.
var errProbeRollback = errors.New("sqlstore: probe: roll back")

// Probe checks that the database takes writes now: it writes a row of a few pages in a write
// transaction and rolls it back, so it leaves nothing behind. It fails with store.ErrUnavailable
// (wrapped) when the database is unreachable, read-only, locked past its busy timeout or out of
// room for the row, as a Store's writes would. It is meant for readiness checks; call it at most
// every few seconds, as it takes the write lock (SQLite) or a connection (PostgreSQL) for a moment.
//
// A disk that fills up only when pages are flushed (PostgreSQL writes at checkpoints, SQLite's
// WAL at commit) may take writes in Probe's transaction and still fail a committed one.
func (s *Store) Probe(ctx context.Context) error {
	err := s.write(ctx, func(t *txn) error {
		if _, err := t.exec(ctx, `INSERT INTO tenants (id, display_name) VALUES (?, ?)`,
			probeTenant, strings.Repeat("p", probeSize)); err != nil {
			return err
		}
		return errProbeRollback
	})
	if errors.Is(err, errProbeRollback) {
		return nil
	}
	return err
}
