package memstore

import "encoding/json"

// The event log keeps each event's Data packed: the member names and schema URNs that every
// user and group event repeats are replaced by single bytes that JSON never holds raw (control
// characters other than the whitespace \t, \n and \r), and List expands them again. A user as
// the SCIM API renders it, about 700 bytes, is kept in under 300. Packing is lossless for any
// input: Data that holds one of those bytes itself is kept verbatim behind packVerbatim.

// packTokens are the strings packed, each to the byte packBytes gives at its index.
var packTokens = [...]string{
	`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"`,
	`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:Group"`,
	`"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"`,
	`,"meta":{"resourceType":"User","created":"`,
	`,"meta":{"resourceType":"Group","created":"`,
	`","lastModified":"`,
	`","location":"https://`,
	`","version":"W/\"`,
	`\""}}`,
	`],"id":"`,
	`,"externalId":"`,
	`","userName":"`,
	`,"name":{"formatted":"`,
	`","familyName":"`,
	`","givenName":"`,
	`,"displayName":"`,
	`,"active":true`,
	`,"active":false`,
	`,"emails":[{"value":"`,
	`","type":"work"`,
	`,"primary":true}`,
	`:{"department":"`,
	`,"members":[{"value":"`,
	`","$ref":"https://`,
	`"},{"value":"`,
	`{"group":"`,
	`","user":"`,
}

// packBytes are the bytes that stand for packTokens: every control character but \t, \n, \r
// and packVerbatim.
var packBytes = [len(packTokens)]byte{
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0b, 0x0c, 0x0e, 0x0f, 0x10, 0x11,
	0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e,
}

// packVerbatim starts packed data kept as it was given, because it held a byte of packBytes.
const packVerbatim = 0x1f

// packTable is what pack and unpack look tokens up in.
type packTable struct {
	// byFirst lists, for each first byte, the indexes of the tokens that start with it,
	// longest first.
	byFirst [256][]uint8
	// token is the string of each packed byte, "" for a byte that is not one.
	token [32]string
}

func newPackTable() *packTable {
	t := &packTable{}
	for i, s := range packTokens {
		t.token[packBytes[i]] = s
		t.byFirst[s[0]] = append(t.byFirst[s[0]], uint8(i))
	}
	for _, list := range t.byFirst {
		for i := 1; i < len(list); i++ { // few tokens per byte: insertion sort, longest first
			for j := i; j > 0 && len(packTokens[list[j]]) > len(packTokens[list[j-1]]); j-- {
				list[j], list[j-1] = list[j-1], list[j]
			}
		}
	}
	return t
}

// packMark reports whether b is a byte packing gives a meaning to.
func packMark(b byte) bool { return b < 0x20 && b != '\t' && b != '\n' && b != '\r' }

// pack returns data packed, as a string of its own.
func (t *packTable) pack(data json.RawMessage) string {
	if len(data) == 0 {
		return ""
	}
	for _, b := range data {
		if packMark(b) {
			return "\x1f" + string(data) // packVerbatim
		}
	}
	buf := make([]byte, 0, len(data))
	start := 0
	for i := 0; i < len(data); {
		matched := false
		for _, ti := range t.byFirst[data[i]] {
			if tok := packTokens[ti]; len(data)-i >= len(tok) && string(data[i:i+len(tok)]) == tok {
				buf = append(buf, data[start:i]...)
				buf = append(buf, packBytes[ti])
				i += len(tok)
				start, matched = i, true
				break
			}
		}
		if !matched {
			i++
		}
	}
	return string(append(buf, data[start:]...))
}

// unpack returns the data that pack packed to p, in a slice of its own.
func (t *packTable) unpack(p string) json.RawMessage {
	if p == "" {
		return nil
	}
	if p[0] == packVerbatim {
		return json.RawMessage(p[1:])
	}
	n := len(p)
	for i := 0; i < len(p); i++ {
		if packMark(p[i]) {
			n += len(t.token[p[i]]) - 1
		}
	}
	out := make(json.RawMessage, 0, n)
	start := 0
	for i := 0; i < len(p); i++ {
		if packMark(p[i]) {
			out = append(out, p[start:i]...)
			out = append(out, t.token[p[i]]...)
			start = i + 1
		}
	}
	return append(out, p[start:]...)
}
