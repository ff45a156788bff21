package scimsvc

import (
	"bytes"
	"net/http/httptest"
	"path"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/schema"
)

// typedUserBodies are User bodies as Entra ID and Okta send them in a POST or PUT, which
// decodeUser takes.
var typedUserBodies = []string{
	// Entra ID: create, as in its validator and in TestEntraProvisioning.
	`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"externalId":"0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef","userName":"Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1","active":true,"emails":[{"primary":true,"type":"work","value":"Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2b@testuser.com"}],"meta":{"resourceType":"User"},"name":{"formatted":"givenName familyName","familyName":"familyName","givenName":"givenName"},"roles":[]}`,
	`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"externalId":"58342554-38d6-4ec8-948c-50044d0a33fd","userName":"Test_User_feed3ace-693c-4e5a-82e2-694be1b39934","active":true,"addresses":[{"formatted":"99 Main St","locality":"Redmond","type":"work","postalCode":"98052","primary":true,"region":"WA","country":"US","streetAddress":"99 Main St"}],"displayName":"Test User","nickName":"tu","emails":[{"primary":true,"type":"work","value":"Test_User_22370c1a@testuser.com"}],"phoneNumbers":[{"primary":true,"type":"work","value":"123-456-7890"},{"type":"mobile","value":"555-0100"}],"title":"Manager","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"R&D","employeeNumber":"701984","costCenter":"4130","organization":"Universal Studios","division":"Theme Park","manager":{"value":"Test_User_53ecbf8b"}},"roles":[{"primary":"False","type":"WindowsAzureActiveDirectoryRole","value":"Admin"}]}`,
	`{
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
	}`,
	// Entra ID: a misspelled URN in schemas, nulls, an empty array.
	`{
		"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extention:enterprise:2.0:User"],
		"externalId": "5b0d8c1e-2f4a-4c7b-9e3d-7a6f5e4d3c2b",
		"userName": "bea.lind@contoso.example",
		"active": true,
		"displayName": "Bea Lind",
		"title": null,
		"phoneNumbers": null,
		"emails": [{"primary": true, "type": "work", "value": "bea.lind@contoso.example"}],
		"meta": {"resourceType": "User"},
		"name": {"formatted": "Bea Lind", "familyName": "Lind", "givenName": "Bea", "middleName": null},
		"roles": [],
		"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"department": "Sales", "costCenter": null}
	}`,
	// Entra ID: the manager as a bare id, locale and time zone, active as a string.
	`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],"userName":"lena@contoso.example","active":"False","preferredLanguage":"sv-SE","locale":"sv-SE","timezone":"Europe/Stockholm","userType":"Member","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"42","manager":"2819c223-7f76-453a-919d-413861904646"}}`,
	// Okta: create, with a password and groups.
	`{
		"schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
		"userName": "isabel.garcia@example.com",
		"name": {"givenName": "Isabel", "familyName": "Garcia"},
		"emails": [{"primary": true, "value": "isabel.garcia@example.com", "type": "work"}],
		"displayName": "Isabel Garcia",
		"locale": "en-US",
		"externalId": "00ujl29u0le5T6Aj10h7",
		"groups": [],
		"password": "1mz050nq",
		"active": true
	}`,
	// Okta: PUT of the user as GET returned it, deactivated.
	`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"23a35c27-23d3-4c03-b4c5-6443c09e7173","externalId":"00ujl29u0le5T6Aj10h7","userName":"isabel.garcia@example.com","name":{"givenName":"Isabel","familyName":"Garcia"},"displayName":"Isabel Garcia","locale":"en-US","active":false,"emails":[{"primary":true,"value":"isabel.garcia@example.com","type":"work"}],"groups":[{"value":"g1","display":"Staff","$ref":"https://id.example.com/scim/v2/acme/Groups/g1","type":"direct"}],"meta":{"resourceType":"User","created":"2026-11-22T09:00:00Z","lastModified":"2026-11-22T09:00:00Z","location":"https://id.example.com/scim/v2/acme/Users/23a35c27","version":"W/\"1\""}}`,
	// Two values marked primary (the last stays so), empty values, escapes, text beyond ASCII.
	`{"userName":"J\u00f6rg@example.com","displayName":"J\u00f6rg \"JJ\" M\u00fcller\n","name":{"familyName":"Müller","honorificPrefix":"Dr.","honorificSuffix":"","middleName":"\u4e2d"},` +
		`"emails":[{"value":"a@example.com","primary":true},{"value":"b@example.com","primary":"TRUE"},{"primary":false},{},null,{"type":"","value":""}],` +
		`"phoneNumbers":[{"primary":true},{"value":"+46 8 123","primary":true}],"ims":[{"value":"jj","type":"xmpp","display":"JJ"}],"photos":[{"value":"https://example.com/p.jpg","type":"photo"}],` +
		`"entitlements":[{"value":"e1"}],"addresses":[{"country":"DE","primary":true},{"locality":"Berlin","primary":true},{"primary":false}],"profileUrl":"https:\/\/example.com\/jj"}`,
	// The enterprise extension with every attribute, and a manager with $ref and displayName.
	`{"userName":"kim","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"employeeNumber":"7","costCenter":"c","organization":"o","division":"d","department":"p","manager":{"value":"m","$ref":"../Users/m","displayName":"Max"}}}`,
	` {"userName":"ws"	,"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User" : null , "name" : { } , "emails" : [ ] } ` + "\n",
}

