package scimsvc_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store/schema"
)

// customURN is the URN under which Microsoft Entra ID sends a custom extension's attributes.
const customURN = "urn:ietf:params:scim:schemas:extension:CustomExtensionName:2.0:User"

// customExtension is the host's definition of customURN, in its JSON form (RFC 7643 §7).
const customExtension = `{
	"id": "` + customURN + `",
	"name": "CustomExtension",
	"description": "Attributes of our directory",
	"attributes": [
		{"name": "costCode", "type": "string", "multiValued": false, "required": false, "caseExact": true,
		 "mutability": "readWrite", "returned": "default", "uniqueness": "none"},
		{"name": "badge", "type": "integer", "uniqueness": "server"},
		{"name": "hired", "type": "dateTime"},
		{"name": "remote", "type": "boolean"},
		{"name": "site", "type": "complex", "subAttributes": [
			{"name": "building", "type": "string"},
			{"name": "floor", "type": "integer"}
		]},
		{"name": "employeeId", "type": "string", "mutability": "immutable"}
	]
}`

func customSchema(t *testing.T) *schema.Schema {
	t.Helper()
	var s schema.Schema
	require.NoError(t, json.Unmarshal([]byte(customExtension), &s))
	return &s
}

// TestCustomExtensionEntra provisions a user with a custom extension the way Entra ID does, on
// every backend: create with the extension, filter by its attributes (pushed down to SQL on the
// SQL stores), PATCH pathless with URN-qualified keys and with URN paths, GET projected, and
// discovery.
func TestCustomExtensionEntra(t *testing.T) {
	ext := customSchema(t)
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := e.do("POST", "/acme/Users", `{
			"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "`+customURN+`"],
			"userName": "bea@example.com", "active": true,
			"`+customURN+`": {"costCode": "CC-1", "badge": 7, "hired": "2024-05-01T09:00:00Z", "site": {"building": "North", "floor": 3}, "employeeId": "E1"}
		}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		bea := r.JSON(t)
		id := bea["id"].(string)
		assert.Contains(t, bea["schemas"], customURN)
		assert.Equal(t, "CC-1", jsonAt(bea, customURN, "costCode"))
		assert.Equal(t, 7.0, jsonAt(bea, customURN, "badge"))
		assert.Equal(t, 3.0, jsonAt(bea, customURN, "site", "floor"))
		r = e.do("POST", "/acme/Users", `{"userName": "cy@example.com", "`+customURN+`": {"costCode": "cc-1", "badge": 8}}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		cy := r.JSON(t)["id"].(string)

		list := func(f string) []string {
			t.Helper()
			r := e.do("GET", "/acme/Users?filter="+url.QueryEscape(f), nil)
			require.Equal(t, http.StatusOK, r.Status, "%s: %s", f, r.Body)
			var names []string
			for _, u := range r.JSON(t)["Resources"].([]any) {
				names = append(names, u.(map[string]any)["userName"].(string))
			}
			return names
		}
		assert.Equal(t, []string{"bea@example.com"}, list(customURN+`:costCode eq "CC-1"`), "caseExact")
		assert.Equal(t, []string{"cy@example.com"}, list(customURN+`:badge gt 7`))
		assert.Equal(t, []string{"bea@example.com"}, list(customURN+`:site.building eq "north"`))
		assert.Equal(t, []string{"bea@example.com"}, list(customURN+`:hired lt "2025-01-01T00:00:00Z"`))
		assert.Equal(t, []string{"bea@example.com"}, list(customURN+`:site pr`))
		assert.Equal(t, []string{"cy@example.com"}, list(`not (`+customURN+`:employeeId pr)`))

		// Entra ID: a pathless replace whose value has URN-qualified keys.
		r = e.do("PATCH", "/acme/Users/"+id, patchBody(`{"op":"Replace","value":{"`+customURN+`:costCode":"CC-2","`+customURN+`:remote":"True"}}`))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, "CC-2", jsonAt(r.JSON(t), customURN, "costCode"))
		assert.Equal(t, true, jsonAt(r.JSON(t), customURN, "remote"))
		// And with a URN path, to a sub-attribute too.
		r = e.do("PATCH", "/acme/Users/"+id, patchBody(
			`{"op":"Replace","path":"`+customURN+`:site.floor","value":4}`,
			`{"op":"Add","path":"`+customURN+`:hired","value":"2024-06-01T09:00:00Z"}`))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, 4.0, jsonAt(r.JSON(t), customURN, "site", "floor"))
		assert.Equal(t, "North", jsonAt(r.JSON(t), customURN, "site", "building"))
		assert.Equal(t, []string{"bea@example.com"}, list(customURN+`:site.floor eq 4 and `+customURN+`:costCode eq "CC-2"`))

		// Projected.
		r = e.do("GET", "/acme/Users/"+id+"?attributes="+url.QueryEscape(customURN+":costCode,userName"), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		got := r.JSON(t)
		assert.Equal(t, map[string]any{"costCode": "CC-2"}, got[customURN])
		assert.Nil(t, got["emails"])
		r = e.do("GET", "/acme/Users/"+id+"?excludedAttributes="+url.QueryEscape(customURN+":site"), nil)
		assert.Nil(t, jsonAt(r.JSON(t), customURN, "site"))
		assert.Equal(t, "CC-2", jsonAt(r.JSON(t), customURN, "costCode"))

		// Removed with a URN path.
		r = e.do("PATCH", "/acme/Users/"+id, patchBody(`{"op":"Remove","path":"`+customURN+`:remote"}`))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Nil(t, jsonAt(r.JSON(t), customURN, "remote"))

		// Validated: type, immutability, uniqueness; nothing changes.
		for _, tc := range []struct{ name, body, scimType string }{
			{"a string for an integer", `{"op":"Replace","path":"` + customURN + `:badge","value":"x"}`, "invalidValue"},
			{"a decimal for an integer", `{"op":"Replace","path":"` + customURN + `:badge","value":1.5}`, "invalidValue"},
			{"not a dateTime", `{"op":"Replace","path":"` + customURN + `:hired","value":"yesterday"}`, "invalidValue"},
			{"an immutable value changed", `{"op":"Replace","path":"` + customURN + `:employeeId","value":"E2"}`, "mutability"},
		} {
			r = e.do("PATCH", "/acme/Users/"+id, patchBody(tc.body))
			assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", tc.name, r.Body)
			assert.Equal(t, tc.scimType, r.JSON(t)["scimType"], tc.name)
		}
		r = e.do("PATCH", "/acme/Users/"+cy, patchBody(`{"op":"Replace","path":"`+customURN+`:badge","value":7}`))
		assert.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		assert.Equal(t, "uniqueness", r.JSON(t)["scimType"])
		r = e.do("POST", "/acme/Users", `{"userName": "dan@example.com", "`+customURN+`": {"badge": 7}}`)
		assert.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		assert.Equal(t, []string{"cy@example.com"}, list(customURN+`:badge eq 8`))
		r = e.do("GET", "/acme/Users/"+id, nil)
		assert.Equal(t, "E1", jsonAt(r.JSON(t), customURN, "employeeId"))
		assert.Equal(t, 7.0, jsonAt(r.JSON(t), customURN, "badge"))

		// Discovery.
		r = e.do("GET", "/acme/ResourceTypes/User", nil)
		assert.Contains(t, string(r.Body), `{"schema":"`+customURN+`","required":false}`)
		r = e.do("GET", "/acme/Schemas/"+customURN, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, "server", jsonAt(r.JSON(t), "attributes", 1, "uniqueness"))
		assert.Equal(t, "floor", jsonAt(r.JSON(t), "attributes", 4, "subAttributes", 1, "name"))
	}, func(c *scimsvc.Config) {
		c.UserExtensions = []schema.Extension{{Schema: ext}}
	})
}

