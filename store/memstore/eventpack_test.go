package memstore

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// testUser is a user as the SCIM API renders it.
const testUser = `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],` +
	`"id":"user_01m8axv8zfq1zncta08sgjqqm6","externalId":"ext-1","userName":"user0000001@example.com",` +
	`"name":{"formatted":"Ann Lee","familyName":"Lee","givenName":"Ann"},"active":true,` +
	`"emails":[{"value":"user0000001@example.com","type":"work","primary":true}],` +
	`"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"R\u0026D"},` +
	`"meta":{"resourceType":"User","created":"2026-11-26T03:19:36.687152455Z","lastModified":"2026-11-26T03:19:36.687152455Z",` +
	`"location":"https://id.example.com/scim/v2/acme/Users/user_01m8axv8zfq1zncta08sgjqqm6","version":"W/\"1\""}}`

// Packing gives back every input exactly, and keeps a user as the SCIM API renders it in well
// under half its length.
func TestPackRoundTrip(t *testing.T) {
	pt := newPackTable()
	user := testUser
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
			p := pt.pack(nil, "", json.RawMessage(c.data))
			got := pt.unpack(nil, "", p)
			assert.Equal(t, c.data, string(got))
			if c.data == "" {
				assert.Nil(t, got)
			}
		})
	}
	p := pt.pack(nil, "", json.RawMessage(user))
	t.Logf("a user of %d bytes is packed in %d: %q", len(user), len(p), p)
	assert.Less(t, len(p), len(user)*35/100)
	// Its id, given as the dictionary, is a reference wherever the data has it.
	withID := pt.pack(nil, "user_01m8axv8zfq1zncta08sgjqqm6", json.RawMessage(user))
	assert.Less(t, len(withID), len(p)-20)
	assert.Equal(t, user, string(pt.unpack(nil, "user_01m8axv8zfq1zncta08sgjqqm6", withID)))
	// Another user, packed against the first as the log's dict, is mostly references to it.
	other := strings.NewReplacer("user_01m8axv8zfq1zncta08sgjqqm6", "user_01m8axv9a7s0c0v2d4h5j6k7m8",
		"user0000001", "user0000002", "ext-1", "ext-2", "36.687152455", "37.001234567").Replace(user)
	dict := newPackDict(user)
	withDict := pt.pack(dict, "user_01m8axv9a7s0c0v2d4h5j6k7m8", json.RawMessage(other))
	t.Logf("another user packed against the first: %d bytes", len(withDict))
	assert.Less(t, len(withDict), len(withID)*70/100)
	assert.Equal(t, other, string(pt.unpack(dict, "user_01m8axv9a7s0c0v2d4h5j6k7m8", withDict)))
}

// Every token is found as itself, also where a longer token shares its first bytes, and a
// token's first bytes alone are none.
func TestTokenAt(t *testing.T) {
	pt := newPackTable()
	for i, tok := range packTokens {
		n, b := pt.tokenAt([]byte(tok + `"x"`))
		assert.Equal(t, len(tok), n, tok)
		assert.Equal(t, packBytes[i], b, tok)
		n, _ = pt.tokenAt([]byte(tok[:len(tok)-1]))
		assert.Zero(t, n, "%s cut short", tok)
	}
}

// A repeat farther back than a reference can reach (packMaxDist), in the data or in the dict,
// is kept as it is: data of more than 64 KiB, such as a large group's, comes back whole.
func TestPackFarRepeats(t *testing.T) {
	pt := newPackTable()
	far := `"abcdefghijklmnop` + strings.Repeat("x", packMaxDist+10) + `"abcdefghijklmnop"`
	for _, dict := range []*packDict{nil, newPackDict(`"abcdefghijklmnop"`)} {
		assert.Equal(t, far, string(pt.unpack(dict, "", pt.pack(dict, "", json.RawMessage(far)))))
	}
	// A group of 3,000 members refers to the dict (a user's location) only within reach.
	members := make([]string, 3000)
	for i := range members {
		members[i] = fmt.Sprintf(`{"value":"user_%05d","$ref":"https://id.example.com/scim/v2/acme/Users/user_%05d"}`, i, i)
	}
	group := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"],"id":"g","members":[` + strings.Join(members, ",") + `]}`
	dict := newPackDict(testUser)
	p := pt.pack(dict, "g", json.RawMessage(group))
	assert.Equal(t, group, string(pt.unpack(dict, "g", p)))
	assert.Less(t, len(p), len(group)/2)
}

func FuzzPack(f *testing.F) {
	pt := newPackTable()
	for _, s := range packTokens {
		f.Add("", s+"x"+s)
	}
	f.Add("", "\x1f\x01")
	f.Add("user_1", `{"id":"user_1","location":"https://x/Users/user_1"}`)
	f.Add("\x01\x1e", "ab\x01\x1e")
	f.Fuzz(func(t *testing.T, subject, s string) {
		for _, dict := range []*packDict{nil, newPackDict(s), newPackDict(subject + s)} {
			if got := string(pt.unpack(dict, subject, pt.pack(dict, subject, json.RawMessage(s)))); got != s {
				t.Fatalf("pack(%q, %q) unpacks to %q", subject, s, got)
			}
		}
	})
}

