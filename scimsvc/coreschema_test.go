package scimsvc_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

const (
	coreUserURN   = "urn:ietf:params:scim:schemas:core:2.0:User"
	coreGroupURN  = "urn:ietf:params:scim:schemas:core:2.0:Group"
	enterpriseURN = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
)

// listUserNames answers GET /acme/Users?filter=f with the userNames it lists.
func listUserNames(t *testing.T, e *backendEnv, query string) []string {
	t.Helper()
	r := e.do("GET", "/acme/Users?"+query, nil)
	require.Equal(t, 200, r.Status, "%s: %s", query, r.Body)
	var names []string
	for _, res := range jsonAt(r.JSON(t), "Resources").([]any) {
		names = append(names, res.(map[string]any)["userName"].(string))
	}
	return names
}

func filterQuery(f string) string { return "filter=" + url.QueryEscape(f) }

// TestCoreUserAttributes: ims, photos, entitlements and x509Certificates (RFC 7643 §4.1.2) are
// accepted on create, returned, projected, filterable, patchable and stored, on every backend.
// A binary value that is not base64 is 400 invalidValue and changes nothing.
func TestCoreUserAttributes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := e.do("POST", "/acme/Users", `{
			"schemas": ["`+coreUserURN+`"],
			"userName": "ann",
			"ims": [{"value": "ann@jabber.example", "type": "xmpp"}, {"value": "ann.skype", "type": "skype", "primary": true}],
			"photos": [{"value": "https://photos.example.com/Ann.jpg", "type": "photo", "primary": true},
				{"value": "https://photos.example.com/ann-small.jpg", "type": "thumbnail"}],
			"entitlements": [{"value": "vpn", "display": "VPN access"}],
			"x509Certificates": [{"value": "MIIBann+cert/A==", "display": "signing", "primary": "True"}]
		}`)
		require.Equal(t, 201, r.Status, "%s", r.Body)
		created := r.JSON(t)
		id := created["id"].(string)
		assert.Equal(t, []any{
			map[string]any{"value": "ann@jabber.example", "type": "xmpp"},
			map[string]any{"value": "ann.skype", "type": "skype", "primary": true},
		}, created["ims"])
		assert.Equal(t, "https://photos.example.com/Ann.jpg", jsonAt(created, "photos", 0, "value"))
		assert.Equal(t, "thumbnail", jsonAt(created, "photos", 1, "type"))
		assert.Equal(t, []any{map[string]any{"value": "vpn", "display": "VPN access"}}, created["entitlements"])
		assert.Equal(t, []any{map[string]any{"value": "MIIBann+cert/A==", "display": "signing", "primary": true}}, created["x509Certificates"])
		assert.Equal(t, []any{coreUserURN}, created["schemas"])
		_ = e.do("POST", "/acme/Users", `{"userName": "bob", "entitlements": [{"value": "wiki"}]}`)

		stored := func() store.User {
			for _, u := range e.users("acme") {
				if u.ID == id {
					return u
				}
			}
			t.Fatalf("user %s is not stored", id)
			return store.User{}
		}
		u := stored()
		assert.Equal(t, []store.MultiValue{{Value: "ann@jabber.example", Type: "xmpp"}, {Value: "ann.skype", Type: "skype", Primary: true}}, u.Ims)
		assert.Len(t, u.Photos, 2)
		assert.Equal(t, []store.MultiValue{{Value: "MIIBann+cert/A==", Display: "signing", Primary: true}}, u.X509Certificates)

		// Projection.
		r = e.do("GET", "/acme/Users/"+id+"?attributes=ims,x509Certificates.display", nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		got := r.JSON(t)
		assert.NotNil(t, got["ims"])
		assert.Equal(t, []any{map[string]any{"display": "signing"}}, got["x509Certificates"])
		assert.NotContains(t, got, "photos")
		assert.NotContains(t, got, "userName")
		r = e.do("GET", "/acme/Users/"+id+"?excludedAttributes=photos,entitlements", nil)
		got = r.JSON(t)
		assert.NotContains(t, got, "photos")
		assert.NotContains(t, got, "entitlements")
		assert.NotNil(t, got["x509Certificates"])

		// Filters.
		for f, want := range map[string][]string{
			`ims[type eq "skype" and primary eq true]`:                              {"ann"},
			`ims.value co "JABBER"`:                                                 {"ann"},
			`photos[type eq "photo"].value eq "https://photos.example.com/ann.jpg"`: {"ann"},
			`entitlements eq "VPN"`:                                                 {"ann"},
			`entitlements pr`:                                                       {"ann", "bob"},
			`x509Certificates.value eq "MIIBann+cert/A=="`:                          {"ann"},
			`x509Certificates.value eq "miibann+cert/a=="`:                          nil,
			`not (x509Certificates pr)`:                                             {"bob"},
		} {
			assert.Equal(t, want, listUserNames(t, e, filterQuery(f)), f)
		}
		r = e.do("GET", "/acme/Users?"+filterQuery(`x509Certificates.value co "MIIB"`), nil)
		requireSCIMError(t, r, 400, "invalidFilter")

		// PATCH.
		r = e.do("PATCH", "/acme/Users/"+id, patchBody(
			`{"op":"add","path":"ims","value":[{"value":"ann-icq","type":"icq"}]}`,
			`{"op":"replace","path":"photos[type eq \"thumbnail\"].value","value":"https://photos.example.com/ann-tiny.jpg"}`,
			`{"op":"remove","path":"entitlements[value eq \"vpn\"]"}`,
			`{"op":"add","path":"x509Certificates","value":[{"value":"MIIBann+cert/B==","primary":true}]}`,
		))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		u = stored()
		assert.Equal(t, []store.MultiValue{{Value: "ann@jabber.example", Type: "xmpp"}, {Value: "ann.skype", Type: "skype", Primary: true},
			{Value: "ann-icq", Type: "icq"}}, u.Ims)
		assert.Equal(t, "https://photos.example.com/ann-tiny.jpg", u.Photos[1].Value)
		assert.Empty(t, u.Entitlements)
		assert.Equal(t, []store.MultiValue{{Value: "MIIBann+cert/A==", Display: "signing"}, {Value: "MIIBann+cert/B==", Primary: true}},
			u.X509Certificates, "one primary certificate: the one just added")
		assert.Equal(t, []string{"ann"}, listUserNames(t, e, filterQuery(`photos.value ew "tiny.jpg" and ims.type eq "icq"`)))
		assert.Equal(t, []string{"bob"}, listUserNames(t, e, filterQuery(`entitlements pr`)))

		// A binary value must be base64.
		before := e.users("acme")
		for _, body := range []string{
			`{"userName": "cy", "x509Certificates": [{"value": "not base64!"}]}`,
			`{"userName": "cy", "x509Certificates": [{"value": 42}]}`,
		} {
			requireSCIMError(t, e.do("POST", "/acme/Users", body), 400, "invalidValue")
		}
		r = e.do("PATCH", "/acme/Users/"+id, patchBody(`{"op":"add","path":"x509Certificates","value":[{"value":"%%%"}]}`))
		requireSCIMError(t, r, 400, "invalidValue")
		assert.Equal(t, before, e.users("acme"), "nothing changed")
	})
}

