package oidc2fa

import (
	"context"
	"net/http"
	"path"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/visid/visid/internal/observe"
)

// instrumentationName names the provider's meter and tracer.
const instrumentationName = "github.com/visid/visid/oidc2fa"

// Metric names of the provider. docs/observability.md lists them with their
// attributes.
const (
	// MetricRequestDuration is the time of each request, in seconds, by visid.oidc.endpoint
	// (authorize, par, token, jwks, userinfo, discovery, enroll, enrollment, login, other),
	// http.request.method and http.response.status_code: a histogram, so it also counts the
	// requests.
	MetricRequestDuration = "http.server.request.duration"
	// MetricAuthorizations counts sign-ins started: authorization requests that sent a browser
	// to the login pages.
	MetricAuthorizations = "visid.secondfactor.authorizations"
	// MetricOutcomes counts sign-ins ended, by visid.outcome: "succeeded", "failed" (denied,
	// or the user deleted or deactivated meanwhile), "locked" (the factor is locked),
	// "cancelled", "unknown_user" (the login_hint named no user, whatever the person did:
	// the pages answer such a sign-in as any other, and the metric names no user) and
	// "ambiguous_hint" (the login_hint matched different users, so it named nobody: answered
	// as an unknown user).
	MetricOutcomes = "visid.secondfactor.outcomes"
	// MetricCodesRedeemed counts authorization codes exchanged for an ID token.
	MetricCodesRedeemed = "visid.oidc.codes_redeemed"
	// MetricCodeReplays counts token requests refused because their code was already used.
	MetricCodeReplays = "visid.oidc.code_replays"
	// MetricPushedRequests counts pushed authorization requests stored (with Config.Pushed).
	MetricPushedRequests = "visid.oidc.pushed_requests"
)

// Attribute keys of the provider's metrics and spans.
const (
	attrEndpoint   = attribute.Key("visid.oidc.endpoint")
	attrMethod     = attribute.Key("http.request.method")
	attrStatusCode = attribute.Key("http.response.status_code")
	attrOutcome    = attribute.Key("visid.outcome")
	attrTenant     = attribute.Key("visid.tenant")
)

// telemetry holds the provider's instruments and tracer.
type telemetry struct {
	tracer         trace.Tracer
	duration       metric.Float64Histogram
	authorizations metric.Int64Counter
	outcomes       metric.Int64Counter
	redeemed       metric.Int64Counter
	replays        metric.Int64Counter
	pushed         metric.Int64Counter
	tenants        bool
}

func newTelemetry(cfg Config) (*telemetry, error) {
	m, tracer := observe.Providers(instrumentationName, cfg.MeterProvider, cfg.TracerProvider)
	t := &telemetry{tracer: tracer, tenants: cfg.MetricsTenant}
	var err error
	if t.duration, err = m.Float64Histogram(MetricRequestDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP server requests"),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)); err != nil {
		return nil, err
	}
	counters := []struct {
		c                *metric.Int64Counter
		name, unit, desc string
	}{
		{&t.authorizations, MetricAuthorizations, "{signin}", "Sign-ins started"},
		{&t.outcomes, MetricOutcomes, "{signin}", "Sign-ins ended, by outcome"},
		{&t.redeemed, MetricCodesRedeemed, "{code}", "Authorization codes exchanged for an ID token"},
		{&t.replays, MetricCodeReplays, "{request}", "Token requests refused for a code already used"},
		{&t.pushed, MetricPushedRequests, "{request}", "Pushed authorization requests stored"},
	}
	for _, c := range counters {
		if *c.c, err = m.Int64Counter(c.name, metric.WithUnit(c.unit), metric.WithDescription(c.desc)); err != nil {
			return nil, err
		}
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

// Outcomes of MetricOutcomes.
const (
	outcomeSucceeded     = "succeeded"
	outcomeFailed        = "failed"
	outcomeLocked        = "locked"
	outcomeCancelled     = "cancelled"
	outcomeUnknownUser   = "unknown_user"
	outcomeAmbiguousHint = "ambiguous_hint"
)

// outcomeOf is the MetricOutcomes outcome of a sign-in of subject that ended with f.
func outcomeOf(subject string, f Failure) string {
	switch {
	case subject == "":
		return outcomeUnknownUser
	case f == Locked:
		return outcomeLocked
	case f == Cancelled:
		return outcomeCancelled
	}
	return outcomeFailed
}

// endpoints are the endpoints metrics and spans name; any other path is "other".
var endpoints = map[string]bool{"authorize": true, "par": true, "token": true, "jwks": true, "userinfo": true,
	"enroll": true, "enrollment": true, "login": true}

// pathLabel returns the endpoint of a path relative to the handler.
func pathLabel(p string) string {
	seg := strings.SplitN(strings.TrimPrefix(path.Clean("/"+p), "/"), "/", 3)
	switch {
	case len(seg) >= 2 && endpoints[seg[0]]:
		return seg[0]
	case len(seg) == 3 && seg[1] == ".well-known":
		return "discovery"
	}
	return "other"
}

// instrument wraps next in a server span and MetricRequestDuration. Spans carry the endpoint,
// method and status, never the path (it holds interaction ids and enrollment tokens), the query
// (state, nonce, login_hint) or a header.
func (t *telemetry) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		method := r.Method
		switch method {
		case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		default:
			method = "_OTHER"
		}
		endpoint := pathLabel(r.URL.Path)
		ctx, span := t.tracer.Start(r.Context(), "OIDC "+method+" "+endpoint,
			trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attrMethod.String(method), attrEndpoint.String(endpoint)))
		sw := &observe.StatusWriter{ResponseWriter: w}
		defer func() {
			status := sw.Status
			if status == 0 {
				status = http.StatusOK
			}
			if p := recover(); p != nil {
				status = http.StatusInternalServerError
				defer panic(p)
			}
			span.SetAttributes(attrStatusCode.Int(status))
			if status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
			span.End()
			if t.duration.Enabled(ctx) {
				// No tenant even with Config.MetricsTenant: the path's tenant may be
				// anything a client sends.
				t.duration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(
					attrEndpoint.String(endpoint), attrMethod.String(method), attrStatusCode.Int(status)))
			}
		}()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}
