package scimsvc

import (
	"reflect"
	"strings"
	"testing"

	"github.com/visid/visid/store/filter"
	"github.com/visid/visid/store/schema"
)

// typedPatchBodies are PATCH bodies as Entra ID and Okta send them, which decodePatch reads.
var typedPatchBodies = []string{
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":false}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"False"}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[` +
		`{"op":"Add","path":"displayName","value":"Ann Lee"},` +
		`{"op":"Replace","path":"name.givenName","value":"Ann"},` +
		`{"op":"Replace","path":"emails[type eq \"work\"].value","value":"ann@example.com"},` +
		`{"op":"Add","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department","value":"R\u0026D"},` +
		`{"op":"Remove","path":"title"}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"remove","path":"members[value eq \"2819c223\"]"}]}`,
	"{\n  \"schemas\": [\"urn:ietf:params:scim:api:messages:2.0:PatchOp\"],\n  \"Operations\": [\n    {\"op\": \"replace\", \"path\": \"userName\", \"value\": \"b\u00f6b@example.com\"}\n  ]\n}",
	`{"Operations":[{"op":"replace","path":null,"value":null},{"op":"add","value":"x"}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User","value":null}]}`,
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"value":"Sales","path":"displayName","op":"replace"}]}`,
}

// otherPatchBodies are PATCH bodies that decodePatch leaves to the tree: other spellings,
// values that are objects, arrays or numbers, escapes it does not take, unknown members,
// errors.
var otherPatchBodies = []string{
	`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"operations":[{"op":"replace","path":"active","value":false}]}`,
	`{"Operations":[{"OP":"replace","path":"active","value":false}]}`,
	`{"Operations":[{"op":"replace","value":{"active":false}}]}`,
	`{"Operations":[{"op":"add","path":"emails","value":[{"value":"a@example.com"}]}]}`,
	`{"Operations":[{"op":"replace","path":"x509Certificates","value":1}]}`,
	`{"Operations":[{"op":"replace","path":"title","value":"\u0000"}]}`,
	`{"Operations":[{"op":"replace","path":"title","value":"\ud800"}]}`,
	`{"Operations":[{"op":"replace","path":"title","value":"a","extra":1}]}`,
	`{"Operations":[{"op":"replace","path":"title","value":"a","value":"b"}]}`,
	`{"Operations":[]}`,
	`{"Operations":null}`,
	`{"schemas":[]}`,
	`{"Operations":[{"op":"copy","path":"title","value":"a"}]}`,
	`{"Operations":[{"op":"replace","path":"nosuch","value":"a"}]}`,
	`{"Operations":[{"op":"replace","path":"emails[type eq","value":"a"}]}`,
	`{"Operations":[{"op":"replace","path":1,"value":"a"}]}`,
	`{"Operations":[{"op":"replace","path":"title","value":"a"}]} x`,
	`{"Operations":[{"op":"replace","path":"title","value":"a"}]`,
	`[]`,
	`null`,
}

// checkDecodePatch fails t unless decodePatch of body, when it reads it, gives the operations
// the tree gives; it reports whether decodePatch read it.
func checkDecodePatch(t *testing.T, rt *schema.ResourceType, body []byte) bool {
	t.Helper()
	got, ok := decodePatch(body, rt, filter.Limits{})
	if !ok {
		return false
	}
	want, err := parsePatchBody(body, rt, filter.Limits{})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decodePatch(%q) = %+v; through the tree: %+v, %v", body, got, want, err)
	}
	return true
}

func TestDecodePatchTakesProvisioningBodies(t *testing.T) {
	for _, s := range typedPatchBodies {
		rt := schema.User()
		if strings.Contains(s, "members") {
			rt = schema.Group()
		}
		if !checkDecodePatch(t, rt, []byte(s)) {
			t.Errorf("decodePatch left %s to the tree", s)
		}
	}
}

func TestDecodePatchLeavesOtherBodies(t *testing.T) {
	for _, s := range otherPatchBodies {
		if checkDecodePatch(t, schema.User(), []byte(s)) {
			t.Errorf("decodePatch read %s", s)
		}
	}
}

// TestDecodePatchMutations compares decodePatch with the tree on every one-byte change of the
// provisioning bodies.
func TestDecodePatchMutations(t *testing.T) {
	for _, s := range typedPatchBodies {
		for i := range len(s) {
			for _, m := range []string{"", `"`, `\`, "u", "0", " ", "{", "}", "[", "]", ",", ":", "N", "\x00", "\xff", "null", "O", "[value eq 1]"} {
				checkDecodePatch(t, schema.User(), []byte(s[:i]+m+s[i+1:]))
				checkDecodePatch(t, schema.Group(), []byte(s[:i]+m+s[i+1:]))
			}
		}
	}
}

func FuzzDecodePatch(f *testing.F) {
	for _, s := range append(typedPatchBodies, otherPatchBodies...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkDecodePatch(t, schema.User(), []byte(s))
		checkDecodePatch(t, schema.Group(), []byte(s))
	})
}
