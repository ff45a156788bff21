package oidc2fa_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/language"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/store"
)

// langRecorder is the test authenticator recording the languages each login and enrollment
// request was given.
type langRecorder struct {
	*authtest.Authenticator
	logins  [][]language.Tag
	enrolls [][]language.Tag
}

func (a *langRecorder) ServeLogin(w http.ResponseWriter, r *http.Request, l *oidc2fa.Login) {
	a.logins = append(a.logins, l.Languages)
	a.Authenticator.ServeLogin(w, r, l)
}

func (a *langRecorder) ServeEnroll(w http.ResponseWriter, r *http.Request, e *oidc2fa.Enrollment) {
	a.enrolls = append(a.enrolls, e.Languages)
	a.Authenticator.ServeEnroll(w, r, e)
}

// newLangEnv is an env whose authenticator shows its page and records languages.
func newLangEnv(t *testing.T, configure ...func(*oidc2fa.Config)) (*env, *langRecorder) {
	var rec *langRecorder
	wrap := func(c *oidc2fa.Config) {
		rec = &langRecorder{Authenticator: c.Authenticator.(*authtest.Authenticator)}
		c.Authenticator = rec
	}
	e := newEnv(t, append([]func(*oidc2fa.Config){wrap}, configure...)...)
	return e.manual(), rec
}

func tags(ts []language.Tag) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out
}

// pageLang is the lang attribute of a page's <html>.
func pageLang(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	body := rec.Body.String()
	_, after, ok := strings.Cut(body, `<html lang="`)
	require.True(t, ok, "a page with <html lang>: %s", body)
	lang, _, _ := strings.Cut(after, `"`)
	return lang
}

func TestUILocalesBeatAcceptLanguage(t *testing.T) {
	e, rec := newLangEnv(t)
	t.Run("error page of the authorization endpoint", func(t *testing.T) {
		b := e.browser()
		b.acceptLanguage = "de"
		page := b.do("GET", "/authorize/acme?client_id=nope&ui_locales=fr", nil)
		require.Equal(t, http.StatusBadRequest, page.Code)
		assert.Equal(t, "fr", pageLang(t, page))
		assert.Contains(t, page.Body.String(), "La demande de connexion indique une application inconnue")

		page = b.do("POST", "/authorize/acme", url.Values{"client_id": {"nope"}, "ui_locales": {"ja"}})
		assert.Equal(t, "ja", pageLang(t, page), "a POSTed request too")
		page = b.do("GET", "/authorize/acme?client_id=nope", nil)
		assert.Equal(t, "de", pageLang(t, page), "without ui_locales, Accept-Language")
		assert.Equal(t, "de", page.Header().Get("Content-Language"))
	})
	t.Run("sign-in pages", func(t *testing.T) {
		b := e.browser()
		b.acceptLanguage = "de, en;q=0.5"
		params := e.authParams()
		params.Set("ui_locales", "ja es")
		path, _ := b.start(params)
		require.NotEmpty(t, rec.logins)
		assert.Equal(t, []string{"ja", "es", "de", "en"}, tags(rec.logins[len(rec.logins)-1]),
			"ui_locales first, then Accept-Language")
		// A later page of the sign-in keeps ui_locales.
		page := b.do("POST", path, url.Values{"decision": {"approve"}, oidc2fa.CSRFField: {"forged"}})
		require.Equal(t, http.StatusForbidden, page.Code)
		assert.Equal(t, "ja", pageLang(t, page))
		assert.Contains(t, page.Body.String(), "フォームを確認できませんでした")
	})
}

func TestUILocalesSurvivePAR(t *testing.T) {
	e, rec := newLangEnv(t)
	form := e.pushParams()
	form.Set("ui_locales", "es fr")
	ref := e.pushed(form)
	assert.True(t, strings.HasSuffix(ref, ".es.fr"), "the request_uri carries the tags: %s", ref)

	b := e.browser()
	b.acceptLanguage = "de"
	// The browser's own ui_locales is ignored, as every parameter beside a pushed request.
	page := b.follow("GET", e.parURL(ref)+"&ui_locales=ja", nil)
	require.Equal(t, http.StatusOK, page.Code, "body: %s", page.Body)
	require.NotEmpty(t, rec.logins)
	assert.Equal(t, []string{"es", "fr", "de"}, tags(rec.logins[len(rec.logins)-1]))

	// Tags edited on the way name no pushed request.
	ref = e.pushed(form)
	edited := strings.TrimSuffix(ref, ".es.fr") + ".de"
	page = b.do("GET", e.parURL(edited), nil)
	assert.Equal(t, http.StatusBadRequest, page.Code)
	assert.Contains(t, page.Body.String(), "Diese Anmeldeanfrage wurde bereits verwendet")
	page = b.follow("GET", e.parURL(ref), nil)
	assert.Equal(t, http.StatusOK, page.Code, "the request itself is still there")

	// A request without ui_locales has a plain request_uri.
	plain := e.pushed(e.pushParams())
	assert.NotContains(t, strings.TrimPrefix(plain, "urn:ietf:params:oauth:request_uri:"), ".")
}

