package oidc2fa

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"

	"github.com/visid/visid/internal/csp"
	"github.com/visid/visid/internal/pagetext"
)

// The provider's own pages: the error page and the first page of an enrollment link. They look
// like an authenticator's pages (the picture login's); every string of them is a message of
// texts/*.json, in the person's language.

// The headings of the error pages, as message keys of texts/*.json.
const (
	signInProblemTitle       = "error.title.signin"
	enrollmentProblemTitle   = "error.title.enrollment"
	enrollmentCancelledTitle = "error.title.cancelled"
)

// pages.css is the style sheet of the provider's pages, inlined in each page and allowed by its
// hash, so that a page whose interaction has ended still has its look.
//
//go:embed pages.css
var pageStyleText string

var (
	pageStyle = template.CSS(pageStyleText)
	// pageCSP allows a page nothing but its own inline style sheet and forms to this origin.
	pageCSP = func() string {
		sum := sha256.Sum256([]byte(pageStyleText))
		return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; " +
			"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	}()
)

// tenantPage is what a page of the provider shows of the tenant's look: the tenant's heading
// (its logo, or its name) and its accent colour.
type tenantPage struct {
	Look TenantLook
	// AccentStyle is Look.AccentCSS(), in a <style> element of its own.
	AccentStyle template.CSS
}

func newTenantPage(l TenantLook) tenantPage {
	return tenantPage{Look: l, AccentStyle: template.CSS(l.AccentCSS())}
}

// csp is pageCSP, allowing also the tenant's accent style sheet (by its hash) and its logo
// (img-src 'self': the logo is served from the provider's origin).
func (t tenantPage) csp() string {
	policy := pageCSP
	if t.AccentStyle != "" {
		policy = csp.WithSource(policy, "style-src", StyleHashSource(string(t.AccentStyle)))
	}
	if t.Look.LogoURL != "" {
		policy = csp.WithSource(policy, "img-src", "'self'")
	}
	return policy
}

// tenantTemplates are the parts of the provider's pages that show the tenant's look, the same
// as the picture login's: "accent" in the head (with the tenant's logo as the page's icon),
// "tenant" above the page's heading.
const tenantTemplates = `{{define "accent"}}{{with .AccentStyle}}<style>{{.}}</style>
{{end}}{{with .Look.LogoURL}}<link rel="icon" href="{{.}}">
{{end}}{{end}}{{define "tenant"}}{{with .Look}}{{if .LogoURL}}<p class="tenant"><img class="tenant-logo" src="{{.LogoURL}}" alt="{{.LogoAlt}}"></p>
{{else if .Name}}<p class="tenant tenant-name">{{.Name}}</p>
{{end}}{{end}}{{end}}`

// errorPageData is what errorPageTemplate reads: Title and Message are message keys, Message
// says in plain words what happened and what to do; Code is the OAuth error code, shown small
// for support.
type errorPageData struct {
	T                    *pagetext.Texts
	Title, Message, Code string
	Style                template.CSS
	tenantPage
}

var errorPageTemplate = template.Must(template.Must(template.New("error").Parse(tenantTemplates)).Parse(`<!doctype html>
<html lang="{{.T.Lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.T.Text .Title}}</title>
<style>{{.Style}}</style>
{{template "accent" .}}</head>
<body>
<main class="page">
{{template "tenant" .}}<h1>{{.T.Text .Title}}</h1>
<p class="lead">{{.T.Text .Message}}</p>
{{with .Code}}<p class="support">{{$.T.Text "error.support"}} <code>{{.}}</code></p>{{end}}
</main>
</body>
</html>
`))

// linkPageData is what linkPageTemplate reads.
type linkPageData struct {
	T              *pagetext.Texts
	Client, Action string
	Style          template.CSS
	tenantPage
}

var linkPageTemplate = template.Must(template.Must(template.New("link").Parse(tenantTemplates)).Parse(`<!doctype html>
<html lang="{{.T.Lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.T.Text "link.title"}}</title>
<style>{{.Style}}</style>
{{template "accent" .}}</head>
<body>
<main class="page">
{{template "tenant" .}}<h1>{{.T.Text "link.title"}}</h1>
<p class="lead">{{if .Client}}{{.T.Text "link.lead.client" "client" .Client}}{{else}}{{.T.Text "link.lead"}}{{end}}</p>
<form method="post" action="{{.Action}}">
<div class="actions">
<button type="submit" class="button primary" id="continue">{{.T.Text "link.continue"}}</button>
</div>
</form>
</main>
</body>
</html>
`))
