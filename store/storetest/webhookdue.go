package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func webhookDueTests() []test {
	return []test{
		{"CaughtUpIsNotDue", testDueCaughtUp},
		{"AnEventMakesDue", testDueAfterEvent},
		{"AcrossTenants", testDueAcrossTenants},
		{"NotFailing", testDueNotFailing},
		{"NextAttempt", testDueNextAttempt},
		{"NotLeased", testDueNotLeased},
		{"OldestFirst", testDueOldestFirst},
		{"WokenSinceTheEvent", testDueWokenSinceTheEvent},
		{"Limit", testDueLimit},
		{"Create", testDueCreate},
		{"Resume", testDueResume},
		{"DeleteAndTenantDelete", testDueDeleted},
		{"WakeUps", testDueWakeUps},
		{"RemovedEvents", testDueRemovedEvents},
		{"ConcurrentSaveAndAppendLoseNoWakeUp", testDueConcurrentSaveAppend},
		{"ConcurrentCreateAndAppendLoseNoWakeUp", testDueConcurrentCreateAppend},
		{"ConcurrentResumeAndAppendLoseNoWakeUp", testDueConcurrentResumeAppend},
	}
}

// dueNow is the now the Due tests pass, long before the stores' clocks.
var dueNow = day(3, 2, 0)

// dueIDs returns the ids of the endpoints Due returns at now.
func dueIDs(t *testing.T, b store.Backend, now time.Time) []string {
	t.Helper()
	list, err := b.Webhooks.Due(ctx(), now, 1000)
	require.NoError(t, err)
	out := []string{}
	for _, e := range list {
		out = append(out, e.ID)
	}
	return out
}

// appendEvent appends a second-factor event to tenant's log.
func appendEvent(t testing.TB, b store.Backend, tenant string) {
	require.NoError(t, b.Events.Append(ctx(), tenant, store.Event{Type: store.EventSecondFactorSucceeded,
		Actor: "client_a", SubjectKind: store.SubjectUser, SubjectID: "user_a"}))
}

// lastCursor returns the cursor of tenant's last event, "" for none.
func lastCursor(t *testing.T, b store.Backend, tenant string) string {
	t.Helper()
	events := allEvents(t, b, tenant)
	if len(events) == 0 {
		return ""
	}
	return events[len(events)-1].Cursor
}

// saveAt stores d for endpoint e of tenant under a lease of holder "d" at now.
func saveAt(t *testing.T, b store.Backend, e *store.WebhookEndpoint, now time.Time, d store.WebhookDelivery) {
	t.Helper()
	require.NoError(t, b.Webhooks.Lease(ctx(), e.Tenant, e.ID, "d", now, now.Add(time.Minute)))
	require.NoError(t, b.Webhooks.SaveDelivery(ctx(), e.Tenant, e.ID, "d", now, d))
	require.NoError(t, b.Webhooks.Lease(ctx(), e.Tenant, e.ID, "d", now, now)) // let it go
}

// An endpoint with no event after its cursor is not due; one caught up by SaveDelivery is
// not due any more.
func testDueCaughtUp(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	none, err := b.Webhooks.Due(ctx(), dueNow, 10)
	require.NoError(t, err)
	assert.NotNil(t, none, "an empty slice")
	assert.Empty(t, none, "no endpoint")
	appendEvent(t, b, acme)
	e := mustWebhook(t, b, acme)
	assert.Empty(t, dueIDs(t, b, dueNow), "created after the last event")
	appendEvent(t, b, acme)
	assert.Equal(t, []string{e.ID}, dueIDs(t, b, dueNow))
	saveAt(t, b, e, dueNow, store.WebhookDelivery{Cursor: lastCursor(t, b, acme)})
	assert.Empty(t, dueIDs(t, b, dueNow), "caught up")
}

