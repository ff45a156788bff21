package scimsvc

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/visid/visid/internal/observe"
)

// instrumentationName names the meter and tracer of the SCIM handler.
const instrumentationName = "github.com/visid/visid/scimsvc"

// Metric names of the SCIM handler. docs/observability.md lists them with their
// attributes; Prometheus shows each with dots as underscores, a counter with "_total" and the
// duration with "_seconds".
const (
	// MetricRequests counts requests by visid.scim.resource_type, http.request.method and
	// http.response.status_class ("2xx" … "5xx").
	MetricRequests = "visid.scim.requests"
	// MetricRequestDuration is the time from a request's arrival to its last byte, in seconds,
	// with the attributes of MetricRequests and http.response.status_code (OpenTelemetry's
	// HTTP semantic conventions).
	MetricRequestDuration = "http.server.request.duration"
	// MetricRateLimited counts requests answered 429, by visid.limit: "key" (the API key's
	// rate, Config.RateLimiter), "address" (failures of a client address,
	// Config.AddressLimiter) or "concurrent_lists" (Config.MaxConcurrentLists).
	MetricRateLimited = "visid.scim.rate_limited"
	// MetricAuthFailures counts requests refused for their API key, by visid.reason:
	// "missing" (no well-formed key), "unknown", "revoked" (401), "scope" (the key lacks the
	// scim scope) and "tenant" (the key may not act on the tenant, or it does not exist) (403).
	MetricAuthFailures = "visid.scim.auth_failures"
	// MetricFilterErrors counts requests refused with 400 invalidFilter.
	MetricFilterErrors = "visid.scim.filter_errors"
)

// Attribute keys of the SCIM handler's metrics and spans.
const (
	attrResourceType = attribute.Key("visid.scim.resource_type")
	attrMethod       = attribute.Key("http.request.method")
	attrStatusCode   = attribute.Key("http.response.status_code")
	attrStatusClass  = attribute.Key("http.response.status_class")
	attrLimit        = attribute.Key("visid.limit")
	attrReason       = attribute.Key("visid.reason")
	attrTenant       = attribute.Key("visid.tenant")
)

// Reasons of MetricAuthFailures.
const (
	authMissing = "missing"
	authUnknown = "unknown"
	authRevoked = "revoked"
	authScope   = "scope"
	authTenant  = "tenant"
)

// Limits of MetricRateLimited.
const (
	limitKey     = "key"
	limitAddress = "address"
	limitLists   = "concurrent_lists"
)

// telemetry holds the handler's instruments and tracer.
type telemetry struct {
	tracer      trace.Tracer
	requests    metric.Int64Counter
	duration    metric.Float64Histogram
	rateLimited metric.Int64Counter
	authFailed  metric.Int64Counter
	filterErrs  metric.Int64Counter
	tenants     bool     // Config.MetricsTenant
	sets        sync.Map // requestLabels → *requestAttrs, without the tenant
}

func newTelemetry(cfg Config) (*telemetry, error) {
	m, tracer := observe.Providers(instrumentationName, cfg.MeterProvider, cfg.TracerProvider)
	t := &telemetry{tenants: cfg.MetricsTenant}
	if observe.Traces(cfg.TracerProvider) {
		t.tracer = tracer
	}
	var err error
	if t.requests, err = m.Int64Counter(MetricRequests, metric.WithUnit("{request}"),
		metric.WithDescription("SCIM requests by resource type, method and status class")); err != nil {
		return nil, err
	}
	if t.duration, err = m.Float64Histogram(MetricRequestDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP server requests"),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)); err != nil {
		return nil, err
	}
	if t.rateLimited, err = m.Int64Counter(MetricRateLimited, metric.WithUnit("{request}"),
		metric.WithDescription("SCIM requests answered 429, by limit")); err != nil {
		return nil, err
	}
	if t.authFailed, err = m.Int64Counter(MetricAuthFailures, metric.WithUnit("{request}"),
		metric.WithDescription("SCIM requests refused for their API key, by reason")); err != nil {
		return nil, err
	}
	if t.filterErrs, err = m.Int64Counter(MetricFilterErrors, metric.WithUnit("{request}"),
		metric.WithDescription("SCIM requests refused for a filter that does not parse")); err != nil {
		return nil, err
	}
	return t, nil
}

// requestLabels are the attributes of a request's metrics but the tenant.
type requestLabels struct {
	resourceType, method string
	status               int
}

// requestAttrs are what the metrics and the span of the requests with the same requestLabels
// share, made once so that a request allocates none of them.
type requestAttrs struct {
	add    []metric.AddOption
	record []metric.RecordOption
	// span are the attributes the span gets at its end (the status); it starts with the
	// others.
	span []attribute.KeyValue
}

// attrs returns the requestAttrs of l, made once per distinct l, with the tenant in the
// metrics' attributes when Config.MetricsTenant allows it (those are made per request).
func (t *telemetry) attrs(l requestLabels, tenant string) *requestAttrs {
	withTenant := t.tenants && tenant != ""
	if !withTenant {
		if a, ok := t.sets.Load(l); ok {
			return a.(*requestAttrs)
		}
	}
	kv := []attribute.KeyValue{
		attrResourceType.String(l.resourceType),
		attrMethod.String(l.method),
		attrStatusCode.Int(l.status),
		attrStatusClass.String(statusClass(l.status)),
	}
	a := &requestAttrs{span: []attribute.KeyValue{attrStatusCode.Int(l.status)}}
	set := attribute.NewSet(kv...)
	if withTenant {
		set = attribute.NewSet(append(kv, attrTenant.String(tenant))...)
	}
	opt := metric.WithAttributeSet(set)
	a.add, a.record = []metric.AddOption{opt}, []metric.RecordOption{opt}
	if !withTenant {
		t.sets.Store(l, a)
	}
	return a
}

