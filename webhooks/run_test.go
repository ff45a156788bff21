package webhooks_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/webhooks"
)

// backends runs test on memstore, SQLite and PostgreSQL (without VISID_TEST_POSTGRES_DSN it
// skips), in parallel.
func backends(t *testing.T, test func(t *testing.T, b store.Backend)) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) store.Backend
	}{
		{"memstore", func(t *testing.T) store.Backend { return memstore.New().Backend() }},
		{"SQLite", func(t *testing.T) store.Backend { return openSQL(t, "sqlite:"+filepath.Join(t.TempDir(), "visid.db")) }},
		{"PostgreSQL", func(t *testing.T) store.Backend { return openSQL(t, postgresSchema(t)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			test(t, tc.open(t))
		})
	}
}

// hook creates tenant and an endpoint of it that posts to rc, a receiver served over HTTP
// (or to url, when it is not ""). It returns rc.
func hook(t *testing.T, b store.Backend, tenant string, rc *receiver, url string) *receiver {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: tenant}))
	rc.t, rc.clock = t, time.Now
	if url == "" {
		srv := httptest.NewServer(rc)
		t.Cleanup(srv.Close)
		url = srv.URL
	}
	secret, _, err := webhooks.AddEndpoint(ctx, b.Webhooks, webhooks.EndpointSpec{Tenant: tenant, URL: url + "/hook",
		AllowLoopbackHTTP: true, AllowPrivateTargets: true})
	require.NoError(t, err)
	rc.secret = secret
	return rc
}

// write records n events in tenant's log (users created) and returns their webhook-ids.
func write(t *testing.T, b store.Backend, tenant string, n int) []string {
	t.Helper()
	ctx := store.WithChange(context.Background(), store.Change{Actor: "key_1"})
	var out []string
	for range n {
		u, err := b.Users.Create(ctx, tenant, store.User{UserName: fmt.Sprintf("u%d", time.Now().UnixNano()), Active: true})
		require.NoError(t, err)
		last, err := b.Events.List(context.Background(), tenant, "", 10000)
		require.NoError(t, err)
		e := last[len(last)-1]
		require.Equal(t, u.ID, e.SubjectID)
		out = append(out, webhooks.MessageID(e))
	}
	return out
}

// run starts d.Run with interval until t ends.
func run(t *testing.T, d *webhooks.Deliverer, interval time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, interval) }()
	t.Cleanup(func() {
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
	})
}

// deliverer returns a Deliverer of b for the tests' receivers.
func deliverer(t *testing.T, b store.Backend, cfg webhooks.Config) *webhooks.Deliverer {
	t.Helper()
	cfg.Events, cfg.Webhooks, cfg.AllowPrivateTargets, cfg.Logger = b.Events, b.Webhooks, true, quiet
	d, err := webhooks.NewDeliverer(cfg)
	require.NoError(t, err)
	return d
}

