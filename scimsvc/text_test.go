package scimsvc_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRefusesNULAndInvalidText: a string anywhere in a request — an attribute value, a key, a
// sub-attribute, a PATCH op, path or value, a filter literal, the attributes parameters — that
// holds NUL (raw or escaped) or is not UTF-8 (raw bytes, or an escaped lone surrogate, which JSON
// decoders turn into U+FFFD) is refused with a 400 and changes nothing, on every backend.
// PostgreSQL cannot store NUL and answered 500; memstore and SQLite stored it.
func TestRefusesNULAndInvalidText(t *testing.T) {
	const enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := e.do("POST", "/acme/Users", `{"userName":"ann@example.com","emails":[{"value":"ann@example.com","type":"work"}]}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		ann, _ := r.JSON(t)["id"].(string)
		filter := func(f string) string { return "/acme/Users?filter=" + url.QueryEscape(f) }

		tests := []struct {
			name, method, path, body string
			status                   int
			scimType                 string
		}{
			{name: "escaped NUL in userName", method: "POST", path: "/acme/Users",
				body: `{"userName":"nul\u0000@example.com"}`, status: 400, scimType: "invalidValue"},
			{name: "raw NUL byte", method: "POST", path: "/acme/Users",
				body: "{\"userName\":\"nul\x00@example.com\"}", status: 400, scimType: "invalidValue"},
			{name: "invalid UTF-8 byte", method: "POST", path: "/acme/Users",
				body: "{\"userName\":\"bad\xff@example.com\"}", status: 400, scimType: "invalidValue"},
			{name: "overlong NUL", method: "POST", path: "/acme/Users",
				body: "{\"userName\":\"x@example.com\",\"displayName\":\"a\xc0\x80b\"}", status: 400, scimType: "invalidValue"},
			{name: "UTF-8 encoded surrogate", method: "POST", path: "/acme/Users",
				body: "{\"userName\":\"x@example.com\",\"displayName\":\"\xed\xa0\x80\"}", status: 400, scimType: "invalidValue"},
			{name: "escaped lone high surrogate", method: "POST", path: "/acme/Users",
				body: `{"userName":"x@example.com","displayName":"\ud800"}`, status: 400, scimType: "invalidValue"},
			{name: "escaped lone low surrogate", method: "POST", path: "/acme/Users",
				body: `{"userName":"x@example.com","displayName":"\uDC00x"}`, status: 400, scimType: "invalidValue"},
			{name: "high surrogate before a letter", method: "POST", path: "/acme/Users",
				body: `{"userName":"x@example.com","displayName":"\ud800\u0041"}`, status: 400, scimType: "invalidValue"},
			{name: "NUL in a sub-attribute", method: "POST", path: "/acme/Users",
				body: `{"userName":"x@example.com","name":{"givenName":"a\u0000"}}`, status: 400, scimType: "invalidValue"},
			{name: "NUL in a multi-valued attribute", method: "POST", path: "/acme/Users",
				body: `{"userName":"x@example.com","emails":[{"value":"x@example.com","type":"wo\u0000rk"}]}`, status: 400, scimType: "invalidValue"},
			{name: "NUL in an extension attribute", method: "POST", path: "/acme/Users",
				body: `{"userName":"x@example.com","` + enterprise + `":{"department":"R\u0000D"}}`, status: 400, scimType: "invalidValue"},
			{name: "NUL in a key", method: "POST", path: "/acme/Users",
				body: `{"userName":"x@example.com","nickName\u0000":"y"}`, status: 400, scimType: "invalidValue"},
			{name: "NUL in an attributes parameter of a create", method: "POST", path: "/acme/Users?attributes=userName%00",
				body: `{"userName":"x@example.com"}`, status: 400, scimType: "invalidValue"},
			{name: "NUL in a replace", method: "PUT", path: "/acme/Users/" + ann,
				body: `{"userName":"ann@example.com","displayName":"A\u0000"}`, status: 400, scimType: "invalidValue"},
			{name: "NUL in a PATCH value", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace","path":"displayName","value":"A\u0000"}`), status: 400, scimType: "invalidValue"},
			{name: "lone surrogate in a PATCH value", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"add","path":"emails","value":[{"value":"\udfff@example.com"}]}`), status: 400, scimType: "invalidValue"},
			{name: "NUL in a PATCH path", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace","path":"displayName\u0000","value":"A"}`), status: 400, scimType: "invalidValue"},
			{name: "NUL in a PATCH op", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace\u0000","path":"displayName","value":"A"}`), status: 400, scimType: "invalidValue"},
			{name: "escaped NUL in a PATCH path's filter literal", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace","path":"emails[value eq \"a\\u0000\"].type","value":"home"}`), status: 400, scimType: "invalidValue"},
			{name: "lone surrogate in a PATCH path's filter literal", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"remove","path":"emails[value eq \"\\ud800\"]"}`), status: 400, scimType: "invalidValue"},
			{name: "NUL in a pathless PATCH value", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace","value":{"name.givenName":"A\u0000"}}`), status: 400, scimType: "invalidValue"},
			{name: "escaped NUL in a filter literal", method: "GET", path: filter(`userName eq "ann\u0000"`),
				status: 400, scimType: "invalidFilter"},
			{name: "raw NUL in a filter", method: "GET", path: filter("userName eq \"ann\x00\""),
				status: 400, scimType: "invalidFilter"},
			{name: "invalid UTF-8 in a filter", method: "GET", path: filter("userName sw \"\xff\""),
				status: 400, scimType: "invalidFilter"},
			{name: "escaped lone surrogate in a filter", method: "GET", path: filter(`displayName eq "\ud800"`),
				status: 400, scimType: "invalidFilter"},
			{name: "escaped NUL in a value filter", method: "GET", path: filter(`emails[value gt "\u0000"]`),
				status: 400, scimType: "invalidFilter"},
			{name: "NUL in attributes", method: "GET", path: "/acme/Users?attributes=userName%00",
				status: 400, scimType: "invalidValue"},
			{name: "invalid UTF-8 in excludedAttributes", method: "GET", path: "/acme/Users/" + ann + "?excludedAttributes=%FF",
				status: 400, scimType: "invalidValue"},
			{name: "NUL in an id", method: "GET", path: "/acme/Users/%00", status: 404},
			{name: "NUL in a tenant", method: "GET", path: "/ac%00me/Users", status: 404},
			{name: "NUL in the id of a PATCH", method: "PATCH", path: "/acme/Users/a%00",
				body: patchBody(`{"op":"replace","path":"displayName","value":"A"}`), status: 404},
			{name: "invalid UTF-8 in the id of a DELETE", method: "DELETE", path: "/acme/Users/%FF", status: 404},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e.t = t
				before := e.users("acme")
				r := e.do(tt.method, tt.path, tt.body)
				requireSCIMError(t, r, tt.status, tt.scimType)
				assert.Equal(t, before, e.users("acme"), "a refused request changes nothing")
			})
		}

		t.Run("valid text is kept exactly", func(t *testing.T) {
			e.t = t
			r := e.do("POST", "/acme/Users", `{"userName":"zoe@example.com","displayName":"Zo\u00eb \ud83d\ude00","title":"C:\\u0000"}`)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			id, _ := r.JSON(t)["id"].(string)
			total, ids := entraIDs(t, e.do("GET", filter(`displayName eq "Zoë \ud83d\ude00"`), nil))
			assert.Equal(t, 1, total)
			assert.Equal(t, []string{id}, ids)
			for _, u := range e.users("acme") {
				if u.ID == id {
					assert.Equal(t, "Zoë 😀", u.DisplayName)
					assert.Equal(t, `C:\u0000`, u.Title)
				}
			}
		})
	})
}
