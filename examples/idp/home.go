package main

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"
)

// startPageTemplate is the page at / : where the demo tenant's APIs are, and where any tenant's
// are. It names no tenant but demo, so it tells a visitor nothing about the store.
const startPageTemplate = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>visid identity service</title>
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
<h2>Tenant {{.Tenant}}</h2>
<dl>
<dt>OpenID discovery</dt>
<dd><a href="{{.Discovery}}"><code>{{.Discovery}}</code></a></dd>
<dt>Issuer</dt>
<dd><code>{{.Issuer}}</code></dd>
<dt>SCIM base URL (the "Tenant URL" of Microsoft Entra ID, the "SCIM connector base URL" of Okta)</dt>
<dd><code>{{.SCIM}}</code> (requests need <code>Authorization: Bearer</code> and an API key)</dd>
</dl>
<h2>Any tenant</h2>
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
	err = tmpl.Execute(&buf, map[string]string{
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
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(page)
	})
}

// pageError answers every request with a 500 that says nothing of err: a start page whose fixed
// template failed, which a test would have caught.
func pageError(err error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "internal server error", http.StatusInternalServerError)
	})
}
