package oidc2fa

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/language"

	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/store/memstore"
)

// noAuthenticator serves no login page: the pages of the provider itself are rendered here.
type noAuthenticator struct{}

func (noAuthenticator) ServeLogin(w http.ResponseWriter, r *http.Request, _ *Login) {
	http.NotFound(w, r)
}

// TestPagesEveryMessageEveryLanguage renders the error page with every heading and every
// message, and the enrollment link's page with and without a client, in every built-in
// language, asked for by Accept-Language: each page names its language in <html lang> and
// Content-Language, and a page in another language than English shows no English text.
func TestPagesEveryMessageEveryLanguage(t *testing.T) {
	b := memstore.New().Backend()
	keys, err := NewKeyRing(KeyRingConfig{})
	require.NoError(t, err)
	p, err := newProvider(Config{Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes,
		Interactions: b.Interactions, Authenticator: noAuthenticator{}, Signer: keys, BaseURL: "https://id.example.com/oidc"})
	require.NoError(t, err)
	catalogs := BuiltinCatalogs()
	english := catalogs[0].Messages
	require.Equal(t, language.English, catalogs[0].Language)
	var titles, messages []string
	for key := range english {
		switch {
		case strings.HasPrefix(key, "error.title."):
			titles = append(titles, key)
		case strings.HasPrefix(key, "error.") && key != "error.support" || strings.HasPrefix(key, "enrollment."):
			messages = append(messages, key)
		}
	}
	require.Len(t, titles, 3)
	require.Len(t, messages, 21)
	var langs []string
	for _, c := range catalogs {
		langs = append(langs, c.Language.String())
	}
	assert.Equal(t, []string{"en", "de", "es", "fr", "ja"}, langs)

	for _, c := range catalogs {
		lang := c.Language.String()
		t.Run(lang, func(t *testing.T) {
			for key := range english {
				assert.NotEmpty(t, c.Messages[key], "%s lacks %s", lang, key)
			}
			check := func(what, page string) {
				t.Helper()
				assert.Contains(t, page, `<html lang="`+lang+`">`, what)
				left := pagetext.Leftovers(page, english)
				assert.Empty(t, pagetext.RawKeys(page, english), "%s: message keys shown as they are", what)
				if lang == "en" {
					assert.NotEmpty(t, left, "%s: the English page shows its English texts", what)
				} else {
					assert.Empty(t, left, "%s: English left in the %s page", what, lang)
				}
			}
			req := httptest.NewRequest("GET", "/authorize/acme", nil)
			req.Header.Set("Accept-Language", lang+";q=0.9, it;q=1")
			for _, title := range titles {
				for _, msg := range messages {
					rec := httptest.NewRecorder()
					p.errorPage(rec, req, http.StatusBadRequest, title, errInvalidRequest, msg)
					assert.Equal(t, lang, rec.Header().Get("Content-Language"))
					check(title+" "+msg, rec.Body.String())
					if lang != "en" {
						assert.Contains(t, rec.Body.String(), c.Messages[msg])
						assert.Contains(t, rec.Body.String(), c.Messages["error.support"]+" <code>invalid_request</code>", "the code stays, for support")
					}
				}
			}
			for _, client := range []string{"", "Example App"} {
				var buf bytes.Buffer
				require.NoError(t, linkPageTemplate.Execute(&buf, linkPageData{T: p.pageTexts(req), Client: client, Action: "/x", Style: pageStyle}))
				check("link page for "+client, buf.String())
				if client != "" {
					assert.Contains(t, buf.String(), "Example App", "the client's name is shown")
				}
			}
		})
	}
}
