package memstore

import "encoding/json"

// The event log keeps each event's Data packed: the member names and schema URNs that every
// user and group event repeats are replaced by single bytes that JSON never holds raw (control
// characters other than the whitespace \t, \n and \r), and List expands them again. A user as
// the SCIM API renders it, about 700 bytes, is kept in about 200. Packing is lossless for any
// input: Data that holds one of those bytes itself, outside a repeat, is kept verbatim behind
// packVerbatim.

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
	0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d,
}

// packRef starts a reference to bytes met before in the data: it is followed by their distance
// back, in two bytes (big-endian), and their length less packMinRef, in one.
const packRef = 0x1e

// packMinRef is the shortest repeat that packRef replaces; packMaxRef the longest.
const (
	packMinRef  = 8
	packMaxRef  = packMinRef + 255
	packMaxDist = 1<<16 - 1
)

// packHashBits sizes a dict's table of positions, by a hash of their next 4 bytes, and
// packRecentBits the table of the positions in the data being packed: a user's data has a
// few hundred places to remember, and a table that small is quick to clear and stays in cache.
const (
	packHashBits   = 8
	packRecentBits = 8
)

// packVerbatim starts packed data kept as it was given, because it held a control character
// that packing gives a meaning to.
const packVerbatim = 0x1f

// packTable is what pack and unpack look tokens up in.
type packTable struct {
	// byPrefix gives, by the hash of their first packPrefix bytes, 1 + the index of the first
	// of the tokens with that hash (0: none), and next 1 + the index of the one after each, in
	// a list longest first: a token that starts another has the same first bytes, as every
	// token is at least packPrefix long, so the first whole match in the list is the longest
	// token. Both are small, so that packing an event touches little memory.
	byPrefix [1 << packPrefixBits]uint8
	next     [len(packTokens)]uint8
	// prefix is the first packPrefix bytes of each token, as prefixOf reads them.
	prefix [len(packTokens)]uint64
	// token is the string of each packed byte, "" for a byte that is not one.
	token [32]string
	// starts says of each byte whether a token starts with it.
	starts [256]bool
}

// packPrefix is how many first bytes of a token tokenAt compares at once: every token is at
// least that long, and so is every repeat packed (packMinRef). packPrefixBits sizes the table
// of their hashes.
const (
	packPrefix     = packMinRef
	packPrefixBits = 8
)

func newPackTable() *packTable {
	t := &packTable{}
	for i, s := range packTokens {
		if len(s) < packPrefix {
			panic("memstore: a pack token shorter than packPrefix")
		}
		t.token[packBytes[i]] = s
		t.prefix[i] = prefixOf(s)
		t.starts[s[0]] = true
		// Into its hash's list, before the first token shorter than it.
		at := &t.byPrefix[prefixHash(t.prefix[i])]
		for *at != 0 && len(packTokens[*at-1]) >= len(s) {
			at = &t.next[*at-1]
		}
		t.next[i], *at = *at, uint8(i+1)
	}
	return t
}

