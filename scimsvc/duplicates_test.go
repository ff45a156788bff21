package scimsvc_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDuplicateKeys: a body whose object names one attribute twice — the same key twice, keys
// differing only in case, a dotted key and a nested one, a URN-qualified key and a bare one — is
// refused with 400 invalidSyntax and changes nothing; so are PATCH operations with two op, path
// or value members, and a PatchOp with both Operations and operations. encoding/json would keep
// one of them, and a map's order chose which (`{"active":true,"ACTIVE":false}` stored false 27
// times of 30).
func TestDuplicateKeys(t *testing.T) {
	const (
		core       = "urn:ietf:params:scim:schemas:core:2.0:User"
		enterprise = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	)
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := e.do("POST", "/acme/Users", `{"userName":"ann@example.com","active":true,"name":{"givenName":"Ann"}}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		ann, _ := r.JSON(t)["id"].(string)

		tests := []struct{ name, method, path, body string }{
			{name: "keys in another case", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","active":true,"ACTIVE":false}`},
			{name: "the same key twice", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","active":true,"active":false}`},
			{name: "an unknown key twice", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","x-custom":1,"x-custom":2}`},
			{name: "a null and a value", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","nickName":null,"NICKNAME":"cy"}`},
			{name: "a nested and a dotted sub-attribute", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","name":{"givenName":"A"},"name.givenName":"B"}`},
			{name: "a bare and a URN-qualified attribute", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","name.givenName":"A","` + core + `:name.givenName":"B"}`},
			{name: "an attribute and the core URN's object", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","` + core + `":{"userName":"dan@example.com"}}`},
			{name: "an extension's object and a URN-qualified key", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","` + enterprise + `":{"department":"X"},"` + enterprise + `:department":"Y"}`},
			{name: "an extension's URN in two cases", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","` + enterprise + `":{"department":"X"},"URN:IETF:params:scim:schemas:extension:enterprise:2.0:User":{"costCenter":"Y"}}`},
			{name: "an alias and the attribute", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","externalId":"1","external_id":"2"}`},
			{name: "a sub-attribute in two cases", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","name":{"givenName":"A","GivenName":"B"}}`},
			{name: "a sub-attribute of a multi-valued value in two cases", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","emails":[{"value":"a@example.com","VALUE":"b@example.com"}]}`},
			{name: "a read-only member twice", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","meta":{"resourceType":"User","resourceType":"Group"}}`},
			{name: "a name written with an escape", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","\u0061ctive":true,"active":false}`},
			{name: "after a nested array", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","emails":[{"value":"a@example.com"}],"x":[1,{"y":[]}],"EMAILS":[]}`},
			{name: "at the end of a large object", method: "POST", path: "/acme/Users",
				body: `{"userName":"cy@example.com","a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"A5":5}`},
			{name: "a replace", method: "PUT", path: "/acme/Users/" + ann,
				body: `{"userName":"ann@example.com","active":false,"Active":true}`},
			{name: "Operations and operations", method: "PATCH", path: "/acme/Users/" + ann,
				body: `{"Operations":[{"op":"replace","path":"active","value":false}],"operations":[{"op":"replace","path":"active","value":true}]}`},
			{name: "schemas twice", method: "PATCH", path: "/acme/Users/" + ann,
				body: `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Schemas":[],"Operations":[{"op":"replace","path":"active","value":false}]}`},
			{name: "op and OP", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace","OP":"remove","path":"active","value":false}`)},
			{name: "path and Path", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace","path":"active","Path":"nickName","value":false}`)},
			{name: "value and Value", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace","path":"active","value":false,"Value":true}`)},
			{name: "keys in another case in a pathless value", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace","value":{"active":false,"ACTIVE":true}}`)},
			{name: "a nested and a dotted key in a pathless value", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace","value":{"name":{"givenName":"A"},"name.givenName":"B"}}`)},
			{name: "an attribute and a sub-attribute in a pathless value", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace","value":{"name.givenName":"B","NAME":null}}`)},
			{name: "sub-attributes in two cases in a path's value", method: "PATCH", path: "/acme/Users/" + ann,
				body: patchBody(`{"op":"replace","path":"name","value":{"givenName":"A","givenname":"B"}}`)},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e.t = t
				before := e.users("acme")
				r := e.do(tt.method, tt.path, tt.body)
				requireSCIMError(t, r, http.StatusBadRequest, "invalidSyntax")
				assert.Equal(t, before, e.users("acme"), "a refused request changes nothing")
			})
		}

		t.Run("the reproduction, 30 times", func(t *testing.T) {
			e.t = t
			for range 30 {
				r := e.do("PATCH", "/acme/Users/"+ann, patchBody(`{"op":"replace","value":{"active":true,"ACTIVE":false}}`))
				requireSCIMError(t, r, http.StatusBadRequest, "invalidSyntax")
			}
			r := e.do("GET", "/acme/Users/"+ann, nil)
			require.Equal(t, http.StatusOK, r.Status)
			assert.Equal(t, true, r.JSON(t)["active"])
		})

		t.Run("distinct attributes are not duplicates", func(t *testing.T) {
			e.t = t
			r := e.do("POST", "/acme/Users", `{"userName":"dan@example.com","name.givenName":"Dan","`+core+`:name.familyName":"Roe",`+
				`"`+enterprise+`":{"department":"R&D"},"`+enterprise+`:costCenter":"42"}`)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			u := r.JSON(t)
			assert.Equal(t, map[string]any{"givenName": "Dan", "familyName": "Roe"}, u["name"])
			assert.Equal(t, "R&D", jsonAt(u, enterprise, "department"))
			assert.Equal(t, "42", jsonAt(u, enterprise, "costCenter"))

			// The same names in different objects, and names inside strings, are no duplicates.
			r = e.do("POST", "/acme/Users", `{"userName":"eve@example.com","displayName":"}{,\"userName\":","nickName":"a\\",`+
				`"name":{"givenName":"userName"},"emails":[{"value":"e1@example.com","type":"work"},{"value":"e2@example.com","type":"home"}],`+
				`"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":{"a1":1}}`)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			assert.Equal(t, `}{,"userName":`, r.JSON(t)["displayName"])
			assert.Equal(t, `a\`, r.JSON(t)["nickName"])

			// Two operations on one attribute apply in order.
			r = e.do("PATCH", "/acme/Users/"+ann, patchBody(`{"op":"replace","path":"active","value":false}`, `{"op":"Replace","path":"ACTIVE","value":true}`))
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			assert.Equal(t, true, r.JSON(t)["active"])
		})
	})
}