// An event recorded with a change (the user's creation) or appended makes every endpoint of
// its tenant due; a delivery that leaves events after its cursor keeps it due.
func testDueAfterEvent(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e1, e2 := mustWebhook(t, b, acme), mustWebhook(t, b, acme)
	_, err := b.Users.Create(changeBy("key_a"), acme, store.User{UserName: "ann", Active: true})
	require.NoError(t, err)
	assert.Equal(t, []string{e1.ID, e2.ID}, dueIDs(t, b, dueNow), "a change's event, in creation order")
	first := lastCursor(t, b, acme)
	appendEvent(t, b, acme)
	saveAt(t, b, e1, dueNow, store.WebhookDelivery{Cursor: first})
	assert.ElementsMatch(t, []string{e1.ID, e2.ID}, dueIDs(t, b, dueNow), "one event left for e1")
	saveAt(t, b, e1, dueNow, store.WebhookDelivery{Cursor: lastCursor(t, b, acme)})
	assert.Equal(t, []string{e2.ID}, dueIDs(t, b, dueNow))
}

// Due looks across tenants, and an event of one tenant wakes none of another's.
func testDueAcrossTenants(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	a, g := mustWebhook(t, b, acme), mustWebhook(t, b, globex)
	appendEvent(t, b, globex)
	assert.Equal(t, []string{g.ID}, dueIDs(t, b, dueNow))
	appendEvent(t, b, acme)
	got, err := b.Webhooks.Due(ctx(), dueNow.Add(time.Minute), 10) // acme's is due from this now, globex's from the first

	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, g.ID, got[0].ID)
	assert.Equal(t, globex, got[0].Tenant)
	assert.Equal(t, a.ID, got[1].ID)
	assert.Equal(t, acme, got[1].Tenant)
	assert.Equal(t, testWebhookSecret, got[1].Secret, "the endpoint as Get returns it")
	assert.Equal(t, a.URL, got[1].URL)
}

// A failing endpoint is not due, whatever its log holds.
func testDueNotFailing(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e := mustWebhook(t, b, acme)
	appendEvent(t, b, acme)
	saveAt(t, b, e, dueNow, store.WebhookDelivery{Attempts: 30, FirstFailure: dueNow, Failing: true, LastError: "timeout"})
	assert.Empty(t, dueIDs(t, b, dueNow))
	appendEvent(t, b, acme)
	assert.Empty(t, dueIDs(t, b, dueNow.Add(time.Hour)), "a new event does not wake a failing endpoint")
}

// An endpoint whose NextAttempt is after now is not due before it.
func testDueNextAttempt(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e := mustWebhook(t, b, acme)
	appendEvent(t, b, acme)
	next := dueNow.Add(5 * time.Second)
	saveAt(t, b, e, dueNow, store.WebhookDelivery{Attempts: 1, FirstFailure: dueNow, NextAttempt: next, LastError: "status 500"})
	assert.Empty(t, dueIDs(t, b, dueNow))
	appendEvent(t, b, acme)
	assert.Empty(t, dueIDs(t, b, next.Add(-time.Nanosecond)), "a new event does not bring the attempt forward")
	assert.Equal(t, []string{e.ID}, dueIDs(t, b, next), "due at NextAttempt")
	assert.Equal(t, []string{e.ID}, dueIDs(t, b, next.Add(time.Hour)))
}

// An endpoint that a holder's lease runs past now is not due; once the lease ends, or is let
// go (a lease until now), it is.
func testDueNotLeased(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e := mustWebhook(t, b, acme)
	appendEvent(t, b, acme)
	require.NoError(t, b.Webhooks.Lease(ctx(), acme, e.ID, "a", dueNow, dueNow.Add(time.Minute)))
	assert.Empty(t, dueIDs(t, b, dueNow))
	assert.Empty(t, dueIDs(t, b, dueNow.Add(59*time.Second)))
	assert.Equal(t, []string{e.ID}, dueIDs(t, b, dueNow.Add(time.Minute)), "the lease has ended")
	require.NoError(t, b.Webhooks.Lease(ctx(), acme, e.ID, "a", dueNow, dueNow.Add(time.Minute)))
	require.NoError(t, b.Webhooks.Lease(ctx(), acme, e.ID, "a", dueNow, dueNow))
	assert.Equal(t, []string{e.ID}, dueIDs(t, b, dueNow), "let go")
}

