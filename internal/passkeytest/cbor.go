package passkeytest

import "encoding/binary"

// The CBOR (RFC 8949) an authenticator writes: unsigned and negative integers, byte and text
// strings, and maps, each with a definite length. Nothing else is needed for an attestation
// object of format "none" and an EC2 COSE key.

// cborHead appends the head of an item of major type major and argument n, in its shortest
// form, as CTAP2's canonical encoding asks.
func cborHead(b []byte, major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return append(b, m|byte(n))
	case n <= 0xff:
		return append(b, m|24, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, m|25), uint16(n))
	case n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, m|26), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, m|27), n)
}

// cborInt appends the integer n.
func cborInt(b []byte, n int64) []byte {
	if n < 0 {
		return cborHead(b, 1, uint64(-1-n))
	}
	return cborHead(b, 0, uint64(n))
}

// cborBytes appends the byte string p.
func cborBytes(b, p []byte) []byte { return append(cborHead(b, 2, uint64(len(p))), p...) }

// cborText appends the text string s.
func cborText(b []byte, s string) []byte { return append(cborHead(b, 3, uint64(len(s))), s...) }

// cborMap appends the head of a map of n pairs; the caller appends the keys and values.
func cborMap(b []byte, n int) []byte { return cborHead(b, 5, uint64(n)) }
