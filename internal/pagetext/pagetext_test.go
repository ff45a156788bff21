package pagetext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/language"
)

var builtin = []Lang{
	{Tag: language.English, Messages: map[string]string{"hello": "Hello {name}", "count.one": "{n} point", "count.other": "{n} points"}},
	{Tag: language.German, Messages: map[string]string{"hello": "Hallo {name}", "count.one": "{n} Punkt", "count.other": "{n} Punkte"}},
	{Tag: language.Japanese, Messages: map[string]string{"hello": "こんにちは {name}", "count.other": "{n} 個"}},
}

func TestPreferencesOrder(t *testing.T) {
	got := Preferences("fr-CA ja", "de;q=0.9, es;q=1", "it")
	want := []string{"fr-CA", "ja", "es", "de", "it"}
	require.Len(t, got, len(want))
	for i, tag := range got {
		assert.Equal(t, want[i], tag.String())
	}
	assert.Empty(t, Preferences("", "", ""))
	assert.Equal(t, []string{"de"}, tagStrings(Preferences("!!", "not a header;;;", "de")), "what does not parse is skipped")
}

func tagStrings(tags []language.Tag) []string {
	var out []string
	for _, t := range tags {
		out = append(out, t.String())
	}
	return out
}

func TestMatch(t *testing.T) {
	s, err := NewSet(builtin, nil, "test")
	require.NoError(t, err)
	for _, tc := range []struct {
		prefs []string
		want  string
	}{
		{nil, "en"},
		{[]string{"de-CH"}, "de"},
		{[]string{"it", "ja"}, "ja"},
		{[]string{"ja", "de"}, "ja"},
		{[]string{"it"}, "en"},
		{[]string{"en-GB", "de"}, "en"},
	} {
		var prefs []language.Tag
		for _, p := range tc.prefs {
			prefs = append(prefs, language.MustParse(p))
		}
		assert.Equal(t, tc.want, s.Match(prefs...).Lang(), "%v", tc.prefs)
	}
}

func TestTextAndPlural(t *testing.T) {
	s, err := NewSet(builtin, nil, "test")
	require.NoError(t, err)
	de := s.Match(language.German)
	assert.Equal(t, "Hallo Ann", de.Text("hello", "name", "Ann"))
	assert.Equal(t, "1 Punkt", de.Plural("count", 1))
	assert.Equal(t, "5 Punkte", de.Plural("count", 5))
	ja := s.Match(language.Japanese)
	assert.Equal(t, "1 個", ja.Plural("count", 1), "a language without a one form takes other")
	assert.Equal(t, map[string]any{"hello": "こんにちは {name}", "count": map[string]string{"other": "{n} 個"}}, ja.Script(""))
	assert.Equal(t, map[string]any{"hello": "Hallo {name}", "count": map[string]string{"one": "{n} Punkt", "other": "{n} Punkte"}}, de.Script(""))
}

func TestNewSetHostLanguages(t *testing.T) {
	s, err := NewSet(builtin, []Lang{
		{Tag: language.German, Messages: map[string]string{"hello": "Grüß Gott {name}"}},
		{Tag: language.Italian, Messages: map[string]string{"hello": "Ciao {name}", "count.one": "{n} punto", "count.other": "{n} punti"}},
	}, "test")
	require.NoError(t, err)
	assert.Equal(t, "Grüß Gott Ann", s.Match(language.German).Text("hello", "name", "Ann"), "an override replaces a text")
	assert.Equal(t, "2 Punkte", s.Match(language.German).Plural("count", 2), "and keeps the others")
	assert.Equal(t, "2 punti", s.Match(language.Italian).Plural("count", 2), "a new language is offered")

	_, err = NewSet(builtin, []Lang{{Tag: language.Italian, Messages: map[string]string{"hello": "Ciao"}}}, "test")
	assert.ErrorContains(t, err, "lacks the messages count.other")
	_, err = NewSet(builtin, []Lang{{Tag: language.German, Messages: map[string]string{"helo": "Hallo"}}}, "test")
	assert.ErrorContains(t, err, `unknown message key "helo"`)
	_, err = NewSet(builtin, []Lang{{Tag: language.German, Messages: map[string]string{"hello": ""}}}, "test")
	assert.ErrorContains(t, err, "empty")
	_, err = NewSet(builtin, []Lang{{Messages: map[string]string{"hello": "x"}}}, "test")
	assert.ErrorContains(t, err, "no tag")
	s, err = NewSet(builtin, []Lang{{Tag: language.German, Messages: map[string]string{"image.boat": "Boot"}}}, "test", "image.")
	require.NoError(t, err, "keys under an open prefix are allowed")
	assert.True(t, s.Match(language.German).Has("image.boat"))
}