// untypedUserBodies are User bodies decodeUser leaves to the generic path, which takes some of
// them and refuses others.
var untypedUserBodies = []string{
	`{"UserName":"a"}`,                // another case
	`{"userName":"a","emails":"a@b"}`, // a single value for a multi-valued attribute
	`{"userName":"a","name.givenName":"A"}`,
	`{"userName":"a","urn:ietf:params:scim:schemas:core:2.0:User:displayName":"A"}`,
	`{"urn:ietf:params:scim:schemas:core:2.0:User":{"userName":"a"}}`,
	`{"userName":"a","external_id":"x"}`,
	`{"userName":"a","x-unknown":"x"}`,
	`{"userName":"a","emails":[{"value":"a","primary":true,"unknown":1}]}`,
	`{"userName":"a","emails":["a@example.com"]}`,
	`{"userName":"a","x509Certificates":[{"value":"AAAA"}]}`,
	`{"userName":"a","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"manager":[{"value":"x"}]}}`,
	`{"userName":"a","name":[{"givenName":"A"}]}`,
	`{"userName":"a","active":1}`,
	`{"userName":"a","active":"yes"}`,
	`{"userName":"a","title":7}`,
	`{"userName":"a","meta":{"version":1}}`,
	`{"userName":"a","schemas":"x"}`,
	`{"userName":"a","userName":"b"}`,
	`{"userName":"a","active":true,"ACTIVE":false}`,
	`{"userName":"a","name":{"givenName":"A","givenName":"B"}}`,
	`{"userName":"a","meta":{"version":"1","version":"2"}}`,
	`{"userName":"a","displayName":"\u0000"}`,
	`{"userName":"a","displayName":"\ud83d\ude00"}`,
	`{"userName":"a","displayName":"\ud800"}`,
	"{\"userName\":\"a\xff\"}",
	"{\"userName\":\"a\x00\"}",
	"{\"userName\":\"a\tb\"}",
	`{"user\u004eame":"a"}`,
	`{"userName":"a","active":"fal\u0073e"}`,
	`{"userName":""}`,
	`{"userName":null}`,
	`{"displayName":"no userName"}`,
	`{"userName":"a"}{}`,
	`{"userName":"a",}`,
	`{"userName":"a"`,
	`{"userName":"a","active":tru}`,
	`{"userName":"a","active":truex}`,
	`[{"userName":"a"}]`,
	`null`,
	``,
}

// genericUser is what the generic path (decodeBody) decodes from a body of a User of
// schema.User().
func genericUser(body []byte) (store.User, error) {
	h := &handler{userRT: schema.User()}
	return h.userKind().decodeBody(body)
}

// writeResponse is the status, Location and ETag headers and body of the answer of a fresh
// handler to a POST of body to /acme/Users or a PUT of it to /acme/Users/{ann's id}, with the
// ids written {id}, {ann} and {group}, and meta.created {created}.
func writeResponse(t *testing.T, method string, body []byte) string {
	t.Helper()
	fh := newFuzzHandler(t)
	target := "/acme/Users"
	if method == "PUT" {
		target += "/" + fh.user
	}
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/scim+json")
	req.Header.Set("Authorization", "Bearer "+fh.key)
	rec := httptest.NewRecorder()
	fh.h.ServeHTTP(rec, req)
	out := rec.Result().Status + "\n" + rec.Header().Get("Location") + "\n" + rec.Header().Get("ETag") + "\n" + rec.Body.String()
	if loc := rec.Header().Get("Location"); loc != "" {
		out = strings.ReplaceAll(out, path.Base(loc), "{id}")
	}
	out = strings.NewReplacer(fh.user, "{ann}", fh.group, "{group}").Replace(out)
	// ann's creation time is the clock's when newFuzzHandler stored her.
	return annCreated.ReplaceAllString(out, `"created":"{created}"`)
}

