package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func webhookTests() []test {
	return []test{
		{"CreateGetListDelete", testWebhooksCRUD},
		{"CreateStartsAtTheEndOfTheLog", testWebhooksStartAtEnd},
		{"Lease", testWebhooksLease},
		{"SaveDeliveryNeedsTheLease", testWebhooksSaveDelivery},
		{"FailingIsAnEvent", testWebhooksFailingEvent},
		{"Resume", testWebhooksResume},
		{"GoWithTheTenant", testWebhooksTenantDeleted},
		{"ConcurrentLeasesOneWins", testWebhooksConcurrentLease},
	}
}

const testWebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func mustWebhook(t *testing.T, b store.Backend, tenant string) *store.WebhookEndpoint {
	t.Helper()
	e, err := b.Webhooks.Create(ctx(), store.WebhookEndpoint{Tenant: tenant, URL: "https://hooks.example.com/" + tenant,
		Secret: testWebhookSecret, Created: day(3, 1, 0)})
	require.NoError(t, err)
	return e
}

func testWebhooksCRUD(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	types := []store.EventType{store.EventUserDeactivated, store.EventUserDeleted}
	e, err := b.Webhooks.Create(ctx(), store.WebhookEndpoint{Tenant: acme, URL: "https://hooks.example.com/a",
		Types: types, Secret: testWebhookSecret, Created: day(3, 1, 0)})
	require.NoError(t, err)
	assert.Regexp(t, `^webhook_`, e.ID)
	types[0] = "changed by the caller"
	second := mustWebhook(t, b, acme)

	got, err := b.Webhooks.Get(ctx(), acme, e.ID)
	require.NoError(t, err)
	assert.Equal(t, "https://hooks.example.com/a", got.URL)
	assert.Equal(t, []store.EventType{store.EventUserDeactivated, store.EventUserDeleted}, got.Types, "the store keeps its own copy")
	assert.Equal(t, testWebhookSecret, got.Secret)
	assert.True(t, got.Created.Equal(day(3, 1, 0)))
	assert.Equal(t, acme, got.Tenant)

	list, err := b.Webhooks.List(ctx(), acme)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, []string{e.ID, second.ID}, []string{list[0].ID, list[1].ID}, "creation order")

	_, err = b.Webhooks.Create(ctx(), store.WebhookEndpoint{ID: e.ID, Tenant: acme, URL: "https://x.example.com", Secret: testWebhookSecret})
	assert.ErrorIs(t, err, store.ErrConflict)
	_, err = b.Webhooks.Create(ctx(), store.WebhookEndpoint{Tenant: acme, Secret: testWebhookSecret})
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = b.Webhooks.Create(ctx(), store.WebhookEndpoint{Tenant: acme, URL: "https://x.example.com"})
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = b.Webhooks.Create(ctx(), store.WebhookEndpoint{Tenant: "nosuch", URL: "https://x.example.com", Secret: testWebhookSecret})
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = b.Webhooks.Get(ctx(), globex, e.ID)
	assert.ErrorIs(t, err, store.ErrNotFound, "another tenant's endpoint")

	require.NoError(t, b.Webhooks.Delete(ctx(), acme, e.ID))
	assert.ErrorIs(t, b.Webhooks.Delete(ctx(), acme, e.ID), store.ErrNotFound)
	_, err = b.Webhooks.Get(ctx(), acme, e.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	list, err = b.Webhooks.List(ctx(), "nosuch")
	require.NoError(t, err)
	assert.Empty(t, list)
}

func testWebhooksStartAtEnd(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	assert.Empty(t, mustWebhook(t, b, acme).Delivery.Cursor, "an empty log")

	for _, name := range []string{"ann", "bob"} {
		_, err := b.Users.Create(changeBy("key_a"), acme, store.User{UserName: name, Active: true})
		require.NoError(t, err)
	}
	events := allEvents(t, b, acme)
	require.Len(t, events, 2)
	e := mustWebhook(t, b, acme)
	assert.Equal(t, events[1].Cursor, e.Delivery.Cursor, "after the last event recorded")
	assert.Empty(t, mustWebhook(t, b, globex).Delivery.Cursor, "another tenant's log")

	given, err := b.Webhooks.Create(ctx(), store.WebhookEndpoint{Tenant: acme, URL: "https://x.example.com", Secret: testWebhookSecret,
		Delivery: store.WebhookDelivery{Cursor: events[0].Cursor}})
	require.NoError(t, err)
	assert.Equal(t, events[0].Cursor, given.Delivery.Cursor, "a cursor given is kept")
}

func testWebhooksLease(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e := mustWebhook(t, b, acme)
	now := day(3, 2, 0)
	require.NoError(t, b.Webhooks.Lease(ctx(), acme, e.ID, "a", now, now.Add(time.Minute)))
	assert.ErrorIs(t, b.Webhooks.Lease(ctx(), acme, e.ID, "b", now.Add(59*time.Second), now.Add(2*time.Minute)), store.ErrConflict)
	require.NoError(t, b.Webhooks.Lease(ctx(), acme, e.ID, "a", now.Add(30*time.Second), now.Add(90*time.Second)), "a renews its own")
	assert.ErrorIs(t, b.Webhooks.Lease(ctx(), acme, e.ID, "b", now.Add(80*time.Second), now.Add(3*time.Minute)), store.ErrConflict)
	require.NoError(t, b.Webhooks.Lease(ctx(), acme, e.ID, "b", now.Add(90*time.Second), now.Add(3*time.Minute)), "once a's lease has run out")
	assert.ErrorIs(t, b.Webhooks.Lease(ctx(), acme, "webhook_nosuch", "a", now, now.Add(time.Minute)), store.ErrNotFound)
}

