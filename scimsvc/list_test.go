package scimsvc_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// keysOf returns the sorted member names of a JSON object.
func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// userNamesOf returns the userNames of a list response's Resources, in order.
func userNamesOf(t *testing.T, body map[string]any) []string {
	t.Helper()
	res, ok := body["Resources"].([]any)
	require.True(t, ok, "Resources must be an array: %v", body["Resources"])
	out := []string{}
	for _, r := range res {
		out = append(out, r.(map[string]any)["userName"].(string))
	}
	return out
}

func TestListPaging(t *testing.T) {
	e := newEnv(t)
	var names []string
	for i := range 120 {
		n := fmt.Sprintf("u%03d@example.com", i)
		names = append(names, n)
		e.seedUser("acme", store.User{UserName: n, Active: true})
	}
	tests := []struct {
		query          string
		wantTotal      int
		wantStartIndex int
		wantNames      []string
	}{
		{query: "", wantTotal: 120, wantStartIndex: 1, wantNames: names[:100]},
		{query: "count=100", wantTotal: 120, wantStartIndex: 1, wantNames: names[:100]},
		{query: "count=101", wantTotal: 120, wantStartIndex: 1, wantNames: names[:100]},
		{query: "count=100000", wantTotal: 120, wantStartIndex: 1, wantNames: names[:100]},
		{query: "count=7", wantTotal: 120, wantStartIndex: 1, wantNames: names[:7]},
		{query: "count=0", wantTotal: 120, wantStartIndex: 1, wantNames: []string{}},
		{query: "count=-5", wantTotal: 120, wantStartIndex: 1, wantNames: []string{}},
		{query: "startIndex=0&count=2", wantTotal: 120, wantStartIndex: 1, wantNames: names[:2]},
		{query: "startIndex=-9&count=2", wantTotal: 120, wantStartIndex: 1, wantNames: names[:2]},
		{query: "startIndex=1&count=2", wantTotal: 120, wantStartIndex: 1, wantNames: names[:2]},
		{query: "startIndex=3&count=2", wantTotal: 120, wantStartIndex: 3, wantNames: names[2:4]},
		{query: "startIndex=101", wantTotal: 120, wantStartIndex: 101, wantNames: names[100:]},
		{query: "startIndex=118&count=10", wantTotal: 120, wantStartIndex: 118, wantNames: names[117:]},
		{query: "startIndex=121", wantTotal: 120, wantStartIndex: 121, wantNames: []string{}},
		{query: "startIndex=500&count=0", wantTotal: 120, wantStartIndex: 500, wantNames: []string{}},
		{query: "filter=" + url.QueryEscape(`userName sw "u01"`) + "&count=3", wantTotal: 10, wantStartIndex: 1, wantNames: names[10:13]},
		{query: "filter=" + url.QueryEscape(`userName sw "u01"`) + "&startIndex=9", wantTotal: 10, wantStartIndex: 9, wantNames: names[18:20]},
		{query: "filter=" + url.QueryEscape(`userName eq "nobody"`), wantTotal: 0, wantStartIndex: 1, wantNames: []string{}},
		{query: "count=%202%20", wantTotal: 120, wantStartIndex: 1, wantNames: names[:2]},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			e.t = t
			r := e.do("GET", "/acme/Users?"+tt.query, nil)
			require.Equal(t, 200, r.Status, "body: %s", r.Body)
			body := r.JSON(t)
			assert.Equal(t, []any{listSchema}, body["schemas"])
			assert.EqualValues(t, tt.wantTotal, body["totalResults"])
			assert.EqualValues(t, tt.wantStartIndex, body["startIndex"])
			assert.EqualValues(t, len(tt.wantNames), body["itemsPerPage"], "itemsPerPage is the number returned")
			assert.Equal(t, tt.wantNames, userNamesOf(t, body))
		})
	}
}

