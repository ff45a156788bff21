package scimsvc_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store/schema"
)

// staffURN is an extension of Users with every shape RFC 7643 §7 allows an attribute: simple,
// multi-valued simple, complex, multi-valued complex; with canonicalValues, caseExact and
// names that core attributes have too (externalId, emails).
const staffURN = "urn:example:params:scim:schemas:extension:Staff:2.0:User"

const staffExtension = `{
	"id": "` + staffURN + `",
	"name": "Staff",
	"attributes": [
		{"name": "tags", "type": "string", "multiValued": true},
		{"name": "levels", "type": "integer", "multiValued": true},
		{"name": "kind", "type": "string", "canonicalValues": ["staff", "contractor"]},
		{"name": "externalId", "type": "string", "caseExact": true},
		{"name": "manager", "type": "complex", "subAttributes": [
			{"name": "value", "type": "string", "caseExact": true, "required": true},
			{"name": "displayName", "type": "string"}
		]},
		{"name": "addresses", "type": "complex", "multiValued": true, "subAttributes": [
			{"name": "city", "type": "string"},
			{"name": "type", "type": "string", "canonicalValues": ["work", "home"]}
		]},
		{"name": "emails", "type": "complex", "multiValued": true, "subAttributes": [
			{"name": "value", "type": "string"},
			{"name": "type", "type": "string"}
		]}
	]
}`

func staffSchema(t *testing.T) *schema.Schema {
	t.Helper()
	var s schema.Schema
	require.NoError(t, json.Unmarshal([]byte(staffExtension), &s))
	return &s
}

func withStaff(t *testing.T) func(*scimsvc.Config) {
	s := staffSchema(t)
	return func(c *scimsvc.Config) { c.UserExtensions = []schema.Extension{{Schema: s}} }
}

// listNames returns the userNames a GET of path lists, in order.
func (e *backendEnv) listNames(path string) []string {
	e.t.Helper()
	r := e.do("GET", path, nil)
	require.Equal(e.t, http.StatusOK, r.Status, "%s: %s", path, r.Body)
	names := []string{}
	for _, u := range r.JSON(e.t)["Resources"].([]any) {
		names = append(names, u.(map[string]any)["userName"].(string))
	}
	return names
}

// filterNames returns the userNames GET /acme/Users?filter=f lists.
func (e *backendEnv) filterNames(f string) []string {
	e.t.Helper()
	return e.listNames("/acme/Users?filter=" + url.QueryEscape(f))
}

