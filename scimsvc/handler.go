package scimsvc

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/store"
)

const contentType = "application/scim+json"

// ServeHTTP authenticates and rate-limits every request, then routes it. The order is: the API
// key (401, or 429 when a request without a valid key finds the client address's failure budget
// spent), a path that names no tenant or resource (404), the key's scope and tenant (403), the
// key's rate limit (429), query parameters that are not text (400), and only then the resource.
// The request's context carries the deadline of Config.RequestTimeout from the start, so every
// store call of the request is bounded by it; its timer is armed only when a store waits on the
// context's Done channel.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = canonical(r)
	var lazy *deadlineCtx
	if h.timeout > 0 {
		ctx := withLazyDeadline(r.Context(), h.timeout)
		defer ctx.release()
		r, lazy = r.WithContext(ctx), ctx
	}
	tenant, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	ctx := r.Context()

	ck, err := h.authenticateLimited(w, r)
	if err != nil {
		return
	}
	k := ck.key
	if ep := r.URL.EscapedPath(); strings.Contains(strings.ToLower(ep), "%2f") ||
		!strings.HasPrefix(ep+"/", "/"+tenant+"/") {
		// No tenant or id holds a slash; an escaped one could make the mux route another
		// tenant than the one authorized.
		h.writeError(w, r, &Error{Status: http.StatusNotFound, Detail: "no such endpoint"})
		return
	}
	if badText(r.URL.Path) != "" {
		// No tenant or id holds anything but text; a store need not see it.
		h.writeError(w, r, &Error{Status: http.StatusNotFound, Detail: "resource not found"})
		return
	}
	if err := h.authorize(r, k, tenant); err != nil {
		h.writeError(w, r, err)
		return
	}
	if h.tel.tenants {
		authorizedTenant(w, tenant)
	}
	d, err := h.keys.Allow(ctx, k.ID+"/"+tenant)
	if err != nil {
		// A limiter that cannot decide lets the request through: the key is valid, and
		// refusing every request while a shared limiter is down would stop provisioning.
		ratelimit.LogFailure(ctx, h.log, "scim key", err)
	} else {
		if !d.Allowed {
			h.tooMany(w, r, d, limitKey, tenant)
			return
		}
		ratelimit.SetHeaders(w.Header(), d)
	}
	if now := h.now(); now.UnixNano()-ck.lastUsed.Load() >= int64(touchEvery) {
		if err := h.cfg.APIKeys.Touch(ctx, k.ID, now); err != nil {
			h.log.WarnContext(ctx, "recording API key use failed", "key", k.ID, "err", err)
		} else {
			ck.lastUsed.Store(now.UnixNano())
		}
	}
	if r.URL.RawQuery != "" {
		if err := checkQuery(r.URL.Query()); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	if err := checkConditions(r.Header); err != nil {
		h.writeError(w, r, err)
		return
	}
	if lazy != nil {
		lazy.setKeyID(k.ID) // saves a context and a copy of the request on every request
	} else {
		ctx = context.WithValue(ctx, keyIDContext{}, k.ID)
	}
	if h.cfg.Events != nil && r.Method != http.MethodGet && r.Method != http.MethodHead { // reads record nothing
		if lazy != nil {
			// The lazy deadline's context carries the change and its rendering: no context
			// of their own, and no copy of the request.
			e := &requestEvents{render: eventRender{h: h, tenant: tenant}}
			e.change = store.WithChange(context.Background(), store.Change{Actor: k.ID, Time: h.now(), Render: e.render.render})
			lazy.setEvents(e)
		} else {
			ev := &eventRender{h: h, tenant: tenant}
			ctx = store.WithChange(ctx, store.Change{Actor: k.ID, Time: h.now(), Render: ev.render})
			ctx = context.WithValue(ctx, eventRenderContext{}, ev)
		}
	}
	if ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	h.mux.ServeHTTP(w, r)
}

// eventRender is the Change.Render of a request's writes in tenant: a user or group as a GET of
// it returns it. It keeps the last resource it rendered and its JSON, which is the body of the
// response that returns that resource (see renderedBody): a store renders a resource as it
// returns it, so a write's response is encoded once.
type eventRender struct {
	h      *handler
	tenant string
	last   any
	data   json.RawMessage
}

// eventRenderContext is the context key of a request's *eventRender.
type eventRenderContext struct{}

