package oidc2fa

import (
	"net/http"
	"path"
	"strings"

	"github.com/visid/visid/ratelimit"
)

// route dispatches on the path's segments. Paths are matched by hand, not by ServeMux patterns,
// because /{tenant}/.well-known/… and /login/{tenant}/… overlap as patterns.
func (p *provider) route(w http.ResponseWriter, r *http.Request) {
	clean := path.Clean("/" + r.URL.Path)
	seg := strings.Split(strings.TrimPrefix(clean, "/"), "/")
	method := r.Method
	// The pages of a request speak its person's language: the tenant's default and the
	// ui_locales kept with an interaction count.
	if len(seg) >= 2 && (seg[0] == "authorize" || seg[0] == "login" || seg[0] == "enroll" || seg[0] == "enrollment") {
		pl := &pageLang{tenant: seg[1]}
		switch {
		case seg[0] == "authorize" && method == http.MethodGet || seg[0] == "enroll":
			pl.uiLocales = r.URL.Query().Get("ui_locales")
		case len(seg) >= 3 && (seg[0] == "login" || seg[0] == "enrollment"):
			pl.uiLocales = keptUILocales(r, seg[2])
		}
		r = withPageLang(r, pl)
	}
	switch {
	case len(seg) == 3 && seg[1] == ".well-known" && seg[2] == "openid-configuration":
		if p.allow(w, method, "GET", "HEAD") {
			p.discovery(w, r, seg[0])
		}
	case len(seg) == 2 && seg[0] == "authorize":
		// No HEAD: an authorization request stores an interaction.
		if p.allow(w, method, "GET", "POST") && p.limit(w, r) {
			p.authorize(w, r, seg[1])
		}
	case len(seg) == 2 && seg[0] == "par" && p.cfg.Pushed != nil:
		if p.allow(w, method, "POST") {
			p.par(w, r, seg[1])
		}
	case len(seg) == 2 && seg[0] == "token":
		if p.allow(w, method, "POST") {
			p.token(w, r, seg[1])
		}
	case len(seg) == 2 && seg[0] == "userinfo" && p.cfg.AccessTokens != nil:
		if p.allow(w, method, "GET", "POST") {
			p.userinfo(w, r, seg[1])
		}
	case len(seg) == 3 && seg[0] == "logo":
		if p.allow(w, method, "GET", "HEAD") {
			p.logo(w, r, seg[1], seg[2])
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
		if p.allow(w, method, "GET", "POST") && p.limitPost(w, r) {
			p.enrollLink(w, r, seg[1], seg[2])
		}
	case len(seg) >= 3 && seg[0] == "enrollment":
		if p.allow(w, method, "GET", "POST") && p.limitPost(w, r) {
			p.enrollment(w, r, seg[1], seg[2], strings.Join(seg[3:], "/"))
		}
	case len(seg) >= 3 && seg[0] == "login":
		if p.allow(w, method, "GET", "POST") && p.limitPost(w, r) {
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

// limitPost is limit for POSTs; other methods pass.
func (p *provider) limitPost(w http.ResponseWriter, r *http.Request) bool {
	return r.Method != http.MethodPost || p.limit(w, r)
}

// limit takes one request of the client address's quota (Config.AddressLimiter). A denied
// request gets a 429 page with Retry-After; when the limiter fails, the request is served and
// the failure logged, so an unreachable shared limiter does not stop sign-ins.
func (p *provider) limit(w http.ResponseWriter, r *http.Request) bool {
	d, err := p.addrs.Allow(r.Context(), p.addrOf(r))
	if err != nil {
		ratelimit.LogFailure(r.Context(), p.log, "sign-in address", err)
		return true
	}
	ratelimit.SetHeaders(w.Header(), d)
	if d.Allowed {
		return true
	}
	p.page(w, r, http.StatusTooManyRequests, errTemporarilyUnavailable, "error.toomany")
	return false
}