// TestExtensionMultiValued: multi-valued simple and complex, and complex, attributes of a host
// extension are validated, stored, returned, filtered (value paths included), patched (with URN
// paths and value filters), projected and sorted, on every backend; an attribute named as a core
// one stays apart from it.
func TestExtensionMultiValued(t *testing.T) {
	x := staffURN + ":"
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := e.do("POST", "/acme/Users", `{"userName": "ann", "externalId": "core-1", "emails": [{"value": "ann@core.example"}],
			"`+staffURN+`": {"tags": ["red", "Blue"], "levels": [3, 5], "kind": "Staff", "externalId": "X-1",
				"manager": {"value": "M-1", "displayName": "Maud"},
				"addresses": [{"type": "work", "city": "Oslo"}, {"type": "home", "city": "Rome"}],
				"emails": [{"value": "ann@ext.example", "type": "work"}]}}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		ann := r.JSON(t)
		id := ann["id"].(string)
		assert.Equal(t, []any{"urn:ietf:params:scim:schemas:core:2.0:User", staffURN}, ann["schemas"], "the extensions the user has values of")
		assert.Equal(t, []any{"red", "Blue"}, jsonAt(ann, staffURN, "tags"))
		assert.Equal(t, []any{3.0, 5.0}, jsonAt(ann, staffURN, "levels"))
		assert.Equal(t, "Staff", jsonAt(ann, staffURN, "kind"))
		assert.Equal(t, map[string]any{"value": "M-1", "displayName": "Maud"}, jsonAt(ann, staffURN, "manager"))
		assert.Equal(t, []any{map[string]any{"type": "work", "city": "Oslo"}, map[string]any{"type": "home", "city": "Rome"}}, jsonAt(ann, staffURN, "addresses"))
		assert.Equal(t, "core-1", ann["externalId"])
		assert.Equal(t, "ann@core.example", jsonAt(ann, "emails", 0, "value"))

		r = e.do("POST", "/acme/Users", `{"userName": "bob", "externalId": "X-1", "emails": [{"value": "ann@ext.example"}],
			"`+staffURN+`": {"tags": ["green"], "levels": [8], "addresses": [{"type": "work", "city": "Rome"}]}}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		bob := r.JSON(t)["id"].(string)
		r = e.do("POST", "/acme/Users", `{"userName": "cy"}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)

		// Refused, nothing stored: a value of the wrong type in a multi-valued simple
		// attribute, values outside canonicalValues (of an attribute and of a sub-attribute).
		for _, tc := range []struct{ name, body string }{
			{"a number among strings", `{"tags": ["a", 1]}`},
			{"a string among integers", `{"levels": [1, "x"]}`},
			{"a decimal among integers", `{"levels": [1.5]}`},
			{"an object in a simple list", `{"tags": [{"value": "a"}]}`},
			{"not a canonical value", `{"kind": "intern"}`},
			{"not a canonical sub-attribute value", `{"addresses": [{"type": "office", "city": "Bergen"}]}`},
			{"a required sub-attribute missing", `{"manager": {"displayName": "Maud"}}`},
		} {
			r := e.do("POST", "/acme/Users", `{"userName": "dan", "`+staffURN+`": `+tc.body+`}`)
			assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", tc.name, r.Body)
			assert.Equal(t, "invalidValue", r.JSON(t)["scimType"], tc.name)
		}
		assert.Len(t, e.users("acme"), 3, "nothing stored")

		// Filters.
		for _, tc := range []struct {
			filter string
			want   []string
		}{
			{x + `tags eq "blue"`, []string{"ann"}},
			{x + `tags eq "green"`, []string{"bob"}},
			{x + `tags pr`, []string{"ann", "bob"}},
			{`not (` + x + `tags pr)`, []string{"cy"}},
			{x + `levels gt 4`, []string{"ann", "bob"}},
			{x + `levels lt 4`, []string{"ann"}},
			{x + `kind eq "staff"`, []string{"ann"}},
			{x + `manager.value eq "M-1"`, []string{"ann"}},
			{x + `manager.value eq "m-1"`, []string{}},
			{x + `addresses[type eq "work"].city eq "rome"`, []string{"bob"}},
			{x + `addresses[type eq "work" and city eq "oslo"]`, []string{"ann"}},
			{x + `addresses[type eq "work" and city eq "rome"]`, []string{"bob"}},
			{x + `addresses.city eq "rome"`, []string{"ann", "bob"}},
			{x + `externalId eq "X-1"`, []string{"ann"}},
			{`externalId eq "X-1"`, []string{"bob"}},
			{x + `emails.value eq "ann@ext.example"`, []string{"ann"}},
			{`emails.value eq "ann@ext.example"`, []string{"bob"}},
			{`emails[type eq "work"].value eq "ann@ext.example"`, []string{}},
			{`schemas eq "` + staffURN + `"`, []string{"ann", "bob"}},
			{`schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"`, []string{}},
		} {
			assert.Equal(t, tc.want, e.filterNames(tc.filter), tc.filter)
		}

		// PATCH with URN paths.
		patch := func(ops ...string) map[string]any {
			t.Helper()
			r := e.do("PATCH", "/acme/Users/"+id, patchBody(ops...))
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			return r.JSON(t)
		}
		got := patch(`{"op":"add","path":"` + x + `tags","value":["RED","yellow"]}`)
		assert.Equal(t, []any{"red", "Blue", "yellow"}, jsonAt(got, staffURN, "tags"), "add keeps a value already there once")
		got = patch(`{"op":"add","path":"` + x + `tags","value":"white"}`)
		assert.Equal(t, []any{"red", "Blue", "yellow", "white"}, jsonAt(got, staffURN, "tags"), "a single value where an array is expected")
		got = patch(`{"op":"remove","path":"` + x + `tags","value":["blue","white"]}`)
		assert.Equal(t, []any{"red", "yellow"}, jsonAt(got, staffURN, "tags"), "remove of listed values")
		got = patch(`{"op":"replace","path":"` + x + `levels","value":[1,2]}`)
		assert.Equal(t, []any{1.0, 2.0}, jsonAt(got, staffURN, "levels"))
		got = patch(`{"op":"replace","path":"` + x + `addresses[type eq \"work\"].city","value":"Bergen"}`)
		assert.Equal(t, []any{map[string]any{"type": "work", "city": "Bergen"}, map[string]any{"type": "home", "city": "Rome"}}, jsonAt(got, staffURN, "addresses"))
		got = patch(`{"op":"remove","path":"` + x + `addresses[type eq \"home\"]"}`)
		assert.Equal(t, []any{map[string]any{"type": "work", "city": "Bergen"}}, jsonAt(got, staffURN, "addresses"))
		got = patch(`{"op":"add","path":"` + x + `addresses","value":[{"type":"home","city":"Pisa"}]}`)
		assert.Len(t, jsonAt(got, staffURN, "addresses"), 2)
		got = patch(`{"op":"replace","path":"` + x + `manager.value","value":"M-2"}`)
		assert.Equal(t, map[string]any{"value": "M-2", "displayName": "Maud"}, jsonAt(got, staffURN, "manager"))
		got = patch(`{"op":"replace","path":"` + x + `kind","value":"contractor"}`)
		assert.Equal(t, "contractor", jsonAt(got, staffURN, "kind"))
		got = patch(`{"op":"remove","path":"` + x + `levels"}`)
		assert.Nil(t, jsonAt(got, staffURN, "levels"))
		assert.Equal(t, []string{"ann"}, e.filterNames(x+`addresses[type eq "work"].city eq "bergen"`))
		assert.Equal(t, []string{"ann"}, e.filterNames(x+`tags eq "yellow"`))
		assert.Equal(t, []string{"bob"}, e.filterNames(x+`levels pr`))
		assert.Equal(t, "core-1", got["externalId"], "the core externalId is untouched")
		got = patch(`{"op":"replace","path":"`+x+`externalId","value":"X-2"}`, `{"op":"add","path":"`+x+`emails","value":[{"value":"ann2@ext.example"}]}`)
		assert.Equal(t, "X-2", jsonAt(got, staffURN, "externalId"))
		assert.Equal(t, "core-1", got["externalId"], "the core externalId is untouched")
		assert.Equal(t, []any{map[string]any{"value": "ann@core.example"}}, got["emails"], "the core emails are untouched")
		assert.Equal(t, []string{"ann"}, e.filterNames(x+`externalId eq "X-2"`))
		assert.Equal(t, []string{"ann"}, e.filterNames(`externalId eq "core-1"`))
		assert.Equal(t, []string{"ann"}, e.filterNames(x+`emails.value eq "ann2@ext.example"`))
		assert.Equal(t, []string{}, e.filterNames(`emails.value eq "ann2@ext.example"`))

		// Refused PATCHes change nothing.
		for _, tc := range []struct{ name, op, scimType string }{
			{"a value filter on a simple list", `{"op":"remove","path":"` + x + `tags[value eq \"red\"]"}`, "invalidPath"},
			{"a canonical value broken", `{"op":"replace","path":"` + x + `addresses[type eq \"work\"].type","value":"office"}`, "invalidValue"},
			{"a wrong type added", `{"op":"add","path":"` + x + `tags","value":[true]}`, "invalidValue"},
			{"not a canonical value", `{"op":"replace","path":"` + x + `kind","value":"intern"}`, "invalidValue"},
			{"a required sub-attribute removed", `{"op":"remove","path":"` + x + `manager.value"}`, "invalidValue"},
		} {
			r := e.do("PATCH", "/acme/Users/"+id, patchBody(tc.op))
			assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", tc.name, r.Body)
			assert.Equal(t, tc.scimType, r.JSON(t)["scimType"], tc.name)
		}
		r = e.do("GET", "/acme/Users/"+id, nil)
		assert.Equal(t, got[staffURN], r.JSON(t)[staffURN], "nothing changed")

		// Projection with sub-attribute paths.
		r = e.do("GET", "/acme/Users/"+id+"?attributes="+url.QueryEscape(x+"addresses.city,"+x+"tags"), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, map[string]any{"tags": []any{"red", "yellow"}, "addresses": []any{map[string]any{"city": "Bergen"}, map[string]any{"city": "Pisa"}}}, r.JSON(t)[staffURN])
		assert.Nil(t, r.JSON(t)["userName"])
		r = e.do("GET", "/acme/Users/"+id+"?excludedAttributes="+url.QueryEscape(x+"addresses.type,"+x+"manager"), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, []any{map[string]any{"city": "Bergen"}, map[string]any{"city": "Pisa"}}, jsonAt(r.JSON(t), staffURN, "addresses"))
		assert.Nil(t, jsonAt(r.JSON(t), staffURN, "manager"))
		assert.Equal(t, "ann", r.JSON(t)["userName"])

		// Sorting: a multi-valued simple attribute by its first value, a sub-attribute of a
		// multi-valued complex one, a simple one; no value last.
		assert.Equal(t, []string{"bob", "ann", "cy"}, e.listNames("/acme/Users?sortBy="+url.QueryEscape(x+"tags")))
		assert.Equal(t, []string{"ann", "bob", "cy"}, e.listNames("/acme/Users?sortBy="+url.QueryEscape(x+"addresses.city")))
		assert.Equal(t, []string{"bob", "ann", "cy"}, e.listNames("/acme/Users?sortOrder=descending&sortBy="+url.QueryEscape(x+"addresses.city")))
		r = e.do("GET", "/acme/Users?sortBy="+url.QueryEscape(x+"manager"), nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, "a complex attribute cannot be sorted by")

		// PUT replaces the extension's values whole.
		r = e.do("PUT", "/acme/Users/"+bob, `{"userName": "bob", "externalId": "X-1", "`+staffURN+`": {"tags": ["blue"]}}`)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, map[string]any{"tags": []any{"blue"}}, r.JSON(t)[staffURN])
		assert.Equal(t, []string{"bob"}, e.filterNames(x+`tags eq "BLUE"`))
		assert.Equal(t, []string{}, e.filterNames(x+`levels pr`))

		// Discovery lists the attributes as defined.
		r = e.do("GET", "/acme/Schemas/"+url.PathEscape(staffURN), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		s := r.JSON(t)
		assert.Equal(t, "tags", jsonAt(s, "attributes", 0, "name"))
		assert.Equal(t, true, jsonAt(s, "attributes", 0, "multiValued"))
		assert.Equal(t, "string", jsonAt(s, "attributes", 0, "type"))
		assert.Equal(t, []any{"staff", "contractor"}, jsonAt(s, "attributes", 2, "canonicalValues"))
		assert.Equal(t, true, jsonAt(s, "attributes", 5, "multiValued"))
		assert.Equal(t, "complex", jsonAt(s, "attributes", 5, "type"))
		assert.Equal(t, []any{"work", "home"}, jsonAt(s, "attributes", 5, "subAttributes", 1, "canonicalValues"))
		assert.Equal(t, "readWrite", jsonAt(s, "attributes", 5, "subAttributes", 0, "mutability"))
	}, withStaff(t))
}