func TestUnsupportedLanguageFallsBack(t *testing.T) {
	e, _ := newLangEnv(t)
	for _, tc := range []struct{ uiLocales, accept, want string }{
		{"it", "ko", "en"},
		{"it", "de-AT", "de"},
		{"", "", "en"},
		{"pt-BR", "sv, es-MX;q=0.5", "es"},
		{"fr-CA", "", "fr"},
	} {
		b := e.browser()
		b.acceptLanguage = tc.accept
		page := b.do("GET", "/authorize/acme?"+url.Values{"client_id": {"nope"}, "ui_locales": {tc.uiLocales}}.Encode(), nil)
		assert.Equal(t, tc.want, pageLang(t, page), "ui_locales %q, Accept-Language %q", tc.uiLocales, tc.accept)
	}
}

func TestHostLanguages(t *testing.T) {
	english := oidc2fa.BuiltinCatalogs()[0].Messages
	italian := maps.Clone(english)
	for k := range italian {
		italian[k] = "IT " + k
	}
	italian["error.title.signin"] = "Questo accesso non può essere completato"
	e, _ := newLangEnv(t, func(c *oidc2fa.Config) {
		c.Languages = []oidc2fa.Catalog{
			{Language: language.German, Messages: map[string]string{"error.title.signin": "Anmeldung nicht möglich"}},
			{Language: language.Italian, Messages: italian},
		}
	})
	b := e.browser()
	b.acceptLanguage = "it"
	page := b.do("GET", "/authorize/acme?client_id=nope", nil)
	assert.Equal(t, "it", pageLang(t, page))
	assert.Contains(t, page.Body.String(), "<h1>Questo accesso non può essere completato</h1>")

	b.acceptLanguage = "de"
	page = b.do("GET", "/authorize/acme?client_id=nope", nil)
	assert.Contains(t, page.Body.String(), "<h1>Anmeldung nicht möglich</h1>", "an override replaces a built-in text")
	assert.Contains(t, page.Body.String(), "Die Anmeldeanfrage nennt eine unbekannte Anwendung", "and keeps the others")

	for name, langs := range map[string][]oidc2fa.Catalog{
		"incomplete new language": {{Language: language.Dutch, Messages: map[string]string{"link.continue": "Doorgaan"}}},
		"unknown key":             {{Language: language.German, Messages: map[string]string{"link.contniue": "Weiter"}}},
		"no language":             {{Messages: map[string]string{"link.continue": "Weiter"}}},
	} {
		_, err := oidc2fa.New(oidc2fa.Config{Tenants: e.mem.Backend().Tenants, Users: e.mem.Backend().Users,
			Clients: e.mem.Backend().Clients, Codes: e.mem.Backend().Codes, Interactions: e.mem.Backend().Interactions,
			Authenticator: e.auth, Signer: e.keys, BaseURL: testBase, Languages: langs})
		assert.ErrorContains(t, err, "oidc2fa: Config.Languages", name)
	}
}

func TestEnrollmentLinkLanguage(t *testing.T) {
	var rec *langRecorder
	e := newEnrollEnv(t, func(c *oidc2fa.Config) {
		rec = &langRecorder{Authenticator: c.Authenticator.(*authtest.Authenticator)}
		c.Authenticator = rec
	})
	form := e.enrollForm()
	form.Set("ui_locales", "fr")
	answer := e.postEnroll("acme", form, nil)
	require.Equal(t, http.StatusOK, answer.Code, "body: %s", answer.Body)
	var resp enrollResponse
	require.NoError(t, json.Unmarshal(answer.Body.Bytes(), &resp))
	assert.True(t, strings.HasSuffix(resp.URL, "?ui_locales=fr"), resp.URL)
	link := strings.TrimPrefix(resp.URL, testBase)

	b := e.browser()
	b.acceptLanguage = "de"
	page := b.do("GET", link, nil)
	require.Equal(t, http.StatusOK, page.Code)
	assert.Equal(t, "fr", pageLang(t, page))
	assert.Contains(t, page.Body.String(), "Configurer votre second facteur")
	assert.Contains(t, page.Body.String(), `action="/oidc/enroll/acme/`, "the button posts to the link")
	assert.Contains(t, page.Body.String(), `?ui_locales=fr"`, "with its languages")
	action := page.Body.String()
	_, action, _ = strings.Cut(action, `action="/oidc`)
	action, _, _ = strings.Cut(action, `"`)
	page = b.follow("POST", strings.ReplaceAll(action, "&amp;", "&"), url.Values{})
	require.Equal(t, http.StatusOK, page.Code, "body: %s", page.Body)
	require.NotEmpty(t, rec.enrolls)
	assert.Equal(t, []string{"fr", "de"}, tags(rec.enrolls[len(rec.enrolls)-1]))

	// An administrator's link without languages has none: the browser's decide.
	l, err := oidc2fa.NewEnrollmentLink(context.Background(), e.cfg, oidc2fa.EnrollmentRequest{Tenant: "acme", User: "ann@example.com"})
	require.NoError(t, err)
	assert.NotContains(t, l.URL, "?")
	b.acceptLanguage = "es"
	page = b.do("GET", strings.TrimPrefix(l.URL, testBase), nil)
	assert.Equal(t, "es", pageLang(t, page))
}

