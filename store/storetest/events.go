package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

func eventTests() []test {
	return []test{
		{"WritesWithoutChangeRecordNothing", testEventsNeedChange},
		{"UserLifecycle", testEventsUserLifecycle},
		{"NoOpUpdateRecordsNothing", testEventsNoOp},
		{"GroupMembersOneEventAUser", testEventsGroupMembers},
		{"FailedWriteRecordsNothing", testEventsFailedWrite},
		{"RenderFailureStoresNothing", testEventsRenderFailure},
		{"ListPagesByCursor", testEventsListPaging},
		{"TenantsApart", testEventsTenantsApart},
		{"DeleteExpired", testEventsDeleteExpired},
		{"PollerSeesEveryEventOnce", testEventsConcurrentPoller},
		{"Append", testEventsAppend},
		{"UnlockIsAnEvent", testEventsUnlock},
		{"PasskeyRemovedIsAnEvent", testEventsPasskeyRemoved},
		{"ClientLifecycle", testEventsClients},
		{"APIKeysInEachTenant", testEventsAPIKeys},
		{"TenantUpdated", testEventsTenantUpdated},
	}
}

// eventTime is the Change.Time of the suite's writes.
var eventTime = time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC)

// changeBy returns a context whose writes record events by actor at eventTime.
func changeBy(actor string) context.Context {
	return store.WithChange(ctx(), store.Change{Actor: actor, Time: eventTime})
}

// allEvents lists the whole log of tenant, in pages of 7.
func allEvents(t *testing.T, b store.Backend, tenant string) []store.Event {
	t.Helper()
	var out []store.Event
	after := ""
	for {
		page, err := b.Events.List(ctx(), tenant, after, 7)
		require.NoError(t, err)
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].Cursor
	}
}

// eventTypes returns the types of events, in order.
func eventTypes(events []store.Event) []store.EventType {
	out := make([]store.EventType, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}

// dataOf decodes an event's data into a map.
func dataOf(t *testing.T, e store.Event) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(e.Data, &m), "event %s data %s", e.Type, e.Data)
	return m
}

func testEventsNeedChange(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "ann")
	g := mustGroup(t, b, acme, "Staff", u.ID)
	_, err := b.Users.Update(ctx(), acme, u.ID, func(u *store.User) error { u.Active = false; return nil })
	require.NoError(t, err)
	require.NoError(t, b.Groups.Delete(ctx(), acme, g.ID))
	assert.Empty(t, allEvents(t, b, acme))
}

func testEventsUserLifecycle(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := changeBy("key_a")
	u, err := b.Users.Create(c, acme, store.User{UserName: "ann", Active: true, DisplayName: "Ann"})
	require.NoError(t, err)
	_, err = b.Users.Update(c, acme, u.ID, func(u *store.User) error { u.DisplayName = "Ann Lee"; return nil })
	require.NoError(t, err)
	_, err = b.Users.Update(c, acme, u.ID, func(u *store.User) error { u.Active = false; return nil })
	require.NoError(t, err)
	_, err = b.Users.Update(c, acme, u.ID, func(u *store.User) error { u.Active = true; u.Title = "Boss"; return nil })
	require.NoError(t, err)
	require.NoError(t, b.Users.Delete(changeBy("admin"), acme, u.ID))

	events := allEvents(t, b, acme)
	assert.Equal(t, []store.EventType{store.EventUserCreated, store.EventUserUpdated, store.EventUserDeactivated,
		store.EventUserUpdated, store.EventUserReactivated, store.EventUserDeleted}, eventTypes(events))
	for i, e := range events {
		assert.Equal(t, acme, e.Tenant)
		assert.Equal(t, store.SubjectUser, e.SubjectKind)
		assert.Equal(t, u.ID, e.SubjectID)
		assert.True(t, e.Time.Equal(eventTime), "time %v", e.Time)
		assert.NotEmpty(t, e.Cursor)
		if i > 0 {
			assert.Greater(t, e.Cursor, events[i-1].Cursor, "cursors order as strings")
		}
	}
	assert.Equal(t, "key_a", events[0].Actor)
	assert.Equal(t, "admin", events[5].Actor)
	assert.Equal(t, "ann", dataOf(t, events[0])["UserName"], "the resource as stored, without a Render")
	assert.Equal(t, "Ann Lee", dataOf(t, events[1])["DisplayName"], "the resource after the change")
	assert.Equal(t, false, dataOf(t, events[2])["Active"])
	assert.Equal(t, "Boss", dataOf(t, events[5])["Title"], "a deletion carries the resource as it was")
}

