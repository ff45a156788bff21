package webhooks_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/testclock"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/sqlstore"
	"github.com/visid/visid/webhooks"
)

// clock is the tests' fake clock.
type clock = testclock.Clock

// receiver is a webhook endpoint: it checks each request's signature against the secret and
// the clock, and keeps the accepted ones.
type receiver struct {
	t      *testing.T
	secret string
	clock  func() time.Time

	mu       sync.Mutex
	status   int           // the answer; 0: 204
	delay    time.Duration // before answering
	requests int
	ids      []string // webhook-id of each accepted request, in order
	bodies   []map[string]any
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.requests++
	status, delay, secret := rc.status, rc.delay, rc.secret
	rc.mu.Unlock()
	select {
	case <-time.After(delay):
	case <-r.Context().Done(): // the deliverer gave up, or the server closes
		return
	}
	if err := webhooks.Verify(secret, r.Header, body, rc.clock()); err != nil {
		rc.t.Errorf("a request with a bad signature: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if status != 0 {
		if status == http.StatusFound {
			w.Header().Set("Location", "/elsewhere")
		}
		w.WriteHeader(status)
		return
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		rc.t.Errorf("a body that is not JSON: %s", body)
	}
	rc.mu.Lock()
	rc.ids = append(rc.ids, r.Header.Get("webhook-id"))
	rc.bodies = append(rc.bodies, m)
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) set(status int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status = status
}

func (rc *receiver) accepted() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]string(nil), rc.ids...)
}

// stack is a store with tenant acme, an endpoint of a receiver's, and a deliverer.
type stack struct {
	b     store.Backend
	clock *clock
	rc    *receiver
	srv   *httptest.Server
	e     *store.WebhookEndpoint
	d     *webhooks.Deliverer
}

func newStack(t *testing.T, b store.Backend, types ...store.EventType) *stack {
	t.Helper()
	ctx := context.Background()
	s := &stack{b: b, clock: testclock.At(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))}
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	s.rc = &receiver{t: t, clock: s.clock.Now}
	s.srv = httptest.NewServer(s.rc)
	t.Cleanup(s.srv.Close)
	secret, e, err := webhooks.AddEndpoint(ctx, b.Webhooks, webhooks.EndpointSpec{Tenant: "acme", URL: s.srv.URL + "/hook",
		Types: types, AllowLoopbackHTTP: true, AllowPrivateTargets: true, Now: s.clock.Now()})
	require.NoError(t, err)
	s.rc.secret, s.e = secret, e
	s.d, err = webhooks.NewDeliverer(webhooks.Config{AllowPrivateTargets: true, Events: b.Events, Webhooks: b.Webhooks, Tenants: b.Tenants,
		Now: s.clock.Now, Holder: "test", Logger: quiet})
	require.NoError(t, err)
	return s
}

// users creates n users through a Change, and returns the events recorded.
func (s *stack) users(t *testing.T, prefix string, n int) []store.Event {
	t.Helper()
	ctx := store.WithChange(context.Background(), store.Change{Actor: "key_1", Time: s.clock.Now()})
	before, err := s.b.Events.List(context.Background(), "acme", "", 10000)
	require.NoError(t, err)
	for i := range n {
		_, err := s.b.Users.Create(ctx, "acme", store.User{UserName: fmt.Sprintf("%s%d", prefix, i), Active: true})
		require.NoError(t, err)
	}
	all, err := s.b.Events.List(context.Background(), "acme", "", 10000)
	require.NoError(t, err)
	return all[len(before):]
}

func ids(events []store.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = webhooks.MessageID(e)
	}
	return out
}

// untilDelivered runs passes, advancing the clock past any wait, until the receiver has n
// requests accepted, at most rounds passes.
func (s *stack) untilDelivered(t *testing.T, n, rounds int) {
	t.Helper()
	for range rounds {
		if len(s.rc.accepted()) >= n {
			return
		}
		_, err := s.d.RunOnce(context.Background())
		require.NoError(t, err)
		s.clock.Advance(2 * time.Hour)
	}
	require.Len(t, s.rc.accepted(), n)
}

func (s *stack) delivery(t *testing.T) store.WebhookDelivery {
	t.Helper()
	e, err := s.b.Webhooks.Get(context.Background(), "acme", s.e.ID)
	require.NoError(t, err)
	return e.Delivery
}