// TestFilterSchemas: schemas is filterable (RFC 7644 §3.4.2.2's example
// `schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"`): a user lists the
// enterprise extension's URN when it has a value there, and so a filter finds it.
func TestFilterSchemas(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		for _, body := range []string{
			`{"userName": "ann", "` + enterpriseURN + `": {"department": "R&D"}}`,
			`{"userName": "bob"}`,
			`{"userName": "cy", "` + enterpriseURN + `:employeeNumber": "7"}`,
		} {
			r := e.do("POST", "/acme/Users", body)
			require.Equal(t, 201, r.Status, "%s", r.Body)
		}
		for f, want := range map[string][]string{
			`schemas eq "` + enterpriseURN + `"`:                                                          {"ann", "cy"},
			`schemas eq "` + coreUserURN + `"`:                                                            {"ann", "bob", "cy"},
			`not (schemas eq "` + enterpriseURN + `") and userName pr`:                                    {"bob"},
			`schemas eq "urn:ietf:params:scim:schemas:extension:ENTERPRISE:2.0:User" and userName sw "c"`: {"cy"},
			`schemas eq "` + coreGroupURN + `"`:                                                           nil,
		} {
			assert.Equal(t, want, listUserNames(t, e, filterQuery(f)), f)
		}

		r := e.do("POST", "/acme/Groups", `{"displayName": "eng"}`)
		require.Equal(t, 201, r.Status, "%s", r.Body)
		r = e.do("GET", "/acme/Groups?"+filterQuery(`schemas eq "`+coreGroupURN+`"`), nil)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		assert.Equal(t, float64(1), r.JSON(t)["totalResults"])

		requireSCIMError(t, e.do("PATCH", "/acme/Users/"+listUserID(t, e, "bob"), patchBody(
			`{"op":"add","path":"schemas","value":["`+enterpriseURN+`"]}`)), 400, "mutability")
	})
}

