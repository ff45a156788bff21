package picture_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/language"

	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

// sameWords are words a translation shares with English: Café is Café in German and French,
// and a point is un point.
var sameWords = map[string][]string{"de": {"Café"}, "fr": {"Café", "Point", "point", "points"}}

// englishTexts are every English text of the sign-in and enrollment pages: the picture login's
// and the provider's.
func englishTexts(t *testing.T) map[string]string {
	pic, prov := picture.BuiltinCatalogs()[0], oidc2fa.BuiltinCatalogs()[0]
	require.Equal(t, language.English, pic.Language)
	require.Equal(t, language.English, prov.Language)
	out := maps.Clone(pic.Messages)
	for k, v := range prov.Messages {
		out["oidc2fa "+k] = v
	}
	return out
}

var scriptText = regexp.MustCompile(`(?s)<script type="application/json" id="picture-text">(.*?)</script>`)

// TestPagesInEveryLanguage walks every page of the sign-in (fresh, after a failed attempt),
// the enrollment (the link's page, the form, each refusal, the page of an ended enrollment, the
// page after an administrator's link, a cancelled set-up) in every built-in language: the
// sign-in asked for by ui_locales over another Accept-Language, the enrollment by
// Accept-Language. Each page names its language in <html lang>, shows no English text unless it
// is English, and gives picture.js its sentences in that language.
func TestPagesInEveryLanguage(t *testing.T) {
	english := englishTexts(t)
	catalogs := picture.BuiltinCatalogs()
	var langs []string
	for _, c := range catalogs {
		langs = append(langs, c.Language.String())
	}
	require.Equal(t, []string{"en", "de", "es", "fr", "ja"}, langs)
	for _, c := range catalogs {
		lang := c.Language.String()
		t.Run(lang, func(t *testing.T) {
			for key := range english {
				if strings.HasPrefix(key, "oidc2fa ") || lang == "ja" && strings.HasSuffix(key, ".one") {
					continue // the provider's texts are checked with it; Japanese has no plural forms
				}
				assert.NotEmpty(t, c.Messages[key], "%s lacks %s", lang, key)
			}
			e := newEnv(t)
			check := func(what string, p *page) {
				t.Helper()
				assert.Contains(t, p.body, `<html lang="`+lang+`">`, what)
				left := pagetext.Leftovers(p.body, english, sameWords[lang]...)
				assert.Empty(t, pagetext.RawKeys(p.body, english), "%s: message keys shown as they are", what)
				if lang == "en" {
					assert.NotEmpty(t, left, "%s: the English page shows English", what)
				} else {
					assert.Empty(t, left, "%s: English left in the %s page", what, lang)
				}
			}
			checkScript := func(what string, p *page) {
				t.Helper()
				m := scriptText.FindStringSubmatch(p.body)
				require.NotNil(t, m, "%s has its script text", what)
				var texts map[string]any
				require.NoError(t, json.Unmarshal([]byte(m[1]), &texts))
				assert.Equal(t, c.Messages["script.wait"], texts["wait"], what)
				count, _ := texts["count"].(map[string]any)
				assert.Equal(t, c.Messages["script.count.other"], count["other"], "%s: plural forms", what)
			}

			b := e.browser()
			b.acceptLanguage = "it, ko"
			if lang != "en" {
				b.acceptLanguage = "en"
			}
			loginURL, lp := e.loginWith(b, "ann", url.Values{"ui_locales": {lang}})
			check("the sign-in page", lp)
			checkScript("the sign-in page", lp)
			assert.Equal(t, lang, lp.header.Get("Content-Language"))
			failed := e.attempt(b, loginURL, lp, shift(annPoints, 300, 300))
			require.Equal(t, http.StatusSeeOther, failed.status)
			again := b.get(loginURL)
			assert.Contains(t, again.body, c.Messages["login.failed"])
			check("the sign-in page after a failed attempt", again)

			b = e.browser()
			b.acceptLanguage = lang + ", en;q=0.1"
			link, err := oidc2fa.NewEnrollmentLink(context.Background(), e.ocfg, oidc2fa.EnrollmentRequest{Tenant: "acme", User: "carol"})
			require.NoError(t, err)
			check("the enrollment link's page", b.get(link.URL))
			p := b.post(link.URL, url.Values{})
			require.Equal(t, http.StatusSeeOther, p.status, p.body)
			enrollURL := p.location
			pg := b.get(enrollURL)
			check("the enrollment page", pg)
			checkScript("the enrollment page", pg)
			for _, bad := range []url.Values{
				enrollForm(pg, t, "moon", newPoints, newPoints),
				enrollForm(pg, t, "farm", newPoints[:2], newPoints[:2]),
				enrollForm(pg, t, "farm", []picture.Point{{60, 60}, {121, 121}, {80, 690}, {920, 700}, {500, 380}},
					[]picture.Point{{60, 60}, {121, 121}, {80, 690}, {920, 700}, {500, 380}}),
				enrollForm(pg, t, "farm", newPoints, append(append([]picture.Point(nil), newPoints[:4]...), picture.Point{X: 521, Y: 380})),
			} {
				require.Equal(t, http.StatusSeeOther, b.post(enrollURL, bad).status)
				refused := b.get(enrollURL)
				assert.Contains(t, refused.body, `<p class="message" role="alert">`)
				check("the enrollment page after a refusal", refused)
			}
			done := b.post(enrollURL, enrollForm(pg, t, "farm", newPoints, newPoints))
			require.Equal(t, http.StatusOK, done.status, done.body)
			assert.Contains(t, done.body, c.Messages["done.message"])
			check("the page after an administrator's link", done)
			ended := b.post(enrollURL, enrollForm(pg, t, "farm", newPoints, newPoints))
			check("the page of an ended enrollment", ended)

			link, err = oidc2fa.NewEnrollmentLink(context.Background(), e.ocfg, oidc2fa.EnrollmentRequest{Tenant: "acme", User: "carol"})
			require.NoError(t, err)
			p = b.post(link.URL, url.Values{})
			enrollURL = p.location
			pg = b.get(enrollURL)
			cancelled := b.post(enrollURL+"/cancel", url.Values{"csrf": {pg.csrf(t)}})
			require.Equal(t, http.StatusOK, cancelled.status, cancelled.body)
			check("the page of a cancelled set-up", cancelled)
		})
	}
}

