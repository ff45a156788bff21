package oidc2fa

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/visid/visid/store"
)

// TenantLook is how a tenant's sign-in and enrollment pages look: what the tenant set with
// store.Tenants.Update (idp tenant set), ready for a page. Its zero value is visid's own look.
type TenantLook struct {
	// ID is the tenant's id.
	ID string
	// Name is the tenant's display name; "" when it has none.
	Name string
	// LogoURL is the path of the tenant's logo on the provider's own origin (so a page's
	// Content-Security-Policy needs no more than img-src 'self'), or "" when it has none. The
	// path changes with the logo, so a browser that cached the old one sees the new one at once.
	LogoURL string
	// AccentColor is the colour of the pages' buttons and focus rings, "#rrggbb" (checked with
	// store.CheckAccentColor), or "" for visid's own.
	AccentColor string
	// Language is the tenant's default language, a BCP 47 tag, or "": the language of its
	// pages when the browser asks for none the pages have.
	Language string
}

// LogoAlt is the text alternative of the tenant's logo: its display name, or its id when it has
// none.
func (l TenantLook) LogoAlt() string {
	if l.Name != "" {
		return l.Name
	}
	return l.ID
}

// AccentCSS returns a style sheet that gives a page the tenant's accent colour, through the
// custom properties the pages' style sheets use (--accent, --accent-dark for hovered buttons,
// --accent-soft for glows), or "" when the tenant keeps visid's colour. A page carries it in a
// <style> element of its own, allowed by its hash (StyleHashSource): inline style attributes
// stay forbidden.
func (l TenantLook) AccentCSS() string {
	c, err := store.CheckAccentColor(l.AccentColor)
	if err != nil || c == "" {
		return ""
	}
	r, _ := strconv.ParseUint(c[1:3], 16, 8)
	g, _ := strconv.ParseUint(c[3:5], 16, 8)
	b, _ := strconv.ParseUint(c[5:7], 16, 8)
	// The hover colour is the accent 20% darker: its contrast with the button text only grows.
	dark := func(v uint64) uint64 { return v * 4 / 5 }
	return fmt.Sprintf(":root{--accent:%s;--accent-dark:#%02x%02x%02x;--accent-soft:rgba(%d,%d,%d,0.28)}",
		c, dark(r), dark(g), dark(b), r, g, b)
}

// StyleHashSource is the Content-Security-Policy source ('sha256-…') that allows an inline
// <style> element whose text is css.
func StyleHashSource(css string) string {
	sum := sha256.Sum256([]byte(css))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// logoVersion is the part of a logo's URL that changes with the logo: the first 16 bytes of
// its SHA-256, in hex.
func logoVersion(t *store.Tenant) string { return hex.EncodeToString(t.LogoHash[:16]) }

// lookOf is the look of tenant t.
func (p *provider) lookOf(t *store.Tenant) TenantLook {
	l := TenantLook{ID: t.ID, Name: t.DisplayName, AccentColor: t.AccentColor, Language: t.DefaultLanguage}
	if len(t.Logo) > 0 {
		l.LogoURL = p.basePath + "/logo/" + t.ID + "/" + logoVersion(t)
	}
	return l
}

// look reads the look of tenant; a tenant that is gone has visid's.
func (p *provider) look(ctx context.Context, tenant string) (TenantLook, error) {
	t, err := p.tenant(ctx, tenant)
	if err != nil {
		return TenantLook{}, err
	}
	return p.lookOf(t), nil
}

// tenant reads tenant; one that is gone reads as a tenant of that id with nothing set (visid's
// look, the picture password alone).
func (p *provider) tenant(ctx context.Context, tenant string) (*store.Tenant, error) {
	t, err := p.cfg.Tenants.Get(ctx, tenant)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &store.Tenant{ID: tenant}, nil
	case err != nil:
		return nil, err
	}
	return t, nil
}

// logoCSP is the Content-Security-Policy of a logo: an SVG opened on its own is a document, and
// it may run nothing and load nothing.
const logoCSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

// logo serves GET and HEAD of /logo/{tenant}/{version}: the tenant's logo, with the media type
// the store found in its bytes, a strong ETag, and a year's caching (the URL changes with the
// logo). A tenant without a logo, and a version that is not the logo's now, is 404.
func (p *provider) logo(w http.ResponseWriter, r *http.Request, tenant, version string) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	notFound := func() {
		h.Set("Cache-Control", "no-cache")
		http.Error(w, "not found", http.StatusNotFound)
	}
	if !store.ValidTenantID(tenant) || len(version) != 32 {
		notFound()
		return
	}
	t, err := p.cfg.Tenants.Get(r.Context(), tenant)
	switch {
	case errors.Is(err, store.ErrNotFound):
		notFound()
		return
	case err != nil:
		p.log.ErrorContext(r.Context(), "reading a tenant's logo failed", "tenant", tenant, "err", err)
		h.Set("Cache-Control", "no-store")
		plainServerError(w, err)
		return
	case len(t.Logo) == 0 || version != logoVersion(t):
		notFound()
		return
	}
	h.Set("Content-Type", t.LogoType)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+hex.EncodeToString(t.LogoHash[:])+`"`)
	h.Set("Content-Security-Policy", logoCSP)
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(t.Logo))
}
