package ratelimit

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"
)

// MiddlewareConfig configures Middleware.
type MiddlewareConfig struct {
	// Limiter decides for each request; required.
	Limiter Limiter
	// Key returns the key a request counts against. nil: ClientAddr, the client's address.
	// Behind a reverse proxy every request has the proxy's address: pass a Key that reads the
	// address the proxy forwards, or one that names the authenticated caller.
	Key func(r *http.Request) string
	// Deny writes the response to a denied request. The RateLimit headers and Retry-After are
	// already set on w.Header(); Deny writes the status (429 Too Many Requests, as a rule) and
	// the body. nil: 429 with the text/plain body "rate limit exceeded".
	Deny func(w http.ResponseWriter, r *http.Request, d Decision)
	// OnError decides what happens to a request when Limiter.Allow returns an error (which
	// Middleware has already logged): it returns true to serve the request anyway, without
	// RateLimit headers, or writes a response itself and returns false. nil: serve the request
	// (fail open), so that an unreachable shared limiter does not take the service down. To
	// fail closed:
	//
	//	OnError: func(w http.ResponseWriter, r *http.Request, err error) bool {
	//		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
	//		return false
	//	},
	OnError func(w http.ResponseWriter, r *http.Request, err error) (serve bool)
	// Logger receives a Warn record (LogFailure: "rate limiter failed; request served", keys
	// "limiter" and "err") for each request on which the Limiter fails; it never logs keys.
	// nil: slog.Default().
	Logger *slog.Logger
}

// Middleware returns a middleware that lets a request through to the next handler only when
// cfg.Limiter allows its key, and answers it with cfg.Deny otherwise. On every request the
// Limiter decides, it sets the headers SetHeaders sets before calling next or Deny. Its errors
// wrap ErrInvalidConfig.
func Middleware(cfg MiddlewareConfig) (func(next http.Handler) http.Handler, error) {
	if cfg.Limiter == nil {
		return nil, fmt.Errorf("%w: MiddlewareConfig.Limiter is nil", ErrInvalidConfig)
	}
	if cfg.Key == nil {
		cfg.Key = ClientAddr
	}
	if cfg.Deny == nil {
		cfg.Deny = denyText
	}
	if cfg.OnError == nil {
		cfg.OnError = serveAnyway
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d, err := cfg.Limiter.Allow(r.Context(), cfg.Key(r))
			if err != nil {
				logger := cfg.Logger
				if logger == nil {
					logger = slog.Default()
				}
				LogFailure(r.Context(), logger, "middleware", err)
				if cfg.OnError(w, r, err) {
					next.ServeHTTP(w, r)
				}
				return
			}
			SetHeaders(w.Header(), d)
			if !d.Allowed {
				cfg.Deny(w, r, d)
				return
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// SetHeaders sets on h the headers that describe d: RateLimit-Limit (d.Limit),
// RateLimit-Remaining (d.Remaining) and RateLimit-Reset (d.Reset in seconds, rounded up), and,
// when d is not Allowed, Retry-After (d.RetryAfter in seconds, rounded up, at least 1). It
// replaces values already there and leaves Retry-After alone when d is Allowed. For handlers
// that call a Limiter themselves and answer a denial in their own format.
func SetHeaders(h http.Header, d Decision) {
	// The keys are written in their canonical form (http.CanonicalHeaderKey), which saves
	// Header.Set from canonicalising them on every request.
	// The three values share one array, and their digits one string: two allocations, not six.
	var digits [3 * 20]byte
	b := strconv.AppendInt(digits[:0], int64(d.Limit), 10)
	n1 := len(b)
	b = strconv.AppendInt(b, int64(d.Remaining), 10)
	n2 := len(b)
	b = strconv.AppendInt(b, ceilSeconds(d.Reset), 10)
	all := string(b)
	v := &[3]string{all[:n1], all[n1:n2], all[n2:]}
	h["Ratelimit-Limit"] = v[0:1:1]
	h["Ratelimit-Remaining"] = v[1:2:2]
	h["Ratelimit-Reset"] = v[2:3:3]
	if !d.Allowed {
		h["Retry-After"] = []string{strconv.FormatInt(max(ceilSeconds(d.RetryAfter), 1), 10)}
	}
}

// ClientAddr returns the key Middleware counts a request against by default: the IP address
// of r.RemoteAddr, or for an IPv6 address its /64 prefix (a single client commonly holds a
// whole /64), or r.RemoteAddr as it is when it is not host:port with an IP host.
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return r.RemoteAddr
	}
	addr = addr.Unmap().WithZone("")
	if addr.Is6() {
		return netip.PrefixFrom(addr, 64).Masked().String()
	}
	return addr.String()
}

// ceilSeconds returns d in whole seconds, rounded up; 0 for d <= 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

func denyText(w http.ResponseWriter, _ *http.Request, _ Decision) {
	http.Error(w, "rate limit exceeded", http.StatusTooManyRequests)
}

func serveAnyway(http.ResponseWriter, *http.Request, error) bool { return true }
