package jsonenc_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/jsonenc"
)

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		"", "plain", `quote " backslash \`, "<script>&amp;</script>", "\b\f\n\r\t\x00\x01\x1f\x7f",
		"line\u2028para\u2029", "caf\u00e9 \U0001F600", "bad \xff utf-8 \xc3", "\xed\xa0\x80", "ends in \xe2\x82",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(jsonenc.AppendString(nil, s)), "%q", s)
		require.True(t, utf8.Valid(jsonenc.AppendEscaped(nil, s)))
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a\"b<\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonenc.AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
