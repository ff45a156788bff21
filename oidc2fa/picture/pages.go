package picture

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"strconv"

	"github.com/visid/visid/internal/csp"
	"github.com/visid/visid/internal/pagetext"
	"github.com/visid/visid/oidc2fa"
)

//go:embed assets
var assetsFS embed.FS

var pages = template.Must(template.New("pages.html").Funcs(template.FuncMap{"passkeyOf": passkeyOf}).
	ParseFS(assetsFS, "assets/pages.html"))

// passkeySection is what the template "passkey" reads: the page, which ceremony (kind "login"
// or "enroll"), and whether the passkey is the page's only way through.
type passkeySection struct {
	D     *pageData
	Kind  string
	Alone bool
}

func passkeyOf(d *pageData, kind string, alone bool) passkeySection {
	return passkeySection{D: d, Kind: kind, Alone: alone}
}

// The static files the pages load, below a page's path.
const (
	scriptPath        = "static/picture.js"
	stylePath         = "static/picture.css"
	passkeyScriptPath = "static/passkey.js"
)

// The passkey ceremony's paths below a page's path: POST passkeyOptionsPath answers the options
// of a fresh challenge (JSON), POST passkeyPath the browser's answer (form field "credential").
const (
	passkeyOptionsPath = "passkey/options"
	passkeyPath        = "passkey"
)

// contentSecurityPolicy allows the pages nothing but their own script, style sheet and images.
// It has no form-action: a browser applies form-action to the redirect that follows a POST,
// and the last POST of a login redirects to the client.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"base-uri 'none'; frame-ancestors 'none'"

// The style sheet, for a page that must carry it inline: the page after an enrollment without
// an application to return to is served after the enrollment has ended, when the files below its
// path are gone with it.
var (
	inlineStyle    = template.CSS(mustAsset("assets/picture.css"))
	inlineStyleCSP = func() string {
		sum := sha256.Sum256([]byte(inlineStyle))
		return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
			"base-uri 'none'; frame-ancestors 'none'"
	}()
)

func mustAsset(name string) string {
	data, err := assetsFS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// pageData is what the templates of assets/pages.html read.
type pageData struct {
	// T is the texts of the page's language; render fills in ScriptText from it.
	T          *pagetext.Texts
	ScriptText map[string]any
	Title      string
	ClientName string
	StyleURL   string
	ScriptURL  string
	// InlineStyle is the style sheet in the page, for a page that cannot load StyleURL.
	InlineStyle template.CSS
	// Tenant is the look of the tenant, and AccentStyle the style sheet of its accent colour
	// (Tenant.AccentCSS), in a <style> element of its own that the page's policy allows by
	// its hash.
	Tenant      oidc2fa.TenantLook
	AccentStyle template.CSS
	CSRF        string
	Message     string
	Points      int
	Tolerance   int

	// login
	Action       string
	ImageURL     string
	ImageTitle   string
	CancelAction string

	// enroll
	Images   []imageChoice
	Selected string

	// passkey: the page offers one (the tenant allows it); its script, where it asks for the
	// options of a challenge, and where it posts the browser's answer.
	Passkey          bool
	PasskeyScriptURL string
	PasskeyOptions   string
	PasskeyAction    string
}

// withPasskey makes the page offer a passkey.
func (d *pageData) withPasskey(script, options, action string) *pageData {
	d.Passkey, d.PasskeyScriptURL, d.PasskeyOptions, d.PasskeyAction = true, script, options, action
	return d
}

type imageChoice struct {
	Name, Title, URL string
}

// pageHeaders are the headers of every page and file the picture login serves.
func pageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
}

// withTenant sets the page's tenant look: its heading and its accent colour.
func (d *pageData) withTenant(look oidc2fa.TenantLook) *pageData {
	d.Tenant, d.AccentStyle = look, template.CSS(look.AccentCSS())
	return d
}

// pageCSP is the Content-Security-Policy of page d: contentSecurityPolicy, or inlineStyleCSP
// for a page with its style sheet inline, allowing also the tenant's accent style sheet by its
// hash, and for an inline-styled page the tenant's logo, which is on the provider's origin.
func pageCSP(d *pageData) string {
	policy := contentSecurityPolicy
	if d.InlineStyle != "" {
		policy = inlineStyleCSP
		if d.Tenant.LogoURL != "" {
			policy = csp.WithSource(policy, "img-src", "'self'")
		}
	}
	if d.AccentStyle != "" {
		policy = csp.WithSource(policy, "style-src", oidc2fa.StyleHashSource(string(d.AccentStyle)))
	}
	if d.Passkey {
		// passkey.js asks the provider for a challenge's options.
		policy = csp.WithSource(policy, "connect-src", "'self'")
	}
	return policy
}

// render writes the page name with status. It renders into a buffer first, so a template error
// is a 500 and never half a page.
func (a *Authenticator) render(w http.ResponseWriter, r *http.Request, status int, name string, d *pageData) {
	d.ScriptText = d.T.Script("script.")
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, d); err != nil {
		a.log.ErrorContext(r.Context(), "rendering a picture login page failed", "page", name, "err", err)
		http.Error(w, "internal server error", http.StatusInternalServerError)
		return
	}
	pageHeaders(w.Header())
	w.Header().Set("Content-Security-Policy", pageCSP(d))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Language", d.T.Lang())
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// serveStatic answers a GET of a static file below a page's path; it reports whether rest named
// one.
func serveStatic(w http.ResponseWriter, r *http.Request, rest string) bool {
	var file, ctype string
	switch rest {
	case scriptPath:
		file, ctype = "assets/picture.js", "text/javascript; charset=utf-8"
	case stylePath:
		file, ctype = "assets/picture.css", "text/css; charset=utf-8"
	case passkeyScriptPath:
		file, ctype = "assets/passkey.js", "text/javascript; charset=utf-8"
	default:
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return true
	}
	data, _ := assetsFS.ReadFile(file) // embedded: always there
	writeFile(w, r, ctype, data, contentSecurityPolicy)
	return true
}

// writeFile answers with a static file or an image, under the content security policy csp.
func writeFile(w http.ResponseWriter, r *http.Request, ctype string, data []byte, csp string) {
	pageHeaders(w.Header())
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(data)
}

// serveImage answers a GET of an image.
func serveImage(w http.ResponseWriter, r *http.Request, im *image) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// An SVG opened on its own is a document: it may run nothing.
	writeFile(w, r, im.ContentType, im.Data, "default-src 'none'; style-src 'unsafe-inline'; sandbox")
}