// waitFor waits until rc has accepted the webhook-ids want, in that order after what it had,
// for at most within, and fails the test otherwise.
func waitFor(t *testing.T, rc *receiver, want []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := rc.accepted()
		if len(got) >= len(want) && equalTail(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v the receiver has %v, want %v last", within, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func equalTail(got, want []string) bool {
	tail := got[len(got)-len(want):]
	for i := range want {
		if tail[i] != want[i] {
			return false
		}
	}
	return true
}

// TestRunSlowReceiverDelaysNoOther: a receiver of one tenant that answers after 3 s (inside
// the timeout) does not hold up another tenant's events: each reaches its receiver within a
// second while the slow one is being sent to; and the slow one still gets its events, in
// order.
func TestRunSlowReceiverDelaysNoOther(t *testing.T) {
	backends(t, func(t *testing.T, b store.Backend) {
		slow := hook(t, b, "slowco", &receiver{delay: 3 * time.Second}, "")
		fast := hook(t, b, "fastco", &receiver{}, "")
		run(t, deliverer(t, b, webhooks.Config{}), 100*time.Millisecond)

		slowIDs := write(t, b, "slowco", 2)
		time.Sleep(300 * time.Millisecond) // the first request to slowco is under way
		var fastIDs []string
		for range 3 {
			fastIDs = append(fastIDs, write(t, b, "fastco", 1)...)
			waitFor(t, fast, fastIDs, time.Second)
			time.Sleep(500 * time.Millisecond)
		}
		waitFor(t, slow, slowIDs, 10*time.Second)
	})
}

// TestRunFailingReceiversDelayNoOther: endpoints that answer 500, that nobody listens on, or
// that time out, do not hold up another tenant's events.
func TestRunFailingReceiversDelayNoOther(t *testing.T) {
	backends(t, func(t *testing.T, b store.Backend) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		closed := "http://" + l.Addr().String()
		require.NoError(t, l.Close())
		hook(t, b, "errco", &receiver{status: http.StatusInternalServerError}, "")
		hook(t, b, "goneco", &receiver{}, closed)
		hook(t, b, "hangco", &receiver{delay: time.Hour}, "")
		fast := hook(t, b, "fastco", &receiver{}, "")
		run(t, deliverer(t, b, webhooks.Config{}), 100*time.Millisecond)

		var fastIDs []string
		for range 4 {
			for _, tenant := range []string{"errco", "goneco", "hangco"} {
				write(t, b, tenant, 1)
			}
			fastIDs = append(fastIDs, write(t, b, "fastco", 1)...)
			waitFor(t, fast, fastIDs, time.Second)
			time.Sleep(300 * time.Millisecond)
		}
	})
}

// TestRunDeliversANewEventWithinASecond: with the interval examples/idp uses (1 s), an event
// reaches its receiver within about a second, without a pass over anything else.
func TestRunDeliversANewEventWithinASecond(t *testing.T) {
	backends(t, func(t *testing.T, b store.Backend) {
		rc := hook(t, b, "acme", &receiver{}, "")
		for i := range 20 { // tenants with endpoints that have nothing to deliver
			hook(t, b, fmt.Sprintf("idle%d", i), &receiver{}, "")
		}
		run(t, deliverer(t, b, webhooks.Config{}), time.Second)
		var ids []string
		for range 3 {
			ids = append(ids, write(t, b, "acme", 1)...)
			waitFor(t, rc, ids, 1500*time.Millisecond)
			time.Sleep(300 * time.Millisecond)
		}
	})
}

// TestRunTurnsYield: with one worker, an endpoint with many slow events yields after its
// turn, so that another endpoint's event goes next; both get every event, in order.
func TestRunTurnsYield(t *testing.T) {
	backends(t, func(t *testing.T, b store.Backend) {
		busy := hook(t, b, "busyco", &receiver{delay: 300 * time.Millisecond}, "")
		other := hook(t, b, "otherco", &receiver{}, "")
		run(t, deliverer(t, b, webhooks.Config{Workers: 1, Turn: 100 * time.Millisecond}), 50*time.Millisecond)
		busyIDs := write(t, b, "busyco", 8) // 2.4 s of answers
		time.Sleep(100 * time.Millisecond)
		otherIDs := write(t, b, "otherco", 1)
		waitFor(t, other, otherIDs, time.Second)
		assert.Less(t, len(busy.accepted()), len(busyIDs), "the other endpoint went before busyco was done")
		waitFor(t, busy, busyIDs, 5*time.Second)
	})
}

