package scimsvc

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/filter"
)

// The scimType values of RFC 9865 §2.1.
const (
	typeInvalidCursor = "invalidCursor"
	typeExpiredCursor = "expiredCursor"
)

// cursors make and read the cursors of RFC 9865: opaque, tamper-evident tokens of a keyset
// position (store.Position) in one list query of one tenant.
//
// A cursor is the unpadded base64url (RFC 4648 §5, unreserved characters only) of
//
//	version (1) | direction (1: 0 next, 1 previous) | issued (8: Unix seconds) |
//	seq (8) | value kind (1) | value (string bytes; 8 for a number or an instant; 1 for a boolean) |
//	mac (16)
//
// where mac is the first 16 bytes of HMAC-SHA256 under the handler's cursor key of a label, the
// query's binding (tenant, resource type, filter, sortBy, sortOrder) and everything before it.
// A cursor therefore works only with the query and tenant it was made for; an edited, truncated
// or foreign cursor is invalidCursor, and a genuine one older than the timeout expiredCursor
// (both 400, RFC 9865 §2.1). The position is not secret (it is the sort value and creation
// sequence of a resource the client has read), only bound.
type cursors struct {
	key     []byte
	timeout time.Duration
	now     func() time.Time
}

// newCursors returns the cursors of a key (nil: a random one) and a timeout (0: the default).
func newCursors(key []byte, timeout time.Duration, now func() time.Time) (*cursors, error) {
	switch {
	case key == nil:
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	case len(key) < 32:
		return nil, errors.New("scimsvc: Config.CursorKey must hold at least 32 bytes")
	}
	if timeout < 0 {
		return nil, errors.New("scimsvc: Config.CursorTimeout must not be negative")
	}
	if timeout == 0 {
		timeout = DefaultCursorTimeout
	}
	return &cursors{key: bytes.Clone(key), timeout: timeout, now: now}, nil
}

const (
	cursorVersion = 1
	cursorMACLen  = 16
	cursorHeader  = 1 + 1 + 8 + 8 + 1
	cursorLabel   = "visid scim cursor\x00"
)

// binding is what a cursor is bound to: the tenant, the resource type and the query's canonical
// filter and sort, each length-prefixed.
func binding(tenant, resourceType, filter, sortBy string, descending bool) []byte {
	var b []byte
	for _, s := range []string{tenant, resourceType, filter, sortBy} {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	if descending {
		return append(b, 1)
	}
	return append(b, 0)
}

func (c *cursors) mac(bind, payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(cursorLabel))
	m.Write(bind)
	m.Write(payload)
	return m.Sum(nil)[:cursorMACLen]
}

// make returns the cursor of position p for the query bound by bind; previous marks a cursor
// that asks for the page before p.
func (c *cursors) make(bind []byte, p *store.Position, previous bool) string {
	b := make([]byte, 0, cursorHeader+len(p.Value.Str)+8+cursorMACLen)
	b = append(b, cursorVersion, 0)
	if previous {
		b[1] = 1
	}
	b = binary.BigEndian.AppendUint64(b, uint64(c.now().Unix()))
	b = binary.BigEndian.AppendUint64(b, uint64(p.Seq))
	b = append(b, byte(p.Value.Kind))
	switch p.Value.Kind {
	case filter.KindString:
		b = append(b, p.Value.Str...)
	case filter.KindNumber:
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(p.Value.Num))
	case filter.KindBool:
		if p.Value.Bool {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	case filter.KindTime:
		b = binary.BigEndian.AppendUint64(b, uint64(p.Value.Time.Unix()))
		b = binary.BigEndian.AppendUint32(b, uint32(p.Value.Time.Nanosecond()))
	}
	b = append(b, c.mac(bind, b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// read returns the position of cursor s for the query bound by bind, and whether it asks for
// the page before the position; a *Error (invalidCursor, expiredCursor) when it cannot be used.
func (c *cursors) read(bind []byte, s string) (*store.Position, bool, error) {
	invalid := badRequest(typeInvalidCursor,
		"the cursor is not one this service gave for this query; send an empty cursor for the first page, then the nextCursor or previousCursor of the last response, with the same filter and sort")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < cursorHeader+cursorMACLen {
		return nil, false, invalid
	}
	payload, mac := b[:len(b)-cursorMACLen], b[len(b)-cursorMACLen:]
	if !hmac.Equal(mac, c.mac(bind, payload)) || payload[0] != cursorVersion || payload[1] > 1 {
		return nil, false, invalid
	}
	issued := time.Unix(int64(binary.BigEndian.Uint64(payload[2:])), 0)
	if age := c.now().Sub(issued); age > c.timeout {
		return nil, false, badRequest(typeExpiredCursor,
			"the cursor has expired: request the next page within %d seconds of the last (cursorTimeout)", int64(c.timeout/time.Second))
	}
	p := &store.Position{Seq: int64(binary.BigEndian.Uint64(payload[10:]))}
	v := payload[cursorHeader:]
	switch kind := filter.Kind(payload[18]); {
	case kind == filter.Absent && len(v) == 0:
	case kind == filter.KindString && len(v) > 0:
		p.Value = filter.Value{Kind: kind, Str: string(v)}
	case kind == filter.KindNumber && len(v) == 8:
		p.Value = filter.NumberValue(math.Float64frombits(binary.BigEndian.Uint64(v)))
	case kind == filter.KindBool && len(v) == 1:
		p.Value = filter.BoolValue(v[0] == 1)
	case kind == filter.KindTime && len(v) == 12:
		p.Value = filter.Value{Kind: kind, Time: time.Unix(int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint32(v[8:]))).UTC()}
	default:
		return nil, false, invalid
	}
	return p, payload[1] == 1, nil
}
