package oidc2fa

import (
	"net/http"
	"path"
	"strings"
)

// route dispatches on the path's segments. Paths are matched by hand, not by ServeMux patterns,
// because /{tenant}/.well-known/… and /login/{tenant}/… overlap as patterns.
func (p *provider) route(w http.ResponseWriter, r *http.Request) {
	clean := path.Clean("/" + r.URL.Path)
	seg := strings.Split(strings.TrimPrefix(clean, "/"), "/")
	method := r.Method
	switch {
	case len(seg) == 3 && seg[1] == ".well-known" && seg[2] == "openid-configuration":
		if p.allow(w, method, "GET", "HEAD") {
			p.discovery(w, r, seg[0])
		}
	case len(seg) == 2 && seg[0] == "authorize":
		// No HEAD: an authorization request stores an interaction.
		if p.allow(w, method, "GET", "POST") {
			p.authorize(w, r, seg[1])
		}
	case len(seg) == 2 && seg[0] == "token":
		if p.allow(w, method, "POST") {
			p.token(w, r, seg[1])
		}
	case len(seg) == 2 && seg[0] == "jwks":
		if p.allow(w, method, "GET", "HEAD") {
			p.jwks(w, r, seg[1])
		}
	case len(seg) == 2 && seg[0] == "enroll":
		if p.allow(w, method, "POST") {
			p.enrollEndpoint(w, r, seg[1])
		}
	case len(seg) == 3 && seg[0] == "enroll":
		if p.allow(w, method, "GET", "POST") {
			p.enrollLink(w, r, seg[1], seg[2])
		}
	case len(seg) >= 3 && seg[0] == "enrollment":
		if p.allow(w, method, "GET", "POST") {
			p.enrollment(w, r, seg[1], seg[2], strings.Join(seg[3:], "/"))
		}
	case len(seg) >= 3 && seg[0] == "login":
		if p.allow(w, method, "GET", "POST") {
			p.login(w, r, seg[1], seg[2], strings.Join(seg[3:], "/"))
		}
	default:
		http.Error(w, "not found", http.StatusNotFound)
	}
}

// allow reports whether method is one of allowed, and answers 405 otherwise.
func (p *provider) allow(w http.ResponseWriter, method string, allowed ...string) bool {
	for _, m := range allowed {
		if m == method {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}
