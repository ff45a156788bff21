package oidc2fa

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
	"strings"
)

// The provider's own pages: the error page and the first page of an enrollment link. They look
// like an authenticator's pages (the picture login's), and every string of them is here.

// The headings of the error pages.
const (
	signInProblemTitle     = "This sign-in cannot be completed"
	enrollmentProblemTitle = "Your second factor was not set up"
)

// The texts of the error pages an enrollment ends with, when no application waits for the
// person.
const (
	enrollmentCancelledTitle = "Set-up cancelled"
	enrollmentCancelled      = "You cancelled setting up your second factor. Nothing was changed. You can close this page."
	enrollmentExpired        = "This set-up took too long and has expired. Nothing was changed. Ask for a new link."
	enrollmentUserGone       = "This account cannot set up a second factor. Ask your administrator."
	enrollmentClientGone     = "The application that sent you here is no longer registered. Nothing was changed."
	enrollmentLinkGone       = "This enrollment link was used already, has expired, or is not valid. Ask for a new one."
	enrollmentEndedText      = "This set-up has ended or expired. Go back to where you started and try again."
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
	csp := pageCSP
	if t.AccentStyle != "" {
		csp = withSource(csp, "style-src", StyleHashSource(string(t.AccentStyle)))
	}
	if t.Look.LogoURL != "" {
		csp = withSource(csp, "img-src", "'self'")
	}
	return csp
}

// withSource returns the Content-Security-Policy csp with source added to the end of its
// directive (which csp has), or the directive added before base-uri when it has not.
func withSource(csp, directive, source string) string {
	i := strings.Index(csp, directive+" ")
	if i < 0 {
		return strings.Replace(csp, "base-uri", directive+" "+source+"; base-uri", 1)
	}
	end := i + strings.IndexByte(csp[i:], ';')
	return csp[:end] + " " + source + csp[end:]
}

// tenantTemplates are the parts of the provider's pages that show the tenant's look, the same
// as the picture login's: "accent" in the head, "tenant" above the page's heading.
const tenantTemplates = `{{define "accent"}}{{with .AccentStyle}}<style>{{.}}</style>
{{end}}{{end}}{{define "tenant"}}{{with .Look}}{{if .LogoURL}}<p class="tenant"><img class="tenant-logo" src="{{.LogoURL}}" alt="{{.LogoAlt}}"></p>
{{else if .Name}}<p class="tenant tenant-name">{{.Name}}</p>
{{end}}{{end}}{{end}}`

// errorPageData is what errorPageTemplate reads: Message says in plain words what happened and
// what to do; Code is the OAuth error code, shown small for support.
type errorPageData struct {
	Title, Message, Code string
	Style                template.CSS
	tenantPage
}

var errorPageTemplate = template.Must(template.Must(template.New("error").Parse(tenantTemplates)).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}}</title>
<style>{{.Style}}</style>
{{template "accent" .}}</head>
<body>
<main class="page">
{{template "tenant" .}}<h1>{{.Title}}</h1>
<p class="lead">{{.Message}}</p>
{{with .Code}}<p class="support">Error code for support: <code>{{.}}</code></p>{{end}}
</main>
</body>
</html>
`))

// linkPageData is what linkPageTemplate reads.
type linkPageData struct {
	Client, Action string
	Style          template.CSS
	tenantPage
}

var linkPageTemplate = template.Must(template.Must(template.New("link").Parse(tenantTemplates)).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Set up your second factor</title>
<style>{{.Style}}</style>
{{template "accent" .}}</head>
<body>
<main class="page">
{{template "tenant" .}}<h1>Set up your second factor</h1>
<p class="lead">This link lets you set up the second factor of your account{{with .Client}} for {{.}}{{end}}. It works once, in this browser.</p>
<form method="post" action="{{.Action}}">
<div class="actions">
<button type="submit" class="button primary" id="continue">Continue</button>
</div>
</form>
</main>
</body>
</html>
`))
