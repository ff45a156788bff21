package picture

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/visid/visid/internal/observe"
)

// instrumentationName names the picture login's meter and tracer.
const instrumentationName = "github.com/visid/visid/oidc2fa/picture"

// Metric names of the picture login. docs/observability.md lists them with their
// attributes.
const (
	// MetricAttempts counts the points and passkeys submitted, by visid.outcome: "succeeded",
	// "wrong_picture", "wrong_passkey" (a passkey refused: another user's, replayed, not
	// verified, its counter gone back…), "malformed", "locked" (an attempt on a locked
	// factor, never checked), "unknown_user", "ambiguous_hint" (the login hint matched several
	// users, so it names nobody), "inactive_user" and "not_enrolled". The person sees the same
	// answer for every failure; no metric names a user.
	MetricAttempts = "visid.secondfactor.attempts"
	// MetricLockouts counts checked attempts that failed and locked the factor, for their
	// network (the MaxFailures-th failure in a row from it, or the first failure after its lock
	// ended) or for every network (the user-wide lock).
	MetricLockouts = "visid.secondfactor.lockouts"
	// MetricHashesInFlight is how many argon2id computations are running now.
	MetricHashesInFlight = "visid.picture.hashes_in_flight"
	// MetricHashWait is the time each argon2id computation waited for a slot
	// (Config.MaxConcurrentHashes), in seconds.
	MetricHashWait = "visid.picture.hash_wait"
)

var (
	attrOutcome = attribute.Key("visid.outcome")
	attrTenant  = attribute.Key("visid.tenant")
)

// outcomes maps the reasons of a failed attempt, as logged, to MetricAttempts outcomes.
var outcomes = map[string]string{
	"wrong picture":    "wrong_picture",
	"malformed points": "malformed",
	"locked":           "locked",
	"unknown user":     "unknown_user",
	"ambiguous hint":   "ambiguous_hint",
	"inactive user":    "inactive_user",
	"not enrolled":     "not_enrolled",
	"the enrolled image is no longer offered": "not_enrolled",
}

// telemetry holds the picture login's instruments and tracer.
type telemetry struct {
	tracer   trace.Tracer
	attempts metric.Int64Counter
	lockouts metric.Int64Counter
	inflight metric.Int64UpDownCounter
	wait     metric.Float64Histogram
	tenants  bool
}

func newTelemetry(cfg Config) (*telemetry, error) {
	m, tracer := observe.Providers(instrumentationName, cfg.MeterProvider, cfg.TracerProvider)
	t := &telemetry{tracer: tracer, tenants: cfg.MetricsTenant}
	var err error
	if t.attempts, err = m.Int64Counter(MetricAttempts, metric.WithUnit("{attempt}"),
		metric.WithDescription("Picture login attempts, by outcome")); err != nil {
		return nil, err
	}
	if t.lockouts, err = m.Int64Counter(MetricLockouts, metric.WithUnit("{lockout}"),
		metric.WithDescription("Failed attempts that locked a user's factor")); err != nil {
		return nil, err
	}
	if t.inflight, err = m.Int64UpDownCounter(MetricHashesInFlight, metric.WithUnit("{hash}"),
		metric.WithDescription("argon2id computations running")); err != nil {
		return nil, err
	}
	if t.wait, err = m.Float64Histogram(MetricHashWait, metric.WithUnit("s"),
		metric.WithDescription("Time an argon2id computation waited for a slot"),
		metric.WithExplicitBucketBoundaries(0.0001, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)); err != nil {
		return nil, err
	}
	return t, nil
}

// count adds one to c, with the outcome when not empty and the tenant when allowed.
func (t *telemetry) count(ctx context.Context, c metric.Int64Counter, outcome, tenant string) {
	if !c.Enabled(ctx) {
		return
	}
	kv := make([]attribute.KeyValue, 0, 2)
	if outcome != "" {
		kv = append(kv, attrOutcome.String(outcome))
	}
	if t.tenants {
		kv = append(kv, attrTenant.String(tenant))
	}
	c.Add(ctx, 1, metric.WithAttributes(kv...))
}