// annCreated matches the creation time in a response.
var annCreated = regexp.MustCompile(`"created":"[^"]*"`)

// untyped returns body, which decodeUser takes, with an unknown attribute added: the generic
// path ignores it, and decodeUser leaves the body to it.
func untyped(body []byte) []byte {
	end := bytes.LastIndexByte(body, '}')
	return append(append(bytes.Clone(body[:end]), `,"zzUntyped":0`...), body[end:]...)
}

// checkTypedUser fails the test when decodeUser takes body and the generic path does not, or
// decodes another user, or the handler answers a POST or PUT of body otherwise than the same
// request through the generic path.
func checkTypedUser(t *testing.T, body []byte) (taken bool) {
	t.Helper()
	got, ok := decodeUser(body)
	if !ok {
		return false
	}
	want, err := genericUser(body)
	if err != nil {
		t.Fatalf("decodeUser took %q, which the generic path refuses: %v", body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeUser(%q) = %+v, the generic path gives %+v", body, got, want)
	}
	slow := untyped(body)
	if _, ok := decodeUser(slow); ok {
		t.Fatalf("decodeUser took %q, which has an unknown attribute", slow)
	}
	for _, method := range []string{"POST", "PUT"} {
		if fast, generic := writeResponse(t, method, body), writeResponse(t, method, slow); fast != generic {
			t.Fatalf("%s %q answers\n%s\nand through the generic path\n%s", method, body, fast, generic)
		}
	}
	return true
}

// TestDecodeUserTakesProvisioningBodies: the bodies identity providers send take the typed
// path, which gives the user and the response the generic path gives.
func TestDecodeUserTakesProvisioningBodies(t *testing.T) {
	for _, body := range typedUserBodies {
		if !checkTypedUser(t, []byte(body)) {
			t.Errorf("decodeUser left %s to the generic path", body)
		}
	}
}

// TestDecodeUserLeavesOtherBodies: other case, unknown attributes and shapes, numbers,
// duplicate members, escapes it does not decode, text that is not text, a missing userName and
// broken JSON are left to the generic path, which answers them as before.
func TestDecodeUserLeavesOtherBodies(t *testing.T) {
	for _, body := range untypedUserBodies {
		if _, ok := decodeUser([]byte(body)); ok {
			t.Errorf("decodeUser took %q", body)
		}
	}
}

// FuzzTypedUserDecode: whenever decodeUser takes a body, the generic path takes it too and
// decodes the same user, and the handler's answer to a POST or PUT of it is the same either way.
func FuzzTypedUserDecode(f *testing.F) {
	for _, s := range typedUserBodies {
		f.Add([]byte(s))
		// Mutations: another case, a duplicate member, a number, a null, an escape.
		f.Add([]byte(strings.Replace(s, `"userName"`, `"username"`, 1)))
		f.Add([]byte(strings.Replace(s, `"active"`, `"active":true,"active"`, 1)))
		f.Add([]byte(strings.Replace(s, `"primary":true`, `"primary":1`, 1)))
		f.Add([]byte(strings.Replace(s, `"work"`, `null`, 1)))
		f.Add([]byte(strings.Replace(s, `"work"`, `"w\u006frk\u0000"`, 1)))
	}
	for _, s := range untypedUserBodies {
		f.Add([]byte(s))
	}
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkTypedUser(t, body)
	})
}

// TestDecodeUserMutations: of every body decodeUser takes with one byte replaced or removed,
// the generic path takes the same user. (FuzzTypedUserDecode compares the answers too, from
// the same seeds.)
func TestDecodeUserMutations(t *testing.T) {
	for _, s := range typedUserBodies {
		for i := range len(s) {
			for _, m := range []string{"", `"`, `\`, "u", "0", " ", "{", "}", "[", "]", ",", ":", "N", "\x00", "\xff", "null"} {
				body := []byte(s[:i] + m + s[i+1:])
				got, ok := decodeUser(body)
				if !ok {
					continue
				}
				want, err := genericUser(body)
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("decodeUser(%q) = %+v, the generic path gives %+v, %v", body, got, want, err)
				}
			}
		}
	}
}