func TestListGroupsPaging(t *testing.T) {
	e := newEnv(t)
	for i := range 105 {
		e.seedGroup("acme", store.Group{DisplayName: fmt.Sprintf("g%03d", i)})
	}
	tests := []struct {
		query              string
		wantTotal, wantLen int
	}{
		{query: "", wantTotal: 105, wantLen: 100},
		{query: "count=1000", wantTotal: 105, wantLen: 100},
		{query: "count=0", wantTotal: 105, wantLen: 0},
		{query: "startIndex=100", wantTotal: 105, wantLen: 6},
		{query: "filter=" + url.QueryEscape(`displayName eq "G007"`), wantTotal: 1, wantLen: 1},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			e.t = t
			r := e.do("GET", "/acme/Groups?"+tt.query, nil)
			require.Equal(t, 200, r.Status, "body: %s", r.Body)
			body := r.JSON(t)
			assert.EqualValues(t, tt.wantTotal, body["totalResults"])
			assert.EqualValues(t, tt.wantLen, body["itemsPerPage"])
			res, ok := body["Resources"].([]any)
			require.True(t, ok, "Resources must be an array")
			assert.Len(t, res, tt.wantLen)
		})
	}
}

// TestProjection covers attributes and excludedAttributes (RFC 7644 §3.9) on every operation that
// returns a resource: id, schemas and meta.resourceType are always there, password never.
func TestProjection(t *testing.T) {
	const annJSON = `{"schemas":["` + userSchema + `","` + enterpriseNS + `"],"userName":"ann@example.com","displayName":"Ann Lee",` +
		`"password":"S3cret-pw!","name":{"givenName":"Ann","familyName":"Lee"},` +
		`"emails":[{"value":"ann@example.com","type":"work","primary":true},{"value":"ann@home.example","type":"home"}],` +
		`"` + enterpriseNS + `":{"department":"R&D","costCenter":"CC1"}}`
	all := []string{"active", "displayName", "emails", "id", "meta", "name", "schemas", "userName", enterpriseNS}
	allMeta := []string{"created", "lastModified", "location", "resourceType", "version"}

	tests := []struct {
		name   string
		method string // the request under test; "LIST" is GET on the collection
		query  string
		// wantKeys are the top-level members of the resource; wantMeta those of meta.
		wantKeys, wantMeta []string
		check              func(t *testing.T, res map[string]any)
	}{
		{name: "no projection", method: "GET", wantKeys: all, wantMeta: allMeta},
		{name: "attributes=userName", method: "GET", query: "attributes=userName",
			wantKeys: []string{"id", "meta", "schemas", "userName"}, wantMeta: []string{"resourceType"}},
		{name: "attributes in any case, with spaces", method: "GET", query: "attributes=" + url.QueryEscape(" USERNAME , displayname"),
			wantKeys: []string{"displayName", "id", "meta", "schemas", "userName"}, wantMeta: []string{"resourceType"}},
		{name: "attributes=id", method: "GET", query: "attributes=id",
			wantKeys: []string{"id", "meta", "schemas"}, wantMeta: []string{"resourceType"}},
		{name: "attributes=password is never returned", method: "GET", query: "attributes=password,userName",
			wantKeys: []string{"id", "meta", "schemas", "userName"}, wantMeta: []string{"resourceType"}},
		{name: "attributes=unknown selects nothing", method: "GET", query: "attributes=shoeSize",
			wantKeys: []string{"id", "meta", "schemas"}, wantMeta: []string{"resourceType"}},
		{name: "attributes sub-attribute", method: "GET", query: "attributes=name.givenName",
			wantKeys: []string{"id", "meta", "name", "schemas"}, wantMeta: []string{"resourceType"},
			check: func(t *testing.T, res map[string]any) {
				assert.Equal(t, map[string]any{"givenName": "Ann"}, res["name"])
			}},
		{name: "attributes sub-attribute of multi-valued", method: "GET", query: "attributes=emails.value",
			wantKeys: []string{"emails", "id", "meta", "schemas"}, wantMeta: []string{"resourceType"},
			check: func(t *testing.T, res map[string]any) {
				assert.Equal(t, []any{map[string]any{"value": "ann@example.com"}, map[string]any{"value": "ann@home.example"}}, res["emails"])
			}},
		{name: "attributes extension attribute", method: "GET", query: "attributes=" + url.QueryEscape(enterpriseNS+":department"),
			wantKeys: []string{"id", "meta", "schemas", enterpriseNS}, wantMeta: []string{"resourceType"},
			check: func(t *testing.T, res map[string]any) {
				assert.Equal(t, map[string]any{"department": "R&D"}, res[enterpriseNS])
			}},
		{name: "attributes whole extension", method: "GET", query: "attributes=" + url.QueryEscape(enterpriseNS),
			wantKeys: []string{"id", "meta", "schemas", enterpriseNS}, wantMeta: []string{"resourceType"},
			check: func(t *testing.T, res map[string]any) {
				assert.Equal(t, map[string]any{"department": "R&D", "costCenter": "CC1"}, res[enterpriseNS])
			}},
		{name: "attributes meta.created", method: "GET", query: "attributes=meta.created",
			wantKeys: []string{"id", "meta", "schemas"}, wantMeta: []string{"created", "resourceType"}},
		{name: "excludedAttributes", method: "GET", query: "excludedAttributes=emails,name",
			wantKeys: []string{"active", "displayName", "id", "meta", "schemas", "userName", enterpriseNS}, wantMeta: allMeta},
		{name: "excludedAttributes cannot drop id, schemas, meta.resourceType", method: "GET", query: "excludedAttributes=id,schemas,meta",
			wantKeys: []string{"active", "displayName", "emails", "id", "meta", "name", "schemas", "userName", enterpriseNS}, wantMeta: []string{"resourceType"}},
		{name: "excludedAttributes sub-attribute", method: "GET", query: "excludedAttributes=name.familyName,emails.type",
			wantKeys: all, wantMeta: allMeta,
			check: func(t *testing.T, res map[string]any) {
				assert.Equal(t, map[string]any{"givenName": "Ann"}, res["name"])
				assert.Equal(t, []any{map[string]any{"value": "ann@example.com", "primary": true}, map[string]any{"value": "ann@home.example"}}, res["emails"])
			}},
		{name: "excludedAttributes extension", method: "GET", query: "excludedAttributes=" + url.QueryEscape(enterpriseNS),
			wantKeys: []string{"active", "displayName", "emails", "id", "meta", "name", "schemas", "userName"}, wantMeta: allMeta},
		{name: "attributes wins over excludedAttributes", method: "GET", query: "attributes=userName&excludedAttributes=userName",
			wantKeys: []string{"id", "meta", "schemas", "userName"}, wantMeta: []string{"resourceType"}},
		{name: "list attributes", method: "LIST", query: "attributes=userName",
			wantKeys: []string{"id", "meta", "schemas", "userName"}, wantMeta: []string{"resourceType"}},
		{name: "list excludedAttributes", method: "LIST", query: "excludedAttributes=emails,name,displayName",
			wantKeys: []string{"active", "id", "meta", "schemas", "userName", enterpriseNS}, wantMeta: allMeta},
		{name: "POST attributes", method: "POST", query: "attributes=userName",
			wantKeys: []string{"id", "meta", "schemas", "userName"}, wantMeta: []string{"resourceType"}},
		{name: "POST excludedAttributes", method: "POST", query: "excludedAttributes=emails",
			wantKeys: []string{"active", "displayName", "id", "meta", "name", "schemas", "userName", enterpriseNS}, wantMeta: allMeta},
		{name: "PUT attributes", method: "PUT", query: "attributes=displayName",
			wantKeys: []string{"displayName", "id", "meta", "schemas"}, wantMeta: []string{"resourceType"}},
		{name: "PUT excludedAttributes", method: "PUT", query: "excludedAttributes=name,meta",
			wantKeys: []string{"active", "displayName", "emails", "id", "meta", "schemas", "userName", enterpriseNS}, wantMeta: []string{"resourceType"}},
		{name: "PATCH attributes", method: "PATCH", query: "attributes=nickName",
			wantKeys: []string{"id", "meta", "nickName", "schemas"}, wantMeta: []string{"resourceType"}},
		{name: "PATCH excludedAttributes", method: "PATCH", query: "excludedAttributes=emails",
			wantKeys: []string{"active", "displayName", "id", "meta", "name", "nickName", "schemas", "userName", enterpriseNS}, wantMeta: allMeta},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			var r *response
			q := ""
			if tt.query != "" {
				q = "?" + tt.query
			}
			if tt.method == "POST" {
				r = e.do("POST", "/acme/Users"+q, annJSON)
				require.Equal(t, 201, r.Status, "body: %s", r.Body)
			} else {
				r = e.do("POST", "/acme/Users", annJSON)
				require.Equal(t, 201, r.Status, "body: %s", r.Body)
				id := r.JSON(t)["id"].(string)
				switch tt.method {
				case "GET":
					r = e.do("GET", "/acme/Users/"+id+q, nil)
				case "LIST":
					r = e.do("GET", "/acme/Users"+q, nil)
				case "PUT":
					r = e.do("PUT", "/acme/Users/"+id+q, annJSON)
				case "PATCH":
					r = e.do("PATCH", "/acme/Users/"+id+q, patchBody(`{"op":"add","path":"nickName","value":"Annie"}`))
				}
				require.Equal(t, 200, r.Status, "body: %s", r.Body)
			}
			assert.NotContains(t, string(r.Body), "password")
			assert.NotContains(t, string(r.Body), "S3cret-pw!")
			res := r.JSON(t)
			if tt.method == "LIST" {
				list, _ := res["Resources"].([]any)
				require.Len(t, list, 1)
				res = list[0].(map[string]any)
			}
			assert.ElementsMatch(t, tt.wantKeys, keysOf(res))
			assert.ElementsMatch(t, tt.wantMeta, keysOf(res["meta"]))
			assert.NotEmpty(t, res["id"])
			assert.Contains(t, res["schemas"], userSchema)
			assert.Equal(t, "User", res["meta"].(map[string]any)["resourceType"])
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}

func TestProjectionGroups(t *testing.T) {
	tests := []struct {
		name, path         string
		wantKeys, wantMeta []string
		check              func(t *testing.T, res map[string]any)
	}{
		{name: "no projection", path: "/acme/Groups/{staff}",
			wantKeys: []string{"displayName", "id", "members", "meta", "schemas"}, wantMeta: []string{"created", "lastModified", "location", "resourceType", "version"},
			check: func(t *testing.T, res map[string]any) {
				members, _ := res["members"].([]any)
				require.Len(t, members, 1)
				assert.Equal(t, []string{"$ref", "display", "type", "value"}, keysOf(members[0]))
			}},
		{name: "excludedAttributes=members", path: "/acme/Groups/{staff}?excludedAttributes=members",
			wantKeys: []string{"displayName", "id", "meta", "schemas"}, wantMeta: []string{"created", "lastModified", "location", "resourceType", "version"}},
		{name: "list excludedAttributes=members", path: "/acme/Groups?excludedAttributes=members",
			wantKeys: []string{"displayName", "id", "meta", "schemas"}, wantMeta: []string{"created", "lastModified", "location", "resourceType", "version"}},
		{name: "attributes=displayName", path: "/acme/Groups?attributes=displayName",
			wantKeys: []string{"displayName", "id", "meta", "schemas"}, wantMeta: []string{"resourceType"}},
		{name: "attributes=members.value", path: "/acme/Groups/{staff}?attributes=members.value",
			wantKeys: []string{"id", "members", "meta", "schemas"}, wantMeta: []string{"resourceType"},
			check: func(t *testing.T, res map[string]any) {
				members, _ := res["members"].([]any)
				require.Len(t, members, 1)
				assert.Equal(t, []string{"value"}, keysOf(members[0]))
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.seed()
			r := e.do("GET", strings.ReplaceAll(tt.path, "{staff}", s.staff), nil)
			require.Equal(t, 200, r.Status, "body: %s", r.Body)
			res := r.JSON(t)
			if list, ok := res["Resources"].([]any); ok {
				require.Len(t, list, 1)
				res = list[0].(map[string]any)
			}
			assert.ElementsMatch(t, tt.wantKeys, keysOf(res))
			assert.ElementsMatch(t, tt.wantMeta, keysOf(res["meta"]))
			assert.Equal(t, []any{groupSchema}, res["schemas"])
			assert.Equal(t, "Group", res["meta"].(map[string]any)["resourceType"])
			if tt.check != nil {
				tt.check(t, res)
			}
		})
	}
}

// TestInactiveUsers: active=false is a soft delete; the user is still listed, found by id and
// by filter.
func TestInactiveUsers(t *testing.T) {
	e := newEnv(t)
	s := e.seed()
	r := e.do("PATCH", "/acme/Users/"+s.bob, patchBody(`{"op":"replace","path":"active","value":false}`))
	require.Equal(t, 200, r.Status, "body: %s", r.Body)

	tests := []struct {
		query     string
		wantNames []string
	}{
		{query: "", wantNames: []string{"ann@example.com", "bob@example.com"}},
		{query: "filter=" + url.QueryEscape(`active eq false`), wantNames: []string{"bob@example.com"}},
		{query: "filter=" + url.QueryEscape(`active eq "False"`), wantNames: []string{"bob@example.com"}},
		{query: "filter=" + url.QueryEscape(`active eq true`), wantNames: []string{"ann@example.com"}},
		{query: "filter=" + url.QueryEscape(`not (active eq true)`), wantNames: []string{"bob@example.com"}},
		{query: "filter=" + url.QueryEscape(`userName eq "BOB@example.com"`), wantNames: []string{"bob@example.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			e.t = t
			r := e.do("GET", "/acme/Users?"+tt.query, nil)
			require.Equal(t, 200, r.Status, "body: %s", r.Body)
			body := r.JSON(t)
			assert.Equal(t, tt.wantNames, userNamesOf(t, body))
			for _, res := range body["Resources"].([]any) {
				u := res.(map[string]any)
				assert.Equal(t, u["userName"] != "bob@example.com", u["active"], "active of %v", u["userName"])
			}
		})
	}
	t.Run("get", func(t *testing.T) {
		e.t = t
		r := e.do("GET", "/acme/Users/"+s.bob, nil)
		require.Equal(t, 200, r.Status)
		assert.Equal(t, false, r.JSON(t)["active"])
	})
}

func TestServiceProviderConfig(t *testing.T) {
	tests := []struct {
		name    string
		docURI  string
		wantDoc string
	}{
		{name: "default documentation", wantDoc: scimsvc.DefaultDocumentationURI},
		{name: "configured documentation", docURI: "https://docs.example.com/scim", wantDoc: "https://docs.example.com/scim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *scimsvc.Config) { c.DocumentationURI = tt.docURI })
			r := e.do("GET", "/acme/ServiceProviderConfig", nil)
			require.Equal(t, 200, r.Status)
			assert.Equal(t, "application/scim+json", r.Header.Get("Content-Type"))
			spc := r.JSON(t)
			assert.Equal(t, []any{"urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"}, spc["schemas"])
			assert.Equal(t, tt.wantDoc, spc["documentationUri"])
			assert.Equal(t, map[string]any{"supported": true}, spc["patch"])
			assert.Equal(t, true, spc["bulk"].(map[string]any)["supported"])
			assert.Equal(t, map[string]any{"supported": true}, spc["sort"])
			assert.Equal(t, map[string]any{"cursor": true, "index": true, "defaultPaginationMethod": "index",
				"defaultPageSize": float64(100), "maxPageSize": float64(100), "cursorTimeout": float64(3600)}, spc["pagination"])
			assert.Equal(t, map[string]any{"supported": true}, spc["etag"])
			assert.Equal(t, map[string]any{"supported": false}, spc["changePassword"], "RFC 7643 §5: supported alone")
			assert.Equal(t, map[string]any{"supported": true, "maxResults": float64(100)}, spc["filter"])
			schemes, _ := spc["authenticationSchemes"].([]any)
			require.Len(t, schemes, 1)
			scheme := schemes[0].(map[string]any)
			assert.Equal(t, "oauthbearertoken", scheme["type"])
			assert.Contains(t, scheme["name"], "Bearer")
			assert.NotEmpty(t, scheme["description"])
			assert.Equal(t, tt.wantDoc, scheme["documentationUri"])
			assert.Equal(t, true, scheme["primary"])
			assert.Equal(t, map[string]any{"resourceType": "ServiceProviderConfig", "location": testBase + "/acme/ServiceProviderConfig"}, spc["meta"])
		})
	}
}

