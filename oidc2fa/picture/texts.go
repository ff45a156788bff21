package picture

import (
	"embed"
	"maps"

	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/oidc2fa"
)

// The picture login's pages ship in English, German, French, Spanish and Japanese, one file of
// texts per language; every sentence of the pages, picture.js's included, is there. A page
// speaks the language that best matches the person's (oidc2fa.Login.Languages,
// oidc2fa.Enrollment.Languages) and says which in <html lang>.
//
//go:embed texts/*.json
var textFS embed.FS

// imageTitleKey begins the message key of an image's title: "image.harbour" is the title of the
// image named harbour. An image without one in a language is shown with Image.Title.
const imageTitleKey = "image."

// BuiltinCatalogs returns the texts of the picture login's pages in every built-in language,
// English first: the keys a Catalog of Config.Languages may give. Besides them, a catalog may
// give the title of any image of Config.Images as "image.<name>". Each call returns new maps.
func BuiltinCatalogs() []oidc2fa.Catalog {
	langs, err := pagetext.LoadDir(textFS, "texts")
	if err != nil {
		panic("picture: the built-in texts do not load: " + err.Error()) // embedded at build time
	}
	out := make([]oidc2fa.Catalog, len(langs))
	for i, l := range langs {
		out[i] = oidc2fa.Catalog{Language: l.Tag, Messages: maps.Clone(l.Messages)}
	}
	return out
}

// newTextSet is the set of the built-in languages with the host's catalogs added.
func newTextSet(host []oidc2fa.Catalog) (*pagetext.Set, error) {
	builtin, err := pagetext.LoadDir(textFS, "texts")
	if err != nil {
		return nil, err
	}
	extra := make([]pagetext.Lang, len(host))
	for i, c := range host {
		extra[i] = pagetext.Lang{Tag: c.Language, Messages: c.Messages}
	}
	return pagetext.NewSet(builtin, extra, "picture: Config.Languages", imageTitleKey)
}

// imageTitle is the title of im in the language of t.
func imageTitle(t *pagetext.Texts, im *image) string {
	if key := imageTitleKey + im.Name; t.Has(key) {
		return t.Text(key)
	}
	return im.Title
}