func (ev *eventRender) render(v any) (json.RawMessage, error) {
	buf := getBuf(1024)
	e := encoder{buf: *buf}
	switch v := v.(type) {
	case *store.User:
		ev.h.users.write(&e, ev.tenant, v, &projection{})
	case *store.Group:
		ev.h.groups.write(&e, ev.tenant, v, &projection{})
	default:
		putBuf(buf)
		return nil, nil // the store's own JSON
	}
	// The store may keep the data: it gets a slice of its own, no larger than the JSON.
	data := append(json.RawMessage(nil), e.buf...)
	*buf = e.buf
	putBuf(buf)
	ev.last, ev.data = v, data
	return data, nil
}

// renderedBody returns the JSON the request's event rendered of v (the very resource, as the
// store returned it), or nil.
func renderedBody(ctx context.Context, v any) []byte {
	if ev, _ := ctx.Value(eventRenderContext{}).(*eventRender); ev != nil && ev.last == v {
		return ev.data
	}
	return nil
}

// keyIDContext is the context key of the id of the request's API key.
type keyIDContext struct{}

// requestKeyID is the id of the API key that authenticated the request of ctx.
func requestKeyID(ctx context.Context) string {
	id, _ := ctx.Value(keyIDContext{}).(string)
	return id
}

// checkQuery refuses query parameters that are not text: a filter whose text or string literals
// hold NUL or are not UTF-8 (invalidFilter), and any other parameter, such as attributes, that
// is not text (invalidValue).
func checkQuery(q url.Values) error {
	for name, values := range q {
		if why := badText(name); why != "" {
			return badRequest(typeInvalidValue, "a query parameter name %s", why)
		}
		for _, v := range values {
			why := badText(v)
			if name != "filter" {
				if why != "" {
					return badRequest(typeInvalidValue, "the %s parameter %s", clip(name), why)
				}
				continue
			}
			if why == "" {
				why = badEscapes(v) // a backslash that starts no escape fails to parse anyway
			}
			if why != "" {
				return badRequest(typeInvalidFilter, "the filter %s: its strings must be UTF-8 text without NUL", why)
			}
		}
	}
	return nil
}

// tooMany answers 429 with Retry-After and the RateLimit headers, and counts a denial of limit;
// tenant is "" before the key is authorized for one.
func (h *handler) tooMany(w http.ResponseWriter, r *http.Request, d ratelimit.Decision, limit, tenant string) {
	h.tel.count(r.Context(), h.tel.rateLimited, attrLimit, limit, tenant)
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
	mux.Handle("/{tenant}/Bulk", h.methods(map[string]http.HandlerFunc{"POST": h.bulk}))
	h.users, h.groups = h.userKind(), h.groupKind()
	mux.Handle("/{tenant}/.search", h.methods(map[string]http.HandlerFunc{"POST": h.searchAll}))
	for _, k := range []kind{h.users, h.groups} {
		mux.Handle("/{tenant}/"+k.endpoint(), h.methods(map[string]http.HandlerFunc{
			"GET":  k.list,
			"POST": k.create,
		}))
		mux.Handle("/{tenant}/"+k.endpoint()+"/.search", h.methods(map[string]http.HandlerFunc{"POST": k.search}))
		mux.Handle("/{tenant}/"+k.endpoint()+"/{id}", h.methods(map[string]http.HandlerFunc{
			"GET":    k.get,
			"PUT":    k.replace,
			"PATCH":  k.patch,
			"DELETE": k.delete,
		}))
	}
	// /Me (RFC 7644 §3.11) stands for the user a request is authenticated as; a SCIM request
	// here is authenticated as a provisioning client's API key, never as a user.
	mux.HandleFunc("/{tenant}/Me", h.me)
	mux.HandleFunc("/{tenant}/Me/", h.me)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, &Error{Status: http.StatusNotFound, Detail: "no such endpoint"})
	})
	h.mux = mux
}

// me answers every request to /Me with 501: there is no authenticated user for it to name.
func (h *handler) me(w http.ResponseWriter, r *http.Request) {
	h.writeError(w, r, &Error{Status: http.StatusNotImplemented,
		Detail: "/Me is not supported: requests are authenticated by API keys of provisioning clients, not as users; see " + ChangePasswordDocumentationURI})
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
	writeJSONTagged(w, status, body, false, 0)
}