// TestExtensionUniqueRace: 20 clients create users with one value of a "server"-unique
// extension attribute at once; exactly one gets 201 and every other 409 uniqueness. Then 20
// clients each PATCH a different user, and 20 a different group, to one unique value: again
// exactly one wins. On every backend.
func TestExtensionUniqueRace(t *testing.T) {
	const writers = 20
	const teamURN = "urn:example:params:scim:schemas:extension:Team:2.0:Group"
	groupExt := &schema.Schema{ID: teamURN, Name: "Team", Attributes: []*schema.Attribute{{Name: "code", Type: schema.String, Uniqueness: schema.ServerUnique}}}
	race := func(t *testing.T, e *backendEnv, req func(i int) (method, path, body string), won int) int {
		t.Helper()
		statuses := make([]int, writers)
		bodies := make([][]byte, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				<-start
				method, path, body := req(i)
				r := e.do(method, path, body)
				statuses[i], bodies[i] = r.Status, r.Body
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, s := range statuses {
			switch s {
			case won:
				assert.Equal(t, -1, winner, "writers %d and %d both won", winner, i)
				winner = i
			case http.StatusConflict:
				var body map[string]any
				require.NoError(t, json.Unmarshal(bodies[i], &body))
				assert.Equal(t, "uniqueness", body["scimType"], "writer %d", i)
			default:
				t.Errorf("writer %d: status %d: %s", i, s, bodies[i])
			}
		}
		require.NotEqual(t, -1, winner, "no writer won")
		return winner
	}
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		winner := race(t, e, func(i int) (string, string, string) {
			return "POST", "/acme/Users", fmt.Sprintf(`{"userName": "user%02d", "%s": {"badge": 7, "costCode": "A"}}`, i, customURN)
		}, http.StatusCreated)
		assert.Equal(t, []string{fmt.Sprintf("user%02d", winner)}, e.filterNames(customURN+`:badge eq 7`))
		assert.Len(t, e.users("acme"), 1)

		var ids []string
		for i := range writers {
			r := e.do("POST", "/acme/Users", fmt.Sprintf(`{"userName": "other%02d", "%s": {"badge": %d}}`, i, customURN, 100+i))
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			ids = append(ids, r.JSON(t)["id"].(string))
		}
		winner = race(t, e, func(i int) (string, string, string) {
			return "PATCH", "/acme/Users/" + ids[i], patchBody(`{"op":"replace","path":"` + customURN + `:badge","value":8}`)
		}, http.StatusOK)
		assert.Equal(t, []string{fmt.Sprintf("other%02d", winner)}, e.filterNames(customURN+`:badge eq 8`))

		var groups []string
		for i := range writers {
			r := e.do("POST", "/acme/Groups", fmt.Sprintf(`{"displayName": "group%02d"}`, i))
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			groups = append(groups, r.JSON(t)["id"].(string))
		}
		winner = race(t, e, func(i int) (string, string, string) {
			return "PATCH", "/acme/Groups/" + groups[i], patchBody(`{"op":"replace","path":"` + teamURN + `:code","value":"ops"}`)
		}, http.StatusOK)
		r := e.do("GET", "/acme/Groups?filter="+url.QueryEscape(teamURN+`:code eq "OPS"`), nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, 1.0, r.JSON(t)["totalResults"])
		assert.Equal(t, fmt.Sprintf("group%02d", winner), jsonAt(r.JSON(t), "Resources", 0, "displayName"))
	}, func(c *scimsvc.Config) {
		c.UserExtensions = []schema.Extension{{Schema: customSchema(t)}}
		c.GroupExtensions = []schema.Extension{{Schema: groupExt}}
	})
}

