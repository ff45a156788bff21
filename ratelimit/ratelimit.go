package ratelimit

import (
	"context"
	"log/slog"
	"time"
)

// Decision is the outcome of one Allow or Peek.
type Decision struct {
	// Allowed reports whether the request may go ahead (for Peek: whether Allow would allow it
	// now).
	Allowed bool
	// Limit is the number of requests the key may make per Period, as configured (Rate.Limit).
	Limit int
	// Remaining is the number of requests the key could make now, after this decision; never
	// negative. An allowed request has already been taken from it; Peek takes nothing.
	Remaining int
	// RetryAfter is zero when Allowed. When not, it is how long to wait before the next Allow can
	// be allowed: an Allow made RetryAfter later succeeds, unless other requests on the key took
	// the quota first.
	RetryAfter time.Duration
	// Reset is how long until the key's quota is whole again (Remaining back to the burst), if
	// nothing more is taken; zero when it is whole now.
	Reset time.Duration
}

// Limiter decides whether a key may make one more request.
//
// Every method is safe for concurrent use. Keys are opaque strings (any bytes, the empty string
// included); distinct keys never share a quota. A key that has not been seen has its whole
// quota. An error means the limiter could not decide (a shared backend is unreachable, ctx is
// done); the caller chooses what to do, and the Decision returned with it is meaningless.
type Limiter interface {
	// Allow takes one request from key's quota when there is one left and reports the outcome.
	// A denied request takes nothing. Of concurrent Allows on a key with n requests left,
	// exactly n are allowed.
	Allow(ctx context.Context, key string) (Decision, error)

	// Peek reports what Allow would decide for key now, without taking anything from the quota:
	// Allowed is whether Allow would allow, Remaining is what is left now. Peek of a key that
	// has not been seen reports the whole quota and stores nothing.
	Peek(ctx context.Context, key string) (Decision, error)
}

// LogFailure logs that a limiter could not decide and the request was served anyway, the one way
// every limiter's failure is logged: at Warn, since a failed limiter is a dependency the service
// rides out (a shared limiter's Redis that is away), with the limiter's name ("scim key",
// "scim address", "sign-in address", …) and the error; never the key, which may name a client.
func LogFailure(ctx context.Context, log *slog.Logger, limiter string, err error) {
	log.WarnContext(ctx, "rate limiter failed; request served", "limiter", limiter, "err", err)
}
