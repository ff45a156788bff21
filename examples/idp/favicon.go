package main

import (
	"net/http"
	"strconv"
)

// faviconSVG is visid's icon: a picture frame with the points of a picture password. Browsers
// ask every origin for /favicon.ico, so every page of the service (the start page, and the
// sign-in and error pages of a tenant without a logo of its own) shows it.
const faviconSVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">` +
	`<rect x="2" y="4" width="28" height="24" rx="4" fill="#1d5bb8"/>` +
	`<rect x="5" y="7" width="22" height="18" rx="2" fill="#f4f6f8"/>` +
	`<circle cx="11" cy="13" r="2.5" fill="#1d5bb8"/><circle cx="21" cy="12" r="2.5" fill="#1d5bb8"/>` +
	`<circle cx="16" cy="20" r="2.5" fill="#1d5bb8"/></svg>`

// favicon serves faviconSVG, cached for a day.
func favicon() http.Handler {
	body := []byte(faviconSVG)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	})
}
