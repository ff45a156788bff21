package scimsvc

import (
	"strings"
	"unicode/utf8"
)

// SCIM strings are text: valid UTF-8 without NUL (U+0000), which PostgreSQL cannot store and
// no attribute needs. The handler refuses a request with any other string — in its body, its
// filter or its attributes parameters — before anything is stored, the same way on every store.

// badText returns why s is not text ("is not valid UTF-8", "holds a NUL character"), or "".
func badText(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "holds a NUL character"
	}
	return ""
}

// badEscapes returns why the \u escapes of s, as JSON strings and SCIM filter literals write
// them, would unescape to something that is not text, or "": an escaped NUL (\u0000), or an
// escaped surrogate (\uD800–\uDFFF) that is not half of a pair, which decoders silently turn
// into U+FFFD. Every backslash of s must start an escape (s is valid JSON, or a filter that
// parsed).
func badEscapes[T string | []byte](s T) string {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if i+1 >= len(s) || s[i+1] != 'u' {
			i++ // \" \\ \/ \b \f \n \r \t: the escaped character cannot start an escape
			continue
		}
		r, ok := hex4(s, i+2)
		if !ok {
			i++
			continue
		}
		i += 5 // the last hex digit
		switch {
		case r == 0:
			return `holds an escaped NUL character (\u0000)`
		case 0xDC00 <= r && r <= 0xDFFF:
			return "holds an escaped surrogate that is not half of a pair"
		case 0xD800 <= r && r <= 0xDBFF:
			if i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if lo, ok := hex4(s, i+3); ok && 0xDC00 <= lo && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return "holds an escaped surrogate that is not half of a pair"
		}
	}
	return ""
}

// hex4 decodes the four hex digits of s at i.
func hex4[T string | []byte](s T, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for j := i; j < i+4; j++ {
		c := s[j]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
