package scimsvc_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// The URNs an Entra ID conversation uses.
const (
	entraCoreUserURN   = "urn:ietf:params:scim:schemas:core:2.0:User"
	entraEnterpriseURN = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
	entraGroupURN      = "urn:ietf:params:scim:schemas:core:2.0:Group"
	entraListURN       = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
	entraErrorURN      = "urn:ietf:params:scim:api:messages:2.0:Error"
	// entraMicrosoftGroupURN is the extra schema Entra ID lists when it creates a group.
	entraMicrosoftGroupURN = "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group"
)

// entraDo sends a request as Entra ID's provisioning service does: the body labelled
// application/json, the API key as a bearer token. Entra ID expects every answer with a body to
// be application/scim+json, so that is checked here for every request.
func entraDo(t *testing.T, e *env, method, target, body string) *response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	r := &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if len(r.Body) > 0 {
		assert.Equal(t, "application/scim+json", r.Header.Get("Content-Type"), "%s %s", method, target)
	}
	return r
}

// entraQuery is the path of a filtered list of endpoint in tenant acme, the filter encoded as
// Entra ID encodes it; extra is appended to the query as it is.
func entraQuery(endpoint, filter, extra string) string {
	return "/acme/" + endpoint + "?filter=" + url.QueryEscape(filter) + extra
}

// entraIDs returns the totalResults of a ListResponse and the ids of its Resources.
func entraIDs(t *testing.T, r *response) (total int, ids []string) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	body := r.JSON(t)
	require.Equal(t, []any{entraListURN}, body["schemas"])
	n, ok := body["totalResults"].(float64)
	require.True(t, ok, "totalResults: %s", r.Body)
	res, ok := body["Resources"].([]any)
	require.True(t, ok, "Resources must be an array, even when empty: %s", r.Body)
	ids = []string{}
	for _, x := range res {
		id, _ := jsonAt(x, "id").(string)
		ids = append(ids, id)
	}
	return int(n), ids
}