func testWebhooksSaveDelivery(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e := mustWebhook(t, b, acme)
	now := day(3, 2, 0)
	require.NoError(t, b.Webhooks.Lease(ctx(), acme, e.ID, "a", now, now.Add(time.Minute)))
	d := store.WebhookDelivery{Cursor: "0000000000000007", Attempts: 2, FirstFailure: now, NextAttempt: now.Add(time.Second), LastError: "status 500"}
	require.NoError(t, b.Webhooks.SaveDelivery(ctx(), acme, e.ID, "a", now.Add(time.Second), d))
	got, err := b.Webhooks.Get(ctx(), acme, e.ID)
	require.NoError(t, err)
	assert.Equal(t, d.Cursor, got.Delivery.Cursor)
	assert.Equal(t, 2, got.Delivery.Attempts)
	assert.True(t, got.Delivery.FirstFailure.Equal(now))
	assert.True(t, got.Delivery.NextAttempt.Equal(now.Add(time.Second)))
	assert.Equal(t, "status 500", got.Delivery.LastError)

	other := store.WebhookDelivery{Cursor: "0000000000000009"}
	assert.ErrorIs(t, b.Webhooks.SaveDelivery(ctx(), acme, e.ID, "b", now.Add(time.Second), other), store.ErrConflict, "not b's lease")
	assert.ErrorIs(t, b.Webhooks.SaveDelivery(ctx(), acme, e.ID, "a", now.Add(time.Minute), other), store.ErrConflict, "a's lease has run out")
	got, err = b.Webhooks.Get(ctx(), acme, e.ID)
	require.NoError(t, err)
	assert.Equal(t, d.Cursor, got.Delivery.Cursor, "nothing changed")
	assert.ErrorIs(t, b.Webhooks.SaveDelivery(ctx(), acme, "webhook_nosuch", "a", now, other), store.ErrNotFound)
}

func testWebhooksFailingEvent(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e := mustWebhook(t, b, acme)
	now := day(3, 2, 0)
	require.NoError(t, b.Webhooks.Lease(ctx(), acme, e.ID, "a", now, now.Add(time.Minute)))
	failing := store.WebhookDelivery{Attempts: 30, FirstFailure: now.Add(-72 * time.Hour), Failing: true, LastError: "timeout"}
	require.NoError(t, b.Webhooks.SaveDelivery(ctx(), acme, e.ID, "a", now, store.WebhookDelivery{Attempts: 29}), "no Change, no event")
	require.NoError(t, b.Webhooks.SaveDelivery(changeBy("webhooks"), acme, e.ID, "a", now, failing))
	require.NoError(t, b.Webhooks.SaveDelivery(changeBy("webhooks"), acme, e.ID, "a", now, failing), "already failing: no second event")

	events := allEvents(t, b, acme)
	require.Len(t, events, 1)
	assert.Equal(t, store.EventWebhookFailing, events[0].Type)
	assert.Equal(t, store.SubjectWebhook, events[0].SubjectKind)
	assert.Equal(t, e.ID, events[0].SubjectID)
	assert.Equal(t, "webhooks", events[0].Actor)
	data := dataOf(t, events[0])
	assert.Equal(t, e.URL, data["url"])
	assert.Equal(t, "timeout", data["lastError"])
	assert.NotContains(t, string(events[0].Data), "whsec_", "never the secret")
}

func testWebhooksResume(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e := mustWebhook(t, b, acme)
	now := day(3, 2, 0)
	require.NoError(t, b.Webhooks.Lease(ctx(), acme, e.ID, "a", now, now.Add(time.Minute)))
	require.NoError(t, b.Webhooks.SaveDelivery(ctx(), acme, e.ID, "a", now, store.WebhookDelivery{
		Cursor: "0000000000000003", Attempts: 30, FirstFailure: now, NextAttempt: now.Add(time.Hour), Failing: true, LastError: "status 502"}))
	require.NoError(t, b.Webhooks.Resume(ctx(), acme, e.ID))
	got, err := b.Webhooks.Get(ctx(), acme, e.ID)
	require.NoError(t, err)
	assert.Equal(t, store.WebhookDelivery{Cursor: "0000000000000003"}, got.Delivery)
	assert.ErrorIs(t, b.Webhooks.Resume(ctx(), acme, "webhook_nosuch"), store.ErrNotFound)
}

func testWebhooksTenantDeleted(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e := mustWebhook(t, b, acme)
	require.NoError(t, b.Tenants.Delete(ctx(), acme))
	mustTenant(t, b, acme)
	_, err := b.Webhooks.Get(ctx(), acme, e.ID)
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func testWebhooksConcurrentLease(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	e := mustWebhook(t, b, acme)
	now := day(3, 2, 0)
	const holders = 20
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		won  []string
		errs []error
	)
	for i := range holders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder := fmt.Sprintf("instance-%d", i)
			err := b.Webhooks.Lease(ctx(), acme, e.ID, holder, now, now.Add(time.Minute))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, holder)
			case !assert.ErrorIs(t, err, store.ErrConflict):
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	assert.Empty(t, errs)
	assert.Len(t, won, 1, "exactly one lease: %v", won)
}
