package redislimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/visid/visid/ratelimit"
)

// DefaultPrefix is the key prefix when Config.Prefix is empty.
const DefaultPrefix = "visid:rl:"

// MaxTolerance is the longest Burst × Period / Limit (the time a drained quota takes to refill
// whole) a Limiter accepts, 2⁴² µs (about 51 days): far within what the script's float64
// arithmetic on microseconds keeps exact.
const MaxTolerance = (1 << 42) * time.Microsecond

// Config configures New. Client and Rate are required; every other field has the default its
// comment gives.
type Config struct {
	// Client is the Redis the Limiter keeps its state in: a *redis.Client, a
	// *redis.ClusterClient or a failover client, owned by the caller (New never dials, and
	// the Limiter never closes it). Each decision waits for the client's timeouts before the
	// Policy applies; see the package documentation for the options to set.
	Client redis.UniversalClient
	// Rate is every key's quota; required, see ratelimit.Rate.Validate. Burst × Period / Limit
	// must not exceed MaxTolerance.
	Rate ratelimit.Rate
	// Prefix is put before each key to name its Redis key: key "k1/acme" is stored at
	// Prefix+"k1/acme". Limiters that share a Redis need distinct prefixes, none of which is a
	// prefix of another (a scimsvc RateLimiter and AddressLimiter, two Rates). Empty:
	// DefaultPrefix.
	Prefix string
	// Policy is what decides while Redis cannot: UseFallback (the zero value), FailOpen or
	// FailClosed.
	Policy Policy
	// Fallback decides while Redis cannot, under UseFallback. nil: a ratelimit.Memory with
	// Rate, so each instance enforces the quota on its own. Set only with UseFallback.
	Fallback ratelimit.Limiter
	// Logger receives an Error record when Redis fails (message "redis unreachable; falling
	// back to the in-memory limiter" under the default policy, keys "err" and "decisions", the
	// number of decisions made without Redis since the previous record), at most once a minute,
	// and an Info record "redis reachable again" when it answers after such a record. Keys are
	// never logged. nil: slog.Default().
	Logger *slog.Logger
}

// Limiter is a ratelimit.Limiter whose state is in Redis, so that every instance of a service
// sharing that Redis enforces one quota per key.
//
// Each Allow and Peek is one EVALSHA of a Lua script (EVAL when Redis has not cached it), which
// Redis runs atomically: decisions are exact however many instances make them concurrently,
// and, timed by Redis's clock (TIME), they do not depend on the instances' clocks. The script
// implements GCRA, the token bucket of ratelimit.Rate kept as one timestamp per key, the key's
// theoretical arrival time (TAT): the time at which its quota will be whole again. A key's
// Redis key expires at that time, so keys in Redis are only those whose quota is not whole.
// Decisions match a ratelimit.Memory's of the same Rate, to the microsecond: the interval
// between two requests is rounded up to a whole microsecond, and Redis's clock has no finer
// unit.
//
// When Redis fails (unreachable, timing out, replying with an error), Config.Policy decides,
// and the Limiter leaves Redis alone for a second before trying it again: only the calls made
// while it is tried wait for the client's timeouts. An Allow or Peek whose
// ctx is done returns ctx's error instead, wrapped.
type Limiter struct {
	client    redis.UniversalClient
	script    *redis.Script
	prefix    string
	limit     int
	burst     int
	interval  int64    // Period / Limit, µs, rounded up: the time to regain one request
	tolerance int64    // burst × interval, µs: the time to regain a whole quota
	args      [2][]any // the script's ARGV for a Peek and for an Allow

	policy   Policy
	fallback ratelimit.Limiter
	logger   *slog.Logger
	outage   string // the message of the outage record

	// Times below are durations since epoch, from the monotonic clock.
	epoch     time.Time
	retryAt   atomic.Int64 // until when decisions are made without trying Redis
	loggedAt  atomic.Int64 // when the last outage record was logged
	decisions atomic.Int64 // decisions made without Redis since the last record
	down      atomic.Bool  // whether an outage record awaits its "reachable again"
}

var _ ratelimit.Limiter = (*Limiter)(nil)

const (
	// retryRedisAfter is how long after Redis fails the Limiter decides without trying it.
	retryRedisAfter = time.Second
	// logEvery is the least time between two outage records.
	logEvery = time.Minute
)

