package memstore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Packing gives back every input exactly, and keeps a user as the SCIM API renders it in well
// under half its length.
func TestPackRoundTrip(t *testing.T) {
	pt := newPackTable()
	user := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],` +
		`"id":"user_01m8axv8zfq1zncta08sgjqqm6","externalId":"ext-1","userName":"user0000001@example.com",` +
		`"name":{"formatted":"Ann Lee","familyName":"Lee","givenName":"Ann"},"active":true,` +
		`"emails":[{"value":"user0000001@example.com","type":"work","primary":true}],` +
		`"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"R\u0026D"},` +
		`"meta":{"resourceType":"User","created":"2026-11-26T03:19:36.687152455Z","lastModified":"2026-11-26T03:19:36.687152455Z",` +
		`"location":"https://id.example.com/scim/v2/acme/Users/user_01m8axv8zfq1zncta08sgjqqm6","version":"W/\"1\""}}`
	cases := []struct {
		name string
		data string
	}{
		{"empty", ""},
		{"user", user},
		{"member", `{"group":"group_1","user":"user_1"}`},
		{"whitespace", "{\n\t\"group\" : \"g\",\r\n \"user\":\"u\"}"},
		{"every token", strings.Join(packTokens[:], "")},
		{"control byte in data", "\"\x01\x1f" + user + "\""},
		{"starts with the verbatim byte", "\x1f{}"},
		{"token cut short", `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Use`},
		{"overlapping repeat", strings.Repeat("ab", 300) + strings.Repeat("x", 1000)},
		{"repeats far apart", "0123456789abcdef" + strings.Repeat("-", 70000) + "0123456789abcdef"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := pt.pack(json.RawMessage(c.data))
			got := pt.unpack(p)
			assert.Equal(t, c.data, string(got))
			if c.data == "" {
				assert.Nil(t, got)
			}
		})
	}
	p := pt.pack(json.RawMessage(user))
	t.Logf("a user of %d bytes is packed in %d: %q", len(user), len(p), p)
	assert.Less(t, len(p), len(user)*35/100)
}

func FuzzPack(f *testing.F) {
	pt := newPackTable()
	for _, s := range packTokens {
		f.Add(s + "x" + s)
	}
	f.Add("\x1f\x01")
	f.Fuzz(func(t *testing.T, s string) {
		if got := string(pt.unpack(pt.pack(json.RawMessage(s)))); got != s {
			t.Fatalf("pack(%q) unpacks to %q", s, got)
		}
	})
}
