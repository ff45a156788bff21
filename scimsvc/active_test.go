package scimsvc_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRemoveActiveRefused: a PATCH that removes active — remove with the path active, or replace
// it with null — would make a deactivated user active again (an absent active means true), so it
// is refused with 400 invalidValue naming the way to change active, and the user stays as it was.
// No identity provider sends it; reactivation must never happen by accident.
func TestRemoveActiveRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := e.do("POST", "/acme/Users", `{"userName":"ann@example.com","active":false}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		id, _ := r.JSON(t)["id"].(string)
		before := e.do("GET", "/acme/Users/"+id, nil)
		require.Equal(t, http.StatusOK, before.Status)
		require.Equal(t, false, before.JSON(t)["active"])

		for _, tc := range []struct{ name, op string }{
			{"remove active", `{"op":"remove","path":"active"}`},
			{"Remove active capitalised", `{"op":"Remove","path":"Active"}`},
			{"remove the URN-qualified active", `{"op":"remove","path":"urn:ietf:params:scim:schemas:core:2.0:User:active"}`},
			{"replace active with null", `{"op":"replace","path":"active","value":null}`},
			{"remove active after a valid change", `{"op":"replace","path":"nickName","value":"a"},{"op":"remove","path":"active"}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do("PATCH", "/acme/Users/"+id, patchOps("["+tc.op+"]"))
				require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
				body := r.JSON(t)
				assert.Equal(t, "invalidValue", body["scimType"])
				assert.Contains(t, body["detail"], "replace active with true or false")
				after := e.do("GET", "/acme/Users/"+id, nil)
				assert.JSONEq(t, string(before.Body), string(after.Body), "the user changed")
				u := e.users("acme")
				require.Len(t, u, 1)
				assert.False(t, u[0].Active, "the store reactivated the user")
			})
		}

		// The ways to change active still work.
		r = e.do("PATCH", "/acme/Users/"+id, patchOps(`[{"op":"replace","path":"active","value":true}]`))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, true, r.JSON(t)["active"])
		r = e.do("PATCH", "/acme/Users/"+id, patchOps(`[{"op":"replace","value":{"active":false}}]`))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, false, r.JSON(t)["active"])
	})
}
