package oidc2fa

import (
	"context"
	"embed"
	"errors"
	"maps"
	"net/http"
	"strings"

	"golang.org/x/text/language"

	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/store"
)

// Catalog is the texts of the pages in one language: what a host gives in Config.Languages (and
// picture.Config.Languages) to add a language or to change some texts of a built-in one.
//
// Messages maps a message key to its text; BuiltinCatalogs shows every key with its English
// text. A text may name arguments in braces, as the English one does ({client}, {n}). A text
// that depends on a number has one key per CLDR plural category the language uses, such as
// "count.one" and "count.other" ("other" is required; "zero", "two", "few" and "many" exist
// too), chosen with golang.org/x/text/feature/plural.
//
// A Catalog whose Language is a built-in one replaces the texts it names and keeps the others;
// one for a new language must give every key.
type Catalog struct {
	Language language.Tag
	Messages map[string]string
}

// The languages the pages ship in: English, German, French, Spanish and Japanese. The language
// of a page is the best match, by golang.org/x/text/language's Matcher, for the person's
// preferences in this order: the ui_locales of the authorization request (kept through a pushed
// request and the whole sign-in), the browser's Accept-Language, the tenant's default language;
// English when none matches. The page's <html lang> names it.
//
//go:embed texts/*.json
var textFS embed.FS

// BuiltinCatalogs returns the texts of the provider's own pages (the error pages and the first
// page of an enrollment link) in every built-in language, English first: the keys a Catalog of
// Config.Languages may give. Each call returns new maps.
func BuiltinCatalogs() []Catalog {
	langs, err := pagetext.LoadDir(textFS, "texts")
	if err != nil {
		panic("oidc2fa: the built-in texts do not load: " + err.Error()) // embedded at build time
	}
	return toCatalogs(langs)
}

func toCatalogs(langs []pagetext.Lang) []Catalog {
	out := make([]Catalog, len(langs))
	for i, l := range langs {
		out[i] = Catalog{Language: l.Tag, Messages: maps.Clone(l.Messages)}
	}
	return out
}

// newTextSet is the set of the built-in languages with the host's catalogs added.
func newTextSet(host []Catalog) (*pagetext.Set, error) {
	builtin, err := pagetext.LoadDir(textFS, "texts")
	if err != nil {
		return nil, err
	}
	extra := make([]pagetext.Lang, len(host))
	for i, c := range host {
		extra[i] = pagetext.Lang{Tag: c.Language, Messages: c.Messages}
	}
	return pagetext.NewSet(builtin, extra, "oidc2fa: Config.Languages")
}

// uiLocalesCookie is the name of the cookie that keeps the ui_locales of interaction id for its
// pages, beside its binding cookie.
func uiLocalesCookie(id string) string { return "visid_lang_" + id[:16] }

// keepUILocales sets the cookie that keeps the ui_locales of in (canonical tags) for its pages.
// A language is the person's to choose: the cookie carries nothing a browser may not change.
func (p *provider) keepUILocales(w http.ResponseWriter, in *store.Interaction, tags []string) {
	if len(tags) == 0 {
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     uiLocalesCookie(in.ID),
		Value:    strings.Join(tags, "."),
		Path:     p.loginPath(in, ""),
		HttpOnly: true,
		Secure:   p.secure,
		SameSite: http.SameSiteLaxMode,
	})
}

// keptUILocales returns the ui_locales kept for interaction id, as a ui_locales parameter.
func keptUILocales(r *http.Request, id string) string {
	if len(id) < 16 {
		return ""
	}
	c, err := r.Cookie(uiLocalesCookie(id))
	if err != nil {
		return ""
	}
	return strings.Join(pagetext.UILocales(strings.ReplaceAll(c.Value, ".", " ")), " ")
}

// preferences are the languages of a person, best first: uiLocales, the request's
// Accept-Language, then the default language of tenant (when it is known).
func (p *provider) preferences(r *http.Request, uiLocales, tenant string) []language.Tag {
	return pagetext.Preferences(uiLocales, r.Header.Get("Accept-Language"), p.tenantLanguage(r, tenant))
}

// tenantLanguage is the default language of tenant (store.Tenant.DefaultLanguage), "" when it
// has none or is unknown. It is read once per request.
func (p *provider) tenantLanguage(r *http.Request, tenant string) string {
	pl := pageLangOf(r)
	if pl.tenantRead && pl.tenant == tenant {
		return pl.tenantLang
	}
	lang := ""
	if store.ValidTenantID(tenant) {
		t, err := p.cfg.Tenants.Get(r.Context(), tenant)
		switch {
		case err == nil:
			lang = t.DefaultLanguage
		case !errors.Is(err, store.ErrNotFound):
			p.log.ErrorContext(r.Context(), "reading the tenant's default language failed", "tenant", tenant, "err", err)
		}
	}
	if pl.tenant == tenant {
		pl.tenantLang, pl.tenantRead = lang, true
	}
	return lang
}

// pageLang is what the pages of a request know of its person's language: the tenant of its path
// and the ui_locales of its sign-in. A request's context carries one from route on, and the
// authorization endpoint fills in ui_locales once it has read the request.
type pageLang struct {
	tenant    string
	uiLocales string
	// tenantLang is the tenant's default language once tenantRead.
	tenantLang string
	tenantRead bool
}

type pageLangKey struct{}

// withPageLang returns r with pl in its context.
func withPageLang(r *http.Request, pl *pageLang) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), pageLangKey{}, pl))
}

// pageLangOf returns the pageLang of r; an empty one when it has none.
func pageLangOf(r *http.Request) *pageLang {
	if pl, ok := r.Context().Value(pageLangKey{}).(*pageLang); ok {
		return pl
	}
	return &pageLang{}
}

// pageTexts returns the texts of the provider's pages in the language of the person of r.
func (p *provider) pageTexts(r *http.Request) *pagetext.Texts {
	pl := pageLangOf(r)
	return p.texts.Match(p.preferences(r, pl.uiLocales, pl.tenant)...)
}

// uiLocalesSupported lists the languages of the pages for discovery (ui_locales_supported).
func (p *provider) uiLocalesSupported() []string {
	var out []string
	for _, tag := range p.texts.Languages() {
		out = append(out, tag.String())
	}
	return out
}

// knowTenantLanguage remembers for the request the default language of the tenant whose look
// was read, so that it is not read again.
func (p *provider) knowTenantLanguage(r *http.Request, look TenantLook) {
	if pl := pageLangOf(r); pl.tenant == look.ID {
		pl.tenantLang, pl.tenantRead = look.Language, true
	}
}
