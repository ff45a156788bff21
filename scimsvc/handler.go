package scimsvc

import (
	"context"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/store"
)

const contentType = "application/scim+json"

// ServeHTTP authenticates and rate-limits every request, then routes it. The order is: the client
// address's failure budget, the API key (401), its scope and tenant (403), the key's rate limit
// (429), and only then the resource. The request's context carries the deadline of
// Config.RequestTimeout from the start, so every store call of the request is bounded by it.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = canonical(r)
	if h.timeout > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), h.timeout)
		defer cancel()
		r = r.WithContext(ctx)
	}
	tenant, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	ctx := r.Context()

	k, err := h.authenticateLimited(w, r)
	if err != nil {
		return
	}
	if ep := r.URL.EscapedPath(); strings.Contains(strings.ToLower(ep), "%2f") ||
		!strings.HasPrefix(ep+"/", "/"+tenant+"/") {
		// No tenant or id holds a slash; an escaped one could make the mux route another
		// tenant than the one authorized.
		h.writeError(w, r, &Error{Status: http.StatusNotFound, Detail: "no such endpoint"})
		return
	}
	if err := h.authorize(r, k, tenant); err != nil {
		h.writeError(w, r, err)
		return
	}
	d, err := h.keys.Allow(ctx, k.ID+"/"+tenant)
	if err != nil {
		// A limiter that cannot decide lets the request through: the key is valid, and
		// refusing every request while a shared limiter is down would stop provisioning.
		h.log.WarnContext(ctx, "scim rate limiter failed; request allowed", "key", k.ID, "err", err)
	} else {
		if !d.Allowed {
			h.tooMany(w, r, d)
			return
		}
		ratelimit.SetHeaders(w.Header(), d)
	}
	if now := h.now(); now.Sub(k.LastUsed) >= touchEvery {
		if err := h.cfg.APIKeys.Touch(ctx, k.ID, now); err != nil {
			h.log.WarnContext(ctx, "recording API key use failed", "key", k.ID, "err", err)
		}
	}
	h.mux.ServeHTTP(w, r.WithContext(context.WithValue(ctx, keyIDContext{}, k.ID)))
}

// keyIDContext is the context key of the id of the request's API key.
type keyIDContext struct{}

// requestKeyID is the id of the API key that authenticated the request of ctx.
func requestKeyID(ctx context.Context) string {
	id, _ := ctx.Value(keyIDContext{}).(string)
	return id
}

// tooMany answers 429 with Retry-After and the RateLimit headers.
func (h *handler) tooMany(w http.ResponseWriter, r *http.Request, d ratelimit.Decision) {
	ratelimit.SetHeaders(w.Header(), d) // Retry-After too: d is a denial
	h.writeError(w, r, &Error{Status: http.StatusTooManyRequests, Detail: "too many requests; retry later"})
}

// routes registers every path. Methods are dispatched here rather than in patterns, so that a
// wrong method gets a SCIM error body with an Allow header.
func (h *handler) routes() {
	mux := http.NewServeMux()
	mux.Handle("/{tenant}/ServiceProviderConfig", h.methods(map[string]http.HandlerFunc{"GET": h.serviceProviderConfig}))
	mux.Handle("/{tenant}/ResourceTypes", h.methods(map[string]http.HandlerFunc{"GET": h.resourceTypes}))
	mux.Handle("/{tenant}/ResourceTypes/{name}", h.methods(map[string]http.HandlerFunc{"GET": h.resourceType}))
	mux.Handle("/{tenant}/Schemas", h.methods(map[string]http.HandlerFunc{"GET": h.schemas}))
	mux.Handle("/{tenant}/Schemas/{urn}", h.methods(map[string]http.HandlerFunc{"GET": h.schema}))
	for _, k := range []kind{h.userKind(), h.groupKind()} {
		mux.Handle("/{tenant}/"+k.endpoint(), h.methods(map[string]http.HandlerFunc{
			"GET":  k.list,
			"POST": k.create,
		}))
		mux.Handle("/{tenant}/"+k.endpoint()+"/{id}", h.methods(map[string]http.HandlerFunc{
			"GET":    k.get,
			"PUT":    k.replace,
			"PATCH":  k.patch,
			"DELETE": k.delete,
		}))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, &Error{Status: http.StatusNotFound, Detail: "no such endpoint"})
	})
	h.mux = mux
}

// methods dispatches on the request method; HEAD is served as GET.
func (h *handler) methods(m map[string]http.HandlerFunc) http.Handler {
	allow := make([]string, 0, len(m))
	for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if m[method] != nil {
			allow = append(allow, method)
		}
	}
	allowed := strings.Join(allow, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Method
		if method == http.MethodHead {
			method = http.MethodGet
		}
		if f := m[method]; f != nil {
			f(w, r)
			return
		}
		w.Header().Set("Allow", allowed)
		h.writeError(w, r, &Error{Status: http.StatusMethodNotAllowed, Detail: r.Method + " is not allowed here; use " + allowed})
	})
}

// writeJSON writes a SCIM JSON response.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// canonical returns r with its path cleaned ("/acme/./Users", "/acme//Users" and a missing
// leading slash, as http.StripPrefix("/scim/v2/", …) leaves it), so the tenant is read from the
// path that is routed and no redirect can point outside the host's mount.
func canonical(r *http.Request) *http.Request {
	p := r.URL.Path
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	p = path.Clean(p) // allocates nothing for a clean path
	if p == r.URL.Path || strings.Contains(strings.ToLower(r.URL.RawPath), "%2f") {
		return r // an escaped slash is refused once the client is authenticated
	}
	r2 := *r
	u := *r.URL
	u.Path, u.RawPath = p, ""
	r2.URL = &u
	return &r2
}

// authenticateLimited returns the request's API key. When there is none it has answered the
// request (401, or 429 once the client's failure budget is spent) and returns an error.
//
// Failures are counted per client address, and also per address and key id when the request
// names an existing key: a flood of bad keys from one address is answered 429 once the
// address's budget is spent, and a guesser after one key's secret is stopped even if it then
// finds it, while requests with valid keys from that address — a cloud provider's shared
// egress — go on. Keys that do not exist take no limiter memory of their own.
func (h *handler) authenticateLimited(w http.ResponseWriter, r *http.Request) (*store.APIKey, error) {
	ctx := r.Context()
	addr := "addr:" + h.addr(r)
	var perKey string
	if id := claimedKeyID(r); id != "" {
		perKey = addr + "/" + id
		if d, err := h.addrs.Peek(ctx, perKey); err == nil && !d.Allowed {
			h.tooMany(w, r, d)
			return nil, errUnauthenticated
		}
	}
	k, err := h.authenticate(r)
	if err == nil {
		return k, nil
	}
	if err != errUnauthenticated {
		h.writeError(w, r, err)
		return nil, err
	}
	d, lerr := h.addrs.Allow(ctx, addr)
	denied := lerr == nil && !d.Allowed
	if perKey != "" && h.keyExists(ctx, "key_"+claimedKeyID(r)) {
		if dk, kerr := h.addrs.Allow(ctx, perKey); kerr == nil && !dk.Allowed {
			d, denied = dk, true
		}
	}
	if denied {
		h.tooMany(w, r, d)
		return nil, err
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="scim"`)
	h.writeError(w, r, err)
	return nil, err
}

// keyExists reports whether an API key with id is stored.
func (h *handler) keyExists(ctx context.Context, id string) bool {
	_, err := h.cfg.APIKeys.Get(ctx, id)
	return err == nil
}
