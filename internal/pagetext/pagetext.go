// Package pagetext holds the texts of visid's pages in several languages and picks the language
// of a page from the person's preferences: OpenID Connect's ui_locales, then the browser's
// Accept-Language, then the tenant's default language, then English.
//
// A text is a string that may name arguments in braces ({client}, {n}). A text that depends on
// a number has one key per CLDR plural category: "key.one", "key.other" (and "key.zero",
// "key.two", "key.few", "key.many" where a language needs them); "key.other" is required, and
// the form is chosen with golang.org/x/text/feature/plural.
package pagetext

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// Lang is the texts of one language: message key to text.
type Lang struct {
	Tag      language.Tag
	Messages map[string]string
}

// pluralSuffixes are the CLDR plural categories as key suffixes.
var pluralSuffixes = []string{".zero", ".one", ".two", ".few", ".many", ".other"}

// LoadDir reads the built-in languages of dir in fsys: one JSON object of key to text per file,
// named after its BCP 47 tag ("de.json"). The English file must be there.
func LoadDir(fsys fs.FS, dir string) ([]Lang, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []Lang
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		tag, err := language.Parse(name)
		if err != nil {
			return nil, fmt.Errorf("pagetext: %s: %w", e.Name(), err)
		}
		data, err := fs.ReadFile(fsys, dir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		var msgs map[string]string
		if err := json.Unmarshal(data, &msgs); err != nil {
			return nil, fmt.Errorf("pagetext: %s: %w", e.Name(), err)
		}
		out = append(out, Lang{Tag: tag, Messages: msgs})
	}
	// English first: it is the language of last resort.
	slices.SortStableFunc(out, func(a, b Lang) int {
		switch {
		case a.Tag == language.English:
			return -1
		case b.Tag == language.English:
			return 1
		}
		return strings.Compare(a.Tag.String(), b.Tag.String())
	})
	if len(out) == 0 || out[0].Tag != language.English {
		return nil, fmt.Errorf("pagetext: %s has no en.json", dir)
	}
	return out, nil
}

// Set is a set of languages, English first, matched against a person's preferences.
type Set struct {
	langs   []*Texts
	matcher language.Matcher
}

// NewSet returns the set of the built-in languages (English first) with extra added: an extra
// language the set has overrides the texts it names, one it lacks is added and must give every
// key English has. Keys that start with one of open may be given beyond English's (the titles
// of a host's own images, say) and need not be given. what names the caller in errors
// ("oidc2fa: Config.Languages").
func NewSet(builtin, extra []Lang, what string, open ...string) (*Set, error) {
	if len(builtin) == 0 || builtin[0].Tag != language.English {
		return nil, fmt.Errorf("%s: the built-in languages must start with English", what)
	}
	english := builtin[0].Messages
	byTag := map[language.Tag]map[string]string{}
	var order []language.Tag
	for _, l := range builtin {
		byTag[l.Tag] = maps.Clone(l.Messages)
		order = append(order, l.Tag)
	}
	for _, l := range extra {
		if l.Tag == language.Und {
			return nil, fmt.Errorf("%s: a language has no tag", what)
		}
		for key, text := range l.Messages {
			if !knownKey(english, key) && !hasAnyPrefix(key, open) {
				return nil, fmt.Errorf("%s: language %s: unknown message key %q", what, l.Tag, key)
			}
			if text == "" {
				return nil, fmt.Errorf("%s: language %s: message %q is empty", what, l.Tag, key)
			}
		}
		msgs, ok := byTag[l.Tag]
		if !ok {
			if missing := missingKeys(english, l.Messages, open); len(missing) > 0 {
				return nil, fmt.Errorf("%s: language %s lacks the messages %s", what, l.Tag, strings.Join(missing, ", "))
			}
			msgs = map[string]string{}
			byTag[l.Tag] = msgs
			order = append(order, l.Tag)
		}
		maps.Copy(msgs, l.Messages)
	}
	s := &Set{}
	for _, tag := range order {
		s.langs = append(s.langs, &Texts{tag: tag, msgs: byTag[tag], english: english})
	}
	s.matcher = language.NewMatcher(order)
	return s, nil
}

// knownKey reports whether key is one of english's keys, or a plural form of one of its plural
// messages.
func knownKey(english map[string]string, key string) bool {
	if _, ok := english[key]; ok {
		return true
	}
	for _, suf := range pluralSuffixes {
		if base, ok := strings.CutSuffix(key, suf); ok {
			_, plural := english[base+".other"]
			return plural
		}
	}
	return false
}