func TestResourceTypes(t *testing.T) {
	user := map[string]any{
		"schemas": []any{"urn:ietf:params:scim:schemas:core:2.0:ResourceType"},
		"id":      "User", "name": "User", "endpoint": "/Users", "description": "User Account",
		"schema":           userSchema,
		"schemaExtensions": []any{map[string]any{"schema": enterpriseNS, "required": false}},
		"meta":             map[string]any{"resourceType": "ResourceType", "location": testBase + "/acme/ResourceTypes/User"},
	}
	group := map[string]any{
		"schemas": []any{"urn:ietf:params:scim:schemas:core:2.0:ResourceType"},
		"id":      "Group", "name": "Group", "endpoint": "/Groups", "description": "Group",
		"schema": groupSchema,
		"meta":   map[string]any{"resourceType": "ResourceType", "location": testBase + "/acme/ResourceTypes/Group"},
	}
	e := newEnv(t)
	tests := []struct {
		path string
		want map[string]any
	}{
		{path: "/acme/ResourceTypes", want: map[string]any{
			"schemas": []any{listSchema}, "totalResults": float64(2), "startIndex": float64(1), "itemsPerPage": float64(2),
			"Resources": []any{user, group},
		}},
		{path: "/acme/ResourceTypes/User", want: user},
		{path: "/acme/ResourceTypes/Group", want: group},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			e.t = t
			r := e.do("GET", tt.path, nil)
			require.Equal(t, 200, r.Status, "body: %s", r.Body)
			assert.Equal(t, tt.want, r.JSON(t))
		})
	}
}

