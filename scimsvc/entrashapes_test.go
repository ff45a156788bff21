package scimsvc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// entraManagerPath is the path Entra ID names a user's manager with.
const entraManagerPath = entraEnterpriseURN + ":manager"

// storedManager returns the manager of user id in acme as the store holds it.
func (e *backendEnv) storedManager(id string) store.Manager {
	e.t.Helper()
	u, err := e.backend.Users.Get(context.Background(), "acme", id)
	require.NoError(e.t, err)
	return u.Enterprise.Manager
}

// TestEntraManagerAsArray: Entra ID (and Microsoft's reference code) sends the single-valued
// complex manager as an array of one value, in a PATCH with a path, in a pathless PATCH value
// and in a created or replaced user: it is taken as that value. An array of two is 400
// invalidValue and changes nothing; an empty array is no value.
func TestEntraManagerAsArray(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		bea := entraCreateUser(t, e.env, `{"userName":"bea@example.com"}`)
		tests := []struct {
			name, method, path, body string
			want                     int
			manager                  string // the manager stored after the request
		}{
			{name: "add with a path", method: "PATCH", path: "/acme/Users/" + bea,
				body: patchBody(`{"op":"Add","path":"` + entraManagerPath + `","value":[{"value":"karl"}]}`), want: 200, manager: "karl"},
			{name: "the same add again", method: "PATCH", path: "/acme/Users/" + bea,
				body: patchBody(`{"op":"Add","path":"` + entraManagerPath + `","value":[{"value":"karl"}]}`), want: 200, manager: "karl"},
			{name: "replace with a path", method: "PATCH", path: "/acme/Users/" + bea,
				body: patchBody(`{"op":"Replace","path":"` + entraManagerPath + `","value":[{"value":"lena"}]}`), want: 200, manager: "lena"},
			{name: "an array of a bare id", method: "PATCH", path: "/acme/Users/" + bea,
				body: patchBody(`{"op":"Replace","path":"` + entraManagerPath + `","value":["karl"]}`), want: 200, manager: "karl"},
			{name: "an array of two", method: "PATCH", path: "/acme/Users/" + bea,
				body: patchBody(`{"op":"Replace","path":"` + entraManagerPath + `","value":[{"value":"lena"},{"value":"karl"}]}`), want: 400, manager: "karl"},
			{name: "pathless with a URN-qualified key", method: "PATCH", path: "/acme/Users/" + bea,
				body: patchBody(`{"op":"Replace","value":{"` + entraManagerPath + `":[{"value":"lena"}]}}`), want: 200, manager: "lena"},
			{name: "pathless with the extension's object", method: "PATCH", path: "/acme/Users/" + bea,
				body: patchBody(`{"op":"Replace","value":{"` + entraEnterpriseURN + `":{"manager":[{"value":"karl"}]}}}`), want: 200, manager: "karl"},
			{name: "pathless, an array of two", method: "PATCH", path: "/acme/Users/" + bea,
				body: patchBody(`{"op":"Replace","value":{"` + entraManagerPath + `":[{"value":"lena"},{"value":"karl"}]}}`), want: 400, manager: "karl"},
			{name: "an empty array replaces with no value", method: "PATCH", path: "/acme/Users/" + bea,
				body: patchBody(`{"op":"Replace","path":"` + entraManagerPath + `","value":[]}`), want: 200, manager: ""},
			{name: "put", method: "PUT", path: "/acme/Users/" + bea,
				body: `{"userName":"bea@example.com","` + entraEnterpriseURN + `":{"manager":[{"value":"lena"}]}}`, want: 200, manager: "lena"},
			{name: "put, an array of two", method: "PUT", path: "/acme/Users/" + bea,
				body: `{"userName":"bea@example.com","` + entraEnterpriseURN + `":{"manager":[{"value":"karl"},{"value":"lena"}]}}`, want: 400, manager: "lena"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e.t = t
				r := entraDo(t, e.env, tt.method, tt.path, tt.body)
				if tt.want == 400 {
					requireSCIMError(t, r, 400, "invalidValue")
				} else {
					require.Equal(t, tt.want, r.Status, "%s", r.Body)
					got, _ := jsonAt(r.JSON(t), entraEnterpriseURN, "manager", "value").(string)
					assert.Equal(t, tt.manager, got, "manager in the response")
				}
				assert.Equal(t, tt.manager, e.storedManager(bea).Value, "manager stored")
			})
		}

		t.Run("create", func(t *testing.T) {
			e.t = t
			id := entraCreateUser(t, e.env, `{"userName":"cy@example.com","`+entraEnterpriseURN+`":{"manager":[{"value":"karl"}]}}`)
			assert.Equal(t, "karl", e.storedManager(id).Value)
			before := e.users("acme")
			r := entraDo(t, e.env, "POST", "/acme/Users", `{"userName":"dan@example.com","`+entraEnterpriseURN+`":{"manager":[{"value":"karl"},{"value":"lena"}]}}`)
			requireSCIMError(t, r, 400, "invalidValue")
			assert.Equal(t, before, e.users("acme"))
		})
	})
}

