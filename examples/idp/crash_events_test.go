package main

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
	"github.com/visid/visid/webhooks"
)

// crashReceiver is a webhook endpoint that outlives the service: it keeps the webhook-id of
// each signed request it accepts, once, in the order they first came.
type crashReceiver struct {
	mu     sync.Mutex
	secret string
	ids    []string
	seen   map[string]bool
	bad    int
}

func (c *crashReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := webhooks.Verify(c.secret, r.Header, body, time.Now()); err != nil {
		c.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if id := r.Header.Get("webhook-id"); !c.seen[id] {
		c.seen[id] = true
		c.ids = append(c.ids, id)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (c *crashReceiver) received() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ids)
}

// crashEvents returns the demo tenant's whole log.
func crashEvents(t *testing.T, es store.Events) []store.Event {
	t.Helper()
	var out []store.Event
	after := ""
	for {
		page, err := es.List(t.Context(), demoTenant, after, 500)
		require.NoError(t, err)
		if len(page) == 0 {
			return out
		}
		out = append(out, page...)
		after = page[len(page)-1].Cursor
	}
}

// crashCheckEvents checks the event log after the crash against what the API serves: every
// user and group there has its events, and replaying them gives what the API serves, so no
// stored change lacks its event; every user.created or group.created without a deletion names
// a resource that exists, so no event lacks its change; and no change has two events.
func crashCheckEvents(t *testing.T, events []store.Event, apiUsers, apiGroups []map[string]any) {
	t.Helper()
	for i := 1; i < len(events); i++ {
		require.Greater(t, events[i].Cursor, events[i-1].Cursor, "cursors in order, each once")
	}
	byID := func(list []map[string]any) map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, r := range list {
			m[r["id"].(string)] = r
		}
		return m
	}
	users, groups := byID(apiUsers), byID(apiGroups)
	// strip removes what an event's data and the API's answer may differ in: meta (the
	// location's port changed with the restart) and, for a user, its groups (group writes
	// change them without a user event).
	strip := func(r map[string]any) map[string]any {
		c := maps.Clone(r)
		delete(c, "meta")
		delete(c, "groups")
		return c
	}
	decode := func(e store.Event) map[string]any {
		var m map[string]any
		require.NoError(t, json.Unmarshal(e.Data, &m), "%s %s", e.Type, e.Data)
		return m
	}

	created, deleted := map[string]int{}, map[string]int{}
	lastUser := map[string]map[string]any{}
	groupState := map[string]map[string]any{}
	members := map[string]map[string]bool{}
	for _, e := range events {
		switch e.Type {
		case store.EventUserCreated, store.EventGroupCreated:
			created[e.SubjectID]++
		case store.EventUserDeleted, store.EventGroupDeleted:
			deleted[e.SubjectID]++
		}
		switch e.Type {
		case store.EventUserCreated, store.EventUserUpdated, store.EventUserDeactivated, store.EventUserReactivated:
			lastUser[e.SubjectID] = decode(e)
		case store.EventGroupCreated, store.EventGroupUpdated:
			g := decode(e)
			groupState[e.SubjectID] = g
			if e.Type == store.EventGroupCreated {
				members[e.SubjectID] = map[string]bool{}
				ms, _ := g["members"].([]any)
				for _, m := range ms {
					members[e.SubjectID][m.(map[string]any)["value"].(string)] = true
				}
			}
		case store.EventUserDeleted:
			for _, ms := range members {
				delete(ms, e.SubjectID) // a user's memberships end with it
			}
		case store.EventGroupMemberAdded, store.EventGroupMemberRemoved:
			d := decode(e)
			require.NotNil(t, members[e.SubjectID], "a member event of group %s before its creation", e.SubjectID)
			members[e.SubjectID][d["user"].(string)] = e.Type == store.EventGroupMemberAdded
		}
	}
	for id, n := range created {
		require.Equal(t, 1, n, "%s was created once", id)
		if deleted[id] == 0 {
			_, isUser := users[id]
			_, isGroup := groups[id]
			assert.True(t, isUser || isGroup, "%s has user.created (or group.created) and no deletion: it must exist", id)
		}
	}
	for id, n := range deleted {
		assert.Equal(t, 1, n, "%s was deleted once", id)
		assert.NotContains(t, users, id, "a deleted user is gone")
		assert.NotContains(t, groups, id, "a deleted group is gone")
	}
	for id, u := range users {
		if u["userName"] == demoUser {
			continue // made by the store on the first start, before any event
		}
		require.Contains(t, lastUser, id, "user %s has events", id)
		assert.Equal(t, strip(u), strip(lastUser[id]), "the last event of user %s shows it as the API does", id)
	}
	for id, g := range groups {
		require.Contains(t, groupState, id, "group %s has events", id)
		assert.Equal(t, g["displayName"], groupState[id]["displayName"], "group %s's name", id)
		var want []string
		for user, in := range members[id] {
			if in {
				want = append(want, user)
			}
		}
		var got []string
		ms, _ := g["members"].([]any)
		for _, m := range ms {
			got = append(got, m.(map[string]any)["value"].(string))
		}
		assert.ElementsMatch(t, want, got, "the member events of group %s give its members", id)
	}
}

// crashWebhook adds an endpoint of the demo tenant for rc with the admin command, on the
// database the service is using, and gives rc its secret.
func crashWebhook(t *testing.T, bin, dir, dsn, url string, rc *crashReceiver) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, "webhook", "add", "--tenant", demoTenant, "--url", url,
		"--allow-http-loopback", "--allow-private-targets", "-db", dsn)
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, "webhook add")
	for line := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "webhook_secret="); ok {
			rc.mu.Lock()
			rc.secret = v
			rc.mu.Unlock()
		}
	}
	require.NotEmpty(t, rc.secret, "webhook add printed no secret: %s", out)
}