// Oldest due first: an endpoint whose NextAttempt passed before now comes before those woken
// by events since (due from the first Due that saw them), which come in creation order; one
// whose turn ended with events left goes after those.
func testDueOldestFirst(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	retry := mustWebhook(t, b, globex)
	a1, a2 := mustWebhook(t, b, acme), mustWebhook(t, b, acme)
	appendEvent(t, b, globex)
	saveAt(t, b, retry, dueNow.Add(-2*time.Hour), store.WebhookDelivery{Attempts: 1, FirstFailure: dueNow.Add(-2 * time.Hour),
		NextAttempt: dueNow.Add(-time.Hour), LastError: "status 503"})
	appendEvent(t, b, acme)
	assert.Equal(t, []string{retry.ID, a1.ID, a2.ID}, dueIDs(t, b, dueNow))

	appendEvent(t, b, acme)
	first := allEvents(t, b, acme)[0].Cursor
	later := dueNow.Add(time.Minute)
	saveAt(t, b, a1, later, store.WebhookDelivery{Cursor: first}) // its turn ended with one event left
	assert.Equal(t, []string{retry.ID, a2.ID, a1.ID}, dueIDs(t, b, later))
	assert.Equal(t, []string{retry.ID, a2.ID}, dueIDs(t, b, later.Add(-time.Nanosecond)), "a1 is due from the now of its save")
}

// An endpoint woken by an event is due since the event was recorded (by the store's clock),
// not since the Due that finds it: it goes before an endpoint whose turn ended later.
func testDueWokenSinceTheEvent(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	g := mustWebhook(t, b, globex)
	a := mustWebhook(t, b, acme)
	appendEvent(t, b, globex)
	appendEvent(t, b, globex)
	later := time.Now().Add(time.Hour)
	saveAt(t, b, g, later, store.WebhookDelivery{Cursor: allEvents(t, b, globex)[0].Cursor}) // a turn that ends in an hour
	appendEvent(t, b, acme)                                                                  // now
	assert.Equal(t, []string{a.ID, g.ID}, dueIDs(t, b, later.Add(time.Minute)))
}

// At most limit, the oldest; ErrInvalid for a limit below 1.
func testDueLimit(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	var all []string
	for range 5 {
		all = append(all, mustWebhook(t, b, acme).ID)
	}
	appendEvent(t, b, acme)
	got, err := b.Webhooks.Due(ctx(), dueNow, 2)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, all[:2], []string{got[0].ID, got[1].ID})
	for _, limit := range []int{0, -1} {
		_, err := b.Webhooks.Due(ctx(), dueNow, limit)
		assert.ErrorIs(t, err, store.ErrInvalid, "limit %d", limit)
	}
}

// Create with a cursor that events follow makes the endpoint due (at its NextAttempt, if it
// has one); with the default cursor, or failing, it is not. Create and SaveDelivery refuse a
// cursor that is not one of the log's.
func testDueCreate(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	appendEvent(t, b, acme)
	appendEvent(t, b, acme)
	first := allEvents(t, b, acme)[0].Cursor
	create := func(d store.WebhookDelivery) (*store.WebhookEndpoint, error) {
		return b.Webhooks.Create(ctx(), store.WebhookEndpoint{Tenant: acme, URL: "https://hooks.example.com/x",
			Secret: testWebhookSecret, Delivery: d})
	}
	behind, err := create(store.WebhookDelivery{Cursor: first})
	require.NoError(t, err)
	fromStart, err := create(store.WebhookDelivery{})
	require.NoError(t, err)
	_, err = create(store.WebhookDelivery{Cursor: first, Failing: true})
	require.NoError(t, err)
	waiting, err := create(store.WebhookDelivery{Cursor: first, Attempts: 1, NextAttempt: dueNow.Add(time.Hour)})
	require.NoError(t, err)
	assert.NotEmpty(t, fromStart.Delivery.Cursor)
	assert.Equal(t, []string{behind.ID}, dueIDs(t, b, dueNow))
	assert.Equal(t, []string{behind.ID, waiting.ID}, dueIDs(t, b, dueNow.Add(time.Hour)))

	_, err = create(store.WebhookDelivery{Cursor: "not a cursor"})
	assert.ErrorIs(t, err, store.ErrInvalid)
	require.NoError(t, b.Webhooks.Lease(ctx(), acme, behind.ID, "d", dueNow, dueNow.Add(time.Minute)))
	err = b.Webhooks.SaveDelivery(ctx(), acme, behind.ID, "d", dueNow, store.WebhookDelivery{Cursor: "not a cursor"})
	assert.ErrorIs(t, err, store.ErrInvalid)
}