// TestTenantDefaultLanguage: the tenant's default language speaks when the request asks for no
// language the pages have, after ui_locales and Accept-Language.
func TestTenantDefaultLanguage(t *testing.T) {
	e, rec := newLangEnv(t)
	_, err := e.mem.Backend().Tenants.Update(context.Background(), "acme", func(tn *store.Tenant) error {
		tn.DefaultLanguage = "fr-CA"
		return nil
	})
	require.NoError(t, err)
	for _, tc := range []struct{ uiLocales, accept, want string }{
		{"", "", "fr"},
		{"", "ko, it;q=0.5", "fr"},
		{"", "de", "de"},
		{"es", "de", "es"},
		{"it", "", "fr"},
	} {
		b := e.browser()
		b.acceptLanguage = tc.accept
		page := b.do("GET", "/authorize/acme?"+url.Values{"client_id": {"nope"}, "ui_locales": {tc.uiLocales}}.Encode(), nil)
		assert.Equal(t, tc.want, pageLang(t, page), "ui_locales %q, Accept-Language %q", tc.uiLocales, tc.accept)
	}
	page := e.browser().do("GET", "/authorize/globex?client_id=nope", nil)
	assert.Equal(t, "en", pageLang(t, page), "another tenant keeps English")

	b := e.browser()
	b.acceptLanguage = "ko"
	b.start(e.authParams())
	require.NotEmpty(t, rec.logins)
	assert.Equal(t, []string{"ko", "fr-CA"}, tags(rec.logins[len(rec.logins)-1]), "the authenticator gets it last")
}

// TestHugeLanguageLists: a huge Accept-Language, ui_locales or language cookie (100,000 tags,
// 300 KB to 1 MB) is cut to its caps before it is parsed: the page speaks the language of its
// first tags, and the authenticator is given at most the capped preferences. (The caps
// themselves, in tags and bytes, are tested in internal/pagetext.)
func TestHugeLanguageLists(t *testing.T) {
	e, rec := newLangEnv(t)
	hugeAccept := "ja, " + strings.Repeat("ko;q=0.1, ", 100_000) + "de"
	hugeLocales := "es " + strings.Repeat("ko ", 100_000) + "de"

	b := e.browser()
	b.acceptLanguage = hugeAccept
	page := b.do("GET", "/authorize/acme?client_id=nope", nil)
	require.Equal(t, http.StatusBadRequest, page.Code)
	assert.Equal(t, "ja", pageLang(t, page), "Accept-Language speaks from its first entries")

	page = b.do("GET", "/authorize/acme?"+url.Values{"client_id": {"nope"}, "ui_locales": {hugeLocales}}.Encode(), nil)
	assert.Equal(t, "es", pageLang(t, page), "ui_locales speaks from its first tags")
	// A POSTed request is at most 64 KiB: 20,000 tags.
	page = b.do("POST", "/authorize/acme", url.Values{"client_id": {"nope"}, "ui_locales": {"fr " + strings.Repeat("ko ", 20_000)}})
	assert.Equal(t, "fr", pageLang(t, page), "a POSTed ui_locales too")

	params := e.authParams()
	params.Set("ui_locales", hugeLocales)
	path, _ := b.start(params)
	require.NotEmpty(t, rec.logins)
	got := tags(rec.logins[len(rec.logins)-1])
	assert.LessOrEqual(t, len(got), 32)
	assert.Equal(t, []string{"es", "ko", "ja", "ko"}, got[:4], "ui_locales (deduplicated, at most 8), then Accept-Language")

	// A language cookie grown huge on the way is cut as ui_locales is.
	var langCookie string
	for name := range b.cookies {
		if strings.HasPrefix(name, "visid_lang_") {
			langCookie = name
		}
	}
	require.NotEmpty(t, langCookie, "the sign-in keeps its ui_locales in a cookie")
	b.cookies[langCookie].Value = "fr." + strings.Repeat("ko.", 300_000) + "de"
	page = b.do("POST", path, url.Values{"decision": {"approve"}, oidc2fa.CSRFField: {"forged"}})
	require.Equal(t, http.StatusForbidden, page.Code)
	assert.Equal(t, "fr", pageLang(t, page))
}
