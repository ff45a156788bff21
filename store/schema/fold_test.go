package schema_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"testing/quick"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/visid/visid/store/schema"
)

func TestFold(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"bjensen", "bjensen"},
		{"BJensen@Example.COM", "bjensen@example.com"},
		{"0123 !~\x00\x7f", "0123 !~\x00\x7f"},
		{"\u212Aelvin", "kelvin"},    // KELVIN SIGN joins k's orbit
		{"ſtraße", "straße"},         // LATIN SMALL LETTER LONG S joins s's orbit
		{"ẞ", "ß"},                   // the orbit {ß, ẞ} has no ASCII member: its smallest rune
		{"ÉRIN", "Érin"},             // likewise {É, é}
		{"érin", "Érin"},             // ...
		{"σας", "ΣΑΣ"},               // {Σ, ς, σ}
		{"µ", "µ"},                   // {µ, Μ, μ}: MICRO SIGN is the smallest
		{"ǅ", "Ǆ"},                   // {Ǆ, ǅ, ǆ}
		{"İı", "İı"},                 // dotted capital I and dotless i fold only under Turkic rules
		{"日本語", "日本語"},               // no case
		{"A\xffB", "a\xffb"},         // invalid UTF-8 is kept byte for byte
		{"\xe2\x84K", "\xe2\x84k"},   // a truncated sequence too
		{"\xef\xbf\xbdA", "\ufffda"}, // a real U+FFFD is a rune like any other
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, schema.Fold(tt.in))
			assert.Equal(t, "prefix:"+tt.want, string(schema.AppendFold([]byte("prefix:"), tt.in)))
			assert.Equal(t, tt.want, schema.Fold(tt.want), "Fold is idempotent")
		})
	}
}

func TestFoldAllocatesNothingWhenFolded(t *testing.T) {
	s := strings.Repeat("already folded ", 10)
	allocs := testing.AllocsPerRun(100, func() { _ = schema.Fold(s) })
	assert.Zero(t, allocs)
}

// TestFoldRuneOrbits checks every rune: FoldRune maps all members of a simple case-folding orbit
// to the same member, the lower-case ASCII letter if there is one.
func TestFoldRuneOrbits(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		f := schema.FoldRune(r)
		inOrbit := f == r
		for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
			if o == f {
				inOrbit = true
			}
			if g := schema.FoldRune(o); g != f {
				t.Fatalf("FoldRune(%U) = %U but FoldRune(%U) = %U, in the same orbit", r, f, o, g)
			}
		}
		if !inOrbit {
			t.Fatalf("FoldRune(%U) = %U, outside its orbit", r, f)
		}
		if f >= 'A' && f <= 'Z' {
			t.Fatalf("FoldRune(%U) = %U, an upper-case ASCII letter", r, f)
		}
	}
}

func TestFoldEqualFold(t *testing.T) {
	pairs := []struct{ a, b string }{
		{"", ""},
		{"a", "A"},
		{"a", "b"},
		{"kelvin", "\u212AELVIN"},
		{"\u212A", "K"},
		{"ÉRIN", "érin"},
		{"ÉRIN", "ERIN"},
		{"straße", "STRASSE"}, // full case folding would equate these; simple folding does not
		{"ſ", "S"},
		{"σας", "ΣΑΣ"},
		{"µ", "Μ"},
		{"ǅ", "ǆ"},
		{"İ", "i"},
		{"ı", "I"},
		{"abc", "abcd"},
		{"日本", "日本"},
	}
	for _, p := range pairs {
		assert.Equal(t, strings.EqualFold(p.a, p.b), schema.Fold(p.a) == schema.Fold(p.b), "%q %q", p.a, p.b)
	}

	// Random strings and random case variants of them, from an alphabet rich in orbits with
	// more than two members.
	alphabet := []rune("aAbBkKsSiIıİ\u212Aſ\u017f ßẞéÉσςΣµμΜǄǅǆ日\u0345\u0399\u03b9\u1fbe-_.@0")
	rng := rand.New(rand.NewPCG(1, 2))
	randomString := func() string {
		var b strings.Builder
		for range rng.IntN(8) {
			if rng.IntN(4) == 0 {
				b.WriteRune(rune(rng.IntN(0x3000)))
			} else {
				b.WriteRune(alphabet[rng.IntN(len(alphabet))])
			}
		}
		return b.String()
	}
	variant := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			for range rng.IntN(4) {
				r = unicode.SimpleFold(r)
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	for range 20000 {
		a := randomString()
		for _, b := range []string{variant(a), randomString()} {
			if strings.EqualFold(a, b) != (schema.Fold(a) == schema.Fold(b)) {
				t.Fatalf("EqualFold(%q, %q) = %v, Fold forms %q and %q", a, b, strings.EqualFold(a, b), schema.Fold(a), schema.Fold(b))
			}
		}
		if !strings.EqualFold(a, variant(a)) {
			t.Fatalf("variant of %q is not EqualFold", a)
		}
	}
}

func TestFoldQuick(t *testing.T) {
	// testing/quick makes strings of random runes, almost all outside any case orbit.
	// Each is also checked against the next member of each rune's orbit. (Not strings.ToUpper:
	// U+0131 upper-cases to 'I' outside its orbit.)
	agrees := func(a, b string) bool {
		next := strings.Map(unicode.SimpleFold, a)
		return strings.EqualFold(a, b) == (schema.Fold(a) == schema.Fold(b)) &&
			strings.EqualFold(a, next) && schema.Fold(a) == schema.Fold(next)
	}
	assert.NoError(t, quick.Check(agrees, nil))

	// Any bytes: idempotent, the same length in runes, invalid bytes kept where they were.
	bytes := func(b []byte) bool {
		s := string(b)
		f := schema.Fold(s)
		if schema.Fold(f) != f || utf8.RuneCountInString(f) != utf8.RuneCountInString(s) {
			return false
		}
		fi := 0
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			fr, fn := utf8.DecodeRuneInString(f[fi:])
			if r == utf8.RuneError && n == 1 {
				if fn != 1 || f[fi] != s[i] {
					return false
				}
			} else if fr != schema.FoldRune(r) {
				return false
			}
			i, fi = i+n, fi+fn
		}
		return fi == len(f)
	}
	assert.NoError(t, quick.Check(bytes, &quick.Config{MaxCount: 5000}))
}

// TestFoldInvalidUTF8 documents where Fold and strings.EqualFold part: EqualFold reads every
// invalid byte as U+FFFD, Fold keeps the bytes.
func TestFoldInvalidUTF8(t *testing.T) {
	assert.True(t, strings.EqualFold("\xff", "\xfe"))
	assert.NotEqual(t, schema.Fold("\xff"), schema.Fold("\xfe"))
	assert.Equal(t, "\xff", schema.Fold("\xff"))
}
