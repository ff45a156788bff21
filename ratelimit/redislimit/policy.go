package redislimit

import (
	"context"
	"log/slog"
	"time"

	"github.com/visid/visid/ratelimit"
)

// Policy is what decides while Redis cannot: when a call to Redis fails (it is unreachable,
// times out, or replies with an error other than a done ctx's), and for a second after.
//
// Whatever the Policy, Allow and Peek then return a Decision and no error (unless the Fallback
// returns one), so a caller's own error handling (ratelimit.MiddlewareConfig.OnError) is not
// reached.
type Policy int

const (
	// UseFallback lets Config.Fallback decide: by default an in-memory limiter of the same
	// Rate, so each instance enforces the quota on its own (with n instances a key may make up
	// to n times its quota) and the quota restarts from Redis's state when Redis is back. This
	// is the default.
	UseFallback Policy = iota
	// FailOpen allows every request, reporting a whole quota: Remaining the burst, Reset 0.
	// Nothing is counted.
	FailOpen
	// FailClosed denies every request, reporting RetryAfter the time to regain one request
	// (Period / Limit) and Reset the time to regain the burst.
	FailClosed
)

// withoutRedis decides as l's Policy says; err is Redis's failure, or nil when Redis is left
// alone after a recent one.
func (l *Limiter) withoutRedis(ctx context.Context, key string, take bool, err error) (ratelimit.Decision, error) {
	l.decisions.Add(1)
	if err != nil {
		now := l.since()
		l.retryAt.Store(now + int64(retryRedisAfter))
		if last := l.loggedAt.Load(); now-last >= int64(logEvery) && l.loggedAt.CompareAndSwap(last, now) {
			l.down.Store(true)
			l.logger.LogAttrs(ctx, slog.LevelError, l.outage,
				slog.Any("err", err), slog.Int64("decisions", l.decisions.Swap(0)))
		}
	}
	switch l.policy {
	case FailOpen:
		return ratelimit.Decision{Allowed: true, Limit: l.limit, Remaining: l.burst}, nil
	case FailClosed:
		return ratelimit.Decision{
			Limit:      l.limit,
			RetryAfter: time.Duration(l.interval) * time.Microsecond,
			Reset:      time.Duration(l.tolerance) * time.Microsecond,
		}, nil
	}
	if take {
		return l.fallback.Allow(ctx, key)
	}
	return l.fallback.Peek(ctx, key)
}

// reachable records that Redis answered: when an outage was logged, it logs that it is over,
// once.
func (l *Limiter) reachable(ctx context.Context) {
	if l.down.Load() && l.down.CompareAndSwap(true, false) {
		l.logger.LogAttrs(ctx, slog.LevelInfo, "redis reachable again",
			slog.Int64("decisions", l.decisions.Swap(0)))
	}
}