func TestUILocales(t *testing.T) {
	assert.Equal(t, []string{"de-CH", "fr"}, UILocales("de-ch  fr !! de-CH"))
	assert.Empty(t, UILocales(""))
	assert.Len(t, UILocales("a b c d e f g h i j k l"), 0, "single letters are no tags")
	assert.Len(t, UILocales("de fr es ja it nl pt sv da fi"), maxUILocales)
}

func TestLeftovers(t *testing.T) {
	english := map[string]string{"a": "Choose a picture", "b": "Step {step} of {steps}", "c": "Continue", "d": "Café"}
	page := `<html><head><style>.Continue{}</style></head><body><h1>Schritt 1 von 3</h1>` +
		`<img alt="Choose a picture"><button>Continuer</button><p>Café</p>` +
		`<script type="application/json">{"x":{"one":"Step 1"}}</script></body></html>`
	assert.ElementsMatch(t, []string{"a: Choose a picture", "b: Step"}, Leftovers(page, english, "Café"))
}

func TestRawKeys(t *testing.T) {
	english := map[string]string{"login.title": "Confirm", "count.other": "{n} points"}
	assert.Equal(t, []string{"login.title"}, RawKeys(`<h1>login.title</h1><p>account</p>`, english))
	assert.Empty(t, RawKeys(`<h1>Confirm</h1>`, english))
}

// TestLanguageCapsBeforeParsing: ui_locales (and the cookie that keeps it) and Accept-Language
// are cut to their caps, in tags and in bytes, before any tag is parsed; what is kept is the
// start of the list.
func TestLanguageCapsBeforeParsing(t *testing.T) {
	huge := "ja " + strings.Repeat("ko ", 100_000) + "de" // 300 KB, 100,002 tags
	fields := UILocaleFields(huge)
	assert.Len(t, fields, maxUILocales)
	assert.Equal(t, "ja", fields[0])
	assert.LessOrEqual(t, len(strings.Join(fields, " ")), maxUILocalesBytes)
	assert.Equal(t, []string{"ja", "ko"}, UILocales(huge), "deduplicated, from the first tags")

	// A tag that the byte cap cuts is left out, not parsed in part.
	long := strings.Repeat("x", maxUILocalesBytes-6) + " de-CH-1901"
	assert.Equal(t, []string{strings.Repeat("x", maxUILocalesBytes-6)}, UILocaleFields(long))
	assert.Empty(t, UILocales(long))
	assert.Empty(t, UILocaleFields(strings.Repeat("a", 1<<20)), "one 1 MB field")
	assert.Equal(t, []string{"de", "fr"}, UILocaleFields("  de\tfr  "))

	header := "fr-CH, fr;q=0.9, " + strings.Repeat("ko;q=0.1, ", 100_000) + "de" // 1 MB
	entries := AcceptLanguageEntries(header)
	assert.LessOrEqual(t, len(entries), maxAcceptLanguageBytes)
	assert.Equal(t, maxTags, strings.Count(entries, ",")+1, "at most maxTags entries: %q", entries)
	assert.True(t, strings.HasPrefix(entries, "fr-CH, fr;q=0.9, ko;q=0.1"))
	assert.False(t, strings.HasSuffix(strings.TrimSpace(entries), ","))

	// An entry that the byte cap cuts is left out: "de-CH-1901;q=0.5" would not be "de-CH".
	cut := strings.Repeat("ko,", (maxAcceptLanguageBytes-10)/3) + "de-CH-1901;q=0.5"
	assert.NotContains(t, AcceptLanguageEntries(cut), "de")

	got := tagStrings(Preferences(huge, header, "it"))
	assert.Len(t, got, maxTags)
	assert.Equal(t, []string{"ja", "ko", "ko", "ko", "ko", "ko", "ko", "ko", "fr-CH", "fr"}, got[:10],
		"ui_locales gives at most maxUILocales, then Accept-Language")
	assert.Equal(t, []string{"fr-CH", "fr", "ko"}, tagStrings(Preferences("", header, ""))[:3],
		"a huge Accept-Language speaks from its first entries")
}
