// Package ratelimit limits how often a key (an API key, a client address) may act.
//
// A Limiter decides for one key at a time; Memory is the in-process implementation on
// golang.org/x/time/rate, and ratelimit/redislimit shares decisions between many instances.
// Middleware applies a Limiter to an http.Handler and writes the RateLimit headers.
// ratelimit/ratelimittest is the conformance suite every Limiter runs.
//
// # Quotas
//
// A Rate is a token bucket: a key may make Burst requests at once (Burst 0 means Limit), and
// regains Limit requests per Period, one every Period/Limit. SCIM's 200 requests a minute is
//
//	ratelimit.Rate{Limit: 200, Period: time.Minute}
//
// # Limiting an http.Handler
//
// Middleware wraps a handler. Every response carries RateLimit-Limit, RateLimit-Remaining and
// RateLimit-Reset (whole seconds, rounded up); a denied request gets 429 Too Many Requests with
// Retry-After (whole seconds, rounded up) and the body Deny writes:
//
//	lim, err := ratelimit.NewMemory(ratelimit.MemoryConfig{
//		Rate: ratelimit.Rate{Limit: 200, Period: time.Minute},
//	})
//	if err != nil {
//		return err
//	}
//	limit, err := ratelimit.Middleware(ratelimit.MiddlewareConfig{
//		Limiter: lim,
//		// The caller the request authenticated as; never a value the client picks freely.
//		Key: func(r *http.Request) string { return apiKeyID(r.Context()) },
//	})
//	if err != nil {
//		return err
//	}
//	mux.Handle("/api/", limit(apiHandler))
//
// Middleware returns a func(http.Handler) http.Handler, so it also goes into a router's middleware
// stack (chi's r.Use). Without a Key it counts requests per client address (ClientAddr: the IP
// address of r.RemoteAddr, an IPv6 client's /64). When the Limiter fails, the request is served
// and the error logged, unless OnError says otherwise.
//
// A handler that answers in its own error format (SCIM's error body) calls the Limiter itself
// and writes the headers with SetHeaders:
//
//	d, err := lim.Allow(r.Context(), key.ID)
//	if err != nil {
//		logger.ErrorContext(r.Context(), "rate limiter failed", "err", err) // and serve anyway
//	} else {
//		ratelimit.SetHeaders(w.Header(), d)
//		if !d.Allowed {
//			writeSCIMError(w, http.StatusTooManyRequests, "too many requests")
//			return
//		}
//	}
//
// # Memory
//
// Memory keeps one token bucket per key in sharded maps and forgets keys whose bucket has
// refilled, without a goroutine: see Memory for how, and for MaxKeys, its hard cap.
//
// The SCIM API's rate limits are described in https://github.com/visid/visid/blob/main/docs/scim.md#rate-limits.
package ratelimit
