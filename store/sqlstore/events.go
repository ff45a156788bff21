package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// Events implements store.Events over the events table; a cursor is an event's seq
// (changes.FormatCursor).
type Events struct{ s *Store }

var _ store.Events = (*Events)(nil)

// List implements store.Events.
func (es *Events) List(ctx context.Context, tenant, after string, limit int) ([]store.Event, error) {
	from, err := changes.ListFrom(after, limit)
	if err != nil {
		return nil, err
	}
	out := []store.Event{}
	err = es.s.read(ctx, func(t *txn) error {
		out = out[:0]
		rows, err := t.query(ctx, `SELECT seq, type, at, actor, subject_kind, subject_id, data FROM events
			WHERE tenant = ? AND seq > ? ORDER BY seq LIMIT ?`, tenant, from, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				e    store.Event
				seq  int64
				at   sql.NullInt64
				data string
			)
			if err := rows.Scan(&seq, &e.Type, &at, &e.Actor, &e.SubjectKind, &e.SubjectID, &data); err != nil {
				return err
			}
			e.Cursor, e.Tenant, e.Time, e.Data = changes.FormatCursor(seq), tenant, fromNanos(at), []byte(data)
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	return out, nil
}

// Append implements store.Events.
func (es *Events) Append(ctx context.Context, tenant string, events ...store.Event) error {
	list, err := changes.Appended(tenant, events, time.Now)
	if err != nil || len(list) == 0 {
		return err
	}
	return es.s.write(ctx, func(t *txn) error {
		if err := t.tenantExists(ctx, tenant); err != nil {
			return err
		}
		return t.insertEvents(ctx, tenant, list)
	})
}

// DeleteExpired implements store.Events.
func (es *Events) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := es.s.write(ctx, func(t *txn) error {
		var err error
		n, err = t.affected(ctx, `DELETE FROM events WHERE at < ?`, nanos(before))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("deleting expired events: %w", err)
	}
	return int(n), nil
}

// recordEvents appends the events p collected to tenant's log: the last statements of a
// write, after its change. On PostgreSQL, taking the numbers from event_heads locks the
// tenant's row there until the transaction ends, so the tenant's events are numbered in commit
// order and a reader never sees an event while one before it is still uncommitted; on SQLite
// the writers take turns, and a trigger keeps event_heads. Either way the write sets the row's
// woken_at when the tenant has webhook endpoints (Webhooks.Due).
func (t *txn) recordEvents(ctx context.Context, tenant string, p *changes.Pending) error {
	return t.insertEvents(ctx, tenant, p.Events(time.Now))
}

// insertEvents numbers events and appends them to tenant's log (recordEvents).
func (t *txn) insertEvents(ctx context.Context, tenant string, events []store.Event) error {
	if len(events) == 0 {
		return nil
	}
	if t.d == sqliteDialect {
		// One INSERT an event: it takes the next number, and the table's trigger records it
		// in event_heads.
		for _, e := range events {
			if _, err := t.exec(ctx, `INSERT INTO events (tenant, seq, type, at, actor, subject_kind, subject_id, data)
				SELECT ?, coalesce(max(last), 0) + 1, ?, ?, ?, ?, ?, ? FROM event_heads WHERE tenant = ?`,
				tenant, string(e.Type), nanos(e.Time), e.Actor, e.SubjectKind, e.SubjectID, string(e.Data), tenant); err != nil {
				return fmt.Errorf("recording events: %w", err)
			}
		}
		return t.wakeWebhooks(ctx, tenant)
	}
	var last int64
	err := t.queryRow(ctx, `INSERT INTO event_heads (tenant, last) VALUES (?, ?)
		ON CONFLICT (tenant) DO UPDATE SET last = event_heads.last + excluded.last,
			woken_at = CASE WHEN event_heads.hooks > 0 THEN coalesce(event_heads.woken_at, ?) END
		RETURNING last`, tenant, len(events), time.Now().UnixNano()).Scan(&last)
	if err != nil {
		return fmt.Errorf("numbering events: %w", err)
	}
	seq := last - int64(len(events))
	const perStatement = 100 // 8 parameters a row
	for start := 0; start < len(events); start += perStatement {
		chunk := events[start:min(len(events), start+perStatement)]
		var b strings.Builder
		b.WriteString(`INSERT INTO events (tenant, seq, type, at, actor, subject_kind, subject_id, data) VALUES `)
		args := make([]any, 0, 8*len(chunk))
		for i, e := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?)")
			seq++
			args = append(args, tenant, seq, string(e.Type), nanos(e.Time), e.Actor, e.SubjectKind, e.SubjectID, string(e.Data))
		}
		if _, err := t.exec(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("recording events: %w", err)
		}
	}
	return nil
}