// TestRunKeepsOrderPerEndpoint: many endpoints of many tenants, written to concurrently,
// small batches and short turns: each receiver gets its tenant's events once each, in the
// log's order.
func TestRunKeepsOrderPerEndpoint(t *testing.T) {
	backends(t, func(t *testing.T, b store.Backend) {
		const tenants, events = 6, 15
		rcs := make([]*receiver, tenants)
		for i := range rcs {
			rcs[i] = hook(t, b, fmt.Sprintf("t%d", i), &receiver{delay: time.Millisecond}, "")
		}
		run(t, deliverer(t, b, webhooks.Config{Workers: 3, Batch: 4, Turn: 5 * time.Millisecond}), 20*time.Millisecond)
		var wg sync.WaitGroup
		change := store.WithChange(context.Background(), store.Change{Actor: "key_1"})
		for i := range tenants {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range events {
					if _, err := b.Users.Create(change, fmt.Sprintf("t%d", i), store.User{UserName: fmt.Sprintf("u%d", j), Active: true}); err != nil {
						t.Errorf("Users.Create: %v", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		for i, rc := range rcs {
			log, err := b.Events.List(context.Background(), fmt.Sprintf("t%d", i), "", 1000)
			require.NoError(t, err)
			require.Len(t, log, events)
			want := ids(log)
			waitFor(t, rc, want, 20*time.Second)
			assert.Equal(t, want, rc.accepted(), "tenant t%d: each event once, in order", i)
		}
	})
}

// TestRunInstancesDeliverOnce is TestInstancesDeliverOnce with Run: two instances, each with
// its own workers and its own connections to one store, deliver every event once and in order
// while the events are written.
func TestRunInstancesDeliverOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) (store.Backend, store.Backend)
	}{
		{"memstore", func(t *testing.T) (store.Backend, store.Backend) {
			b := memstore.New().Backend()
			return b, b
		}},
		{"SQLite", func(t *testing.T) (store.Backend, store.Backend) {
			dsn := "sqlite:" + filepath.Join(t.TempDir(), "visid.db")
			return openSQL(t, dsn), openSQL(t, dsn)
		}},
		{"PostgreSQL", func(t *testing.T) (store.Backend, store.Backend) {
			dsn := postgresSchema(t)
			return openSQL(t, dsn), openSQL(t, dsn)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b := tc.open(t)
			rc := hook(t, a, "acme", &receiver{}, "")
			for i, be := range []store.Backend{a, b} {
				run(t, deliverer(t, be, webhooks.Config{Holder: fmt.Sprintf("instance-%d", i), Batch: 3, Turn: time.Millisecond}), 10*time.Millisecond)
			}
			var ids []string
			for i := range 40 {
				ids = append(ids, write(t, []store.Backend{a, b}[i%2], "acme", 1)...)
			}
			waitFor(t, rc, ids, 20*time.Second)
			assert.Equal(t, ids, rc.accepted(), "every event once, in order")
		})
	}
}

// TestNewDelivererConfig: Events and Webhooks are required, Tenants is not; negative
// settings are refused.
func TestNewDelivererConfig(t *testing.T) {
	b := memstore.New().Backend()
	tests := []struct {
		name string
		cfg  webhooks.Config
		ok   bool
	}{
		{"without Tenants", webhooks.Config{Events: b.Events, Webhooks: b.Webhooks}, true},
		{"with Tenants, as hosts set it before", webhooks.Config{Events: b.Events, Webhooks: b.Webhooks, Tenants: b.Tenants}, true},
		{"without Events", webhooks.Config{Webhooks: b.Webhooks}, false},
		{"without Webhooks", webhooks.Config{Events: b.Events}, false},
		{"negative Workers", webhooks.Config{Events: b.Events, Webhooks: b.Webhooks, Workers: -1}, false},
		{"negative Turn", webhooks.Config{Events: b.Events, Webhooks: b.Webhooks, Turn: -time.Second}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := webhooks.NewDeliverer(tc.cfg)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

// TestRunWakesUpOnMemstore: the memory store tells Run when an event wakes an endpoint, so
// the event goes out at once, not at the next interval (an hour here).
func TestRunWakesUpOnMemstore(t *testing.T) {
	b := memstore.New().Backend()
	rc := hook(t, b, "acme", &receiver{}, "")
	run(t, deliverer(t, b, webhooks.Config{}), time.Hour)
	time.Sleep(50 * time.Millisecond) // Run's first look, with nothing due
	var ids []string
	for range 3 {
		ids = append(ids, write(t, b, "acme", 1)...)
		waitFor(t, rc, ids, time.Second)
	}
}
