package sqlstore

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/webhooks"
)

// BenchmarkDeliveryPassNothingDue is a pass of webhooks.Deliverer.RunOnce with nothing due,
// over 10 tenants and over 2,000 (100,000 with VISID_BENCH_LARGE=1), each with one endpoint
// that has delivered the tenant's one event, on SQLite and PostgreSQL. The pass asks
// Webhooks.Due, which reads an index: the target is at most 2× from 10 tenants to 100,000,
// which ratio-to-10 measures with passes over both stores in turn, so that both see the same
// load.
// visit-every-tenant is what a pass did before Due (Tenants.List, then each tenant's
// Webhooks.List), measured in the same run for comparison (not at 100,000: seconds a pass).
//
//	VISID_BENCH_LARGE=1 go test ./store/sqlstore -run '^$' -bench BenchmarkDeliveryPassNothingDue
func BenchmarkDeliveryPassNothingDue(b *testing.B) {
	sizes := []int{10, 2_000}
	if os.Getenv("VISID_BENCH_LARGE") == "1" {
		sizes = []int{10, 2_000, 100_000}
	}
	ctx := context.Background()
	for _, d := range benchDialects {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/tenants=%d/due", dialectName(d), n), func(b *testing.B) {
				s := benchWebhookStore(b, d, n)
				dl, err := webhooks.NewDeliverer(webhooks.Config{Events: s.Events(), Webhooks: s.Webhooks(),
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					sent, err := dl.RunOnce(ctx)
					if err != nil || sent != 0 {
						b.Fatalf("RunOnce: %d sent, %v", sent, err)
					}
				}
			})
			if n > 10 {
				b.Run(fmt.Sprintf("%s/tenants=%d/ratio-to-10", dialectName(d), n), func(b *testing.B) {
					benchPassRatio(b, benchWebhookStore(b, d, 10), benchWebhookStore(b, d, n))
				})
			}
			if n > 2_000 {
				continue
			}
			b.Run(fmt.Sprintf("%s/tenants=%d/visit-every-tenant", dialectName(d), n), func(b *testing.B) {
				s := benchWebhookStore(b, d, n)
				for b.Loop() {
					for after := ""; ; {
						tenants, err := s.Tenants().List(ctx, after, store.MaxTenantPage)
						if err != nil {
							b.Fatal(err)
						}
						for _, t := range tenants {
							if _, err := s.Webhooks().List(ctx, t.ID); err != nil {
								b.Fatal(err)
							}
						}
						if len(tenants) < store.MaxTenantPage {
							break
						}
						after = tenants[len(tenants)-1].ID
					}
				}
			})
		}
	}
}

// benchPassRatio times passes over small and large in turn, so that both see the same load
// on the machine, and reports the median of each (ns/pass-10, ns/pass) and their ratio
// (large/10).
func benchPassRatio(b *testing.B, small, large *Store) {
	ctx := context.Background()
	var passes [2]*webhooks.Deliverer
	for i, s := range []*Store{small, large} {
		var err error
		passes[i], err = webhooks.NewDeliverer(webhooks.Config{Events: s.Events(), Webhooks: s.Webhooks(),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatal(err)
		}
	}
	var took [2][]time.Duration
	for b.Loop() {
		for i, d := range passes {
			start := time.Now()
			if sent, err := d.RunOnce(ctx); err != nil || sent != 0 {
				b.Fatalf("RunOnce: %d sent, %v", sent, err)
			}
			took[i] = append(took[i], time.Since(start))
		}
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2])
	}
	m10, m := median(took[0]), median(took[1])
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(m10, "ns/pass-10")
	b.ReportMetric(m, "ns/pass")
	b.ReportMetric(m/m10, "large/10")
}

// benchWebhookStore returns a Store with a key-encryption key over a database of n tenants
// (benchHookTenant(1) …), each with an event and an endpoint whose cursor is that event, built
// once per run with INSERT … SELECT over a series and multi-row INSERTs for the endpoints.
func benchWebhookStore(b *testing.B, d dialect, n int) *Store {
	b.Helper()
	ctx := context.Background()
	base := benchStore(b, d, benchSet{name: "hooks" + strconv.Itoa(n)}, 1)
	s, err := New(Config{DB: base.db, Dialect: Dialect(d), KeyEncryptionKey: make([]byte, 32)})
	if err != nil {
		b.Fatal(err)
	}
	var have int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM webhooks`).Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have >= n {
		return s
	}
	start := time.Now()
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	series, from, id := `WITH RECURSIVE series(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM series WHERE i < `+strconv.Itoa(n)+`) `,
		` FROM series`, `'t' || printf('%07d', i)`
	if d == postgresDialect {
		series, from, id = ``, ` FROM generate_series(1, `+strconv.Itoa(n)+`) AS series(i)`, `'t' || lpad(i::text, 7, '0')`
	}
	err = s.write(ctx, func(t *txn) error {
		for _, q := range []string{
			`INSERT INTO tenants (id, display_name, created) SELECT ` + id + `, 'Tenant ' || i, ` + strconv.FormatInt(at, 10) + from,
			`INSERT INTO event_heads (tenant, last, hooks) SELECT ` + id + `, 1, 1` + from,
			`INSERT INTO events (tenant, seq, type, at, actor, subject_kind, subject_id, data)
				SELECT ` + id + `, 1, 'user.created', ` + strconv.FormatInt(at, 10) + `, 'key_bench', 'user', 'user_1', '{}'` + from,
		} {
			if _, err := t.exec(ctx, series+q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		// The endpoints, 500 a statement, with their secrets sealed as Create seals them.
		aead, err := s.keyAEAD()
		if err != nil {
			return err
		}
		const perStatement = 500
		for first := 1; first <= n; first += perStatement {
			var args []any
			rows := 0
			for i := first; i < first+perStatement && i <= n; i++ {
				tenant, hook := benchHookTenant(i), "webhook_"+strconv.Itoa(i)
				args = append(args, tenant, hook, "https://hooks.example.com/"+strconv.Itoa(i), "[]",
					seal(aead, []byte("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), secretAD(tenant, hook)), at, "0000000000000001", 0, nil, nil, false, "")
				rows++
			}
			values := strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), ", rows)
			if _, err := t.exec(ctx, `INSERT INTO webhooks (`+webhookColumns+`) VALUES `+values[:len(values)-2], args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	analyze := "ANALYZE"
	if d == postgresDialect {
		// VACUUM too, so that autovacuum has nothing left to do with the new rows while the
		// passes are timed.
		analyze = "VACUUM ANALYZE tenants, event_heads, events, webhooks"
	}
	if _, err := s.db.ExecContext(ctx, analyze); err != nil {
		b.Fatal(err)
	}
	if d == sqliteDialect {
		// The build's pages go from the WAL to the database file, as they would before long:
		// a reader of a fresh WAL of 100,000 tenants' rows pays for looking through it.
		if _, err := s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("built %d tenants with an endpoint each (%v) in %v", n, Dialect(d), time.Since(start).Round(time.Millisecond))
	if due, err := s.Webhooks().Due(ctx, time.Now(), 1); err != nil || len(due) > 0 {
		b.Fatalf("Due: %d due, %v", len(due), err)
	}
	return s
}

// benchHookTenant is the id of the i-th tenant of benchWebhookStore (from 1).
func benchHookTenant(i int) string { return fmt.Sprintf("t%07d", i) }