func TestDeliveryRetriesAndKeepsOrder(t *testing.T) {
	s := newStack(t, memstore.New().Backend())
	events := s.users(t, "u", 5)
	s.rc.set(http.StatusInternalServerError)
	for range 3 {
		n, err := s.d.RunOnce(context.Background())
		require.NoError(t, err)
		assert.Zero(t, n)
		s.clock.Advance(2 * time.Hour)
	}
	d := s.delivery(t)
	assert.Equal(t, 3, d.Attempts)
	assert.Equal(t, "status 500", d.LastError)
	assert.False(t, d.Failing)
	assert.Empty(t, s.rc.accepted())

	s.rc.set(0)
	s.untilDelivered(t, 5, 5)
	assert.Equal(t, ids(events), s.rc.accepted(), "each event once, in the log's order")
	body := s.rc.bodies[0]
	assert.Equal(t, "user.created", body["type"])
	assert.Equal(t, "acme", body["tenant"])
	assert.Equal(t, "key_1", body["actor"])
	assert.Equal(t, map[string]any{"kind": "user", "id": events[0].SubjectID}, body["subject"])
	assert.Equal(t, "u0", body["data"].(map[string]any)["UserName"])
	assert.Equal(t, store.WebhookDelivery{Cursor: events[4].Cursor}, s.delivery(t), "the failures are forgotten")
}

func TestDeliveryWaitsBetweenAttempts(t *testing.T) {
	s := newStack(t, memstore.New().Backend())
	s.users(t, "u", 1)
	s.rc.set(http.StatusServiceUnavailable)
	_, err := s.d.RunOnce(context.Background())
	require.NoError(t, err)
	d := s.delivery(t)
	wait := d.NextAttempt.Sub(s.clock.Now())
	assert.True(t, wait >= webhooks.FirstRetry/2 && wait <= webhooks.FirstRetry, "first wait %v", wait)
	_, err = s.d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, s.rc.requests, "no attempt before NextAttempt")

	for range 12 {
		s.clock.Advance(2 * time.Hour)
		_, err = s.d.RunOnce(context.Background())
		require.NoError(t, err)
	}
	d = s.delivery(t)
	wait = d.NextAttempt.Sub(s.clock.Now())
	assert.True(t, wait >= webhooks.MaxRetryWait/2 && wait <= webhooks.MaxRetryWait, "waits stop growing at an hour: %v", wait)
}

func TestDeliveryToAStoppedReceiver(t *testing.T) {
	b := memstore.New().Backend()
	s := newStack(t, b)
	// The receiver of this test listens on an address of its own, which it leaves and takes
	// again.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	serve := func(l net.Listener) *http.Server {
		srv := &http.Server{Handler: s.rc}
		go srv.Serve(l)
		return srv
	}
	srv := serve(l)
	secret, e, err := webhooks.AddEndpoint(context.Background(), b.Webhooks, webhooks.EndpointSpec{Tenant: "acme",
		URL: "http://" + addr + "/hook", AllowLoopbackHTTP: true, AllowPrivateTargets: true})
	require.NoError(t, err)
	require.NoError(t, b.Webhooks.Delete(context.Background(), "acme", s.e.ID))
	s.e, s.rc.secret = e, secret

	first := s.users(t, "a", 3)
	s.untilDelivered(t, 3, 3)
	require.NoError(t, srv.Close()) // the receiver stops

	second := s.users(t, "b", 3)
	for range 3 {
		_, err := s.d.RunOnce(context.Background())
		require.NoError(t, err)
		s.clock.Advance(2 * time.Hour)
	}
	d := s.delivery(t)
	assert.Equal(t, "no answer (connection failed)", d.LastError)
	assert.Equal(t, first[2].Cursor, d.Cursor)

	l, err = net.Listen("tcp", addr) // and comes back
	require.NoError(t, err)
	srv = serve(l)
	t.Cleanup(func() { srv.Close() })
	s.untilDelivered(t, 6, 5)
	assert.Equal(t, append(ids(first), ids(second)...), s.rc.accepted())
}

func TestDeliveryGivesUpThenResumes(t *testing.T) {
	s := newStack(t, memstore.New().Backend())
	events := s.users(t, "u", 2)
	s.rc.set(http.StatusBadGateway)
	for i := 0; i < 60 && !s.delivery(t).Failing; i++ {
		_, err := s.d.RunOnce(context.Background())
		require.NoError(t, err)
		s.clock.Advance(2 * time.Hour)
	}
	d := s.delivery(t)
	require.True(t, d.Failing, "marked failing once an event failed for 72 hours")
	assert.Equal(t, "status 502", d.LastError)
	assert.Empty(t, d.Cursor, "the first event is still to be delivered")

	log, err := s.b.Events.List(context.Background(), "acme", events[1].Cursor, 10)
	require.NoError(t, err)
	require.Len(t, log, 1)
	assert.Equal(t, store.EventWebhookFailing, log[0].Type)
	assert.Equal(t, webhooks.Actor, log[0].Actor)
	assert.Equal(t, s.e.ID, log[0].SubjectID)

	requests := s.rc.requests
	s.clock.Advance(24 * time.Hour)
	_, err = s.d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, requests, s.rc.requests, "a failing endpoint gets nothing")

	s.rc.set(0)
	require.NoError(t, s.b.Webhooks.Resume(context.Background(), "acme", s.e.ID))
	s.untilDelivered(t, 3, 3)
	assert.Equal(t, append(ids(events), ids(log)...), s.rc.accepted(), "from the event it stopped at, webhook.failing included")
}