// checkAttributeDefinitions asserts that every attribute definition, and every sub-attribute's,
// carries the characteristics of RFC 7643 §7.
func checkAttributeDefinitions(t *testing.T, where string, attrs []any) {
	t.Helper()
	require.NotEmpty(t, attrs, where)
	for _, a := range attrs {
		def := a.(map[string]any)
		name, _ := def["name"].(string)
		for _, k := range []string{"name", "type", "multiValued", "description", "required", "caseExact", "mutability", "returned", "uniqueness"} {
			assert.Contains(t, def, k, "%s.%s", where, name)
		}
		if def["type"] == "complex" {
			subs, _ := def["subAttributes"].([]any)
			checkAttributeDefinitions(t, where+"."+name, subs)
		}
	}
}

// attributeDef finds the definition of name among attrs.
func attributeDef(attrs []any, name string) map[string]any {
	for _, a := range attrs {
		if def := a.(map[string]any); def["name"] == name {
			return def
		}
	}
	return nil
}

func TestSchemas(t *testing.T) {
	e := newEnv(t)
	r := e.do("GET", "/acme/Schemas", nil)
	require.Equal(t, 200, r.Status, "body: %s", r.Body)
	list := r.JSON(t)
	assert.Equal(t, []any{listSchema}, list["schemas"])
	assert.EqualValues(t, 3, list["totalResults"])
	assert.EqualValues(t, 3, list["itemsPerPage"])
	res, _ := list["Resources"].([]any)
	require.Len(t, res, 3)
	var ids []string
	for _, s := range res {
		ids = append(ids, s.(map[string]any)["id"].(string))
	}
	assert.ElementsMatch(t, []string{userSchema, enterpriseNS, groupSchema}, ids)

	tests := []struct {
		urn       string
		wantName  string
		wantAttrs []string
		check     func(t *testing.T, attrs []any)
	}{
		{urn: userSchema, wantName: "User",
			wantAttrs: []string{"userName", "name", "displayName", "nickName", "profileUrl", "title", "userType", "preferredLanguage",
				"locale", "timezone", "active", "password", "emails", "phoneNumbers", "ims", "photos", "addresses", "groups",
				"entitlements", "roles", "x509Certificates"},
			check: func(t *testing.T, attrs []any) {
				// The rest of RFC 7643 §4.1.2, with its canonical types and sub-attribute types.
				for name, types := range map[string][]any{
					"ims":              {"aim", "gtalk", "icq", "xmpp", "msn", "skype", "qq", "yahoo"},
					"photos":           {"photo", "thumbnail"},
					"entitlements":     nil,
					"x509Certificates": nil,
				} {
					def := attributeDef(attrs, name)
					assert.Equal(t, true, def["multiValued"], name)
					assert.Equal(t, "complex", def["type"], name)
					assert.Equal(t, "readWrite", def["mutability"], name)
					subs := def["subAttributes"].([]any)
					var subNames []string
					for _, s := range subs {
						subNames = append(subNames, s.(map[string]any)["name"].(string))
					}
					assert.Equal(t, []string{"value", "display", "type", "primary"}, subNames, name)
					if types != nil {
						assert.Equal(t, types, attributeDef(subs, "type")["canonicalValues"], name)
					} else {
						assert.NotContains(t, attributeDef(subs, "type"), "canonicalValues", name)
					}
					assert.Equal(t, "boolean", attributeDef(subs, "primary")["type"], name)
				}
				photo := attributeDef(attributeDef(attrs, "photos")["subAttributes"].([]any), "value")
				assert.Equal(t, "reference", photo["type"])
				assert.Equal(t, []any{"external"}, photo["referenceTypes"])
				cert := attributeDef(attributeDef(attrs, "x509Certificates")["subAttributes"].([]any), "value")
				assert.Equal(t, "binary", cert["type"])
				assert.Equal(t, true, cert["caseExact"])

				userName := attributeDef(attrs, "userName")
				assert.Equal(t, true, userName["required"])
				assert.Equal(t, "server", userName["uniqueness"])
				password := attributeDef(attrs, "password")
				assert.Equal(t, "writeOnly", password["mutability"])
				assert.Equal(t, "never", password["returned"])
				groups := attributeDef(attrs, "groups")
				assert.Equal(t, "readOnly", groups["mutability"])
				emails := attributeDef(attrs, "emails")
				assert.Equal(t, true, emails["multiValued"])
				assert.Equal(t, "complex", emails["type"])
				var subs []string
				for _, s := range emails["subAttributes"].([]any) {
					subs = append(subs, s.(map[string]any)["name"].(string))
				}
				assert.Equal(t, []string{"value", "display", "type", "primary"}, subs)
				assert.Equal(t, "reference", attributeDef(attrs, "profileUrl")["type"])
			}},
		{urn: enterpriseNS, wantName: "EnterpriseUser",
			wantAttrs: []string{"employeeNumber", "costCenter", "organization", "division", "department", "manager"},
			check: func(t *testing.T, attrs []any) {
				manager := attributeDef(attrs, "manager")
				assert.Equal(t, "complex", manager["type"])
				assert.NotNil(t, attributeDef(manager["subAttributes"].([]any), "value"))
			}},
		{urn: groupSchema, wantName: "Group", wantAttrs: []string{"displayName", "members"},
			check: func(t *testing.T, attrs []any) {
				assert.Equal(t, true, attributeDef(attrs, "displayName")["required"])
				members := attributeDef(attrs, "members")
				assert.Equal(t, true, members["multiValued"])
				assert.Equal(t, "immutable", attributeDef(members["subAttributes"].([]any), "value")["mutability"])
			}},
	}
	for _, tt := range tests {
		t.Run(tt.urn, func(t *testing.T) {
			e.t = t
			for _, urn := range []string{tt.urn, strings.ToLower(tt.urn)} {
				r := e.do("GET", "/acme/Schemas/"+urn, nil)
				require.Equal(t, 200, r.Status, "body: %s", r.Body)
				s := r.JSON(t)
				assert.Equal(t, []any{"urn:ietf:params:scim:schemas:core:2.0:Schema"}, s["schemas"])
				assert.Equal(t, tt.urn, s["id"])
				assert.Equal(t, tt.wantName, s["name"])
				assert.NotEmpty(t, s["description"])
				assert.Equal(t, map[string]any{"resourceType": "Schema", "location": testBase + "/acme/Schemas/" + tt.urn}, s["meta"])
				attrs, _ := s["attributes"].([]any)
				var names []string
				for _, a := range attrs {
					names = append(names, a.(map[string]any)["name"].(string))
				}
				assert.Equal(t, tt.wantAttrs, names)
				checkAttributeDefinitions(t, tt.urn, attrs)
				tt.check(t, attrs)

				inList := res[slices.IndexFunc(res, func(x any) bool { return x.(map[string]any)["id"] == tt.urn })]
				assert.Equal(t, inList, s, "/Schemas lists the same definition")
			}
		})
	}
}