// Resume of an endpoint with events after its cursor makes it due at once; of one caught up,
// it does not.
func testDueResume(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e, idle := mustWebhook(t, b, acme), mustWebhook(t, b, acme)
	appendEvent(t, b, acme)
	last := lastCursor(t, b, acme)
	saveAt(t, b, e, dueNow, store.WebhookDelivery{Attempts: 30, FirstFailure: dueNow, Failing: true, LastError: "status 502"})
	saveAt(t, b, idle, dueNow, store.WebhookDelivery{Cursor: last, Attempts: 30, FirstFailure: dueNow, Failing: true, LastError: "status 502"})
	assert.Empty(t, dueIDs(t, b, dueNow))
	require.NoError(t, b.Webhooks.Resume(ctx(), acme, e.ID))
	require.NoError(t, b.Webhooks.Resume(ctx(), acme, idle.ID))
	assert.Equal(t, []string{e.ID}, dueIDs(t, b, dueNow))

	// Resume also drops a NextAttempt.
	saveAt(t, b, e, dueNow, store.WebhookDelivery{Attempts: 3, FirstFailure: dueNow, NextAttempt: dueNow.Add(time.Hour), LastError: "status 502"})
	assert.Empty(t, dueIDs(t, b, dueNow))
	require.NoError(t, b.Webhooks.Resume(ctx(), acme, e.ID))
	assert.Equal(t, []string{e.ID}, dueIDs(t, b, dueNow))
}

// A deleted endpoint, or one of a deleted tenant, is never due.
func testDueDeleted(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	a, g := mustWebhook(t, b, acme), mustWebhook(t, b, globex)
	appendEvent(t, b, acme)
	appendEvent(t, b, globex)
	assert.ElementsMatch(t, []string{a.ID, g.ID}, dueIDs(t, b, dueNow))
	require.NoError(t, b.Webhooks.Delete(ctx(), acme, a.ID))
	require.NoError(t, b.Tenants.Delete(ctx(), globex))
	assert.Empty(t, dueIDs(t, b, dueNow))
	mustTenant(t, b, globex)
	appendEvent(t, b, globex)
	assert.Empty(t, dueIDs(t, b, dueNow), "the new tenant of the same name has no endpoint")
}

// A store that implements store.WebhookWakeUps closes the channel once an event wakes an
// endpoint, and not before; others skip.
func testDueWakeUps(t *testing.T, b store.Backend) {
	w, ok := b.Webhooks.(store.WebhookWakeUps)
	if !ok {
		t.Skip("the store's Webhooks has no wake-ups (optional)")
	}
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	mustWebhook(t, b, acme)
	woken := w.WakeUps()
	appendEvent(t, b, globex) // a tenant without endpoints
	select {
	case <-woken:
		t.Fatal("closed by an event that wakes no endpoint")
	default:
	}
	appendEvent(t, b, acme)
	select {
	case <-woken:
	default:
		t.Fatal("not closed by an event that wakes an endpoint")
	}
}

// An endpoint whose events after its cursor Events.DeleteExpired removed may still be due;
// after its next SaveDelivery it is not.
func testDueRemovedEvents(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e := mustWebhook(t, b, acme)
	appendEvent(t, b, acme)
	_, err := b.Events.DeleteExpired(ctx(), time.Now().Add(time.Hour))
	require.NoError(t, err)
	page, err := b.Events.List(ctx(), acme, e.Delivery.Cursor, 10)
	require.NoError(t, err)
	require.Empty(t, page)
	saveAt(t, b, e, dueNow, e.Delivery)
	assert.Empty(t, dueIDs(t, b, dueNow))
}

// deliverUntil delivers to e as a deliverer does, until stop is closed and then once more:
// under a lease, it reads where delivery stands, lists the events after the cursor and saves
// the cursor of the last one (the same cursor when there is none).
func deliverUntil(t *testing.T, b store.Backend, e *store.WebhookEndpoint, stop <-chan struct{}) {
	for last := false; !last; {
		select {
		case <-stop:
			last = true
		default:
		}
		now := time.Now()
		if err := b.Webhooks.Lease(ctx(), e.Tenant, e.ID, "d", now, now.Add(time.Minute)); err != nil {
			t.Errorf("Lease: %v", err)
			return
		}
		cur, err := b.Webhooks.Get(ctx(), e.Tenant, e.ID)
		if err != nil {
			t.Errorf("Get: %v", err)
			return
		}
		page, err := b.Events.List(ctx(), e.Tenant, cur.Delivery.Cursor, 1000)
		if err != nil {
			t.Errorf("List: %v", err)
			return
		}
		d := cur.Delivery
		if len(page) > 0 {
			d.Cursor = page[len(page)-1].Cursor
		}
		if err := b.Webhooks.SaveDelivery(ctx(), e.Tenant, e.ID, "d", now, d); err != nil {
			t.Errorf("SaveDelivery: %v", err)
			return
		}
	}
	now := time.Now()
	require.NoError(t, b.Webhooks.Lease(ctx(), e.Tenant, e.ID, "d", now, now))
}

