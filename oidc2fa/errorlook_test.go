package oidc2fa_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/visid/visid/store"
)

// TestErrorPageTenantLook: the error page of a known tenant (a request naming an unknown
// client) shows the tenant's look, its name and accent colour, as its sign-in pages do; an
// unknown tenant's has visid's.
func TestErrorPageTenantLook(t *testing.T) {
	e := newEnv(t)
	e.setLook(func(tn *store.Tenant) { tn.DisplayName, tn.AccentColor = "Acme Corp", "#0b5d3b" })
	p := e.authParams()
	p.Set("client_id", "client_nope")
	rec := e.sendAuthorize("GET", "acme", p)
	requirePage(t, rec, http.StatusBadRequest)
	body := rec.Body.String()
	assert.Contains(t, body, "Acme Corp")
	assert.Contains(t, body, "#0b5d3b")
	requireStylesAllowed(t, rec.Header().Get("Content-Security-Policy"), body)

	rec = e.sendAuthorize("GET", "nobody", p)
	assert.NotContains(t, rec.Body.String(), "Acme Corp")
}

// TestErrorPageTenantIcon: a tenant's logo is the icon of its error page, allowed by the page's
// policy.
func TestErrorPageTenantIcon(t *testing.T) {
	e := newEnv(t)
	tn := e.setLook(func(tn *store.Tenant) { tn.DisplayName, tn.Logo = "Acme Corp", testLogo(t) })
	p := e.authParams()
	p.Set("client_id", "client_nope")
	rec := e.sendAuthorize("GET", "acme", p)
	requirePage(t, rec, http.StatusBadRequest)
	assert.Contains(t, rec.Body.String(), `<link rel="icon" href="/oidc`+logoPath(tn)+`">`)
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "img-src 'self'")
}