func TestDeliverySendsOnlyTheTypesAsked(t *testing.T) {
	s := newStack(t, memstore.New().Backend(), store.EventUserDeactivated)
	created := s.users(t, "u", 2)
	ctx := store.WithChange(context.Background(), store.Change{Actor: "key_1"})
	_, err := s.b.Users.Update(ctx, "acme", created[1].SubjectID, func(u *store.User) error { u.Active = false; return nil })
	require.NoError(t, err)
	s.untilDelivered(t, 1, 3)
	assert.Equal(t, "user.deactivated", s.rc.bodies[0]["type"])
	all, err := s.b.Events.List(context.Background(), "acme", "", 10)
	require.NoError(t, err)
	assert.Equal(t, all[2].Cursor, s.delivery(t).Cursor)
}

func TestDeliveryFailures(t *testing.T) {
	tests := []struct {
		name  string
		setup func(s *stack)
		want  string
	}{
		{"a redirect is not followed", func(s *stack) { s.rc.set(http.StatusFound) }, "status 302"},
		{"a client error", func(s *stack) { s.rc.set(http.StatusBadRequest) }, "status 400"},
		{"no answer in time", func(s *stack) {
			s.rc.mu.Lock()
			s.rc.delay = 300 * time.Millisecond
			s.rc.mu.Unlock()
			var err error
			s.d, err = webhooks.NewDeliverer(webhooks.Config{AllowPrivateTargets: true, Events: s.b.Events, Webhooks: s.b.Webhooks, Tenants: s.b.Tenants,
				Now: s.clock.Now, Client: &http.Client{Timeout: 50 * time.Millisecond}, Logger: quiet})
			if err != nil {
				panic(err)
			}
		}, "timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStack(t, memstore.New().Backend())
			s.users(t, "u", 1)
			tc.setup(s)
			_, err := s.d.RunOnce(context.Background())
			require.NoError(t, err)
			d := s.delivery(t)
			assert.Equal(t, tc.want, d.LastError)
			assert.Equal(t, 1, d.Attempts)
			assert.Empty(t, s.rc.accepted())
		})
	}
}

