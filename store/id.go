package store

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// idAlphabet is Crockford's base 32 in lower case: its byte order is its numeric order, so ids
// sort by creation time.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// NewID returns prefix + "_" + 26 characters: 48 bits of the current Unix time in milliseconds
// followed by 80 random bits (crypto/rand), in base 32. Ids made in different milliseconds sort
// in time order; the random part makes them unguessable.
func NewID(prefix string) string {
	return newID(prefix, time.Now())
}

func newID(prefix string, now time.Time) string {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(now.UnixMilli())<<16)
	rand.Read(raw[6:]) // never returns an error; crashes the program if the OS has no entropy
	hi := binary.BigEndian.Uint64(raw[:8])
	lo := binary.BigEndian.Uint64(raw[8:])
	out := make([]byte, len(prefix)+1+26)
	n := copy(out, prefix)
	out[n] = '_'
	enc := out[n+1:]
	// 128 bits as 26 five-bit digits (the first holds the top 3 bits).
	for i := 25; i >= 0; i-- {
		enc[i] = idAlphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out)
}

// ValidTenantID reports whether id can name a tenant: 1 to 63 characters from a-z, 0-9, '-' and
// '_', the first a letter or a digit.
func ValidTenantID(id string) bool {
	if len(id) == 0 || len(id) > 63 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			return false
		}
	}
	return true
}