// count adds one to c with the attribute key k set to v (none for an empty k), and the tenant
// when allowed. Only a tenant the request's key is authorized for may be passed: a client
// without a valid key could otherwise make a series per name it sends.
func (t *telemetry) count(ctx context.Context, c metric.Int64Counter, k attribute.Key, v, tenant string) {
	if !c.Enabled(ctx) {
		return
	}
	kv := make([]attribute.KeyValue, 0, 2)
	if k != "" {
		kv = append(kv, k.String(v))
	}
	if t.tenants && tenant != "" {
		kv = append(kv, attrTenant.String(tenant))
	}
	c.Add(ctx, 1, metric.WithAttributes(kv...))
}

// statusClass is "2xx" for 200 … 299, and so on.
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}

// knownMethods are the methods a request's metrics name; any other is "_OTHER", as
// OpenTelemetry's HTTP conventions ask, so a client cannot create series.
var knownMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}

// resourceTypes are the resource types a request's metrics name; any other path is "other".
var resourceTypes = map[string]bool{"Users": true, "Groups": true, "ServiceProviderConfig": true,
	"ResourceTypes": true, "Schemas": true, "Bulk": true}

// pathLabels returns the tenant and resource type of a path relative to the handler; the
// resource type is matched in any case, as the handler routes it.
func pathLabels(path string) (tenant, resourceType string) {
	tenant, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	rt, _, _ := strings.Cut(rest, "/")
	if rt = canonicalEndpoint(rt); !resourceTypes[rt] {
		rt = "other"
	}
	return tenant, rt
}

// instrument wraps next, the handler with its recoverer, in a span and the request metrics.
// Spans carry the method, resource type and status, never the path (it names tenants and ids),
// the query (filters hold personal data) or headers (keys). With the default providers, which
// record nothing, a request costs a lookup and a wrapped writer.
func (t *telemetry) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		method := r.Method
		if !knownMethods[method] {
			method = "_OTHER"
		}
		_, rt := pathLabels(r.URL.Path)
		ctx, span := r.Context(), trace.Span(nil)
		if t.tracer != nil {
			ss := startSpan(method, rt)
			ctx, span = t.tracer.Start(ctx, ss.name, ss.opts...)
			if span.SpanContext().IsValid() {
				// Store calls and other children see the span; a span that is not even
				// sampled out (no SDK) has nothing to pass on.
				r = r.WithContext(ctx)
			}
		}
		sw := &statusWriter{StatusWriter: observe.StatusWriter{ResponseWriter: w}}
		defer func() {
			status := sw.Status
			if status == 0 {
				status = http.StatusOK
			}
			if p := recover(); p != nil {
				status = http.StatusInternalServerError
				defer panic(p)
			}
			recording := span != nil && span.IsRecording()
			metrics := t.requests.Enabled(ctx) || t.duration.Enabled(ctx)
			if !recording && !metrics {
				if span != nil {
					span.End()
				}
				return
			}
			a := t.attrs(requestLabels{rt, method, status}, sw.tenant)
			if recording {
				span.SetAttributes(a.span...)
				if status >= 500 {
					span.SetStatus(codes.Error, http.StatusText(status))
				}
			}
			if span != nil {
				span.End()
			}
			if metrics {
				t.requests.Add(ctx, 1, a.add...)
				t.duration.Record(ctx, time.Since(start).Seconds(), a.record...)
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// spanStart is how a request's span starts: its name, "SCIM <method> <resource type>", and its
// options, which give the method and resource type at once, for samplers.
type spanStart struct {
	name string
	opts []trace.SpanStartOption
}

// newSpanStart is the spanStart of the requests of method on rt.
func newSpanStart(method, rt string) spanStart {
	return spanStart{name: "SCIM " + method + " " + rt, opts: []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attrMethod.String(method), attrResourceType.String(rt)),
	}}
}

// spanStarts are the spanStarts of every method a request's metrics name (_OTHER too) and every
// resource type, made once.
var spanStarts = func() map[[2]string]spanStart {
	m := map[[2]string]spanStart{}
	for _, method := range append(slices.Collect(maps.Keys(knownMethods)), "_OTHER") {
		for _, rt := range []string{"Users", "Groups", "ServiceProviderConfig", "ResourceTypes", "Schemas", "Bulk", "other"} {
			m[[2]string{method, rt}] = newSpanStart(method, rt)
		}
	}
	return m
}()

// startSpan returns the spanStart of a request of method on rt.
func startSpan(method, rt string) spanStart {
	if s, ok := spanStarts[[2]string{method, rt}]; ok {
		return s
	}
	return newSpanStart(method, rt)
}

// statusWriter records the status of a response, and the tenant the request's key was
// authorized for, for the request metrics when Config.MetricsTenant is set.
type statusWriter struct {
	observe.StatusWriter
	tenant string
}

// authorizedTenant records on the statusWriter under w that the request's key may act on
// tenant.
func authorizedTenant(w http.ResponseWriter, tenant string) {
	for {
		switch v := w.(type) {
		case *statusWriter:
			v.tenant = tenant
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			return
		}
	}
}
