package main

import (
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/picture"
	"github.com/visid/visid/store"
)

// visidTexts are the texts of visid's pages, the picture login's and the provider's, by
// language.
func visidTexts() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, c := range append(picture.BuiltinCatalogs(), oidc2fa.BuiltinCatalogs()...) {
		lang := c.Language.String()
		if out[lang] == nil {
			out[lang] = map[string]string{}
		}
		maps.Copy(out[lang], c.Messages)
	}
	return out
}

// visidText is the text of key of visid's pages in the language of vp (English when it has
// none), with args, pairs of a name and a value, filled in.
func visidText(vp viewport, key string, args ...string) string {
	lang := vp.lang
	if lang == "" {
		lang = "en"
	}
	text := visidTexts()[lang][key]
	for i := 0; i+1 < len(args); i += 2 {
		text = strings.ReplaceAll(text, "{"+args[i]+"}", args[i+1])
	}
	return text
}

// sameWords are words of visid's pages that a language shares with English.
var sameWords = map[string][]string{"de": {"Café"}, "fr": {"Café", "Point", "point", "points"}}

// checkLanguage fails the test, naming the page what, unless visid's page the browser shows,
// as its script left it, says its language in <html lang> and, in another language than
// English, shows no English text.
func (c *chrome) checkLanguage(what string) {
	c.t.Helper()
	lang := c.vp.lang
	if lang == "" {
		lang = "en"
	}
	assert.Equal(c.t, lang, eval[string](c, `document.documentElement.lang`), "%s: <html lang>", what)
	page := eval[string](c, `document.documentElement.outerHTML`)
	assert.Empty(c.t, pagetext.RawKeys(page, visidTexts()["en"]), "%s: message keys shown as they are", what)
	if lang == "en" {
		return
	}
	assert.Empty(c.t, pagetext.Leftovers(page, visidTexts()["en"], sameWords[lang]...),
		"%s: English left in the %s page", what, lang)
}

// TestBrowserLoginLanguage signs in with the picture in German on a phone and in Japanese on a
// desktop, for a tenant with its own name, logo and accent colour: visid's page and picture.js
// count, announce and describe the picture in the browser's language, in the tenant's look.
// The screenshots go to VISID_SCREENSHOT_DIR when it is set (docs/ holds two of them), else to
// a new temporary directory.
func TestBrowserLoginLanguage(t *testing.T) {
	shots := os.Getenv("VISID_SCREENSHOT_DIR")
	if shots == "" {
		var err error
		shots, err = os.MkdirTemp("", "visid-browser-")
		require.NoError(t, err)
	}
	t.Logf("screenshots in %s (kept)", shots)
	logo, err := os.ReadFile("testdata/tenant-logo.svg")
	require.NoError(t, err)
	de, ja := phone, desktop
	de.name, de.lang = "phone-de", "de"
	ja.name, ja.lang = "desktop-ja", "ja"
	for _, vp := range []viewport{de, ja} {
		t.Run(vp.name, func(t *testing.T) {
			exe := findBrowser(t)
			s := newPictureStack(t)
			_, err := s.cfg.Tenants.Update(t.Context(), "demo", func(tn *store.Tenant) error {
				tn.DisplayName, tn.Logo, tn.AccentColor = "Fjordline", logo, "#1f4e8c"
				return nil
			})
			require.NoError(t, err)
			c := newChrome(t, exe, vp)
			c.signIn(s.app, demoEmail, demoPassword)
			c.waitFor("the tenant's logo", `(() => { const i = document.querySelector("img.tenant-logo"); return !!i && i.complete && i.naturalWidth > 0 })()`)
			assert.Equal(t, "Fjordline", eval[string](c, `document.querySelector("img.tenant-logo").alt`))
			assert.Equal(t, "rgb(31, 78, 140)", eval[string](c, `getComputedStyle(document.querySelector(".button.primary")).backgroundColor`),
				"the buttons have the tenant's colour")
			c.checkLanguage("visid's picture login")
			assert.Equal(t, visidText(vp, "login.title"), c.text("h1"))
			assert.Equal(t, visidText(vp, "picture.alt", "title", visidText(vp, "image.harbour")),
				eval[string](c, `document.getElementById("picture").alt`))
			c.screenshot(shots, "login-"+vp.name+".png")
			c.clickPoints(alicePoints[:2])
			c.waitText("#count", visidText(vp, "script.count.other", "placed", "2", "n", "5"))
			c.do(chromedp.Click(chromedp.CSS("#undo")))
			c.waitText("#notice", visidText(vp, "script.removed"))
			c.waitText("#count", visidText(vp, "script.count.other", "placed", "1", "n", "5"))
			c.checkLanguage("visid's picture login with a point placed")
			c.do(chromedp.Click(chromedp.CSS("#start-over")))
			c.clickPoints(alicePoints)
			c.waitText("#notice", visidText(vp, "script.loginReady"))
			c.screenshot(shots, "login-"+vp.name+"-ready.png")
			c.press("#submit", "p.hint")
			assert.Equal(t, "alice@example.com passed both factors", c.appHeading())
		})
	}
}