// prefixOf returns the first packPrefix bytes of b (at least that long) as one number.
func prefixOf[T string | []byte](b T) uint64 {
	_ = b[packPrefix-1]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// prefixHash hashes a prefix to packPrefixBits bits.
func prefixHash(v uint64) uint64 { return v * 0x9e3779b97f4a7c15 >> (64 - packPrefixBits) }

// packMark reports whether b is a byte packing gives a meaning to.
func packMark(b byte) bool { return b < 0x20 && b != '\t' && b != '\n' && b != '\r' }

// packDict is text that packed data may refer to as if it came before the data — the log's
// dict — with the table of its positions made once.
type packDict struct {
	text   string
	recent [1 << packHashBits]int32 // 1 + the last position with each hash; 0: none
}

func newPackDict(text string) *packDict {
	d := &packDict{text: text}
	for i := 0; i+4 <= len(text); i++ {
		if i == 0 || anchors[text[i-1]] { // where values start, as pack looks for repeats
			d.recent[packHash(text[i:])>>(32-packHashBits)] = int32(i + 1)
		}
	}
	return d
}

// appendPack appends in packed to out: tokens for packTokens, and references for repeats of at
// least packMinRef bytes met within packMaxDist before (an id in a location, a userName as an
// email, a lastModified equal to created), in data, in subject or in dict (may be nil), which
// unpack is given again as if they came before the data. *scratch (may be nil), which it grows,
// holds its working copy of subject and in.
func (t *packTable) appendPack(out []byte, scratch *[]byte, dict *packDict, subject string, in json.RawMessage) []byte {
	if len(in) == 0 {
		return out
	}
	orig := len(out)
	// Repeats are looked for in data (subject, then in) by recent, and in the dict by its own
	// table, which is shared and read-only.
	var recent [1 << packRecentBits]int32 // 1 + the last position with each hash; 0: none
	var text string
	if dict != nil {
		text = dict.text
	}
	var data []byte
	if scratch != nil {
		data = (*scratch)[:0]
	}
	data = append(append(data, subject...), in...)
	if scratch != nil {
		*scratch = data
	}
	remember := func(i int) {
		if i+4 <= len(data) {
			recent[packHash(data[i:])>>(32-packRecentBits)] = int32(i + 1)
		}
	}
	start := len(subject)
	for i := range start {
		remember(i)
	}
	buf := out
	for i := start; i < len(data); {
		n, tok, dist := 0, byte(0), 0
		if t.starts[data[i]] {
			n, tok = t.tokenAt(data[i:])
		}
		// Repeats are looked for, and positions remembered, only where a value or a part of
		// one starts — after a token or a repeat, a quote, a slash, an at sign, a dot or a
		// colon — as ids, URLs, addresses and times repeat: a fraction of the bytes, and the
		// same references.
		anchor := i == start || anchors[data[i-1]]
		if n == 0 && anchor && i+packMinRef <= len(data) {
			// A candidate whose first packMinRef bytes differ (its hash is of 4) is no repeat.
			h, first := packHash(data[i:]), prefixOf(data[i:])
			if at := int(recent[h>>(32-packRecentBits)]) - 1; at >= 0 && i-at <= packMaxDist && prefixOf(data[at:]) == first {
				if l := repeat(t, data[at:], data[i:]); l >= packMinRef {
					n, dist = l, i-at
				}
			}
			if at := int(dict.at(h)); n == 0 && at >= 0 && len(text)-at+i <= packMaxDist &&
				at+packMinRef <= len(text) && prefixOf(text[at:]) == first {
				if l := repeat(t, text[at:], data[i:]); l >= packMinRef {
					n, dist = l, len(text)-at+i
				}
			}
		}
		if n == 0 {
			if packMark(data[i]) { // a byte packing gives a meaning to cannot stand for itself
				return append(append(buf[:orig], packVerbatim), in...)
			}
			if anchor {
				remember(i)
			}
			i++
			continue
		}
		buf = append(buf, data[start:i]...)
		if dist > 0 {
			buf = append(buf, packRef, byte(dist>>8), byte(dist), byte(n-packMinRef))
		} else {
			buf = append(buf, tok)
		}
		remember(i)
		i += n
		start = i
	}
	return append(buf, data[start:]...)
}

// repeat returns how many bytes at the start of b repeat those of from, at most packMaxRef,
// ending where a token starts.
func repeat[T string | []byte](t *packTable, from T, b []byte) int {
	l := 0
	for l < packMaxRef && l < len(from) && l < len(b) && from[l] == b[l] {
		if l >= packMinRef && t.starts[b[l]] {
			if n, _ := t.tokenAt(b[l:]); n > 0 {
				return l
			}
		}
		l++
	}
	return l
}

// at returns the position in d's text of the last 4 bytes with hash h, or -1 for none (and for
// no dict).
func (d *packDict) at(h uint32) int32 {
	if d == nil {
		return -1
	}
	return d.recent[h>>(32-packHashBits)] - 1
}

// tokenAt returns the length of the token that b starts with and the byte that stands for it;
// 0 and 0 for none.
func (t *packTable) tokenAt(b []byte) (int, byte) {
	if len(b) < packPrefix {
		return 0, 0
	}
	v := prefixOf(b)
	for x := t.byPrefix[prefixHash(v)]; x != 0; x = t.next[x-1] {
		ti := x - 1
		if s := packTokens[ti]; t.prefix[ti] == v && len(b) >= len(s) && string(b[packPrefix:len(s)]) == s[packPrefix:] {
			return len(s), packBytes[ti]
		}
	}
	return 0, 0
}

// anchors are the bytes after which pack looks for a repeat.
var anchors = [256]bool{'"': true, '/': true, '@': true, '.': true, ':': true}

// packHash hashes the first 4 bytes of b to 32 bits, of which a table takes the top ones.
func packHash[T string | []byte](b T) uint32 {
	v := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
	return v * 2654435761
}

// unpack returns the data that pack packed to p with dict and subject, in a slice of its own.
func (t *packTable) unpack(dict *packDict, subject, p string) json.RawMessage {
	if p == "" {
		return nil
	}
	if p[0] == packVerbatim {
		return json.RawMessage(p[1:])
	}
	var text string
	if dict != nil {
		text = dict.text
	}
	out := make(json.RawMessage, 0, 3*len(p))
	// at is the byte at position k of text, subject and out one after the other.
	at := func(k int) byte {
		switch {
		case k < len(text):
			return text[k]
		case k < len(text)+len(subject):
			return subject[k-len(text)]
		}
		return out[k-len(text)-len(subject)]
	}
	start := 0
	for i := 0; i < len(p); i++ {
		if !packMark(p[i]) {
			continue
		}
		out = append(out, p[start:i]...)
		if p[i] == packRef {
			dist, n := int(p[i+1])<<8|int(p[i+2]), int(p[i+3])+packMinRef
			from := len(text) + len(subject) + len(out) - dist
			for j := range n { // byte by byte: a repeat may overlap what it repeats
				out = append(out, at(from+j))
			}
			i += 3
		} else {
			out = append(out, t.token[p[i]]...)
		}
		start = i + 1
	}
	return append(out, p[start:]...)
}