// TestCustomExtensionRequired proves a required extension, required attributes of an extension
// and an extension of Groups.
func TestCustomExtensionRequired(t *testing.T) {
	const groupURN = "urn:example:params:scim:schemas:extension:Team:2.0:Group"
	groupExt := &schema.Schema{ID: groupURN, Name: "Team", Attributes: []*schema.Attribute{
		{Name: "code", Type: schema.String, Required: true},
		{Name: "size", Type: schema.Integer},
	}}
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := e.do("POST", "/acme/Users", `{"userName": "bea@example.com"}`)
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
		assert.Contains(t, r.JSON(t)["detail"], customURN)
		r = e.do("POST", "/acme/Users", `{"userName": "bea@example.com", "`+customURN+`": {"costCode": "A"}}`)
		assert.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)

		r = e.do("POST", "/acme/Groups", `{"displayName": "Staff", "`+groupURN+`": {"size": 3}}`)
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
		assert.Contains(t, r.JSON(t)["detail"], groupURN+":code")
		r = e.do("POST", "/acme/Groups", `{"displayName": "Staff"}`)
		assert.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		r = e.do("POST", "/acme/Groups", `{"displayName": "Ops", "`+groupURN+`": {"code": "OPS", "size": 3}}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		gid := r.JSON(t)["id"].(string)
		r = e.do("GET", "/acme/Groups?filter="+url.QueryEscape(groupURN+`:code eq "ops"`), nil)
		assert.Equal(t, 1.0, r.JSON(t)["totalResults"], "%s", r.Body)
		r = e.do("PATCH", "/acme/Groups/"+gid, patchBody(`{"op":"Replace","value":{"`+groupURN+`:size":4}}`))
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, 4.0, jsonAt(r.JSON(t), groupURN, "size"))
		assert.Contains(t, r.JSON(t)["schemas"], groupURN)
		r = e.do("GET", "/acme/Groups?filter="+url.QueryEscape(groupURN+`:size eq 4`), nil)
		assert.Equal(t, 1.0, r.JSON(t)["totalResults"], "%s", r.Body)
	}, func(c *scimsvc.Config) {
		c.UserExtensions = []schema.Extension{{Schema: customSchema(t), Required: true}}
		c.GroupExtensions = []schema.Extension{{Schema: groupExt}}
	})
}

// TestCustomExtensionInvalid proves that New names the attribute at fault in a bad definition.
func TestCustomExtensionInvalid(t *testing.T) {
	mem := newEnv(t).mem
	for _, tc := range []struct {
		attr *schema.Attribute
		want string
	}{
		{&schema.Attribute{Name: "x", Type: "text"}, `"urn:example:X:x": unknown type "text"`},
		{&schema.Attribute{Name: "1x", Type: schema.String}, `"urn:example:X:1x": not a valid attribute name`},
		{&schema.Attribute{Name: "c", Type: schema.Complex}, `"urn:example:X:c": a complex attribute needs subAttributes`},
		{&schema.Attribute{Name: "c", Type: schema.Complex, SubAttributes: []*schema.Attribute{{Name: "s", Type: schema.String, Mutability: "sometimes"}}}, `"urn:example:X:c.s": unknown mutability "sometimes"`},
		{&schema.Attribute{Name: "c", Type: schema.Complex, SubAttributes: []*schema.Attribute{{Name: "s", Type: schema.String, MultiValued: true}}}, `"urn:example:X:c.s": a sub-attribute cannot be multi-valued`},
		{&schema.Attribute{Name: "c", Type: schema.Complex, SubAttributes: []*schema.Attribute{{Name: "s", Type: schema.Complex}}}, `"urn:example:X:c.s": a sub-attribute cannot be complex`},
		{&schema.Attribute{Name: "tags", Type: schema.String, MultiValued: true, Uniqueness: schema.ServerUnique}, `"urn:example:X:tags": only a single-valued simple attribute can be unique`},
	} {
		_, err := scimsvc.New(scimsvc.Config{Tenants: mem.Tenants(), Users: mem.Users(), Groups: mem.Groups(), APIKeys: mem.APIKeys(), BaseURL: testBase,
			UserExtensions: []schema.Extension{{Schema: &schema.Schema{ID: "urn:example:X", Attributes: []*schema.Attribute{tc.attr}}}}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}
