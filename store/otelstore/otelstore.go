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
	"sync"
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
// failed, error.type: "not_found", "conflict", "used", "invalid", "unavailable"
// (store.ErrUnavailable), "timeout", "canceled" or "other". OpenTelemetry's database
// conventions name it so.
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
	// of the span in the call's context. nil: otel.GetTracerProvider(). OpenTelemetry's no-op
	// provider (noop.NewTracerProvider()) says the host traces nothing: no span is started.
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
	o := &observer{duration: dur}
	if observe.Traces(cfg.TracerProvider) {
		o.tracer = tracer
	}
	return o.wrap(b), nil
}

// observer times and traces the calls of the stores it wraps.
type observer struct {
	tracer   trace.Tracer // nil: the host traces nothing (observe.Traces)
	duration metric.Float64Histogram
	ops      sync.Map // operation name → *operation, made at its first call
}

// operation is what the calls of one operation share, made once so that a call allocates none
// of it: its span's name and options, and its measurements' attributes by error kind.
type operation struct {
	spanName string
	spanOpts []trace.SpanStartOption
	// record holds the options of a measurement by errorKind: the operation's name, and the
	// kind's error.type when it is not okKind.
	record [numErrorKinds][]metric.RecordOption
}

// newOperation makes the operation named op.
func newOperation(op string) *operation {
	name := attrOperation.String(op)
	o := &operation{
		spanName: "store " + op,
		spanOpts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(name)},
	}
	o.record[okKind] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(name))}
	for k := okKind + 1; k < numErrorKinds; k++ {
		o.record[k] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(name, attrErrorType.String(errorTypes[k])))}
	}
	return o
}

// operation returns the operation named op, made at its first call.
func (o *observer) operation(op string) *operation {
	if v, ok := o.ops.Load(op); ok {
		return v.(*operation)
	}
	v, _ := o.ops.LoadOrStore(op, newOperation(op))
	return v.(*operation)
}

// call is a store call under way, from start to end.
type call struct {
	ctx   context.Context // the call's, with its span: a measurement's exemplar names the span
	o     *observer
	op    *operation
	span  trace.Span // nil when the observer does not trace
	begin time.Time
}

// start begins a call of op; end ends it with the call's error.
func (o *observer) start(ctx context.Context, op string) (context.Context, call) {
	c := call{ctx: ctx, o: o, op: o.operation(op), begin: time.Now()}
	if o.tracer != nil {
		c.ctx, c.span = o.tracer.Start(ctx, c.op.spanName, c.op.spanOpts...)
	}
	return c.ctx, c
}

// end ends the call with its error: the span with the error's kind, and the measurement of its
// duration.
func (c call) end(err error) {
	took := time.Since(c.begin).Seconds()
	kind := errorKindOf(err)
	if c.span != nil {
		if kind != okKind && c.span.IsRecording() {
			c.span.SetAttributes(attrErrorType.String(errorTypes[kind]))
			if kind == otherKind || kind == timeoutKind || kind == unavailableKind {
				// Not an answer of the contract but a failure; its text may name the backend's
				// internals, so only the kind is recorded.
				c.span.SetStatus(otelcodes.Error, errorTypes[kind])
			}
		}
		c.span.End()
	}
	c.o.duration.Record(c.ctx, took, c.op.record[kind]...)
}

// errorKind is the kind of a call's error, an index of errorTypes.
type errorKind uint8

// The kinds of error a call may end with.
const (
	okKind errorKind = iota
	notFoundKind
	conflictKind
	usedKind
	invalidKind
	unavailableKind
	timeoutKind
	canceledKind
	otherKind
	numErrorKinds
)

// errorTypes are the error.type of each errorKind: "" for none.
var errorTypes = [numErrorKinds]string{"", "not_found", "conflict", "used", "invalid", "unavailable", "timeout", "canceled", "other"}

// errorKindOf is the kind of err: okKind for nil, a sentinel of package store by name, and
// otherKind for anything else.
func errorKindOf(err error) errorKind {
	switch {
	case err == nil:
		return okKind
	case errors.Is(err, store.ErrNotFound):
		return notFoundKind
	case errors.Is(err, store.ErrConflict):
		return conflictKind
	case errors.Is(err, store.ErrUsed):
		return usedKind
	case errors.Is(err, store.ErrInvalid), errors.Is(err, store.ErrMemberNotFound):
		return invalidKind
	case errors.Is(err, store.ErrUnavailable): // before the deadline, which a wait for a connection wraps too
		return unavailableKind
	case errors.Is(err, context.DeadlineExceeded):
		return timeoutKind
	case errors.Is(err, context.Canceled):
		return canceledKind
	}
	return otherKind
}