func TestAddEndpointChecks(t *testing.T) {
	b := memstore.New().Backend()
	require.NoError(t, b.Tenants.Create(context.Background(), store.Tenant{ID: "acme"}))
	tests := []struct {
		name string
		spec webhooks.EndpointSpec
		want error
	}{
		{"https", webhooks.EndpointSpec{URL: "https://hooks.example.com/visid"}, nil},
		{"loopback http allowed", webhooks.EndpointSpec{URL: "http://127.0.0.1:9000/h", AllowLoopbackHTTP: true, AllowPrivateTargets: true}, nil},
		{"localhost http allowed", webhooks.EndpointSpec{URL: "http://localhost:9000/h", AllowLoopbackHTTP: true, AllowPrivateTargets: true}, nil},
		{"loopback http not allowed", webhooks.EndpointSpec{URL: "http://127.0.0.1:9000/h"}, store.ErrInvalid},
		{"http elsewhere", webhooks.EndpointSpec{URL: "http://hooks.example.com/h", AllowLoopbackHTTP: true, AllowPrivateTargets: true}, store.ErrInvalid},
		{"relative", webhooks.EndpointSpec{URL: "/hook"}, store.ErrInvalid},
		{"user info", webhooks.EndpointSpec{URL: "https://me:pw@hooks.example.com/"}, store.ErrInvalid},
		{"fragment", webhooks.EndpointSpec{URL: "https://hooks.example.com/#x"}, store.ErrInvalid},
		{"ftp", webhooks.EndpointSpec{URL: "ftp://hooks.example.com/"}, store.ErrInvalid},
		{"unknown type", webhooks.EndpointSpec{URL: "https://hooks.example.com/", Types: []store.EventType{"user.exploded"}}, store.ErrInvalid},
		{"known types", webhooks.EndpointSpec{URL: "https://hooks.example.com/", Types: []store.EventType{"user.deleted", "group.member_added"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Tenant = "acme"
			secret, e, err := webhooks.AddEndpoint(context.Background(), b.Webhooks, tc.spec)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
				return
			}
			require.NoError(t, err)
			require.NoError(t, webhooks.CheckSecret(secret))
			got, err := b.Webhooks.Get(context.Background(), "acme", e.ID)
			require.NoError(t, err)
			assert.Equal(t, tc.spec.URL, got.URL)
			assert.Equal(t, secret, got.Secret)
		})
	}
	_, _, err := webhooks.AddEndpoint(context.Background(), b.Webhooks, webhooks.EndpointSpec{Tenant: "nosuch", URL: "https://hooks.example.com/"})
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// TestInstancesDeliverOnce: two deliverers (two instances) with their own connections to one
// store deliver to one receiver while events are written; the receiver gets every event once,
// in order. On memstore, and on PostgreSQL.
func TestInstancesDeliverOnce(t *testing.T) {
	t.Run("memstore", func(t *testing.T) {
		b := memstore.New().Backend()
		instancesDeliverOnce(t, b, b)
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		dsn := postgresSchema(t)
		a, b := openSQL(t, dsn), openSQL(t, dsn)
		instancesDeliverOnce(t, a, b)
	})
}

func instancesDeliverOnce(t *testing.T, a, b store.Backend) {
	ctx := context.Background()
	require.NoError(t, a.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	rc := &receiver{t: t, clock: time.Now}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	secret, _, err := webhooks.AddEndpoint(ctx, a.Webhooks, webhooks.EndpointSpec{Tenant: "acme", URL: srv.URL, AllowLoopbackHTTP: true, AllowPrivateTargets: true})
	require.NoError(t, err)
	rc.secret = secret

	const writes = 60
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i, be := range []store.Backend{a, b} {
		d, err := webhooks.NewDeliverer(webhooks.Config{AllowPrivateTargets: true, Events: be.Events, Webhooks: be.Webhooks, Tenants: be.Tenants,
			Holder: fmt.Sprintf("instance-%d", i), Batch: 7, Logger: quiet})
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := d.RunOnce(ctx); err != nil {
					t.Errorf("RunOnce: %v", err)
					return
				}
			}
		}()
	}
	change := store.WithChange(ctx, store.Change{Actor: "key_1"})
	for i := range writes {
		_, err := b.Users.Create(change, "acme", store.User{UserName: fmt.Sprintf("u%d", i), Active: true})
		require.NoError(t, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(rc.accepted()) < writes && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	all, err := a.Events.List(ctx, "acme", "", 1000)
	require.NoError(t, err)
	require.Len(t, all, writes)
	assert.Equal(t, ids(all), rc.accepted(), "every event once, in order")
}

// postgresSchema returns a DSN of a schema of its own for t on the test database, dropped
// when t ends. Without VISID_TEST_POSTGRES_DSN the test skips, or fails when
// VISID_REQUIRE_SERVICES=1.
func postgresSchema(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("VISID_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
			t.Fatal("VISID_TEST_POSTGRES_DSN is not set and VISID_REQUIRE_SERVICES=1")
		}
		t.Skip("VISID_TEST_POSTGRES_DSN is not set")
	}
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := fmt.Sprintf("t_%x", b)
	_, err = admin.Exec("CREATE SCHEMA " + schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			t.Errorf("DROP SCHEMA %s: %v", schema, err)
		}
	})
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// openSQL opens and migrates a store on dsn, as an instance of its own.
func openSQL(t *testing.T, dsn string) store.Backend {
	t.Helper()
	kek := make([]byte, 32)
	s, err := sqlstore.Config{KeyEncryptionKey: kek}.Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Migrate(context.Background()))
	return s.Backend()
}

// quiet drops the deliverers' logs of the failures the tests cause.
var quiet = slog.New(slog.DiscardHandler)

// TestDeliveryAfterAnInstanceDied: an instance that died holding an endpoint's lease keeps it
// from the others until the lease runs out; then delivery goes on. A pass that ends lets the
// endpoint go at once.
func TestDeliveryAfterAnInstanceDied(t *testing.T) {
	s := newStack(t, memstore.New().Backend())
	events := s.users(t, "u", 2)
	now := s.clock.Now()
	require.NoError(t, s.b.Webhooks.Lease(context.Background(), "acme", s.e.ID, "dead", now, now.Add(webhooks.DefaultLease)))
	n, err := s.d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n, "the dead instance's lease holds")
	s.clock.Advance(webhooks.DefaultLease)
	n, err = s.d.RunOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, ids(events), s.rc.accepted())
	require.NoError(t, s.b.Webhooks.Lease(context.Background(), "acme", s.e.ID, "another", s.clock.Now(), s.clock.Now().Add(time.Minute)),
		"the pass let the endpoint go")
}
