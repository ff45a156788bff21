// Package redislimit is a ratelimit.Limiter whose state is in Redis, so that every instance of
// a service enforces one quota per key.
//
// Each decision is one Lua script that Redis runs atomically (EVALSHA, or EVAL when Redis has
// not cached it), on one Redis key, with Redis's clock: decisions are exact however many
// instances make them, do not depend on the instances' clocks, and work on Redis Cluster. The
// script is GCRA: it keeps per key the time at which the key's quota will be whole again, and
// that key expires then. Decisions are those of a ratelimit.Memory with the same Rate; both run
// the conformance suite ratelimit/ratelimittest.
//
// # Setting up
//
// The host owns the Redis client; New never dials. Each decision waits for the client's
// timeouts before Config.Policy applies, so give the client short ones, and since a retry after
// a lost reply can count a request twice, keep retries few:
//
//	rdb := redis.NewClient(&redis.Options{
//		Addr:          "redis:6379",
//		DialTimeout:   200 * time.Millisecond,
//		ReadTimeout:   200 * time.Millisecond,
//		WriteTimeout:  200 * time.Millisecond,
//		DialerRetries: 1,
//		MaxRetries:    1,
//	})
//	lim, err := redislimit.New(redislimit.Config{
//		Client: rdb,
//		Rate:   ratelimit.Rate{Limit: 200, Period: time.Minute},
//		Prefix: "myapp:api:",
//	})
//	if err != nil {
//		return err
//	}
//	limit, err := ratelimit.Middleware(ratelimit.MiddlewareConfig{
//		Limiter: lim,
//		Key:     func(r *http.Request) string { return apiKeyID(r.Context()) },
//	})
//	if err != nil {
//		return err
//	}
//	mux.Handle("/api/", limit(apiHandler))
//
// The SCIM API takes its two limiters in its Config; give each its own prefix:
//
//	keys, err := redislimit.New(redislimit.Config{
//		Client: rdb,
//		Rate:   ratelimit.Rate{Limit: scimsvc.DefaultRequestsPerMinute, Period: time.Minute},
//		Prefix: "visid:scim:key:", // keys are "<API key id>/<tenant>"
//	})
//	if err != nil {
//		return err
//	}
//	addrs, err := redislimit.New(redislimit.Config{
//		Client: rdb,
//		Rate:   ratelimit.Rate{Limit: scimsvc.DefaultFailuresPerMinute, Period: time.Minute},
//		Prefix: "visid:scim:addr:",
//	})
//	if err != nil {
//		return err
//	}
//	scim, err := scimsvc.New(scimsvc.Config{
//		// Tenants, Users, Groups, APIKeys, BaseURL, …
//		RateLimiter:    keys,
//		AddressLimiter: addrs,
//	})
//
// # Keys in Redis
//
// Key k is stored at Config.Prefix+k, as "<seconds>.<nanoseconds>" (Unix time on Redis's
// clock), with a TTL; a key whose quota is whole has no Redis key. Limiters with different
// Rates or purposes need prefixes none of which is a prefix of another. Deleting a Redis key
// gives its key a whole quota.
//
// # When Redis fails
//
// When Redis is unreachable, times out or replies with an error, Config.Policy decides:
// UseFallback (the default) asks Config.Fallback, by default an in-memory limiter of the same
// Rate, so each instance limits on its own; FailOpen allows; FailClosed denies. The Limiter
// then decides without Redis for a second before trying it again, and logs the failure at most
// once a minute. It needs Redis 5 or later (scripts replicated by their effects), or
// Valkey; it is tested on Redis 7.
//
// Redis for the rate limits of several instances is described in https://github.com/visid/visid/blob/main/docs/production.md#redis-for-the-scim-rate-limits.
package redislimit
