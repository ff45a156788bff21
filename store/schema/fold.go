package schema

import (
	"unicode"
	"unicode/utf8"
)

// Fold returns the case-folded form of s that every visid backend uses for attributes whose
// caseExact is false: two valid UTF-8 strings are equal under strings.EqualFold exactly when their
// Fold forms are equal, a case-insensitive substring or prefix test is the plain test on Fold
// forms, and ordering compares Fold forms byte by byte (which is code point order). Each rune is
// replaced by one representative of its simple case-folding orbit: the lower-case ASCII letter
// where the orbit has one ('K', 'k' and U+212A KELVIN SIGN all become 'k'), otherwise the orbit's
// smallest rune. Bytes that are not valid UTF-8 are kept as they are (strings.EqualFold instead
// takes each of them for U+FFFD, so it calls "\xff" and "\xfe" equal where Fold does not).
//
// Backends store or index Fold forms (a SQL column, a map key) so that comparisons in the
// database agree with filter.Match.
func Fold(s string) string {
	if !NeedsFold(s) {
		return s
	}
	return string(AppendFold(make([]byte, 0, len(s)), s))
}

// AppendFold appends the Fold form of s to dst and returns the extended slice.
func AppendFold(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, c)
			i++
			continue
		}
		dst = utf8.AppendRune(dst, FoldRune(r))
		i += size
	}
	return dst
}

// FoldRune returns the representative of r's case-folding orbit used by Fold.
func FoldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	min := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			return FoldRune(f)
		}
		if f < min {
			min = f
		}
	}
	return min
}

// NeedsFold reports whether Fold could change s: exactly for ASCII strings, and true for any
// string with a byte beyond ASCII. Callers use it to skip folding on the common path.
func NeedsFold(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return true
		}
	}
	return false
}
