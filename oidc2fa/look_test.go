package oidc2fa_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"image"
	"image/jpeg"
	"image/png"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/oidc2fa/authtest"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// testLogo is a small PNG.
func testLogo(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 6, 3))))
	return buf.Bytes()
}

const testSVGLogo = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 2"><rect width="4" height="2" fill="#0b5d3b"/></svg>`

// setLook sets tenant acme's look and returns it as stored.
func (e *env) setLook(fn func(*store.Tenant)) *store.Tenant {
	e.t.Helper()
	tn, err := e.mem.Tenants().Update(context.Background(), "acme", func(tn *store.Tenant) error { fn(tn); return nil })
	require.NoError(e.t, err)
	return tn
}

// logoPath is the path of tn's logo relative to the handler, and its version.
func logoPath(tn *store.Tenant) string {
	return "/logo/" + tn.ID + "/" + hex.EncodeToString(tn.LogoHash[:16])
}

// requireStylesAllowed checks that every inline style sheet of a page is allowed by its
// Content-Security-Policy, by hash, and that the page has no style attribute.
func requireStylesAllowed(t *testing.T, csp, body string) {
	t.Helper()
	styles := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(body, -1)
	require.NotEmpty(t, styles)
	for _, m := range styles {
		sum := sha256.Sum256([]byte(m[1]))
		assert.Contains(t, csp, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", "style %q", m[1])
	}
	assert.NotRegexp(t, `\sstyle=`, body, "no style attribute")
}

// TestLogoRoute: GET and HEAD of a tenant's logo answer it with its type, a strong ETag, a
// year's immutable caching, nosniff and a sandboxing policy; a conditional GET is 304; a tenant
// without a logo, an unknown tenant and an old or malformed version are 404.
// The same on memstore, SQLite and PostgreSQL.
func TestLogoRoute(t *testing.T) {
	for _, bk := range []struct {
		name string
		open func(t *testing.T) store.Backend
	}{
		{"memstore", func(*testing.T) store.Backend { return memstore.New().Backend() }},
		{"sqlite", func(t *testing.T) store.Backend {
			return openSQLBackend(t, "sqlite:"+filepath.Join(t.TempDir(), "visid.db"))
		}},
		{"postgres", func(t *testing.T) store.Backend { return openSQLBackend(t, postgresDSN(t)) }},
	} {
		t.Run(bk.name, func(t *testing.T) { logoRoute(t, bk.open(t)) })
	}
}

func logoRoute(t *testing.T, b store.Backend) {
	ctx := context.Background()
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "globex"}))
	keys, err := oidc2fa.NewKeyRing(oidc2fa.KeyRingConfig{})
	require.NoError(t, err)
	handler, err := oidc2fa.New(oidc2fa.Config{
		Tenants: b.Tenants, Users: b.Users, Clients: b.Clients, Codes: b.Codes, Interactions: b.Interactions,
		Authenticator: &authtest.Authenticator{}, Signer: keys, BaseURL: testBase,
		Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	e := struct{ handler http.Handler }{handler}
	setLook := func(fn func(*store.Tenant)) *store.Tenant {
		t.Helper()
		tn, err := b.Tenants.Update(ctx, "acme", func(tn *store.Tenant) error { fn(tn); return nil })
		require.NoError(t, err)
		return tn
	}
	logo := testLogo(t)
	tn := setLook(func(tn *store.Tenant) { tn.Logo = logo })
	sum := sha256.Sum256(logo)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`

	rec := httpRecord(e.handler, "GET", logoPath(tn))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, logo, rec.Body.Bytes())
	h := rec.Header()
	assert.Equal(t, "image/png", h.Get("Content-Type"))
	assert.Equal(t, etag, h.Get("ETag"))
	assert.Equal(t, "public, max-age=31536000, immutable", h.Get("Cache-Control"))
	assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	assert.Equal(t, "default-src 'none'; style-src 'unsafe-inline'; sandbox", h.Get("Content-Security-Policy"))
	assert.Equal(t, "same-origin", h.Get("Cross-Origin-Resource-Policy"))
	assert.Equal(t, strconv.Itoa(len(logo)), h.Get("Content-Length"))

	head := httpRecord(e.handler, "HEAD", logoPath(tn))
	assert.Equal(t, http.StatusOK, head.Code)
	assert.Empty(t, head.Body.Bytes())
	assert.Equal(t, "image/png", head.Header().Get("Content-Type"))
	assert.Equal(t, etag, head.Header().Get("ETag"))

	req := httptest.NewRequest("GET", logoPath(tn), nil)
	req.Header.Set("If-None-Match", etag)
	cond := httptest.NewRecorder()
	e.handler.ServeHTTP(cond, req)
	assert.Equal(t, http.StatusNotModified, cond.Code)
	assert.Empty(t, cond.Body.Bytes())

	post := httpRecord(e.handler, "POST", logoPath(tn))
	assert.Equal(t, http.StatusMethodNotAllowed, post.Code)
	assert.Equal(t, "GET, HEAD", post.Header().Get("Allow"))

	// A new logo has a new URL; the old one is gone.
	svg := setLook(func(tn *store.Tenant) { tn.Logo = []byte(testSVGLogo) })
	require.NotEqual(t, logoPath(tn), logoPath(svg))
	rec = httpRecord(e.handler, "GET", logoPath(svg))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "image/svg+xml", rec.Header().Get("Content-Type"))
	assert.Equal(t, "default-src 'none'; style-src 'unsafe-inline'; sandbox", rec.Header().Get("Content-Security-Policy"),
		"an SVG opened on its own runs nothing")
	assert.Equal(t, testSVGLogo, rec.Body.String())

	var jpg bytes.Buffer
	require.NoError(t, jpeg.Encode(&jpg, image.NewRGBA(image.Rect(0, 0, 2, 2)), nil))
	j := setLook(func(tn *store.Tenant) { tn.Logo = jpg.Bytes() })
	assert.Equal(t, "image/jpeg", httpRecord(e.handler, "GET", logoPath(j)).Header().Get("Content-Type"))
	webp := []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")
	w := setLook(func(tn *store.Tenant) { tn.Logo = webp })
	assert.Equal(t, "image/webp", httpRecord(e.handler, "GET", logoPath(w)).Header().Get("Content-Type"))

	for name, path := range map[string]string{
		"old version":       logoPath(tn),
		"no logo":           "/logo/globex/" + strings.Repeat("0", 32),
		"unknown tenant":    "/logo/nosuch/" + strings.Repeat("0", 32),
		"bad tenant id":     "/logo/ACME/" + logoPath(w)[len("/logo/acme/"):],
		"short version":     logoPath(w)[:len(logoPath(w))-1],
		"full hash version": "/logo/acme/" + hex.EncodeToString(w.LogoHash[:]),
		"no version":        "/logo/acme",
	} {
		rec := httpRecord(e.handler, "GET", path)
		assert.Equal(t, http.StatusNotFound, rec.Code, name)
		assert.NotEqual(t, "public, max-age=31536000, immutable", rec.Header().Get("Cache-Control"), "%s: a 404 is not cached for long", name)
		assert.NotContains(t, rec.Header().Get("Content-Type"), "image/", name)
	}
	setLook(func(tn *store.Tenant) { tn.Logo = nil })
	assert.Equal(t, http.StatusNotFound, httpRecord(e.handler, "GET", logoPath(w)).Code, "a removed logo")
}

// TestTenantLookAccentCSS: the accent style sheet sets the pages' custom properties, with a
// darker hover colour; visid's look and a colour that is not AA have none.
func TestTenantLookAccentCSS(t *testing.T) {
	assert.Equal(t, ":root{--accent:#0b5d3b;--accent-dark:#084a2f;--accent-soft:rgba(11,93,59,0.28)}",
		oidc2fa.TenantLook{AccentColor: "#0B5D3B"}.AccentCSS())
	assert.Empty(t, oidc2fa.TenantLook{}.AccentCSS())
	assert.Empty(t, oidc2fa.TenantLook{AccentColor: "#eeeeee"}.AccentCSS(), "a colour the store would refuse")
	assert.Equal(t, "Acme", oidc2fa.TenantLook{ID: "acme", Name: "Acme"}.LogoAlt())
	assert.Equal(t, "acme", oidc2fa.TenantLook{ID: "acme"}.LogoAlt())
	sum := sha256.Sum256([]byte("a{}"))
	assert.Equal(t, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", oidc2fa.StyleHashSource("a{}"))
}

// TestLinkPageShowsTenantLook: the first page of an enrollment link and the page an
// administrator's enrollment ends on show the tenant's logo, named by its display name, and its
// accent colour, in a style sheet the page's policy allows by hash; the policy allows images of
// the provider's origin only, and nothing else that it did not allow before.
func TestLinkPageShowsTenantLook(t *testing.T) {
	e := newEnrollEnv(t)
	tn := e.setLook(func(tn *store.Tenant) {
		tn.DisplayName, tn.Logo, tn.AccentColor = `Acme & "Sons"`, testLogo(t), "#0b5d3b"
	})
	logoURL := "/oidc" + logoPath(tn)
	link := e.adminLink()

	b := e.browser()
	rec := b.do("GET", link, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	body, csp := rec.Body.String(), rec.Header().Get("Content-Security-Policy")
	assert.Contains(t, body, `<p class="tenant"><img class="tenant-logo" src="`+logoURL+`" alt="Acme &amp; &#34;Sons&#34;"></p>`)
	assert.Contains(t, body, "<style>:root{--accent:#0b5d3b;")
	requireStylesAllowed(t, csp, body)
	assert.Contains(t, csp, "img-src 'self';")
	assert.NotContains(t, csp, "unsafe")
	assert.Regexp(t, `^default-src 'none'; style-src 'sha256-[^ ]+' 'sha256-[^ ]+'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'$`, csp)

	// The administrator's enrollment cancelled: its last page has the look too.
	path, page := b.openLink(link)
	end := b.decide(path, csrfToken(t, page), "cancel")
	requirePage(t, end, http.StatusOK)
	assert.Contains(t, end.Body.String(), `src="`+logoURL+`"`)
	assert.Contains(t, end.Body.String(), "<h1>Set-up cancelled</h1>")
	requireStylesAllowed(t, end.Header().Get("Content-Security-Policy"), end.Body.String())

	// A name without a logo is the heading; visid's look has neither, and the policy it had.
	e.setLook(func(tn *store.Tenant) { tn.Logo, tn.AccentColor = nil, "" })
	rec = e.browser().do("GET", e.adminLink(), nil)
	assert.Contains(t, rec.Body.String(), `<p class="tenant tenant-name">Acme &amp; &#34;Sons&#34;</p>`)
	assert.NotContains(t, rec.Body.String(), "<img")
	assert.NotContains(t, rec.Header().Get("Content-Security-Policy"), "img-src")
	e.setLook(func(tn *store.Tenant) { tn.DisplayName = "" })
	rec = e.browser().do("GET", e.adminLink(), nil)
	assert.NotContains(t, rec.Body.String(), `class="tenant`)
	assert.Regexp(t, `^default-src 'none'; style-src 'sha256-[^ ]+'; base-uri`, rec.Header().Get("Content-Security-Policy"))
}
