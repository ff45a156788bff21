package pagetext

import (
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"unicode"
)

// Leftovers returns the texts of english (key to text) of which a piece still shows in page, an
// HTML page in another language: in its text, in the attributes a person perceives (alt,
// aria-label, aria-roledescription, title, data-title) or in its JSON blocks of script text.
// A text is cut at its {arguments}; pieces of fewer than four letters are not looked for, and a
// piece counts only as whole words. same lists pieces that are the same word in the page's
// language ("Café"). Tests use it to find what a translation forgot.
func Leftovers(page string, english map[string]string, same ...string) []string {
	// Arguments a script fills in ({placed}) are no words of the page.
	shown := argument.ReplaceAllString(Shown(page), " ")
	var out []string
	for key, text := range english {
		for _, piece := range argument.Split(text, -1) {
			piece = strings.TrimFunc(piece, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
			if letters(piece) < 4 || contains(same, piece) {
				continue
			}
			re := regexp.MustCompile(`(^|[^\p{L}\p{N}])` + regexp.QuoteMeta(piece) + `($|[^\p{L}\p{N}])`)
			if re.MatchString(shown) {
				out = append(out, key+": "+piece)
			}
		}
	}
	return out
}

var (
	argument   = regexp.MustCompile(`\{\w+\}`)
	styleBlock = regexp.MustCompile(`(?is)<style[^>]*>.*?</style>`)
	jsonBlock  = regexp.MustCompile(`(?is)<script type="application/json"[^>]*>(.*?)</script>`)
	tag        = regexp.MustCompile(`(?s)<[^>]*>`)
	perceived  = regexp.MustCompile(`\s(?:alt|aria-label|aria-roledescription|title|data-title)="([^"]*)"`)
)

// Shown is what a person perceives of an HTML page, one piece a line: its text, the attributes
// a browser shows or reads out, and the strings of its JSON blocks.
func Shown(page string) string {
	var b strings.Builder
	page = styleBlock.ReplaceAllString(page, "\n")
	for _, m := range jsonBlock.FindAllStringSubmatch(page, -1) {
		var v any
		if json.Unmarshal([]byte(m[1]), &v) == nil {
			collect(&b, v)
		}
	}
	page = jsonBlock.ReplaceAllString(page, "\n")
	for _, t := range tag.FindAllString(page, -1) {
		for _, m := range perceived.FindAllStringSubmatch(t, -1) {
			b.WriteString(html.UnescapeString(m[1]) + "\n")
		}
	}
	b.WriteString(html.UnescapeString(tag.ReplaceAllString(page, "\n")))
	return b.String()
}

func collect(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		b.WriteString(v + "\n")
	case map[string]any:
		for _, e := range v {
			collect(b, e)
		}
	case []any:
		for _, e := range v {
			collect(b, e)
		}
	}
}

func letters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// RawKeys returns the keys of english that page shows as they are: a lookup of a key that no
// language has shows the key itself. Keys without a dot ("count") are words, not looked for.
func RawKeys(page string, english map[string]string) []string {
	shown := Shown(page)
	var out []string
	for key := range english {
		if base, ok := cutPluralSuffix(key); ok {
			key = base
		}
		if strings.Contains(key, ".") && strings.Contains(shown, key) && !contains(out, key) {
			out = append(out, key)
		}
	}
	return out
}