// entraMembers returns the member ids of a group as a response shows them, sorted.
func entraMembers(group map[string]any) []string {
	ids := []string{}
	list, _ := group["members"].([]any)
	for _, m := range list {
		id, _ := jsonAt(m, "value").(string)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// entraStoredMembers returns the member ids of a group as the store holds them, sorted.
func entraStoredMembers(t *testing.T, e *env, id string) []string {
	t.Helper()
	g, err := e.mem.Groups().Get(context.Background(), "acme", id)
	require.NoError(t, err)
	ids := []string{}
	for _, m := range g.Members {
		ids = append(ids, m.Value)
	}
	slices.Sort(ids)
	return ids
}

// entraNow is the clock's time as meta.lastModified shows it.
func entraNow(e *env) string { return e.clock.Now().UTC().Format(time.RFC3339Nano) }

// entraCreateUser posts a user as Entra ID does and returns its id.
func entraCreateUser(t *testing.T, e *env, body string) string {
	t.Helper()
	r := entraDo(t, e, "POST", "/acme/Users", body)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	id, _ := r.JSON(t)["id"].(string)
	require.NotEmpty(t, id)
	return id
}

// TestEntraProvisioning plays a provisioning cycle of Microsoft Entra ID against acme, with the
// requests Entra ID really sends (see interop.md): test connection, match before create, create,
// every PATCH shape, disable, groups with membership changes, and finally deletes. Entra ID
// retries any operation on a later cycle, so every PATCH is sent twice and must give the same
// answer without moving lastModified.
func TestEntraProvisioning(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	t.Run("test connection finds no user with a random guid", func(t *testing.T) {
		r := entraDo(t, e, "GET", entraQuery("Users", `userName eq "5c0d2fbb-7a4e-4a8e-9d07-4b6d2f3c1e90"`, ""), "")
		total, ids := entraIDs(t, r)
		assert.Zero(t, total)
		assert.Empty(t, ids)
		body := r.JSON(t)
		assert.Equal(t, []any{}, body["Resources"])
		assert.EqualValues(t, 1, body["startIndex"])
		assert.EqualValues(t, 0, body["itemsPerPage"])
	})

	// Bea's manager Karl is provisioned first. He has a personal (home) address besides his work
	// one, which the match on work emails must not see.
	karl := entraCreateUser(t, e, `{
		"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
		"externalId": "0c6a7e2e-3b6f-4b43-8f1e-6c2d9a0b1f11",
		"userName": "karl.berg@contoso.example",
		"active": true,
		"emails": [
			{"primary": true, "type": "work", "value": "karl.berg@contoso.example"},
			{"primary": false, "type": "home", "value": "karl@berg.example"}
		],
		"meta": {"resourceType": "User"},
		"name": {"formatted": "Karl Berg", "familyName": "Berg", "givenName": "Karl"},
		"roles": []
	}`)
	maja := entraCreateUser(t, e, `{
		"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
		"externalId": "9f1b3c55-0d2e-4f6a-b7c8-1a2b3c4d5e6f",
		"userName": "maja.ek@contoso.example",
		"active": true,
		"emails": [{"primary": true, "type": "work", "value": "maja.ek@contoso.example"}],
		"meta": {"resourceType": "User"},
		"name": {"formatted": "Maja Ek", "familyName": "Ek", "givenName": "Maja"},
		"roles": []
	}`)

	const (
		beaUserName   = "bea.lind@contoso.example"
		beaExternalID = "5b0d8c1e-2f4a-4c7b-9e3d-7a6f5e4d3c2b"
	)
	matches := []struct {
		name   string
		filter string
	}{
		{"by userName", `userName eq "` + beaUserName + `"`},
		{"by externalId", `externalId eq "` + beaExternalID + `"`},
		{"by work email", `emails[type eq "work"].value eq "` + beaUserName + `"`},
		{"by work email in another case", `emails[type eq "Work"].value eq "Bea.Lind@Contoso.example"`},
	}

	t.Run("match before create finds nothing", func(t *testing.T) {
		for _, m := range matches {
			t.Run(m.name, func(t *testing.T) {
				total, ids := entraIDs(t, entraDo(t, e, "GET", entraQuery("Users", m.filter, ""), ""))
				assert.Zero(t, total)
				assert.Empty(t, ids)
			})
		}
	})

	// Entra ID's create: a misspelled extension URN in schemas, meta.resourceType, attributes
	// set to null, an empty roles array.
	var bea string
	var created *response
	require.True(t, t.Run("create", func(t *testing.T) {
		r := entraDo(t, e, "POST", "/acme/Users", `{
			"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extention:enterprise:2.0:User"],
			"externalId": "`+beaExternalID+`",
			"userName": "`+beaUserName+`",
			"active": true,
			"displayName": "Bea Lind",
			"title": null,
			"phoneNumbers": null,
			"emails": [{"primary": true, "type": "work", "value": "`+beaUserName+`"}],
			"meta": {"resourceType": "User"},
			"name": {"formatted": "Bea Lind", "familyName": "Lind", "givenName": "Bea", "middleName": null},
			"roles": [],
			"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Sales", "costCenter": null}
		}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		u := r.JSON(t)
		bea, _ = u["id"].(string)
		require.NotEmpty(t, bea)
		created = r

		loc := testBase + "/acme/Users/" + bea
		assert.Equal(t, loc, r.Header.Get("Location"))
		assert.Equal(t, loc, jsonAt(u, "meta", "location"))
		assert.Equal(t, "User", jsonAt(u, "meta", "resourceType"))
		assert.Equal(t, entraNow(e), jsonAt(u, "meta", "created"))
		assert.Equal(t, entraNow(e), jsonAt(u, "meta", "lastModified"))
		assert.Equal(t, []any{entraCoreUserURN, entraEnterpriseURN}, u["schemas"])
		assert.Equal(t, beaUserName, u["userName"])
		assert.Equal(t, beaExternalID, u["externalId"])
		assert.Equal(t, true, u["active"])
		assert.Equal(t, map[string]any{"formatted": "Bea Lind", "familyName": "Lind", "givenName": "Bea"}, u["name"])
		assert.Equal(t, []any{map[string]any{"primary": true, "type": "work", "value": beaUserName}}, u["emails"])
		assert.Equal(t, map[string]any{"department": "Sales"}, u[entraEnterpriseURN])
		assert.Equal(t, "Bea Lind", u["displayName"])
		for _, absent := range []string{"title", "phoneNumbers", "roles", "groups"} {
			assert.NotContains(t, u, absent)
		}

		stored, err := e.mem.Users().Get(ctx, "acme", bea)
		require.NoError(t, err)
		assert.Equal(t, beaUserName, stored.UserName)
		assert.Equal(t, beaExternalID, stored.ExternalID)
		assert.True(t, stored.Active)
		assert.Equal(t, store.Name{Formatted: "Bea Lind", FamilyName: "Lind", GivenName: "Bea"}, stored.Name)
		assert.Equal(t, []store.MultiValue{{Value: beaUserName, Type: "work", Primary: true}}, stored.Emails)
		assert.Empty(t, stored.Roles)
		assert.Equal(t, store.EnterpriseUser{Department: "Sales"}, stored.Enterprise)
	}))

	t.Run("match after create finds the user", func(t *testing.T) {
		for _, m := range matches {
			t.Run(m.name, func(t *testing.T) {
				total, ids := entraIDs(t, entraDo(t, e, "GET", entraQuery("Users", m.filter, ""), ""))
				assert.Equal(t, 1, total)
				assert.Equal(t, []string{bea}, ids)
			})
		}
		t.Run("a home address is not a work email", func(t *testing.T) {
			total, ids := entraIDs(t, entraDo(t, e, "GET", entraQuery("Users", `emails[type eq "work"].value eq "karl@berg.example"`, ""), ""))
			assert.Zero(t, total)
			assert.Empty(t, ids)
			total, ids = entraIDs(t, entraDo(t, e, "GET", entraQuery("Users", `emails[type eq "home"].value eq "karl@berg.example"`, ""), ""))
			assert.Equal(t, 1, total)
			assert.Equal(t, []string{karl}, ids)
		})
	})

	t.Run("a repeated create is a conflict and stores nothing", func(t *testing.T) {
		r := entraDo(t, e, "POST", "/acme/Users", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"externalId":"`+beaExternalID+`","userName":"`+beaUserName+`","active":true}`)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		body := r.JSON(t)
		assert.Equal(t, []any{entraErrorURN}, body["schemas"])
		assert.Equal(t, "uniqueness", body["scimType"])
		assert.Equal(t, "409", body["status"])
		page, err := e.mem.Users().List(ctx, "acme", store.Query{Count: -1})
		require.NoError(t, err)
		assert.Equal(t, 3, page.TotalResults)
	})

	t.Run("get returns what create returned", func(t *testing.T) {
		r := entraDo(t, e, "GET", "/acme/Users/"+bea, "")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.JSONEq(t, string(created.Body), string(r.Body))
	})

	// Every PATCH shape of interop.md, applied in order to Bea. Each is sent twice, a minute
	// apart: the second answer must equal the first, lastModified included.
	patches := []struct {
		name  string
		ops   string
		check func(t *testing.T, u map[string]any)
	}{
		{
			name: "Replace the work email by a value path with a sub-attribute",
			ops:  `[{"op":"Replace","path":"emails[type eq \"work\"].value","value":"bea.lindqvist@contoso.example"}]`,
			check: func(t *testing.T, u map[string]any) {
				assert.Equal(t, []any{map[string]any{"primary": true, "type": "work", "value": "bea.lindqvist@contoso.example"}}, u["emails"])
			},
		},
		{
			name: "Replace name.familyName",
			ops:  `[{"op":"Replace","path":"name.familyName","value":"Lindqvist"}]`,
			check: func(t *testing.T, u map[string]any) {
				assert.Equal(t, map[string]any{"formatted": "Bea Lind", "familyName": "Lindqvist", "givenName": "Bea"}, u["name"])
			},
		},
		{
			name: "Add the enterprise manager as an object",
			ops:  `[{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":{"value":"` + karl + `"}}]`,
			check: func(t *testing.T, u map[string]any) {
				assert.Equal(t, map[string]any{"department": "Sales", "manager": map[string]any{"value": karl}}, u[entraEnterpriseURN])
			},
		},
		{
			name: "Replace the enterprise manager with a bare string",
			ops:  `[{"op":"Replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager","value":"` + maja + `"}]`,
			check: func(t *testing.T, u map[string]any) {
				assert.Equal(t, map[string]any{"department": "Sales", "manager": map[string]any{"value": maja}}, u[entraEnterpriseURN])
			},
		},
		{
			name: "Replace without a path, dotted and URN-qualified keys",
			ops: `[{"op":"Replace","value":{
				"name.givenName":"Beatrice",
				"name.formatted":"Beatrice Lindqvist",
				"displayName":"Beatrice Lindqvist",
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber":"E-1001",
				"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department":"Research"}}]`,
			check: func(t *testing.T, u map[string]any) {
				assert.Equal(t, map[string]any{"formatted": "Beatrice Lindqvist", "familyName": "Lindqvist", "givenName": "Beatrice"}, u["name"])
				assert.Equal(t, "Beatrice Lindqvist", u["displayName"])
				assert.Equal(t, map[string]any{"employeeNumber": "E-1001", "department": "Research", "manager": map[string]any{"value": maja}}, u[entraEnterpriseURN])
				assert.Equal(t, beaUserName, u["userName"])
			},
		},
		{
			name: "Disable: Replace active with the string False",
			ops:  `[{"op":"Replace","path":"active","value":"False"}]`,
			check: func(t *testing.T, u map[string]any) {
				assert.Equal(t, false, u["active"])
			},
		},
		{
			name: "Enable: Replace active with the string True",
			ops:  `[{"op":"Replace","path":"active","value":"True"}]`,
			check: func(t *testing.T, u map[string]any) {
				assert.Equal(t, true, u["active"])
			},
		},
		{
			name: "Disable: Replace active with a boolean",
			ops:  `[{"op":"Replace","path":"active","value":false}]`,
			check: func(t *testing.T, u map[string]any) {
				assert.Equal(t, false, u["active"])
			},
		},
	}
	for _, p := range patches {
		t.Run(p.name, func(t *testing.T) {
			e.clock.Advance(time.Minute)
			first := entraDo(t, e, "PATCH", "/acme/Users/"+bea, patchOps(p.ops))
			require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
			u := first.JSON(t)
			p.check(t, u)
			assert.Equal(t, entraNow(e), jsonAt(u, "meta", "lastModified"), "a change moves lastModified")
			assert.Equal(t, jsonAt(created.JSON(t), "meta", "created"), jsonAt(u, "meta", "created"))

			e.clock.Advance(time.Minute)
			retry := entraDo(t, e, "PATCH", "/acme/Users/"+bea, patchOps(p.ops))
			require.Equal(t, http.StatusOK, retry.Status, "%s", retry.Body)
			assert.Equal(t, jsonAt(u, "meta", "lastModified"), jsonAt(retry.JSON(t), "meta", "lastModified"),
				"a retried PATCH that changes nothing keeps lastModified")
			assert.JSONEq(t, string(first.Body), string(retry.Body), "a retried PATCH changes nothing")

			got := entraDo(t, e, "GET", "/acme/Users/"+bea, "")
			require.Equal(t, http.StatusOK, got.Status, "%s", got.Body)
			assert.JSONEq(t, string(first.Body), string(got.Body))
		})
	}

	t.Run("a disabled user is still returned by GET and by filters", func(t *testing.T) {
		r := entraDo(t, e, "GET", "/acme/Users/"+bea, "")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, false, r.JSON(t)["active"])
		for _, f := range []string{
			`userName eq "` + beaUserName + `"`,
			`externalId eq "` + beaExternalID + `"`,
			`emails[type eq "work"].value eq "bea.lindqvist@contoso.example"`,
		} {
			total, ids := entraIDs(t, entraDo(t, e, "GET", entraQuery("Users", f, ""), ""))
			assert.Equal(t, 1, total, f)
			assert.Equal(t, []string{bea}, ids, f)
		}

		stored, err := e.mem.Users().Get(ctx, "acme", bea)
		require.NoError(t, err)
		assert.False(t, stored.Active)
		assert.Equal(t, store.Name{Formatted: "Beatrice Lindqvist", FamilyName: "Lindqvist", GivenName: "Beatrice"}, stored.Name)
		assert.Equal(t, []store.MultiValue{{Value: "bea.lindqvist@contoso.example", Type: "work", Primary: true}}, stored.Emails)
		assert.Equal(t, store.EnterpriseUser{EmployeeNumber: "E-1001", Department: "Research", Manager: store.Manager{Value: maja}}, stored.Enterprise)
	})

	// Groups.
	const groupExternalID = "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159"
	groupMatch := entraQuery("Groups", `displayName eq "Sales EMEA"`, "&excludedAttributes=members")
	t.Run("match before group create finds nothing", func(t *testing.T) {
		total, ids := entraIDs(t, entraDo(t, e, "GET", groupMatch, ""))
		assert.Zero(t, total)
		assert.Empty(t, ids)
	})

	var group string
	var groupCreated map[string]any
	require.True(t, t.Run("create a group with Microsoft's extra schema", func(t *testing.T) {
		e.clock.Advance(time.Minute)
		r := entraDo(t, e, "POST", "/acme/Groups", `{
			"schemas": ["urn:ietf:params:scim:schemas:core:2.0:Group", "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group"],
			"externalId": "`+groupExternalID+`",
			"displayName": "Sales EMEA",
			"meta": {"resourceType": "Group"}
		}`)
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		g := r.JSON(t)
		group, _ = g["id"].(string)
		require.NotEmpty(t, group)
		groupCreated = g
		assert.Equal(t, testBase+"/acme/Groups/"+group, r.Header.Get("Location"))
		assert.Equal(t, []any{entraGroupURN}, g["schemas"])
		assert.Equal(t, "Sales EMEA", g["displayName"])
		assert.Equal(t, groupExternalID, g["externalId"])
		assert.NotContains(t, g, "members")
		assert.Equal(t, "Group", jsonAt(g, "meta", "resourceType"))
		assert.Equal(t, entraNow(e), jsonAt(g, "meta", "created"))
		assert.Empty(t, entraStoredMembers(t, e, group))
	}))

	t.Run("match after group create finds it, without members", func(t *testing.T) {
		total, ids := entraIDs(t, entraDo(t, e, "GET", groupMatch, ""))
		assert.Equal(t, 1, total)
		assert.Equal(t, []string{group}, ids)
	})

	groupPatches := []struct {
		name        string
		ops         string
		displayName string
		members     []string
	}{
		{
			name:        "Add members",
			ops:         `[{"op":"Add","path":"members","value":[{"value":"` + karl + `"},{"value":"` + bea + `"}]}]`,
			displayName: "Sales EMEA",
			members:     []string{karl, bea},
		},
		{
			name:        "rename by Replace displayName",
			ops:         `[{"op":"Replace","path":"displayName","value":"Sales Europe"}]`,
			displayName: "Sales Europe",
			members:     []string{karl, bea},
		},
		{
			name: "Add and Remove in one request; Remove takes only the listed members",
			ops: `[{"op":"Add","path":"members","value":[{"value":"` + maja + `"}]},` +
				`{"op":"Remove","path":"members","value":[{"value":"` + karl + `"}]}]`,
			displayName: "Sales Europe",
			members:     []string{bea, maja},
		},
		{
			name:        "Remove by a value filter",
			ops:         `[{"op":"Remove","path":"members[value eq \"` + bea + `\"]"}]`,
			displayName: "Sales Europe",
			members:     []string{maja},
		},
	}
	for _, p := range groupPatches {
		t.Run(p.name, func(t *testing.T) {
			slices.Sort(p.members)
			e.clock.Advance(time.Minute)
			first := entraDo(t, e, "PATCH", "/acme/Groups/"+group, patchOps(p.ops))
			require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
			g := first.JSON(t)
			assert.Equal(t, p.displayName, g["displayName"])
			assert.Equal(t, groupExternalID, g["externalId"])
			assert.Equal(t, p.members, entraMembers(g))
			assert.Equal(t, entraNow(e), jsonAt(g, "meta", "lastModified"), "a change moves lastModified")
			assert.Equal(t, jsonAt(groupCreated, "meta", "created"), jsonAt(g, "meta", "created"))
			assert.Equal(t, p.members, entraStoredMembers(t, e, group))

			e.clock.Advance(time.Minute)
			retry := entraDo(t, e, "PATCH", "/acme/Groups/"+group, patchOps(p.ops))
			require.Equal(t, http.StatusOK, retry.Status, "%s", retry.Body)
			assert.Equal(t, jsonAt(g, "meta", "lastModified"), jsonAt(retry.JSON(t), "meta", "lastModified"),
				"a retried PATCH that changes nothing keeps lastModified")
			assert.JSONEq(t, string(first.Body), string(retry.Body), "a retried PATCH changes nothing")
			assert.Equal(t, p.members, entraStoredMembers(t, e, group))
		})
	}

	t.Run("members show who they are", func(t *testing.T) {
		r := entraDo(t, e, "GET", "/acme/Groups/"+group, "")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		assert.Equal(t, []any{map[string]any{
			"value":   maja,
			"display": "maja.ek@contoso.example",
			"type":    "User",
			"$ref":    testBase + "/acme/Users/" + maja,
		}}, r.JSON(t)["members"])

		u := entraDo(t, e, "GET", "/acme/Users/"+maja, "")
		require.Equal(t, http.StatusOK, u.Status, "%s", u.Body)
		assert.Equal(t, group, jsonAt(u.JSON(t), "groups", 0, "value"))
		assert.Equal(t, "Sales Europe", jsonAt(u.JSON(t), "groups", 0, "display"))
	})

	t.Run("read a group with excludedAttributes=members", func(t *testing.T) {
		r := entraDo(t, e, "GET", "/acme/Groups/"+group+"?excludedAttributes=members", "")
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
		g := r.JSON(t)
		assert.Equal(t, group, g["id"])
		assert.Equal(t, "Sales Europe", g["displayName"])
		assert.NotContains(t, g, "members")

		r = entraDo(t, e, "GET", entraQuery("Groups", `displayName eq "Sales Europe"`, "&excludedAttributes=members"), "")
		total, ids := entraIDs(t, r)
		assert.Equal(t, 1, total)
		assert.Equal(t, []string{group}, ids)
		assert.Nil(t, jsonAt(r.JSON(t), "Resources", 0, "members"))
	})

	t.Run("delete a user: it leaves its groups and is gone", func(t *testing.T) {
		e.clock.Advance(time.Minute)
		r := entraDo(t, e, "DELETE", "/acme/Users/"+maja, "")
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		assert.Empty(t, r.Body)

		assert.Empty(t, entraStoredMembers(t, e, group))
		g := entraDo(t, e, "GET", "/acme/Groups/"+group, "")
		require.Equal(t, http.StatusOK, g.Status, "%s", g.Body)
		assert.NotContains(t, g.JSON(t), "members")

		for _, method := range []string{"GET", "DELETE"} {
			r = entraDo(t, e, method, "/acme/Users/"+maja, "")
			require.Equal(t, http.StatusNotFound, r.Status, "%s %s", method, r.Body)
			body := r.JSON(t)
			assert.Equal(t, []any{entraErrorURN}, body["schemas"])
			assert.Equal(t, "404", body["status"])
		}
		_, err := e.mem.Users().Get(ctx, "acme", maja)
		assert.ErrorIs(t, err, store.ErrNotFound)

		total, ids := entraIDs(t, entraDo(t, e, "GET", entraQuery("Users", `userName eq "maja.ek@contoso.example"`, ""), ""))
		assert.Zero(t, total)
		assert.Empty(t, ids)
	})

	t.Run("delete the group", func(t *testing.T) {
		r := entraDo(t, e, "DELETE", "/acme/Groups/"+group, "")
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		r = entraDo(t, e, "GET", "/acme/Groups/"+group, "")
		require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
		assert.Equal(t, []any{entraErrorURN}, r.JSON(t)["schemas"])
		_, err := e.mem.Groups().Get(ctx, "acme", group)
		assert.ErrorIs(t, err, store.ErrNotFound)
		total, _ := entraIDs(t, entraDo(t, e, "GET", groupMatch, ""))
		assert.Zero(t, total)
	})

	// The users Entra ID did not delete are untouched by all of this.
	page, err := e.mem.Users().List(ctx, "acme", store.Query{Count: -1})
	require.NoError(t, err)
	names := []string{}
	for _, u := range page.Resources {
		names = append(names, fmt.Sprintf("%s active=%t groups=%d", u.UserName, u.Active, len(u.Groups)))
	}
	assert.Equal(t, []string{
		"karl.berg@contoso.example active=true groups=0",
		beaUserName + " active=false groups=0",
	}, names)
}