// TestLogEntryRoundTrip records events of visid's types and of a host's own, with subject ids
// short and long, and checks that each comes back as it was, from an entry of 56 bytes.
func TestLogEntryRoundTrip(t *testing.T) {
	if n := unsafe.Sizeof(logEntry{}); n != 56 {
		t.Errorf("a log entry takes %d bytes, want 56", n)
	}
	pt := newPackTable()
	when := time.Date(2026, 11, 26, 7, 0, 0, 123456789, time.UTC)
	events := []store.Event{
		{Type: store.EventUserCreated, Actor: "key_1", SubjectKind: store.SubjectUser, SubjectID: "u1", Data: json.RawMessage(`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"id":"u1"}`)},
		{Type: "host.custom", Actor: "app", SubjectKind: store.SubjectGroup, SubjectID: strings.Repeat("g", 300), Data: json.RawMessage(`null`)},
		{Type: store.EventTenantUpdated, Actor: "cli", SubjectKind: "host-kind", SubjectID: "t", Data: json.RawMessage("{\"a\":\"\x01\"}")},
		{Type: "x", Actor: "a", SubjectKind: "y", SubjectID: "\x00é", Data: nil},
	}
	for i := range events {
		events[i].Time = when
	}
	var l eventLog
	l.add(pt, events)
	for i, want := range events {
		got := l.entry(i).event(pt, "acme", &l)
		want.Tenant, want.Cursor = "acme", changes.FormatCursor(int64(i+1))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	if l.entry(0).typ == 0 || l.entry(0).kind == 0 || l.entry(1).typ != 0 || l.entry(2).kind != 0 {
		t.Error("visid's own names are not kept by index, or a host's are")
	}
}

// TestLogDictPerKind records an API key's event before a tenant's first users, as a service
// that issues the tenant's key first does, and checks that the users are still packed against a
// user: each subject kind has its own dict, taken from its own first event.
func TestLogDictPerKind(t *testing.T) {
	pt := newPackTable()
	when := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	other := strings.NewReplacer("user_01m8axv8zfq1zncta08sgjqqm6", "user_01m8axv9a7s0c0v2d4h5j6k7m8",
		"user0000001", "user0000002", "ext-1", "ext-2").Replace(testUser)
	key := store.Event{Type: store.EventAPIKeyCreated, SubjectKind: store.SubjectAPIKey, SubjectID: "key_1", Time: when,
		Data: json.RawMessage(`{"id":"key_1","name":"demo key","tenants":["acme"],"scopes":["scim"]}`)}
	users := []store.Event{
		{Type: store.EventUserCreated, SubjectKind: store.SubjectUser, SubjectID: "user_01m8axv8zfq1zncta08sgjqqm6", Time: when, Data: json.RawMessage(testUser)},
		{Type: store.EventUserCreated, SubjectKind: store.SubjectUser, SubjectID: "user_01m8axv9a7s0c0v2d4h5j6k7m8", Time: when, Data: json.RawMessage(other)},
	}
	host := store.Event{Type: "host.note", SubjectKind: string(store.EventUserCreated), SubjectID: "n", Time: when, Data: json.RawMessage(`{"note":"user0000001"}`)}
	var keyFirst, usersOnly eventLog
	keyFirst.add(pt, append([]store.Event{key}, append(users, host)...))
	usersOnly.add(pt, users)
	assert.Equal(t, len(usersOnly.entry(1).blob), len(keyFirst.entry(2).blob),
		"the second user is packed as well after an API key's event as without it")
	assert.Less(t, len(keyFirst.entry(2).blob), len(other)/5)
	for i, want := range append([]store.Event{key}, append(users, host)...) {
		got := keyFirst.entry(i).event(pt, "acme", &keyFirst)
		want.Tenant, want.Cursor = "acme", changes.FormatCursor(int64(i+1))
		assert.Equal(t, want, got, "event %d", i)
	}
	assert.NotSame(t, keyFirst.dicts[keyFirst.entry(0).dictIndex()], keyFirst.dicts[keyFirst.entry(1).dictIndex()])
	assert.Zero(t, keyFirst.entry(3).dictIndex(), "a kind named like an event type is a host's kind")
}

// pack returns in packed as a string of its own.
func (t *packTable) pack(dict *packDict, subject string, in json.RawMessage) string {
	return string(t.appendPack(nil, nil, dict, subject, in))
}

// BenchmarkPackUser packs a user as its event's data against the log's dict (another user).
func BenchmarkPackUser(b *testing.B) {
	pt := newPackTable()
	other := strings.NewReplacer("user_01m8axv8zfq1zncta08sgjqqm6", "user_01m8axv9a7s0c0v2d4h5j6k7m8",
		"user0000001", "user0000002", "ext-1", "ext-2", "36.687152455", "37.001234567").Replace(testUser)
	dict := newPackDict(testUser)
	var out, scratch []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(other)))
	for b.Loop() {
		out = pt.appendPack(out[:0], &scratch, dict, "user_01m8axv9a7s0c0v2d4h5j6k7m8", json.RawMessage(other))
	}
}
