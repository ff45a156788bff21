package picture_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"html"
	"image"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// setLook gives tenant acme a display name, a logo and an accent colour, and returns the
// tenant as stored.
func (e *env) setLook() *store.Tenant {
	e.t.Helper()
	var logo bytes.Buffer
	require.NoError(e.t, png.Encode(&logo, image.NewRGBA(image.Rect(0, 0, 8, 4))))
	tn, err := e.b.Tenants.Update(context.Background(), "acme", func(tn *store.Tenant) error {
		tn.DisplayName, tn.Logo, tn.AccentColor = "Acme Corp", logo.Bytes(), "#0b5d3b"
		return nil
	})
	require.NoError(e.t, err)
	return tn
}

// requireLook checks that page pg of the tenant tn shows its logo, named by its name, which the
// browser b can load from the provider, and its accent colour in a style sheet that the page's
// policy allows by its hash, with no style attribute.
func requireLook(t *testing.T, e *env, b *browser, tn *store.Tenant, pg *page) {
	t.Helper()
	logoURL := "/oidc/logo/acme/" + hex.EncodeToString(tn.LogoHash[:16])
	assert.Contains(t, pg.body, `<p class="tenant"><img class="tenant-logo" src="`+logoURL+`" alt="Acme Corp"></p>`)
	logo := b.get(e.srv.URL + logoURL)
	require.Equal(t, http.StatusOK, logo.status)
	assert.Equal(t, "image/png", logo.header.Get("Content-Type"))
	assert.Equal(t, string(tn.Logo), logo.body)

	accent := oidc2fa.TenantLook{AccentColor: "#0b5d3b"}.AccentCSS()
	assert.Contains(t, pg.body, "<style>"+accent+"</style>")
	csp := pg.header.Get("Content-Security-Policy")
	for _, m := range regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(pg.body, -1) {
		sum := sha256.Sum256([]byte(m[1]))
		assert.Contains(t, csp, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	assert.Contains(t, csp, "img-src 'self'")
	assert.NotContains(t, csp, "unsafe")
	assert.NotRegexp(t, `\sstyle=`, pg.body, "no style attribute")
}

// TestLoginPageShowsTenantLook: the login page shows the tenant's logo and accent colour; the
// policy is the pages' own plus the accent style sheet's hash.
func TestLoginPageShowsTenantLook(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	_, plain := e.login(b, "ann")
	assert.NotContains(t, plain.body, `class="tenant`, "visid's look: no tenant heading")
	assert.NotContains(t, plain.body, "--accent:#")
	basePolicy := plain.header.Get("Content-Security-Policy")

	tn := e.setLook()
	b = e.browser()
	_, pg := e.login(b, "ann")
	requireLook(t, e, b, tn, pg)
	assert.Equal(t, "default-src 'none'; script-src 'self'; style-src 'self' "+oidc2fa.StyleHashSource(oidc2fa.TenantLook{AccentColor: "#0b5d3b"}.AccentCSS())+
		"; img-src 'self'; base-uri 'none'; frame-ancestors 'none'", pg.header.Get("Content-Security-Policy"))
	assert.Equal(t, "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'", basePolicy)

	// A tenant with a name and no logo has its name as the heading.
	_, err := e.b.Tenants.Update(context.Background(), "acme", func(tn *store.Tenant) error { tn.Logo = nil; return nil })
	require.NoError(t, err)
	_, pg = e.login(e.browser(), "ann")
	assert.Contains(t, pg.body, `<p class="tenant tenant-name">Acme Corp</p>`)
	assert.NotContains(t, pg.body, "tenant-logo")
}

// TestEnrollPagesShowTenantLook: the enrollment page and the page an administrator's enrollment
// ends on (whose style sheet is inline) show the tenant's look, and every file they name loads.
func TestEnrollPagesShowTenantLook(t *testing.T) {
	e := newEnv(t)
	tn := e.setLook()
	b, enrollURL, pg := e.openEnrollment(oidc2fa.EnrollmentRequest{User: "carol"})
	requireLook(t, e, b, tn, pg)

	done := b.post(enrollURL, enrollForm(pg, t, "farm", newPoints, newPoints))
	require.Equal(t, http.StatusOK, done.status, done.body)
	assert.Contains(t, done.body, "<h1>Picture password ready</h1>")
	requireLook(t, e, b, tn, done)
	base, err := url.Parse(enrollURL)
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`(?:href|src)="([^"]+)"`).FindAllStringSubmatch(done.body, -1) {
		u, err := base.Parse(html.UnescapeString(m[1]))
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, b.get(u.String()).status, "GET %s", u)
	}
}