// checkNoLostWakeUp fails unless every endpoint of tenant with events after its cursor is
// due, and none of the others is.
func checkNoLostWakeUp(t *testing.T, b store.Backend, tenant string) {
	t.Helper()
	list, err := b.Webhooks.List(ctx(), tenant)
	require.NoError(t, err)
	due := dueIDs(t, b, time.Now().Add(time.Hour))
	for _, e := range list {
		page, err := b.Events.List(ctx(), tenant, e.Delivery.Cursor, 1)
		require.NoError(t, err)
		if len(page) > 0 {
			assert.Contains(t, due, e.ID, "endpoint %s has event %s after its cursor %q but is not due", e.ID, page[0].Cursor, e.Delivery.Cursor)
		} else {
			assert.NotContains(t, due, e.ID, "endpoint %s is caught up but due", e.ID)
		}
	}
}

// writeEvents records n events in tenant's log, half appended, half by creating users.
func writeEvents(t *testing.T, b store.Backend, tenant string, n int) {
	for i := range n {
		if i%2 == 0 {
			appendEvent(t, b, tenant)
			continue
		}
		_, err := b.Users.Create(changeBy("key_a"), tenant, store.User{UserName: fmt.Sprintf("u%d-%d", time.Now().UnixNano(), i), Active: true})
		require.NoError(t, err)
	}
}

// A deliverer that catches up (SaveDelivery finds nothing left after its cursor) while
// events are recorded, and while Due runs, loses no wake-up: once all have stopped, the
// endpoint is due exactly when events follow its cursor. Several rounds, so that they meet in
// every order.
func testDueConcurrentSaveAppend(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	for round := range 8 {
		e := mustWebhook(t, b, acme)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(3)
		go func() { defer wg.Done(); deliverUntil(t, b, e, stop) }()
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := b.Webhooks.Due(ctx(), time.Now(), 10); err != nil {
					t.Errorf("Due: %v", err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			writeEvents(t, b, acme, 6)
			close(stop)
		}()
		wg.Wait()
		if !t.Failed() {
			writeEvents(t, b, acme, round%2) // sometimes one more, with no deliverer
			checkNoLostWakeUp(t, b, acme)
		}
		require.NoError(t, b.Webhooks.Delete(ctx(), acme, e.ID))
	}
}

// Endpoints created while events are recorded are due exactly when events follow their
// cursors.
func testDueConcurrentCreateAppend(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 12 {
			if _, err := b.Webhooks.Create(ctx(), store.WebhookEndpoint{Tenant: acme, URL: "https://hooks.example.com/c",
				Secret: testWebhookSecret}); err != nil {
				t.Errorf("Create: %v", err)
				return
			}
		}
	}()
	go func() { defer wg.Done(); writeEvents(t, b, acme, 12) }()
	wg.Wait()
	checkNoLostWakeUp(t, b, acme)
}

// Endpoints resumed while events are recorded are due exactly when events follow their
// cursors.
func testDueConcurrentResumeAppend(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	var list []*store.WebhookEndpoint
	for range 8 {
		e := mustWebhook(t, b, acme)
		saveAt(t, b, e, dueNow, store.WebhookDelivery{Cursor: e.Delivery.Cursor, Attempts: 30, Failing: true, LastError: "timeout"})
		list = append(list, e)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for _, e := range list {
			if err := b.Webhooks.Resume(context.Background(), acme, e.ID); err != nil {
				t.Errorf("Resume: %v", err)
				return
			}
		}
	}()
	go func() { defer wg.Done(); writeEvents(t, b, acme, 8) }()
	wg.Wait()
	checkNoLostWakeUp(t, b, acme)
}