// entraCustomExtension is a custom extension under the URN Entra ID uses, with a multi-valued
// string, a complex and a multi-valued complex attribute.
const entraCustomExtension = `{
	"id": "` + customURN + `",
	"name": "CustomExtension",
	"attributes": [
		{"name": "employeeId", "type": "string"},
		{"name": "skills", "type": "string", "multiValued": true},
		{"name": "onCall", "type": "boolean", "multiValued": true},
		{"name": "site", "type": "complex", "subAttributes": [
			{"name": "building", "type": "string"},
			{"name": "floor", "type": "integer"}
		]},
		{"name": "deskPhones", "type": "complex", "multiValued": true, "subAttributes": [
			{"name": "value", "type": "string"},
			{"name": "type", "type": "string", "canonicalValues": ["work", "mobile"]}
		]}
	]
}`

// TestCustomExtensionEntraMultiValued provisions multi-valued and complex custom attributes in
// the shapes Entra ID sends (see interop.md) on every backend: create with the extension's
// object, match by a custom attribute, a pathless Replace whose keys are URN-qualified (dotted
// for a sub-attribute), Add and Remove of listed values with a URN path, a value as a bare string
// where a list is expected, booleans as strings, a value-path with a sub-attribute; every PATCH
// sent twice, as Entra ID retries, with the same result.
func TestCustomExtensionEntraMultiValued(t *testing.T) {
	var ext schema.Schema
	require.NoError(t, json.Unmarshal([]byte(entraCustomExtension), &ext))
	x := customURN + ":"
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := entraDo(t, e.env, "GET", entraQuery("Users", x+`employeeId eq "E-77"`, ""), "")
		total, _ := entraIDs(t, r)
		assert.Zero(t, total, "match before create")
		id := entraCreateUser(t, e.env, `{
			"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User", "`+customURN+`"],
			"externalId": "bea", "userName": "bea@example.com", "active": true,
			"emails": [{"primary": true, "type": "work", "value": "bea@example.com"}],
			"meta": {"resourceType": "User"},
			"`+customURN+`": {"employeeId": "E-77", "skills": ["go", "sql"], "onCall": ["True"],
				"site": {"building": "North", "floor": 3},
				"deskPhones": [{"value": "+47 1", "type": "work"}]}
		}`)
		r = entraDo(t, e.env, "GET", entraQuery("Users", x+`employeeId eq "E-77"`, ""), "")
		_, ids := entraIDs(t, r)
		assert.Equal(t, []string{id}, ids)
		r = entraDo(t, e.env, "GET", entraQuery("Users", x+`skills eq "SQL"`, ""), "")
		_, ids = entraIDs(t, r)
		assert.Equal(t, []string{id}, ids)

		steps := []struct {
			name, ops string
			check     func(t *testing.T, ext map[string]any)
		}{
			{"pathless replace with URN-qualified and dotted keys",
				`{"op":"Replace","value":{"` + x + `skills":["go","rust"],"` + x + `site.building":"South","` + x + `onCall":["False","True"]}}`,
				func(t *testing.T, ext map[string]any) {
					assert.Equal(t, []any{"go", "rust"}, ext["skills"])
					assert.Equal(t, map[string]any{"building": "South", "floor": 3.0}, ext["site"])
					assert.Equal(t, []any{false, true}, ext["onCall"])
				}},
			{"add a bare string to a list",
				`{"op":"Add","path":"` + x + `skills","value":"k8s"}`,
				func(t *testing.T, ext map[string]any) {
					assert.Equal(t, []any{"go", "rust", "k8s"}, ext["skills"])
				}},
			{"remove listed values",
				`{"op":"Remove","path":"` + x + `skills","value":["Rust"]}`,
				func(t *testing.T, ext map[string]any) {
					assert.Equal(t, []any{"go", "k8s"}, ext["skills"])
				}},
			{"replace a sub-attribute through a value path",
				`{"op":"Replace","path":"` + x + `deskPhones[type eq \"work\"].value","value":"+47 2"}`,
				func(t *testing.T, ext map[string]any) {
					assert.Equal(t, []any{map[string]any{"value": "+47 2", "type": "work"}}, ext["deskPhones"])
				}},
			{"add an element of a multi-valued complex attribute",
				`{"op":"Add","path":"` + x + `deskPhones","value":[{"value":"+47 3","type":"mobile"}]}`,
				func(t *testing.T, ext map[string]any) {
					assert.Len(t, ext["deskPhones"], 2)
				}},
			{"replace a sub-attribute of a complex attribute",
				`{"op":"Replace","path":"` + x + `site.floor","value":"5"}`, nil},
		}
		for _, s := range steps {
			var first []byte
			for try := range 2 {
				r := entraDo(t, e.env, "PATCH", "/acme/Users/"+id, patchBody(s.ops))
				if s.check == nil {
					// A string for an integer: refused, whatever Entra ID retries.
					assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", s.name, r.Body)
					assert.Equal(t, "invalidValue", r.JSON(t)["scimType"], s.name)
					continue
				}
				require.Equal(t, http.StatusOK, r.Status, "%s (try %d): %s", s.name, try+1, r.Body)
				ext, _ := r.JSON(t)[customURN].(map[string]any)
				s.check(t, ext)
				if try == 0 {
					first = r.Body
				} else {
					assert.JSONEq(t, string(first), string(r.Body), "%s: a retry changes nothing", s.name)
				}
			}
		}
		r = entraDo(t, e.env, "GET", entraQuery("Users", x+`deskPhones[type eq "mobile"].value eq "+47 3"`, ""), "")
		_, ids = entraIDs(t, r)
		assert.Equal(t, []string{id}, ids)
		r = entraDo(t, e.env, "GET", entraQuery("Users", x+`site.floor eq 3 and `+x+`onCall eq false`, ""), "")
		_, ids = entraIDs(t, r)
		assert.Equal(t, []string{id}, ids)
	}, func(c *scimsvc.Config) { c.UserExtensions = []schema.Extension{{Schema: &ext}} })
}
