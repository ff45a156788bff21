package main

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"
)

// startPageTemplate is the page at / : in demo mode where the demo tenant's APIs are, outside
// it how many tenants there are (and, with none, where to begin); then where any tenant's are.
// It names no tenant but demo, so it tells a visitor little about the store.
const startPageTemplate = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>visid identity service</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
code { font-size: 0.95em; word-break: break-all; }
dt { font-weight: 600; margin-top: 0.75rem; }
</style>
</head>
<body>
<main>
<h1>visid identity service</h1>
<p>This service is an OpenID provider for a second factor (a picture password) and a SCIM 2.0
API, for each of its tenants. There is nothing to sign in to here: applications send people to
it.</p>
{{if .Demo}}<h2>Tenant {{.Tenant}}</h2>
<dl>
<dt>OpenID discovery</dt>
<dd><a href="{{.Discovery}}"><code>{{.Discovery}}</code></a></dd>
<dt>Issuer</dt>
<dd><code>{{.Issuer}}</code></dd>
<dt>SCIM base URL (the "Tenant URL" of Microsoft Entra ID, the "SCIM connector base URL" of Okta)</dt>
<dd><code>{{.SCIM}}</code> (requests need <code>Authorization: Bearer</code> and an API key)</dd>
</dl>
{{else}}<h2>Tenants</h2>
{{if .Count}}<p>The service has {{.Count}} {{if eq .Count 1}}tenant{{else}}tenants{{end}}.</p>{{else}}<p>The service has no tenant yet. An
operator makes the first, its SCIM API key and its OpenID client with <code>idp tenant create</code>,
<code>idp apikey create</code> and <code>idp client create</code>, as the service's start message
shows.</p>{{end}}
{{end}}<h2>Any tenant</h2>
<p>For a tenant <var>T</var>: <code>{{.Base}}/oidc/<var>T</var>/.well-known/openid-configuration</code>
and <code>{{.Base}}/scim/v2/<var>T</var></code>. An operator lists the tenants with
<code>idp tenant list</code>.</p>
</main>
</body>
</html>
`

// startPage is the handler of / : a page that shows where the demo tenant's discovery document
// and SCIM API are, under baseURL.
func startPage(baseURL string) http.Handler {
	var buf bytes.Buffer
	iss := issuer(baseURL, demoTenant)
	tmpl, err := template.New("start").Parse(startPageTemplate)
	if err != nil {
		return pageError(err)
	}
	err = tmpl.Execute(&buf, map[string]any{
		"Demo":      true,
		"Tenant":    demoTenant,
		"Base":      baseURL,
		"Issuer":    iss,
		"Discovery": iss + "/.well-known/openid-configuration",
		"SCIM":      scimBaseURL(baseURL, demoTenant),
	})
	if err != nil {
		return pageError(err)
	}
	page := buf.Bytes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeStartPage(w, page) })
}

// pageError answers every request with a 500 that says nothing of err: a start page whose fixed
// template failed, which a test would have caught.
func pageError(err error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "internal server error", http.StatusInternalServerError)
	})
}

// startPage is the handler of / : startPage(baseURL) in demo mode; outside it, a page that
// counts the tenants on each request (a count, never a list) and names no tenant.
func (s *services) startPage() http.Handler {
	if s.demo {
		return startPage(s.baseURL)
	}
	tmpl, err := template.New("start").Parse(startPageTemplate)
	if err != nil {
		return pageError(err)
	}
	tenants := s.oidcConfig.Tenants
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := tenants.Count(r.Context())
		if err != nil {
			http.Error(w, "The service cannot read its store; try again shortly.", http.StatusServiceUnavailable)
			return
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, map[string]any{"Base": s.baseURL, "Count": n}); err != nil {
			http.Error(w, "internal server error", http.StatusInternalServerError)
			return
		}
		writeStartPage(w, buf.Bytes())
	})
}

// writeStartPage writes the start page, page, with its headers.
func writeStartPage(w http.ResponseWriter, page []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(page)))
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(page)
}