// missingKeys lists the keys of english that msgs lacks; a plural message needs only its
// "other" form.
func missingKeys(english, msgs map[string]string, open []string) []string {
	var missing []string
	for key := range english {
		if hasAnyPrefix(key, open) {
			continue
		}
		if _, ok := cutPluralSuffix(key); ok && !strings.HasSuffix(key, ".other") {
			continue // a language gives the plural forms it has; "other" is checked on its own
		}
		if _, ok := msgs[key]; !ok {
			missing = append(missing, key)
		}
	}
	slices.Sort(missing)
	return missing
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func cutPluralSuffix(key string) (string, bool) {
	for _, suf := range pluralSuffixes {
		if base, ok := strings.CutSuffix(key, suf); ok {
			return base, true
		}
	}
	return "", false
}

// Match returns the texts of the language that best fits prefs, in order of preference; the
// first language of the set (English) when none fits.
func (s *Set) Match(prefs ...language.Tag) *Texts {
	if len(prefs) == 0 {
		return s.langs[0]
	}
	_, i, conf := s.matcher.Match(prefs...)
	if conf == language.No {
		return s.langs[0]
	}
	return s.langs[i]
}

// Languages returns the tags of the set, English first.
func (s *Set) Languages() []language.Tag {
	out := make([]language.Tag, len(s.langs))
	for i, t := range s.langs {
		out[i] = t.tag
	}
	return out
}

// Texts is the texts of one language.
type Texts struct {
	tag     language.Tag
	msgs    map[string]string
	english map[string]string
}

// Lang is the language's BCP 47 tag, for <html lang>.
func (t *Texts) Lang() string { return t.tag.String() }

// Has reports whether the language, or English, has a text for key.
func (t *Texts) Has(key string) bool {
	_, ok := t.msgs[key]
	_, en := t.english[key]
	return ok || en
}

// Tag is the language's tag.
func (t *Texts) Tag() language.Tag { return t.tag }

// raw is the text of key: the language's, or English's when the language overrides only some
// built-in texts and lacks key.
func (t *Texts) raw(key string) string {
	if s, ok := t.msgs[key]; ok {
		return s
	}
	if s, ok := t.english[key]; ok {
		return s
	}
	return key
}

// Text returns the text of key with its arguments filled in: args are pairs of a name and a
// value ("client", "Example App").
func (t *Texts) Text(key string, args ...any) string {
	return fill(t.raw(key), args)
}

// Plural returns the text of the plural message key for the number n, with {n} and args filled
// in.
func (t *Texts) Plural(key string, n int, args ...any) string {
	return fill(t.raw(key+t.form(key, n)), append([]any{"n", n}, args...))
}

// form is the key suffix of n's plural form in the language, ".other" when the language has no
// text for that form.
func (t *Texts) form(key string, n int) string {
	suf := ".other"
	switch plural.Cardinal.MatchPlural(t.tag, n, 0, 0, 0, 0) {
	case plural.Zero:
		suf = ".zero"
	case plural.One:
		suf = ".one"
	case plural.Two:
		suf = ".two"
	case plural.Few:
		suf = ".few"
	case plural.Many:
		suf = ".many"
	}
	if _, ok := t.msgs[key+suf]; ok {
		return suf
	}
	return ".other"
}

// Script returns the messages whose keys start with prefix, without it, for a page's script: a
// plural message becomes an object of its forms ({"one": …, "other": …}), which the script
// picks from with Intl.PluralRules of the page's language.
func (t *Texts) Script(prefix string) map[string]any {
	out := map[string]any{}
	for key := range t.english {
		name, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		base, isPlural := cutPluralSuffix(name)
		if !isPlural {
			out[name] = t.raw(key)
			continue
		}
		if _, done := out[base]; done {
			continue
		}
		src := t.english // the language's forms replace English's whole
		if t.ownsPlural(prefix + base) {
			src = t.msgs
		}
		forms := map[string]string{}
		for _, suf := range pluralSuffixes {
			if text, ok := src[prefix+base+suf]; ok {
				forms[suf[1:]] = text
			}
		}
		out[base] = forms
	}
	return out
}

// ownsPlural reports whether the language gives plural message key itself.
func (t *Texts) ownsPlural(key string) bool {
	_, ok := t.msgs[key+".other"]
	return ok
}

// fill replaces {name} in s by the value paired with name in args.
func fill(s string, args []any) string {
	if len(args) == 0 || !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		name := s[i+1 : i+j]
		val, ok := lookup(args, name)
		b.WriteString(s[:i])
		if ok {
			b.WriteString(val)
		} else {
			b.WriteString(s[i : i+j+1])
		}
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

func lookup(args []any, name string) (string, bool) {
	for i := 0; i+1 < len(args); i += 2 {
		if k, _ := args[i].(string); k == name {
			switch v := args[i+1].(type) {
			case string:
				return v, true
			case int:
				return strconv.Itoa(v), true
			default:
				return fmt.Sprint(v), true
			}
		}
	}
	return "", false
}

// Preferences are a person's languages in order: ui_locales (space-separated BCP 47 tags),
// then the Accept-Language header, then the tenant's default. Each list is cut to its caps
// before any of its tags is parsed (UILocaleFields, AcceptLanguageEntries); tags that do not
// parse are skipped, a header that does not parse is ignored, and at most maxTags are kept.
func Preferences(uiLocales, acceptLanguage, tenantDefault string) []language.Tag {
	var out []language.Tag
	for _, s := range UILocaleFields(uiLocales) {
		if tag, err := language.Parse(s); err == nil {
			out = append(out, tag)
		}
	}
	if tags, _, err := language.ParseAcceptLanguage(AcceptLanguageEntries(acceptLanguage)); err == nil {
		out = append(out, tags...)
	}
	if tenantDefault != "" {
		if tag, err := language.Parse(tenantDefault); err == nil {
			out = append(out, tag)
		}
	}
	if len(out) > maxTags {
		out = out[:maxTags]
	}
	return out
}

// The caps on the language lists of a request, applied to their bytes before any tag is parsed.
// A real browser's Accept-Language has a handful of entries in well under 100 bytes, and a
// ui_locales a few tags of 2 to 10 bytes; a BCP 47 tag worth matching is at most 35 bytes.
const (
	// maxTags bounds the preferences a request can make the matcher look at, and the entries of
	// an Accept-Language that are parsed.
	maxTags = 32
	// maxAcceptLanguageBytes bounds the start of an Accept-Language that is read: 32 entries
	// of 32 bytes ("de-CH-1996;q=0.9, ").
	maxAcceptLanguageBytes = 1024
	// maxUILocales bounds the tags of a ui_locales (and of the cookie that keeps it) that are
	// parsed and kept with a sign-in.
	maxUILocales = 8
	// maxUILocalesBytes bounds the start of a ui_locales that is read: 8 tags of 32 bytes.
	maxUILocalesBytes = 256
)

// UILocaleFields returns the fields of a ui_locales value that are parsed: the first
// maxUILocales space-separated fields within its first maxUILocalesBytes bytes. A field that
// the byte cap cuts is left out, never parsed in part.
func UILocaleFields(s string) []string {
	fields := strings.Fields(cutList(s, maxUILocalesBytes, func(c byte) bool {
		return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
	}))
	if len(fields) > maxUILocales {
		fields = fields[:maxUILocales]
	}
	return fields
}

// AcceptLanguageEntries returns the start of an Accept-Language header that is parsed: its
// first maxTags comma-separated entries within its first maxAcceptLanguageBytes bytes. An
// entry that the byte cap cuts is left out, never parsed in part. The entries kept are sorted
// by their weights when they are parsed; a browser lists its languages best first.
func AcceptLanguageEntries(s string) string {
	s = cutList(s, maxAcceptLanguageBytes, func(c byte) bool { return c == ',' })
	for i, n := 0, 0; i < len(s); i++ {
		if s[i] == ',' {
			if n++; n == maxTags {
				return s[:i]
			}
		}
	}
	return s
}

// cutList returns s when it has at most max bytes, and otherwise its start of at most max bytes
// that ends before a separator (sep), so that the last item is whole; "" when the first item is
// longer than max.
func cutList(s string, max int, sep func(byte) bool) string {
	if len(s) <= max {
		return s
	}
	for i := max; i > 0; i-- {
		if sep(s[i]) {
			return s[:i]
		}
	}
	return ""
}

// UILocales returns the tags of a ui_locales parameter that parse, canonical and deduplicated,
// from its UILocaleFields: what is kept of it with a sign-in.
func UILocales(s string) []string {
	var out []string
	for _, f := range UILocaleFields(s) {
		tag, err := language.Parse(f)
		if err != nil {
			continue
		}
		if t := tag.String(); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
