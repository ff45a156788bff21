package scimsvc_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEmptyValuesDropped: a null or empty value of a multi-valued attribute, or one with only
// primary false, is no value. A POST (read by the typed decoder), a POST the tree reads (an
// unknown attribute sends it there), a PUT and a PATCH add store none of them, only the real
// values beside them.
func TestEmptyValuesDropped(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		const empties = `[null, {}, {"primary": false}, {"value": "", "type": ""}, {"value": "ann@example.com", "type": "work"}]`
		for _, tc := range []struct{ name, body string }{
			{"typed POST", `{"userName":"a1@example.com","emails":` + empties + `,"addresses":[{},null]}`},
			{"tree POST", `{"userName":"a2@example.com","x-unknown":1,"emails":` + empties + `,"addresses":[{},null]}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do("POST", "/acme/Users", tc.body)
				require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
				got := r.JSON(t)
				assert.Equal(t, []any{map[string]any{"value": "ann@example.com", "type": "work"}}, got["emails"])
				assert.NotContains(t, got, "addresses")
				id, _ := got["id"].(string)

				r = e.do("PUT", "/acme/Users/"+id, `{"userName":"`+got["userName"].(string)+`","phoneNumbers":[{},null,{"value":"+1 555 0100"}]}`)
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
				assert.Equal(t, []any{map[string]any{"value": "+1 555 0100"}}, r.JSON(t)["phoneNumbers"])

				r = e.do("PATCH", "/acme/Users/"+id, patchOps(`[{"op":"add","path":"emails","value":[{},null,{"primary":false}]}]`))
				require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
				assert.NotContains(t, r.JSON(t), "emails")
				u := e.users("acme")
				for _, su := range u {
					if su.ID == id {
						assert.Empty(t, su.Emails, "stored")
						assert.Len(t, su.PhoneNumbers, 1)
					}
				}
			})
		}
	})
}
