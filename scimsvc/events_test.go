package scimsvc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// TestEvents: each SCIM write records its events, with the API key as actor and the resource as
// a GET returns it, on every store; a PATCH that changes nothing and a refused request record
// none.
func TestEvents(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		ctx := context.Background()
		keys, err := e.backend.APIKeys.List(ctx)
		require.NoError(t, err)
		require.Len(t, keys, 1)
		keyID := keys[0].ID

		r := e.do("POST", "/acme/Users", `{"userName":"ann@example.com","emails":[{"value":"ann@example.com","primary":true}]}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		ann := r.JSON(t)["id"].(string)
		r = e.do("POST", "/acme/Users", `{"userName":"bob@example.com"}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		bob := r.JSON(t)["id"].(string)

		for _, step := range []struct {
			method, path, body string
			status             int
		}{
			{"PATCH", "/acme/Users/" + ann, patchOps(`[{"op":"replace","path":"title","value":"Engineer"}]`), http.StatusOK},
			{"PATCH", "/acme/Users/" + ann, patchOps(`[{"op":"replace","path":"title","value":"Engineer"}]`), http.StatusOK}, // no change
			{"PATCH", "/acme/Users/" + ann, patchOps(`[{"op":"replace","path":"active","value":false}]`), http.StatusOK},
			{"PATCH", "/acme/Users/" + ann, patchOps(`[{"op":"replace","path":"active","value":true}]`), http.StatusOK},
			{"PATCH", "/acme/Users/" + ann, patchOps(`[{"op":"frobnicate","path":"title","value":"x"}]`), http.StatusBadRequest},
		} {
			r := e.do(step.method, step.path, step.body)
			require.Equal(t, step.status, r.Status, "%s %s: %s", step.method, step.body, r.Body)
		}
		r = e.do("POST", "/acme/Groups", `{"displayName":"Staff","members":[{"value":"`+ann+`"}]}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		staff := r.JSON(t)["id"].(string)
		r = e.do("PATCH", "/acme/Groups/"+staff, patchOps(`[{"op":"add","path":"members","value":[{"value":"`+bob+`"}]},
			{"op":"remove","path":"members[value eq \"`+ann+`\"]"}]`))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		r = e.do("PUT", "/acme/Groups/"+staff, `{"displayName":"All staff","members":[{"value":"`+bob+`"}]}`)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		require.Equal(t, http.StatusNoContent, e.do("DELETE", "/acme/Groups/"+staff, nil).Status)
		require.Equal(t, http.StatusNoContent, e.do("DELETE", "/acme/Users/"+bob, nil).Status)

		events, err := e.backend.Events.List(ctx, "acme", "", 100)
		require.NoError(t, err)
		type seen struct {
			typ     store.EventType
			subject string
		}
		got := make([]seen, len(events))
		for i, ev := range events {
			got[i] = seen{ev.Type, ev.SubjectID}
			assert.Equal(t, keyID, ev.Actor)
			assert.True(t, ev.Time.Equal(e.clock.Now()), "the handler's clock")
		}
		assert.Equal(t, []seen{
			{store.EventUserCreated, ann}, {store.EventUserCreated, bob},
			{store.EventUserUpdated, ann}, {store.EventUserDeactivated, ann}, {store.EventUserReactivated, ann},
			{store.EventGroupCreated, staff},
			{store.EventGroupMemberAdded, staff}, {store.EventGroupMemberRemoved, staff},
			{store.EventGroupUpdated, staff}, {store.EventGroupDeleted, staff},
			{store.EventUserDeleted, bob},
		}, got)

		// The data is the resource as the API returns it.
		var created map[string]any
		require.NoError(t, json.Unmarshal(events[0].Data, &created))
		assert.Equal(t, "ann@example.com", created["userName"])
		assert.Equal(t, []any{"urn:ietf:params:scim:schemas:core:2.0:User"}, created["schemas"])
		assert.Equal(t, testBase+"/acme/Users/"+ann, jsonAt(created, "meta", "location"))
		var deactivated map[string]any
		require.NoError(t, json.Unmarshal(events[3].Data, &deactivated))
		assert.Equal(t, false, deactivated["active"])
		var added map[string]any
		require.NoError(t, json.Unmarshal(events[6].Data, &added))
		assert.Equal(t, map[string]any{"group": staff, "user": bob}, added)

		globex, err := e.backend.Events.List(ctx, "globex", "", 100)
		require.NoError(t, err)
		assert.Empty(t, globex)
	})
}

// TestNoEventsWithoutConfig: a handler without Config.Events records nothing.
func TestNoEventsWithoutConfig(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/acme/Users", `{"userName":"ann@example.com"}`)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	events, err := e.mem.Events().List(context.Background(), "acme", "", 10)
	require.NoError(t, err)
	assert.Empty(t, events)
}

// TestWriteResponseIsEventData: with events on, the body of a write's response is the resource
// as a GET then returns it and as its event holds it (the event's rendering is the response's),
// and a write with attributes still gets its projection, on every backend, with the request's
// deadline (which then carries the change) and without one.
func TestWriteResponseIsEventData(t *testing.T) {
	for _, timeout := range []time.Duration{0, -1} {
		t.Run(fmt.Sprintf("RequestTimeout=%v", timeout), func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, e *backendEnv) { writeResponseIsEventData(t, e) },
				func(c *scimsvc.Config) { c.RequestTimeout = timeout })
		})
	}
}

func writeResponseIsEventData(t *testing.T, e *backendEnv) {
	{
		ctx := context.Background()
		last := func() json.RawMessage {
			events, err := e.backend.Events.List(ctx, "acme", "", 1000)
			require.NoError(t, err)
			require.NotEmpty(t, events)
			return events[len(events)-1].Data
		}
		r := e.do("POST", "/acme/Users", `{"userName":"ann@example.com","name":{"givenName":"Ann"},"emails":[{"value":"ann@example.com","primary":true}]}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		id := r.JSON(t)["id"].(string)
		for _, w := range []struct {
			method, path, body string
		}{
			{"POST", "", ""}, // the POST above
			{"PATCH", "/acme/Users/" + id, patchOps(`[{"op":"replace","path":"title","value":"Engineer"}]`)},
			{"PATCH", "/acme/Users/" + id, patchOps(`[{"op":"replace","path":"active","value":false}]`)},
			{"PUT", "/acme/Users/" + id, `{"userName":"ann@example.com","displayName":"Ann Lee"}`},
		} {
			if w.method != "POST" {
				r = e.do(w.method, w.path, w.body)
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			}
			get := e.do("GET", "/acme/Users/"+id, nil)
			assert.Equal(t, string(get.Body), string(r.Body), "%s: the response and a GET", w.method)
			assert.JSONEq(t, string(last()), string(r.Body), "%s: the response and the event", w.method)
			assert.Equal(t, get.Header.Get("ETag"), r.Header.Get("ETag"))
		}
		r = e.do("PATCH", "/acme/Users/"+id+"?attributes=userName", patchOps(`[{"op":"replace","path":"title","value":"Lead"}]`))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.NotContains(t, r.JSON(t), "title", "the projection applies")
		assert.Contains(t, string(last()), `"title":"Lead"`)
	}
}
