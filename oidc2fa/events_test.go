package oidc2fa_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// events lists the log of tenant acme.
func (e *env) events() []store.Event {
	e.t.Helper()
	list, err := e.mem.Backend().Events.List(context.Background(), "acme", "", 100)
	require.NoError(e.t, err)
	return list
}

// TestEventsOfSignIns: as each sign-in of a known user ends, the provider appends its outcome to
// the tenant's log, with the client as actor.
func TestEventsOfSignIns(t *testing.T) {
	data := func(t *testing.T, ev store.Event) map[string]any {
		var m map[string]any
		require.NoError(t, json.Unmarshal(ev.Data, &m))
		return m
	}
	t.Run("passed", func(t *testing.T) {
		e := newEnv(t)
		e.code()
		events := e.events()
		require.Len(t, events, 1)
		ev := events[0]
		assert.Equal(t, store.EventSecondFactorSucceeded, ev.Type)
		assert.Equal(t, e.client.ID, ev.Actor)
		assert.Equal(t, store.SubjectUser, ev.SubjectKind)
		assert.Equal(t, e.user.ID, ev.SubjectID)
		assert.True(t, ev.Time.Equal(e.clock.Now()))
		assert.Equal(t, map[string]any{"client": e.client.ID}, data(t, ev))
	})
	t.Run("denied", func(t *testing.T) {
		e := newEnv(t).manual()
		b := e.browser()
		path, page := b.start(e.authParams())
		b.decide(path, csrfToken(t, page), "deny")
		events := e.events()
		require.Len(t, events, 1)
		assert.Equal(t, store.EventSecondFactorFailed, events[0].Type)
		assert.Equal(t, map[string]any{"client": e.client.ID, "reason": "denied"}, data(t, events[0]))
	})
	t.Run("locked", func(t *testing.T) {
		e := newEnv(t, func(c *oidc2fa.Config) { c.Authenticator = lockedAuthenticator{} })
		b := e.browser()
		rec := b.do("GET", "/authorize/acme?"+e.authParams().Encode(), nil)
		b.follow("GET", rec.Header().Get("Location")[len("/oidc"):], nil)
		events := e.events()
		require.Len(t, events, 1)
		assert.Equal(t, store.EventSecondFactorLocked, events[0].Type)
		assert.Equal(t, e.user.ID, events[0].SubjectID)
	})
	t.Run("inactive user passes", func(t *testing.T) {
		e := newEnv(t)
		params := e.authParams()
		params.Set("login_hint", "bob@example.com")
		b := e.browser()
		b.follow("GET", "/authorize/acme?"+params.Encode(), nil)
		events := e.events()
		require.Len(t, events, 1)
		assert.Equal(t, store.EventSecondFactorFailed, events[0].Type)
		assert.Equal(t, e.inactive.ID, events[0].SubjectID)
	})
	t.Run("nobody", func(t *testing.T) {
		e := newEnv(t)
		params := e.authParams()
		params.Set("login_hint", "nobody@example.com")
		e.browser().follow("GET", "/authorize/acme?"+params.Encode(), nil)
		assert.Empty(t, e.events(), "a hint that names no user has no subject to record")
	})
	t.Run("no Config.Events", func(t *testing.T) {
		e := newEnv(t, func(c *oidc2fa.Config) { c.Events = nil })
		e.code()
		assert.Empty(t, e.events())
	})
}

// TestEventsOfEnrollments: a finished enrollment is enrollment.completed; by an administrator's
// link its actor is admin.
func TestEventsOfEnrollments(t *testing.T) {
	for _, kind := range []string{"client", "admin"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnrollEnv(t)
			b := e.browser()
			path, page := b.openLink(e.link(kind))
			b.decide(path, csrfToken(t, page), "enroll")
			events := e.events()
			require.Len(t, events, 1)
			assert.Equal(t, store.EventEnrollmentCompleted, events[0].Type)
			assert.Equal(t, e.user.ID, events[0].SubjectID)
			if kind == "admin" {
				assert.Equal(t, "admin", events[0].Actor)
			} else {
				assert.Equal(t, e.client.ID, events[0].Actor)
			}
		})
	}
}
