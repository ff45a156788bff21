package scimsvc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/visid/visid/store/schema"
)

// FuzzDuplicateMember compares duplicateMember's one pass over the bytes with a reference that
// walks encoding/json's tokens and keeps a map of folded names per object: on any valid JSON
// they agree whether some object has two names alike.
func FuzzDuplicateMember(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"a":1,"\u0061":2}`, `{"a":{"a":1}}`, `[{"a":1},{"a":2}]`, `{"a":"}{,\"a\":","b":1}`,
		`{"a\\":1,"a\\":2}`, `{"a":[1,{"b":1}],"A":2}`, `{"k":1,"\u212a":2}`, `{"s":1,"\u017f":2}`,
		`{"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"A3":3}`,
		`{"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"x":{"a1":1},"a9":9}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) || !utf8.Valid(body) {
			return
		}
		first, second, got := duplicateMember(body)
		want := referenceDuplicate(t, json.NewDecoder(bytes.NewReader(body)))
		if got != want {
			t.Fatalf("duplicateMember(%q) = %q, %q, %v; the reference says %v", body, first, second, got, want)
		}
		if got && !strings.EqualFold(first, second) {
			t.Fatalf("duplicateMember(%q) = %q, %q: not alike", body, first, second)
		}
	})
}

// referenceDuplicate reports whether the next value of dec has an object with two names alike.
func referenceDuplicate(t *testing.T, dec *json.Decoder) bool {
	tok, err := dec.Token()
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return false
	}
	dup := false
	seen := map[string]bool{}
	for dec.More() {
		if d == '{' {
			k, err := dec.Token()
			if err != nil {
				t.Fatalf("token: %v", err)
			}
			f := schema.Fold(k.(string))
			dup = dup || seen[f]
			seen[f] = true
		}
		dup = referenceDuplicate(t, dec) || dup
	}
	if _, err := dec.Token(); err != nil {
		t.Fatalf("token: %v", err)
	}
	return dup
}

// BenchmarkParseBody compares parseBody, which decodes token by token to refuse duplicate
// member names and checks the text, with encoding/json decoding the same body into a map (the
// baseline, which does neither): an Entra ID create, and a PATCH adding 35,000 emails (about
// 910 KB, under the 1 MiB limit).
func BenchmarkParseBody(b *testing.B) {
	var emails strings.Builder
	for i := range 35000 {
		if i > 0 {
			emails.WriteByte(',')
		}
		fmt.Fprintf(&emails, `{"value":"e%05d@ex.com"}`, i)
	}
	bodies := []struct {
		name string
		body []byte
	}{
		{name: "entra-create", body: []byte(bodySeeds[1])},
		{name: "patch-35k-emails", body: []byte(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"add","path":"emails","value":[` + emails.String() + `]}]}`)},
	}
	for _, bb := range bodies {
		b.Run(bb.name+"/encoding-json", func(b *testing.B) {
			b.SetBytes(int64(len(bb.body)))
			b.ReportAllocs()
			for b.Loop() {
				dec := json.NewDecoder(bytes.NewReader(bb.body))
				dec.UseNumber()
				var v any
				if err := dec.Decode(&v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bb.name+"/parseBody", func(b *testing.B) {
			b.SetBytes(int64(len(bb.body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseBody(bb.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// parseTree returns what encoding/json decodes, for every body it takes; it may leave any body
// to encoding/json, and must leave it every body that is not one valid JSON object.
func FuzzParseTree(f *testing.F) {
	for _, s := range []string{
		`{}`, ` {"a" : [1, -2.5e+3, 0, true, false, null, "x\u00e9\n"] } `, `{"a":{"b":{"c":[]}}}`,
		`{"a":1}{}`, `[1]`, `{"a":01}`, `{"a":"\ud800"}`, `{"a":1,"a":2}`, `{"a\"b":"\\"}`,
		`{"a":1.}`, `{"a":-}`, `{"a":1e}`, "{\"a\":\"\t\"}", `{"a" 1}`, `{,}`, `{"a":[1,]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) {
			return // parseBody refuses it before either decoder runs
		}
		got, ok := parseTree(body)
		want, err := decodeJSON(body)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("parseTree took %q, which encoding/json refuses: %v", body, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parseTree(%q) = %#v, encoding/json gives %#v", body, got, want)
		}
	})
}

// The bodies identity providers send take parseTree's path, not encoding/json's.
func TestParseTreeTakesProvisioningBodies(t *testing.T) {
	for _, body := range []string{
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":false}]}`,
		`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"externalId":"ext-1","userName":"ann@example.com","active":true,` +
			`"emails":[{"primary":true,"type":"work","value":"ann@example.com"}],"name":{"formatted":"Ann Lee","familyName":"Lee","givenName":"Ann"},` +
			`"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"R\u0026D","employeeNumber":12.5e1}}`,
	} {
		got, ok := parseTree([]byte(body))
		if !ok {
			t.Fatalf("parseTree left %s to encoding/json", body)
		}
		want, err := decodeJSON([]byte(body))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("parseTree(%s) = %#v, encoding/json gives %#v (%v)", body, got, want, err)
		}
	}
}