// TestDiscoveryErrors: discovery needs a key like everything else, and unknown names are 404.
func TestDiscoveryErrors(t *testing.T) {
	tests := []struct {
		path, key string
		want      int
	}{
		{path: "/acme/ServiceProviderConfig", key: "none", want: 401},
		{path: "/acme/ResourceTypes", key: "none", want: 401},
		{path: "/acme/ResourceTypes/User", key: "none", want: 401},
		{path: "/acme/Schemas", key: "none", want: 401},
		{path: "/acme/Schemas/" + userSchema, key: "none", want: 401},
		{path: "/globex/ServiceProviderConfig", want: 403},
		{path: "/globex/Schemas", want: 403},
		{path: "/acme/ResourceTypes/Device", want: 404},
		{path: "/acme/Schemas/urn:ietf:params:scim:schemas:core:2.0:Device", want: 404},
		{path: "/acme/Schemas/" + userSchema + "x", want: 404},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.key, func(t *testing.T) {
			e := newEnv(t)
			key := e.key
			if tt.key == "none" {
				key = ""
			}
			r := e.doKey(key, "GET", tt.path, nil)
			requireSCIMError(t, r, tt.want, "")
			if tt.want == 401 {
				assert.True(t, strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer"))
			}
		})
	}
}

// TestStringsAreOpaqueAndEscaped: a profileUrl is kept as the string sent, never parsed, and
// every string is JSON-escaped as encoding/json escapes it (HTML-safe).
func TestStringsAreOpaqueAndEscaped(t *testing.T) {
	tests := []struct {
		name, attr, value, wantRaw string
	}{
		{name: "javascript profileUrl", attr: "profileUrl", value: `javascript:alert("<x>")`,
			wantRaw: `"profileUrl":"javascript:alert(\"\u003cx\u003e\")"`},
		{name: "profileUrl that is no URL", attr: "profileUrl", value: `%%not a url&x=<y>`,
			wantRaw: `"profileUrl":"%%not a url\u0026x=\u003cy\u003e"`},
		{name: "displayName with control and separator characters", attr: "displayName", value: "a\tb\u2028c\x01</script>",
			wantRaw: `"displayName":"a\tb\u2028c\u0001\u003c/script\u003e"`},
		{name: "title with backslash and quote", attr: "title", value: `C:\ "boss"`,
			wantRaw: `"title":"C:\\ \"boss\""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			r := e.do("POST", "/acme/Users", map[string]any{"userName": "ann@example.com", tt.attr: tt.value})
			require.Equal(t, 201, r.Status, "body: %s", r.Body)
			id := r.JSON(t)["id"].(string)
			for _, resp := range []*response{r, e.do("GET", "/acme/Users/"+id, nil), e.do("GET", "/acme/Users", nil)} {
				assert.Contains(t, string(resp.Body), tt.wantRaw)
				assert.NotContains(t, string(resp.Body), "<")
			}
			assert.Equal(t, tt.value, r.JSON(t)[tt.attr], "decodes to the string sent")
			u, err := e.mem.Users().Get(context.Background(), "acme", id)
			require.NoError(t, err)
			stored := map[string]string{"profileUrl": u.ProfileURL, "displayName": u.DisplayName, "title": u.Title}
			assert.Equal(t, tt.value, stored[tt.attr], "stored as sent")
		})
	}
}