// TestEntraRemoveManagerByValue: Entra ID removes a manager with a value filter on the
// single-valued manager. The manager goes when the filter matches it; when it does not, or there
// is no manager, the request succeeds and changes nothing. Only remove takes such a path.
func TestEntraRemoveManagerByValue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		bea := entraCreateUser(t, e.env, `{"userName":"bea@example.com","`+entraEnterpriseURN+`":{"department":"R&D","manager":{"value":"karl"}}}`)
		remove := func(filter string) string {
			return patchBody(`{"op":"Remove","path":"` + entraManagerPath + `[` + filter + `]"}`)
		}
		tests := []struct {
			name, body string
			want       int
			scimType   string
			manager    string // the manager stored after the request
		}{
			{name: "another manager is not removed", body: remove(`value eq \"lena\"`), want: 200, manager: "karl"},
			{name: "a replace with a value filter", want: 400, scimType: "invalidPath", manager: "karl",
				body: patchBody(`{"op":"Replace","path":"` + entraManagerPath + `[value eq \"karl\"]","value":{"value":"lena"}}`)},
			{name: "an add with a value filter", want: 400, scimType: "invalidPath", manager: "karl",
				body: patchBody(`{"op":"Add","path":"` + entraManagerPath + `[value eq \"karl\"].value","value":"lena"}`)},
			{name: "an unknown sub-attribute in the filter", body: remove(`nosuch eq \"karl\"`), want: 400, scimType: "invalidPath", manager: "karl"},
			{name: "a value filter on a simple attribute", want: 400, scimType: "invalidPath", manager: "karl",
				body: patchBody(`{"op":"Remove","path":"` + entraEnterpriseURN + `:department[value eq \"R&D\"]"}`)},
			{name: "the manager is removed", body: remove(`value eq \"karl\"`), want: 200, manager: ""},
			{name: "removing it again succeeds", body: remove(`value eq \"karl\"`), want: 200, manager: ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e.t = t
				r := entraDo(t, e.env, "PATCH", "/acme/Users/"+bea, tt.body)
				if tt.want == 400 {
					requireSCIMError(t, r, 400, tt.scimType)
				} else {
					require.Equal(t, tt.want, r.Status, "%s", r.Body)
					got, _ := jsonAt(r.JSON(t), entraEnterpriseURN, "manager", "value").(string)
					assert.Equal(t, tt.manager, got, "manager in the response")
					assert.Equal(t, "R&D", jsonAt(r.JSON(t), entraEnterpriseURN, "department"), "the rest of the extension stays")
				}
				assert.Equal(t, tt.manager, e.storedManager(bea).Value, "manager stored")
			})
		}
	})
}

// TestEndpointCase: the endpoints after the tenant are answered in any case (Entra ID has sent
// /users), as the canonical ones; locations stay canonical, and the tenant stays case-sensitive.
func TestEndpointCase(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/acme/users", `{"userName":"ann@example.com"}`)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	ann, _ := r.JSON(t)["id"].(string)
	userURL := testBase + "/acme/Users/" + ann
	assert.Equal(t, userURL, r.Header.Get("Location"))
	assert.Equal(t, userURL, jsonAt(r.JSON(t), "meta", "location"))
	r = e.do("POST", "/acme/GROUPS", `{"displayName":"Staff"}`)
	require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
	staff, _ := r.JSON(t)["id"].(string)

	tests := []struct {
		name, method, path, body string
		want                     int
		location                 string // meta.location of the answer, if any
	}{
		{name: "list users", method: "GET", path: "/acme/users?filter=userName%20eq%20%22ann@example.com%22", want: 200},
		{name: "get a user", method: "GET", path: "/acme/USERS/" + ann, want: 200, location: userURL},
		{name: "patch a user", method: "PATCH", path: "/acme/uSeRs/" + ann,
			body: patchBody(`{"op":"replace","path":"displayName","value":"Ann"}`), want: 200, location: userURL},
		{name: "list groups", method: "GET", path: "/acme/groups", want: 200},
		{name: "get a group", method: "GET", path: "/acme/groups/" + staff, want: 200, location: testBase + "/acme/Groups/" + staff},
		{name: "service provider config", method: "GET", path: "/acme/serviceproviderconfig", want: 200, location: testBase + "/acme/ServiceProviderConfig"},
		{name: "service provider config in capitals", method: "GET", path: "/acme/SERVICEPROVIDERCONFIG", want: 200, location: testBase + "/acme/ServiceProviderConfig"},
		{name: "resource types", method: "GET", path: "/acme/resourcetypes", want: 200},
		{name: "one resource type", method: "GET", path: "/acme/resourcetypes/User", want: 200, location: testBase + "/acme/ResourceTypes/User"},
		{name: "schemas", method: "GET", path: "/acme/schemas", want: 200},
		{name: "a method that is not allowed", method: "DELETE", path: "/acme/users", want: 405},
		{name: "a tenant in another case", method: "GET", path: "/ACME/users", want: 403},
		{name: "not an endpoint", method: "GET", path: "/acme/userz", want: 404},
		{name: "a letter that only folds to ASCII", method: "GET", path: "/acme/U%C5%BFers", want: 404}, // U+017F long s
		{name: "delete a group", method: "DELETE", path: "/acme/groups/" + staff, want: 204},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			r := e.do(tt.method, tt.path, tt.body)
			if tt.want >= 400 {
				requireSCIMError(t, r, tt.want, "")
				return
			}
			require.Equal(t, tt.want, r.Status, "%s", r.Body)
			if tt.location != "" {
				assert.Equal(t, tt.location, jsonAt(r.JSON(t), "meta", "location"))
			}
		})
	}

	t.Run("under a prefix", func(t *testing.T) {
		e.t = t
		mux := http.NewServeMux()
		mux.Handle("/scim/v2/", http.StripPrefix("/scim/v2", e.handler))
		req := httptest.NewRequest("GET", "/scim/v2/acme/users/"+ann, nil)
		req.Header.Set("Authorization", "Bearer "+e.key)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body)
		assert.True(t, strings.Contains(rec.Body.String(), `"location":"`+userURL+`"`), "%s", rec.Body)
	})
}