func testEventsNoOp(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := changeBy("key_a")
	u, err := b.Users.Create(c, acme, store.User{UserName: "ann", Active: true})
	require.NoError(t, err)
	g, err := b.Groups.Create(c, acme, store.Group{DisplayName: "Staff", Members: []store.Member{{Value: u.ID}}})
	require.NoError(t, err)
	before := allEvents(t, b, acme)
	require.Len(t, before, 2)

	_, err = b.Users.Update(c, acme, u.ID, func(u *store.User) error {
		u.Meta.LastModified = eventTime.Add(time.Hour) // only the time of the write
		return nil
	})
	require.NoError(t, err)
	_, err = b.Groups.Update(c, acme, g.ID, func(g *store.Group) error {
		g.Members = append(g.Members, store.Member{Value: u.ID}) // a member already there
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, before, allEvents(t, b, acme))
}

func testEventsGroupMembers(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	ann, bob, cy := mustUser(t, b, acme, "ann"), mustUser(t, b, acme, "bob"), mustUser(t, b, acme, "cy")
	c := changeBy("key_a")
	g, err := b.Groups.Create(c, acme, store.Group{DisplayName: "Staff", Members: []store.Member{{Value: ann.ID}}})
	require.NoError(t, err)
	_, err = b.Groups.Update(c, acme, g.ID, func(g *store.Group) error {
		g.Members = []store.Member{{Value: bob.ID}, {Value: cy.ID}}
		return nil
	})
	require.NoError(t, err)
	_, err = b.Groups.Update(c, acme, g.ID, func(g *store.Group) error { g.DisplayName = "All staff"; return nil })
	require.NoError(t, err)
	require.NoError(t, b.Groups.Delete(c, acme, g.ID))

	events := allEvents(t, b, acme)
	require.Equal(t, []store.EventType{store.EventGroupCreated, store.EventGroupMemberAdded, store.EventGroupMemberAdded,
		store.EventGroupMemberRemoved, store.EventGroupUpdated, store.EventGroupDeleted}, eventTypes(events))
	for _, e := range events {
		assert.Equal(t, store.SubjectGroup, e.SubjectKind)
		assert.Equal(t, g.ID, e.SubjectID)
	}
	assert.Equal(t, "Staff", dataOf(t, events[0])["DisplayName"])
	assert.Len(t, dataOf(t, events[0])["Members"], 1, "group.created carries the first members")
	assert.Equal(t, map[string]any{"group": g.ID, "user": bob.ID}, dataOf(t, events[1]))
	assert.Equal(t, map[string]any{"group": g.ID, "user": cy.ID}, dataOf(t, events[2]))
	assert.Equal(t, map[string]any{"group": g.ID, "user": ann.ID}, dataOf(t, events[3]))
	assert.Equal(t, "All staff", dataOf(t, events[4])["DisplayName"])
	assert.Len(t, dataOf(t, events[5])["Members"], 2, "group.deleted carries the last members")
}

func testEventsFailedWrite(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := changeBy("key_a")
	u, err := b.Users.Create(c, acme, store.User{UserName: "ann", Active: true})
	require.NoError(t, err)
	before := allEvents(t, b, acme)

	_, err = b.Users.Create(c, acme, store.User{UserName: "ANN", Active: true})
	require.ErrorIs(t, err, store.ErrConflict)
	refused := errors.New("refused")
	_, err = b.Users.Update(c, acme, u.ID, func(u *store.User) error { u.Title = "x"; return refused })
	require.ErrorIs(t, err, refused)
	_, err = b.Groups.Create(c, acme, store.Group{DisplayName: "Staff", Members: []store.Member{{Value: "user_nobody"}}})
	require.ErrorIs(t, err, store.ErrMemberNotFound)
	require.ErrorIs(t, b.Users.Delete(c, acme, "user_nobody"), store.ErrNotFound)
	assert.Equal(t, before, allEvents(t, b, acme))
}

func testEventsRenderFailure(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u := mustUser(t, b, acme, "ann")
	broken := errors.New("cannot render")
	c := store.WithChange(ctx(), store.Change{Actor: "key_a", Render: func(any) (json.RawMessage, error) { return nil, broken }})

	_, err := b.Users.Create(c, acme, store.User{UserName: "bob", Active: true})
	require.ErrorIs(t, err, broken)
	_, err = b.Users.Update(c, acme, u.ID, func(u *store.User) error { u.Title = "Boss"; return nil })
	require.ErrorIs(t, err, broken)
	require.ErrorIs(t, b.Users.Delete(c, acme, u.ID), broken)

	page, err := b.Users.List(ctx(), acme, store.Query{Count: -1})
	require.NoError(t, err)
	require.Len(t, page.Resources, 1, "neither bob nor the deletion was stored")
	assert.Empty(t, page.Resources[0].Title, "the update was not stored")
	assert.Empty(t, allEvents(t, b, acme))

	// A Render that works gives the data.
	c = store.WithChange(ctx(), store.Change{Actor: "key_a", Render: func(v any) (json.RawMessage, error) {
		return json.Marshal(map[string]string{"userName": v.(*store.User).UserName})
	}})
	_, err = b.Users.Create(c, acme, store.User{UserName: "cy", Active: true})
	require.NoError(t, err)
	events := allEvents(t, b, acme)
	require.Len(t, events, 1)
	assert.JSONEq(t, `{"userName":"cy"}`, string(events[0].Data))
}

func testEventsListPaging(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := changeBy("key_a")
	for i := range 10 {
		_, err := b.Users.Create(c, acme, store.User{UserName: fmt.Sprintf("u%02d", i), Active: true})
		require.NoError(t, err)
	}
	all, err := b.Events.List(ctx(), acme, "", 100)
	require.NoError(t, err)
	require.Len(t, all, 10)

	page, err := b.Events.List(ctx(), acme, all[3].Cursor, 4)
	require.NoError(t, err)
	assert.Equal(t, all[4:8], page, "after a cursor, oldest first, at most limit")
	page, err = b.Events.List(ctx(), acme, all[9].Cursor, 4)
	require.NoError(t, err)
	assert.Empty(t, page, "nothing after the last")

	for _, bad := range []string{"nonsense", all[0].Cursor + "0", "-1"} {
		_, err = b.Events.List(ctx(), acme, bad, 4)
		assert.ErrorIs(t, err, store.ErrInvalid, "cursor %q", bad)
	}
	_, err = b.Events.List(ctx(), acme, "", 0)
	assert.ErrorIs(t, err, store.ErrInvalid, "limit 0")
	page, err = b.Events.List(ctx(), "nosuchtenant", "", 4)
	require.NoError(t, err)
	assert.Empty(t, page)
}

func testEventsTenantsApart(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	_, err := b.Users.Create(changeBy("key_a"), acme, store.User{UserName: "ann", Active: true})
	require.NoError(t, err)
	_, err = b.Users.Create(changeBy("key_g"), globex, store.User{UserName: "ann", Active: true})
	require.NoError(t, err)
	a, g := allEvents(t, b, acme), allEvents(t, b, globex)
	require.Len(t, a, 1)
	require.Len(t, g, 1)
	assert.Equal(t, "key_a", a[0].Actor)
	assert.Equal(t, globex, g[0].Tenant)
	assert.Equal(t, "key_g", g[0].Actor)
}

func testEventsDeleteExpired(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	at := func(tm time.Time) context.Context {
		return store.WithChange(ctx(), store.Change{Actor: "admin", Time: tm})
	}
	old, recent := day(1, 1, 0), day(2, 1, 0)
	for i, tm := range []time.Time{old, old, recent} {
		_, err := b.Users.Create(at(tm), acme, store.User{UserName: fmt.Sprintf("a%d", i), Active: true})
		require.NoError(t, err)
	}
	_, err := b.Users.Create(at(old), globex, store.User{UserName: "g", Active: true})
	require.NoError(t, err)
	first := allEvents(t, b, acme)
	require.Len(t, first, 3)

	n, err := b.Events.DeleteExpired(ctx(), day(1, 15, 0))
	require.NoError(t, err)
	assert.Equal(t, 3, n, "two of acme's events and globex's one")
	assert.Equal(t, first[2:], allEvents(t, b, acme))
	assert.Empty(t, allEvents(t, b, globex))
	page, err := b.Events.List(ctx(), acme, first[0].Cursor, 10)
	require.NoError(t, err, "the cursor of a removed event stays valid")
	assert.Equal(t, first[2:], page)

	_, err = b.Users.Create(at(recent), acme, store.User{UserName: "a3", Active: true})
	require.NoError(t, err)
	page, err = b.Events.List(ctx(), acme, first[2].Cursor, 10)
	require.NoError(t, err)
	require.Len(t, page, 1)
	assert.Greater(t, page[0].Cursor, first[2].Cursor, "cursors go on after a sweep")
}

// testEventsConcurrentPoller: 8 writers change users and groups while a reader polls with the
// cursor of the last event it got. The reader must see every event exactly once, in cursor
// order, and the same sequence List gives afterwards.
func testEventsConcurrentPoller(t *testing.T, b store.Backend) {
	const writers, rounds = 8, 15
	mustTenant(t, b, acme)
	staff := mustGroup(t, b, acme, "Staff")

	var (
		wg      sync.WaitGroup
		errs    = make(chan error, writers)
		done    = make(chan struct{})
		seen    []store.Event
		pollErr error
		polled  = make(chan struct{})
	)
	go func() {
		defer close(polled)
		after := ""
		for {
			select {
			case <-done:
				// One last pass once every writer has returned.
				for {
					page, err := b.Events.List(ctx(), acme, after, 50)
					if err != nil {
						pollErr = err
						return
					}
					if len(page) == 0 {
						return
					}
					seen = append(seen, page...)
					after = page[len(page)-1].Cursor
				}
			default:
			}
			page, err := b.Events.List(ctx(), acme, after, 50)
			if err != nil {
				pollErr = err
				return
			}
			if len(page) > 0 {
				seen = append(seen, page...)
				after = page[len(page)-1].Cursor
			}
		}
	}()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := changeBy(fmt.Sprintf("key_%d", w))
			for r := range rounds {
				u, err := b.Users.Create(c, acme, store.User{UserName: fmt.Sprintf("w%d-%d", w, r), Active: true})
				if err == nil {
					_, err = b.Groups.Update(c, acme, staff.ID, func(g *store.Group) error {
						g.Members = append(g.Members, store.Member{Value: u.ID})
						return nil
					})
				}
				if err == nil {
					_, err = b.Users.Update(c, acme, u.ID, func(u *store.User) error { u.Active = false; return nil })
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	<-polled
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, pollErr)

	final := allEvents(t, b, acme)
	require.Len(t, final, writers*rounds*3, "user.created, group.member_added and user.deactivated each")
	require.Len(t, seen, len(final), "the poller saw each event once")
	cursors := make(map[string]bool, len(seen))
	for i, e := range seen {
		assert.False(t, cursors[e.Cursor], "event %s seen twice", e.Cursor)
		cursors[e.Cursor] = true
		if i > 0 && e.Cursor <= seen[i-1].Cursor {
			t.Fatalf("the poller saw %s after %s", e.Cursor, seen[i-1].Cursor)
		}
	}
	assert.Equal(t, final, seen, "the poller saw the log as List gives it")
}

func testEventsAppend(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	u, err := b.Users.Create(changeBy("key_a"), acme, store.User{UserName: "ann", Active: true})
	require.NoError(t, err)
	passed := store.Event{Type: "secondfactor.succeeded", Time: eventTime, Actor: "client_1", SubjectKind: store.SubjectUser,
		SubjectID: u.ID, Data: json.RawMessage(`{"client":"client_1"}`)}
	failed := store.Event{Type: "secondfactor.failed", Actor: "client_1", SubjectKind: store.SubjectUser, SubjectID: u.ID}
	require.NoError(t, b.Events.Append(ctx(), acme, passed, failed))
	_, err = b.Users.Update(changeBy("key_a"), acme, u.ID, func(u *store.User) error { u.Active = false; return nil })
	require.NoError(t, err)

	events := allEvents(t, b, acme)
	require.Equal(t, []store.EventType{store.EventUserCreated, "secondfactor.succeeded", "secondfactor.failed", store.EventUserDeactivated},
		eventTypes(events), "in the order they were recorded, with the changes' events")
	assert.Equal(t, acme, events[1].Tenant)
	assert.True(t, events[1].Time.Equal(eventTime))
	assert.JSONEq(t, `{"client":"client_1"}`, string(events[1].Data))
	assert.Equal(t, "client_1", events[1].Actor)
	assert.WithinDuration(t, time.Now(), events[2].Time, time.Minute, "a zero time is the store's clock")
	assert.JSONEq(t, `null`, string(events[2].Data))
	assert.Greater(t, events[2].Cursor, events[1].Cursor)

	for name, bad := range map[string]store.Event{
		"no type":    {Actor: "a", SubjectKind: "user", SubjectID: "u"},
		"no actor":   {Type: "x", SubjectKind: "user", SubjectID: "u"},
		"no subject": {Type: "x", Actor: "a", SubjectKind: "user"},
		"bad data":   {Type: "x", Actor: "a", SubjectKind: "user", SubjectID: "u", Data: json.RawMessage(`{`)},
	} {
		assert.ErrorIs(t, b.Events.Append(ctx(), acme, passed, bad), store.ErrInvalid, name)
	}
	assert.ErrorIs(t, b.Events.Append(ctx(), "nosuch", passed), store.ErrNotFound)
	assert.Len(t, allEvents(t, b, acme), 4, "nothing recorded by the refused appends")
}

func testEventsUnlock(t *testing.T, b store.Backend) {
	p, u := enrolled(t, b)
	for range 3 {
		_, err := b.Pictures.AddFailure(ctx(), p.Tenant, u.ID, netA, day(2, 1, 0))
		require.NoError(t, err)
	}
	require.NoError(t, b.Pictures.ResetFailures(changeBy("admin"), p.Tenant, u.ID))
	require.NoError(t, b.Pictures.ResetFailures(changeBy("admin"), p.Tenant, u.ID), "nothing to unlock: no event")
	_, err := b.Pictures.AddFailure(ctx(), p.Tenant, u.ID, netA, day(2, 1, 0))
	require.NoError(t, err)
	require.NoError(t, b.Pictures.ResetFailures(ctx(), p.Tenant, u.ID), "a reset without a Change: no event")
	assert.ErrorIs(t, b.Pictures.ResetFailures(changeBy("admin"), p.Tenant, "user_nobody"), store.ErrNotFound)

	events := allEvents(t, b, p.Tenant)
	require.Len(t, events, 1)
	assert.Equal(t, store.EventSecondFactorUnlocked, events[0].Type)
	assert.Equal(t, "admin", events[0].Actor)
	assert.Equal(t, u.ID, events[0].SubjectID)
	assert.JSONEq(t, `{"failures":3}`, string(events[0].Data))
	assert.Zero(t, mustGetPicture(t, b, p.Tenant, u.ID).Failures)
}

// Passkeys.Delete under a Change records secondfactor.passkey_removed naming the passkey (its
// credential id in base64url and its name); a Delete without a Change, or of no passkey, none.
func testEventsPasskeyRemoved(t *testing.T, b store.Backend) {
	p, u := withPasskey(t, b)
	other := newPasskey(acme, u.ID, "b")
	other.ID = []byte{0xfb, 0xff, 0x00}
	mustPasskey(t, b, other)
	require.NoError(t, b.Passkeys.Delete(changeBy("admin"), acme, u.ID, other.ID))
	assert.ErrorIs(t, b.Passkeys.Delete(changeBy("admin"), acme, u.ID, other.ID), store.ErrNotFound)
	assert.ErrorIs(t, b.Passkeys.Delete(changeBy("admin"), acme, "user_nobody", p.ID), store.ErrNotFound)
	require.NoError(t, b.Passkeys.Delete(ctx(), acme, u.ID, p.ID), "a Delete without a Change: no event")

	events := allEvents(t, b, acme)
	require.Len(t, events, 1)
	assert.Equal(t, store.EventPasskeyRemoved, events[0].Type)
	assert.Equal(t, "admin", events[0].Actor)
	assert.Equal(t, eventTime, events[0].Time.UTC())
	assert.Equal(t, store.SubjectUser, events[0].SubjectKind)
	assert.Equal(t, u.ID, events[0].SubjectID)
	assert.JSONEq(t, `{"passkey":"-_8A","name":"Passkey b"}`, string(events[0].Data))
	assert.Empty(t, mustListPasskeys(t, b, acme, u.ID))
}

func testEventsClients(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	c := changeBy("admin")
	cl, err := b.Clients.Create(c, store.Client{Tenant: acme, Name: "App", RedirectURIs: []string{"https://app.example.com/cb"},
		SecretHash: [32]byte{1}, Created: day(1, 2, 0), SecretRotated: day(1, 2, 0)})
	require.NoError(t, err)
	_, err = b.Clients.Update(c, acme, cl.ID, func(c *store.Client) error { c.Name = "App 2"; return nil })
	require.NoError(t, err)
	_, err = b.Clients.Update(c, acme, cl.ID, func(c *store.Client) error {
		c.SecretHash, c.SecretRotated = [32]byte{2}, day(1, 3, 0)
		return nil
	})
	require.NoError(t, err)
	_, err = b.Clients.Update(c, acme, cl.ID, func(*store.Client) error { return nil })
	require.NoError(t, err, "no change, no event")
	require.NoError(t, b.Clients.Delete(c, acme, cl.ID))
	assert.ErrorIs(t, b.Clients.Delete(c, acme, cl.ID), store.ErrNotFound)

	events := allEvents(t, b, acme)
	require.Equal(t, []store.EventType{store.EventClientCreated, store.EventClientUpdated, store.EventClientSecretRotated,
		store.EventClientDeleted}, eventTypes(events))
	for _, e := range events {
		assert.Equal(t, store.SubjectClient, e.SubjectKind)
		assert.Equal(t, cl.ID, e.SubjectID)
		assert.Equal(t, "admin", e.Actor)
		assert.NotContains(t, string(e.Data), "ecret_hash", "never the secret's hash")
	}
	assert.Equal(t, "App", dataOf(t, events[0])["name"])
	assert.Equal(t, "App 2", dataOf(t, events[1])["name"])
	assert.Equal(t, []any{"https://app.example.com/cb"}, dataOf(t, events[3])["redirect_uris"])
}

func testEventsAPIKeys(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	c := changeBy("admin")
	k, err := b.APIKeys.Create(c, store.APIKey{Name: "Entra ID", Tenants: []string{acme, globex, acme, "nosuch"},
		Scopes: []string{"scim"}, SecretHash: [32]byte{7}, Created: day(1, 2, 0)})
	require.NoError(t, err)
	require.NoError(t, b.APIKeys.Revoke(c, k.ID, day(1, 3, 0)))
	require.NoError(t, b.APIKeys.Revoke(c, k.ID, day(1, 4, 0)), "revoked already: no event")
	_, err = b.APIKeys.Create(ctx(), store.APIKey{Name: "quiet", Tenants: []string{acme}, SecretHash: [32]byte{8}})
	require.NoError(t, err, "no Change, no event")
	assert.ErrorIs(t, b.APIKeys.Revoke(c, "key_nosuch", day(1, 3, 0)), store.ErrNotFound)

	for _, tenant := range []string{acme, globex} {
		events := allEvents(t, b, tenant)
		require.Equal(t, []store.EventType{store.EventAPIKeyCreated, store.EventAPIKeyRevoked}, eventTypes(events), tenant)
		for _, e := range events {
			assert.Equal(t, store.SubjectAPIKey, e.SubjectKind)
			assert.Equal(t, k.ID, e.SubjectID)
			assert.Equal(t, "admin", e.Actor)
		}
		assert.Equal(t, "Entra ID", dataOf(t, events[0])["name"])
		assert.NotContains(t, dataOf(t, events[0]), "revoked_at")
		assert.Equal(t, "2024-01-03T00:00:00Z", dataOf(t, events[1])["revoked_at"])
	}
}

// Tenants.Update under a Change records tenant.updated naming what changed, with the logo as
// its type, size and hash, never its bytes, and the second-factor policy as "second_factor"
// ("picture" for ""); an Update that changes nothing, or one without a Change, records nothing.
func testEventsTenantUpdated(t *testing.T, b store.Backend) {
	mustTenant(t, b, acme)
	mustTenant(t, b, globex)
	c := changeBy("admin")
	logo := testPNG(t, 9)
	_, err := b.Tenants.Update(c, acme, func(tn *store.Tenant) error {
		tn.Logo, tn.AccentColor = logo, "#0B5D3B"
		return nil
	})
	require.NoError(t, err)
	_, err = b.Tenants.Update(c, acme, func(tn *store.Tenant) error {
		tn.AccentColor = "#0b5d3b" // the same colour, canonical
		return nil
	})
	require.NoError(t, err, "no change, no event")
	_, err = b.Tenants.Update(ctx(), acme, func(tn *store.Tenant) error { tn.DefaultLanguage = "fr"; return nil })
	require.NoError(t, err, "no Change, no event")
	_, err = b.Tenants.Update(c, acme, func(tn *store.Tenant) error {
		tn.DisplayName, tn.DefaultLanguage, tn.Logo = "Acme AG", "de", nil
		return nil
	})
	require.NoError(t, err)
	_, err = b.Tenants.Update(c, acme, func(tn *store.Tenant) error { tn.AccentColor = "#eeeeee"; return nil })
	require.ErrorIs(t, err, store.ErrInvalid, "a refused update records nothing")
	_, err = b.Tenants.Update(c, acme, func(tn *store.Tenant) error { tn.SecondFactor = store.SecondFactorPicture; return nil })
	require.NoError(t, err, "the picture policy already, canonical: no event")
	_, err = b.Tenants.Update(c, acme, func(tn *store.Tenant) error {
		tn.SecondFactor = store.SecondFactorPictureOrPasskey
		return nil
	})
	require.NoError(t, err)
	_, err = b.Tenants.Update(c, acme, func(tn *store.Tenant) error { tn.SecondFactor = "passkey"; return nil })
	require.ErrorIs(t, err, store.ErrInvalid, "a refused policy records nothing")
	_, err = b.Tenants.Update(c, acme, func(tn *store.Tenant) error { tn.SecondFactor = store.SecondFactorPicture; return nil })
	require.NoError(t, err)

	events := allEvents(t, b, acme)
	require.Equal(t, []store.EventType{store.EventTenantUpdated, store.EventTenantUpdated, store.EventTenantUpdated,
		store.EventTenantUpdated}, eventTypes(events))
	for _, e := range events {
		assert.Equal(t, store.SubjectTenant, e.SubjectKind)
		assert.Equal(t, acme, e.SubjectID)
		assert.Equal(t, "admin", e.Actor)
		assert.True(t, eventTime.Equal(e.Time))
		assert.Less(t, len(e.Data), 1000, "never the logo's bytes")
	}
	hash := sha256.Sum256(logo)
	assert.Equal(t, map[string]any{"id": acme, "display_name": "Tenant " + acme, "logo_type": "image/png",
		"logo_size": float64(len(logo)), "logo_sha256": hex.EncodeToString(hash[:]), "accent_color": "#0b5d3b",
		"second_factor": "picture", "changed": []any{"logo", "accent_color"}}, dataOf(t, events[0]))
	assert.Equal(t, map[string]any{"id": acme, "display_name": "Acme AG", "accent_color": "#0b5d3b",
		"default_language": "de", "second_factor": "picture", "changed": []any{"display_name", "logo", "default_language"}},
		dataOf(t, events[1]))
	assert.Equal(t, map[string]any{"id": acme, "display_name": "Acme AG", "accent_color": "#0b5d3b",
		"default_language": "de", "second_factor": "picture-or-passkey", "changed": []any{"second_factor"}},
		dataOf(t, events[2]))
	assert.Equal(t, map[string]any{"id": acme, "display_name": "Acme AG", "accent_color": "#0b5d3b",
		"default_language": "de", "second_factor": "picture", "changed": []any{"second_factor"}}, dataOf(t, events[3]))
	assert.Empty(t, allEvents(t, b, globex), "the other tenant's log")
}