// New returns a Limiter enforcing cfg.Rate on every key, in cfg.Client. It does not contact
// Redis. Its errors wrap ratelimit.ErrInvalidRate or ratelimit.ErrInvalidConfig.
func New(cfg Config) (*Limiter, error) {
	if cfg.Client == nil {
		return nil, fmt.Errorf("%w: redislimit.Config.Client is nil", ratelimit.ErrInvalidConfig)
	}
	if err := cfg.Rate.Validate(); err != nil {
		return nil, err
	}
	if cfg.Policy < UseFallback || cfg.Policy > FailClosed {
		return nil, fmt.Errorf("%w: redislimit.Config.Policy is %d, not a Policy", ratelimit.ErrInvalidConfig, cfg.Policy)
	}
	if cfg.Fallback != nil && cfg.Policy != UseFallback {
		return nil, fmt.Errorf("%w: redislimit.Config.Fallback is set, but Policy is not UseFallback", ratelimit.ErrInvalidConfig)
	}
	burst := cfg.Rate.Burst
	if burst == 0 {
		burst = cfg.Rate.Limit
	}
	period, limit := int64(cfg.Rate.Period/time.Microsecond), int64(cfg.Rate.Limit)
	if cfg.Rate.Period%time.Microsecond != 0 {
		period++
	}
	interval := period / limit
	if period%limit != 0 {
		interval++
	}
	if interval > int64(MaxTolerance/time.Microsecond)/int64(burst) {
		return nil, fmt.Errorf("%w: Burst × Period / Limit exceeds redislimit.MaxTolerance (%v)", ratelimit.ErrInvalidRate, MaxTolerance)
	}
	l := &Limiter{
		client:    cfg.Client,
		script:    redis.NewScript(gcraScript),
		prefix:    cfg.Prefix,
		limit:     cfg.Rate.Limit,
		burst:     burst,
		interval:  interval,
		tolerance: interval * int64(burst),
		policy:    cfg.Policy,
		fallback:  cfg.Fallback,
		logger:    cfg.Logger,
		epoch:     time.Now(),
	}
	for take := range 2 {
		l.args[take] = []any{strconv.FormatInt(l.interval, 10), strconv.FormatInt(l.tolerance, 10), strconv.Itoa(take)}
	}
	if l.prefix == "" {
		l.prefix = DefaultPrefix
	}
	if l.logger == nil {
		l.logger = slog.Default()
	}
	l.loggedAt.Store(-int64(logEvery))
	switch {
	case l.policy == FailOpen:
		l.outage = "redis unreachable; allowing every request"
	case l.policy == FailClosed:
		l.outage = "redis unreachable; denying every request"
	case l.fallback != nil:
		l.outage = "redis unreachable; falling back to Config.Fallback"
	default:
		l.outage = "redis unreachable; falling back to the in-memory limiter"
		m, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: cfg.Rate})
		if err != nil {
			return nil, err
		}
		l.fallback = m
	}
	return l, nil
}

// Allow takes one request from key's quota when there is one left. It returns an error only
// when ctx is done, or when the Fallback returns one.
func (l *Limiter) Allow(ctx context.Context, key string) (ratelimit.Decision, error) {
	return l.decide(ctx, key, true)
}

// Peek reports what Allow would decide for key now, without taking anything or writing to
// Redis. It returns an error only when ctx is done, or when the Fallback returns one.
func (l *Limiter) Peek(ctx context.Context, key string) (ratelimit.Decision, error) {
	return l.decide(ctx, key, false)
}

// decide runs the script for key, taking a request when take is set, or lets the Policy
// decide when Redis fails or has just failed.
func (l *Limiter) decide(ctx context.Context, key string, take bool) (ratelimit.Decision, error) {
	if l.since() < l.retryAt.Load() {
		return l.withoutRedis(ctx, key, take, nil)
	}
	d, err := l.run(ctx, key, take)
	if err == nil {
		l.reachable(ctx)
		return d, nil
	}
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(err, cerr) {
			return ratelimit.Decision{}, fmt.Errorf("redislimit: %w", err)
		}
		return ratelimit.Decision{}, fmt.Errorf("redislimit: %w: %w", cerr, err)
	}
	return l.withoutRedis(ctx, key, take, err)
}

// run runs the script: one atomic decision in Redis.
func (l *Limiter) run(ctx context.Context, key string, take bool) (ratelimit.Decision, error) {
	args := l.args[0]
	if take {
		args = l.args[1]
	}
	r, err := l.script.Run(ctx, l.client, []string{l.prefix + key}, args...).Int64()
	if err != nil {
		return ratelimit.Decision{}, err
	}
	return l.decision(r), nil
}

// decision returns the Decision of the script's result r: ahead (µs) after an allowed
// request, -1 - ahead after a denied one.
func (l *Limiter) decision(r int64) ratelimit.Decision {
	d := ratelimit.Decision{Allowed: r >= 0, Limit: l.limit}
	ahead := r
	if !d.Allowed {
		ahead = -1 - r
		d.RetryAfter = time.Duration(ahead+l.interval-l.tolerance) * time.Microsecond
	}
	d.Remaining = int((l.tolerance - ahead) / l.interval)
	d.Reset = time.Duration(ahead) * time.Microsecond
	return d
}

// since returns the time since l was made, on the monotonic clock.
func (l *Limiter) since() int64 { return int64(time.Since(l.epoch)) }
