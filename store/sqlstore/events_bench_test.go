package sqlstore

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// BenchmarkSQLCreateUserEvents is BenchmarkSQLCreateUser with the user.created event recorded in
// the same write (a store.Change in the context). Compare with BenchmarkSQLCreateUser in the
// same run: the target is at most 1.25× its time.
func BenchmarkSQLCreateUserEvents(b *testing.B) {
	ctx := store.WithChange(context.Background(), store.Change{Actor: "key_bench"})
	for _, d := range benchDialects {
		b.Run(dialectName(d), func(b *testing.B) {
			s := benchStore(b, d, benchSet{name: "write"}, 1_000)
			users := s.Users()
			prefix := fmt.Sprintf("events%d-", time.Now().UnixNano())
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := users.Create(ctx, benchTenant, benchNewUser(prefix, i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEventsList lists the 100 events after a cursor in the middle of a tenant's log of
// 1k events and of 1M: the target is at most 2× from the one to the other.
func BenchmarkEventsList(b *testing.B) {
	ctx := context.Background()
	for _, d := range benchDialects {
		for _, n := range []int{1_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/events=%d", dialectName(d), n), func(b *testing.B) {
				s := benchStore(b, d, benchSet{name: "events" + strconv.Itoa(n)}, 1)
				if err := bulkEvents(ctx, s, n); err != nil {
					b.Fatal(err)
				}
				after := changes.FormatCursor(int64(n / 2))
				es := s.Events()
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					page, err := es.List(ctx, benchTenant, after, 100)
					if err != nil {
						b.Fatal(err)
					}
					if len(page) != 100 || page[0].Cursor != changes.FormatCursor(int64(n/2+1)) {
						b.Fatalf("got %d events from %v", len(page), page[0].Cursor)
					}
				}
			})
		}
	}
}

// bulkEvents gives tenant bench a log of n user.updated events, unless it has one, with one
// INSERT … SELECT over a series.
func bulkEvents(ctx context.Context, s *Store, n int) error {
	var last int64
	err := s.db.QueryRowContext(ctx, s.d.rebind(`SELECT coalesce(max(last), 0) FROM event_heads WHERE tenant = ?`), benchTenant).Scan(&last)
	if err != nil || last >= int64(n) {
		return err
	}
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	series, from, pad := `WITH RECURSIVE series(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM series WHERE i < `+strconv.Itoa(n)+`) `,
		` FROM series`, `printf('%08d', i % 1000 + 1)`
	if s.d == postgresDialect {
		series, from, pad = ``, ` FROM generate_series(1, `+strconv.Itoa(n)+`) AS series(i)`, `lpad((i % 1000 + 1)::text, 8, '0')`
	}
	return s.write(ctx, func(t *txn) error {
		if _, err := t.exec(ctx, series+`INSERT INTO events (tenant, seq, type, at, actor, subject_kind, subject_id, data)
			SELECT '`+benchTenant+`', i, 'user.updated', `+strconv.FormatInt(at, 10)+` + i, 'key_bench', 'user', 'user_' || `+pad+`,
				'{"id":"user_' || `+pad+` || '","userName":"user' || i || '","active":true}'`+from); err != nil {
			return fmt.Errorf("bulk events: %w", err)
		}
		// On SQLite the table's trigger has moved event_heads already.
		_, err := t.exec(ctx, `INSERT INTO event_heads (tenant, last) VALUES (?, ?)
			ON CONFLICT (tenant) DO UPDATE SET last = excluded.last`, benchTenant, n)
		return err
	})
}