func TestHostLanguages(t *testing.T) {
	english := picture.BuiltinCatalogs()[0].Messages
	e := newEnv(t, func(c *picture.Config) {
		c.Languages = []oidc2fa.Catalog{{Language: language.German, Messages: map[string]string{
			"login.title":   "Sind Sie es?",
			"image.harbour": "Der Hafen",
		}}}
	})
	b := e.browser()
	b.acceptLanguage = "de"
	_, lp := e.login(b, "ann")
	assert.Contains(t, lp.body, "<h1>Sind Sie es?</h1>", "an override replaces a built-in text")
	assert.Contains(t, lp.body, `alt="Ihr Bild: Der Hafen"`, "and an image's title")
	assert.Contains(t, lp.body, "Von vorn beginnen", "and keeps the other texts")

	for name, langs := range map[string][]oidc2fa.Catalog{
		"incomplete new language": {{Language: language.Italian, Messages: map[string]string{"login.title": "Sei tu?"}}},
		"unknown key":             {{Language: language.German, Messages: map[string]string{"login.titel": "Sind Sie es?"}}},
	} {
		_, err := picture.New(picture.Config{Credentials: e.b.Pictures, Peppers: []picture.Pepper{testPepper}, Languages: langs})
		assert.ErrorContains(t, err, "picture: Config.Languages", name)
	}

	// A complete new language, with the title of a host's own image.
	italian := maps.Clone(english)
	for k := range italian {
		italian[k] = "IT " + k
	}
	italian["login.title"] = "Conferma che sei tu"
	e = newEnv(t, func(c *picture.Config) {
		c.Languages = []oidc2fa.Catalog{{Language: language.Italian, Messages: italian}}
	})
	b = e.browser()
	b.acceptLanguage = "it-CH, de;q=0.5"
	_, lp = e.login(b, "ann")
	assert.Contains(t, lp.body, `<html lang="it">`)
	assert.Contains(t, lp.body, "<h1>Conferma che sei tu</h1>")
}

// TestTenantDefaultLanguage: the sign-in and enrollment pages speak the tenant's default
// language to a browser that asks for none the pages have.
func TestTenantDefaultLanguage(t *testing.T) {
	e := newEnv(t)
	_, err := e.b.Tenants.Update(context.Background(), "acme", func(tn *store.Tenant) error {
		tn.DefaultLanguage = "ja"
		return nil
	})
	require.NoError(t, err)
	b := e.browser()
	b.acceptLanguage = "ko"
	_, lp := e.login(b, "ann")
	assert.Contains(t, lp.body, `<html lang="ja">`)
	assert.Contains(t, lp.body, "ご本人であることを確認してください")

	b.acceptLanguage = "es"
	_, lp = e.login(b, "ann")
	assert.Contains(t, lp.body, `<html lang="es">`, "the browser's language comes first")

	_, _, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
	assert.Contains(t, pg.body, `<html lang="ja">`)
}
