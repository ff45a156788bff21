// Package otelstore times and traces the calls of any store.Backend through the OpenTelemetry
// API: every call of every store is a client span and a measurement of
// MetricOperationDuration, whatever the backend (memstore, sqlstore or a host's own).
//
//	b, err := otelstore.Wrap(sql.Backend(), otelstore.Config{})
//	if err != nil {
//		return err
//	}
//	scim, err := scimsvc.New(scimsvc.Config{Tenants: b.Tenants, Users: b.Users, …})
//
// Spans and metrics name the operation ("users.get", "codes.consume", …) and, for a failed
// call, the kind of error; never a tenant, an id, a query, a hash or any other argument.
//
// The metrics and traces of visid, and how a host exports them, are described in https://github.com/visid/visid/blob/main/docs/observability.md.
package otelstore

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/visid/visid/internal/observe"
	"github.com/visid/visid/store"
)

// instrumentationName names the wrapper's meter and tracer.
const instrumentationName = "github.com/visid/visid/store/otelstore"

// MetricOperationDuration is the time of each store call, in seconds, by db.operation.name
// (the store and method, such as "users.get" or "pictures.add_failure") and, for a call that
// failed, error.type: "not_found", "conflict", "used", "invalid", "timeout", "canceled" or
// "other". OpenTelemetry's database conventions name it so.
const MetricOperationDuration = "db.client.operation.duration"

// Attribute keys of the wrapper's metrics and spans.
const (
	attrOperation = attribute.Key("db.operation.name")
	attrErrorType = attribute.Key("error.type")
)

// Config configures the wrapper. Every field has the default its comment gives.
type Config struct {
	// MeterProvider receives MetricOperationDuration. nil: otel.GetMeterProvider(), which
	// records nothing until the host installs an OpenTelemetry SDK.
	MeterProvider metric.MeterProvider
	// TracerProvider receives a client span for each call, named "store <operation>", a child
	// of the span in the call's context. nil: otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
}

// Wrap returns b with each of its stores that is not nil wrapped, so that every call is timed
// and traced; the calls themselves, their results and errors are b's. Stores that are nil
// stay nil.
func Wrap(b store.Backend, cfg Config) (store.Backend, error) {
	meter, tracer := observe.Providers(instrumentationName, cfg.MeterProvider, cfg.TracerProvider)
	dur, err := meter.Float64Histogram(MetricOperationDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of store calls"),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	if err != nil {
		return store.Backend{}, err
	}
	o := &observer{tracer: tracer, duration: dur}
	return o.wrap(b), nil
}

// observer times and traces the calls of the stores it wraps.
type observer struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
}

// start begins a call of op; the returned function ends it with the call's error.
func (o *observer) start(ctx context.Context, op string) (context.Context, func(error)) {
	begin := time.Now()
	ctx, span := o.tracer.Start(ctx, "store "+op, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrOperation.String(op)))
	return ctx, func(err error) {
		took := time.Since(begin).Seconds()
		kind := errorType(err)
		if kind != "" {
			span.SetAttributes(attrErrorType.String(kind))
			if kind == "other" || kind == "timeout" {
				// Not an answer of the contract but a failure; its text may name the
				// backend's internals, so only the kind is recorded.
				span.SetStatus(otelcodes.Error, kind)
			}
		}
		span.End()
		if !o.duration.Enabled(ctx) {
			return
		}
		if kind == "" {
			o.duration.Record(ctx, took, metric.WithAttributes(attrOperation.String(op)))
			return
		}
		o.duration.Record(ctx, took, metric.WithAttributes(attrOperation.String(op), attrErrorType.String(kind)))
	}
}

// errorType is the error.type of err: "" for nil, a sentinel of package store by name, and
// "other" for anything else.
func errorType(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, store.ErrNotFound):
		return "not_found"
	case errors.Is(err, store.ErrConflict):
		return "conflict"
	case errors.Is(err, store.ErrUsed):
		return "used"
	case errors.Is(err, store.ErrInvalid), errors.Is(err, store.ErrMemberNotFound):
		return "invalid"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "other"
}