// writeJSONTagged is writeJSON with, when tagged, the ETag header of a resource at version. The
// header values share one array and their digits one string (two allocations, not five), under
// their canonical keys.
func writeJSONTagged(w http.ResponseWriter, status int, body []byte, tagged bool, version int64) {
	var digits [48]byte
	b := strconv.AppendInt(digits[:0], int64(len(body)), 10)
	n := len(b)
	if tagged {
		b = append(strconv.AppendInt(append(b, `W/"`...), version, 10), '"')
	}
	all := string(b)
	v := &[3]string{contentType, all[:n], all[n:]}
	h := w.Header()
	h["Content-Type"] = v[0:1:1]
	h["Content-Length"] = v[1:2:2]
	if tagged {
		h["Etag"] = v[2:3:3]
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// bufPool holds the buffers responses are encoded in: once written (an io.Writer keeps nothing
// of what it is given), a buffer serves the next response.
var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuf is the largest buffer put back in bufPool: a large list's is left to the GC.
const maxPooledBuf = 64 << 10

// getBuf returns an empty buffer of at least n bytes; putBuf gives it back.
func getBuf(n int) *[]byte {
	b := bufPool.Get().(*[]byte)
	if cap(*b) < n {
		*b = make([]byte, 0, n)
	}
	*b = (*b)[:0]
	return b
}

func putBuf(b *[]byte) {
	if cap(*b) <= maxPooledBuf {
		bufPool.Put(b)
	}
}

// canonical returns r with its path cleaned ("/acme/./Users", "/acme//Users" and a missing
// leading slash, as http.StripPrefix("/scim/v2/", …) leaves it) and the endpoint after the
// tenant in its canonical case ("/acme/users" is "/acme/Users", as Entra ID may send it; the
// tenant keeps its case), so the tenant is read from the path that is routed and no redirect can
// point outside the host's mount.
func canonical(r *http.Request) *http.Request {
	p := r.URL.Path
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	p = path.Clean(p) // allocates nothing for a clean path
	if strings.Contains(strings.ToLower(r.URL.RawPath), "%2f") {
		return r // an escaped slash is refused once the client is authenticated
	}
	tenant, rest, _ := strings.Cut(p[1:], "/")
	endpoint, tail, hasTail := strings.Cut(rest, "/")
	if name := canonicalEndpoint(endpoint); name != endpoint {
		p = "/" + tenant + "/" + name
		if hasTail {
			p += "/" + tail
		}
	}
	if p == r.URL.Path {
		return r
	}
	r2 := *r
	u := *r.URL
	u.Path, u.RawPath = p, ""
	r2.URL = &u
	return &r2
}

// canonicalEndpoint returns the endpoint name that s spells in another case (ASCII letters
// only), or s.
func canonicalEndpoint(s string) string {
	for _, name := range []string{"Users", "Groups", "ServiceProviderConfig", "ResourceTypes", "Schemas", "Bulk"} {
		if len(s) == len(name) && s != name && equalFoldASCII(s, name) {
			return name
		}
	}
	return s
}

// equalFoldASCII reports whether a and b, of equal length, differ only in the case of ASCII
// letters.
func equalFoldASCII(a, b string) bool {
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// authenticateLimited returns the request's API key. When there is none it has answered the
// request (401, or 429 once the client's failure budget is spent) and returns an error.
//
// A presented key is checked first, and a valid key is never refused by the failure budget:
// someone else's failures from the same address — a cloud provider's shared egress — cannot
// lock a provisioning client out. Only failures take from the budget, which is counted per
// client address, and also per address and key id when the request names an existing key: a
// flood of bad keys from one address, or of guesses at one key's secret, is answered 429 once
// the budget is spent. Keys that do not exist take no limiter memory of their own.
func (h *handler) authenticateLimited(w http.ResponseWriter, r *http.Request) (*cachedKey, error) {
	k, err := h.authenticate(r)
	if err == nil {
		return k, nil
	}
	var ref *refusal
	if !errors.As(err, &ref) {
		h.writeError(w, r, err)
		return nil, err
	}
	ctx := r.Context()
	h.tel.count(ctx, h.tel.authFailed, attrReason, authMetric(ref.reason), "") // the tenant is anyone's guess
	addr := "addr:" + h.addr(r)
	d, lerr := h.addrs.Allow(ctx, addr)
	if lerr != nil {
		ratelimit.LogFailure(ctx, h.log, "scim address", lerr)
	}
	denied := lerr == nil && !d.Allowed
	if id := claimedKeyID(r); id != "" && h.keyExists(ctx, "key_"+id) {
		if ref.reason == reasonNoMatch {
			ref.reason = reasonWrongSecret
		}
		dk, kerr := h.addrs.Allow(ctx, addr+"/"+id)
		switch {
		case kerr != nil:
			ratelimit.LogFailure(ctx, h.log, "scim address and key", kerr)
		case !dk.Allowed:
			d, denied = dk, true
		}
	} else if ref.reason == reasonNoMatch {
		ref.reason = reasonUnknownKey
	}
	if denied {
		h.log.DebugContext(ctx, "scim request refused: failure budget of the address spent", "method", r.Method,
			"path", logPath(r), "reason", ref.reason, "key", ref.key)
		h.tooMany(w, r, d, limitAddress, "")
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