// listUserID returns the id of the user userName of acme.
func listUserID(t *testing.T, e *backendEnv, userName string) string {
	t.Helper()
	for _, u := range e.users("acme") {
		if u.UserName == userName {
			return u.ID
		}
	}
	t.Fatalf("no user %s", userName)
	return ""
}

// TestPatchExtensionURNPath: a PATCH path that is an extension's URN alone addresses the whole
// extension object, beyond RFC 7644's path grammar: add and replace take an object of the
// extension's attributes (setting those given, keeping the others), remove drops every value of
// the extension, after which the user no longer lists its URN in schemas.
func TestPatchExtensionURNPath(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *backendEnv) {
		r := e.do("POST", "/acme/Users", `{"userName": "ann"}`)
		require.Equal(t, 201, r.Status, "%s", r.Body)
		id := r.JSON(t)["id"].(string)
		enterprise := func() store.EnterpriseUser {
			return e.users("acme")[0].Enterprise
		}

		r = e.do("PATCH", "/acme/Users/"+id, patchBody(
			`{"op":"add","path":"`+enterpriseURN+`","value":{"employeeNumber":"701","department":"R&D","manager":{"value":"boss"}}}`))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		assert.Equal(t, []any{coreUserURN, enterpriseURN}, r.JSON(t)["schemas"])
		assert.Equal(t, "701", jsonAt(r.JSON(t), enterpriseURN, "employeeNumber"))
		assert.Equal(t, store.EnterpriseUser{EmployeeNumber: "701", Department: "R&D", Manager: store.Manager{Value: "boss"}}, enterprise())
		assert.Equal(t, []string{"ann"}, listUserNames(t, e, filterQuery(`schemas eq "`+enterpriseURN+`"`)))

		r = e.do("PATCH", "/acme/Users/"+id, patchBody(
			`{"op":"Replace","path":"urn:ietf:params:scim:schemas:extension:Enterprise:2.0:User","value":{"department":"Sales","costCenter":"CC-9"}}`))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		assert.Equal(t, store.EnterpriseUser{EmployeeNumber: "701", Department: "Sales", CostCenter: "CC-9", Manager: store.Manager{Value: "boss"}},
			enterprise(), "the attributes not given are kept")

		// Bad values change nothing.
		before := e.users("acme")
		requireSCIMError(t, e.do("PATCH", "/acme/Users/"+id, patchBody(
			`{"op":"replace","path":"`+enterpriseURN+`","value":"Sales"}`)), 400, "invalidValue")
		requireSCIMError(t, e.do("PATCH", "/acme/Users/"+id, patchBody(
			`{"op":"add","path":"urn:ietf:params:scim:schemas:extension:other:2.0:User","value":{"a":"b"}}`)), 400, "invalidPath")
		requireSCIMError(t, e.do("PATCH", "/acme/Users/"+id, patchBody(
			`{"op":"replace","path":"`+enterpriseURN+`","value":{"department":7}}`)), 400, "invalidValue")
		assert.Equal(t, before, e.users("acme"))

		r = e.do("PATCH", "/acme/Users/"+id, patchBody(`{"op":"remove","path":"`+enterpriseURN+`"}`))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		assert.Equal(t, []any{coreUserURN}, r.JSON(t)["schemas"])
		assert.NotContains(t, r.JSON(t), enterpriseURN)
		assert.Equal(t, store.EnterpriseUser{}, enterprise())
		assert.Equal(t, "ann", e.users("acme")[0].UserName, "the core attributes stay")
		assert.Empty(t, listUserNames(t, e, filterQuery(`schemas eq "`+enterpriseURN+`"`)))

		r = e.do("PATCH", "/acme/Users/"+id, patchBody(`{"op":"remove","path":"`+enterpriseURN+`"}`))
		require.Equal(t, 200, r.Status, "removing an absent extension is no change: %s", r.Body)
	})
}

// TestMe: /Me answers every method with 501 and a SCIM error (RFC 7644 §3.11 allows it): the
// handler authenticates provisioning clients, never users. Without a key it is 401 first.
func TestMe(t *testing.T) {
	e := newEnv(t)
	for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		for _, path := range []string{"/acme/Me", "/acme/Me/extra"} {
			var body any
			if method != "GET" && method != "DELETE" {
				body = `{"userName":"me"}`
			}
			detail := requireSCIMError(t, e.do(method, path, body), 501, "")
			assert.Contains(t, detail, "/Me", method+" "+path)
		}
	}
	assert.Equal(t, 401, e.doKey("", "GET", "/acme/Me", nil).Status)
	p, err := e.mem.Users().List(t.Context(), "acme", store.Query{Count: -1})
	require.NoError(t, err)
	assert.Zero(t, p.TotalResults, "nothing created")
}
