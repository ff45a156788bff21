package otelstore_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/otelstore"
	"github.com/visid/visid/store/storetest"
)

// TestConformance: a wrapped backend keeps the whole store contract.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
		b, err := otelstore.Wrap(memstore.New().Backend(), otelstore.Config{MeterProvider: mp, TracerProvider: tp})
		require.NoError(t, err)
		return b
	})
}

// durations returns the count of MetricOperationDuration by attribute set, written "k=v,k=v".
func durations(t *testing.T, reader *sdkmetric.ManualReader) map[string]uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != otelstore.MetricOperationDuration {
				continue
			}
			for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				parts := []string{}
				for _, kv := range p.Attributes.ToSlice() {
					parts = append(parts, string(kv.Key)+"="+kv.Value.Emit())
				}
				sort.Strings(parts)
				out[strings.Join(parts, ",")] = p.Count
			}
		}
	}
	return out
}

func TestMetricsAndSpans(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(spans))
	b, err := otelstore.Wrap(memstore.New().Backend(), otelstore.Config{MeterProvider: mp, TracerProvider: tp})
	require.NoError(t, err)

	ctx, parent := tp.Tracer("test").Start(context.Background(), "request")
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	u, err := b.Users.Create(ctx, "acme", store.User{UserName: "ann@example.com", Active: true})
	require.NoError(t, err)
	_, err = b.Users.Create(ctx, "acme", store.User{UserName: "ann@example.com"})
	require.ErrorIs(t, err, store.ErrConflict)
	for range 2 {
		got, err := b.Users.Get(ctx, "acme", u.ID)
		require.NoError(t, err)
		assert.Equal(t, "ann@example.com", got.UserName, "the backend's answer, unchanged")
	}
	_, err = b.Users.Get(ctx, "acme", "no-such-user")
	require.ErrorIs(t, err, store.ErrNotFound, "the backend's error, unchanged")
	_, err = b.Codes.Consume(ctx, [32]byte{1})
	require.ErrorIs(t, err, store.ErrNotFound)
	parent.End()

	want := map[string]uint64{
		"db.operation.name=tenants.create":                     1,
		"db.operation.name=users.create":                       1,
		"db.operation.name=users.create,error.type=conflict":   1,
		"db.operation.name=users.get":                          2,
		"db.operation.name=users.get,error.type=not_found":     1,
		"db.operation.name=codes.consume,error.type=not_found": 1,
	}
	assert.Equal(t, want, durations(t, reader))

	ended := spans.Ended()
	require.Len(t, ended, 8, "a span per call and the parent")
	for _, s := range ended[:7] {
		assert.True(t, strings.HasPrefix(s.Name(), "store "), s.Name())
		assert.Equal(t, trace.SpanKindClient, s.SpanKind())
		assert.Equal(t, parent.SpanContext().SpanID(), s.Parent().SpanID(), "a child of the request's span")
		attrs := attribute.NewSet(s.Attributes()...)
		op, _ := attrs.Value("db.operation.name")
		assert.Equal(t, strings.TrimPrefix(s.Name(), "store "), op.AsString())
		for _, kv := range s.Attributes() {
			for _, arg := range []string{"acme", u.ID, "ann@example.com", "no-such-user"} {
				assert.NotContains(t, kv.Value.Emit(), arg, "span %s attribute %s", s.Name(), kv.Key)
			}
		}
	}
}

// failingUsers fails every call with an error whose text names the backend's internals.
type failingUsers struct{ store.Users }

func (failingUsers) Get(context.Context, string, string) (*store.User, error) {
	return nil, errors.New("dial tcp 10.1.2.3:5432: password authentication failed for user visid")
}

func TestFailureNamesOnlyItsKind(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(spans))
	b, err := otelstore.Wrap(store.Backend{Users: failingUsers{}}, otelstore.Config{MeterProvider: mp, TracerProvider: tp})
	require.NoError(t, err)
	assert.Nil(t, b.Groups, "a store that is nil stays nil")

	_, err = b.Users.Get(context.Background(), "acme", "u1")
	require.ErrorContains(t, err, "password authentication failed", "the error reaches the caller unchanged")
	assert.Equal(t, map[string]uint64{"db.operation.name=users.get,error.type=other": 1}, durations(t, reader))
	require.Len(t, spans.Ended(), 1)
	s := spans.Ended()[0]
	assert.Equal(t, codes.Error, s.Status().Code)
	assert.Equal(t, "other", s.Status().Description)
	assert.Empty(t, s.Events(), "no error event with the error's text")
	for _, kv := range s.Attributes() {
		assert.NotContains(t, kv.Value.Emit(), "10.1.2.3")
	}
}

// ctxUsers records the context each Get is given.
type ctxUsers struct {
	store.Users
	got context.Context
}

func (u *ctxUsers) Get(ctx context.Context, tenant, id string) (*store.User, error) {
	u.got = ctx
	return u.Users.Get(ctx, tenant, id)
}

// With OpenTelemetry's no-op tracer provider, the host's way to say it traces nothing, calls
// are still measured, and the backend gets the caller's context as it was: no span is started.
func TestNoopTracerStartsNoSpan(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	mem := memstore.New().Backend()
	inner := &ctxUsers{Users: mem.Users}
	mem.Users = inner
	b, err := otelstore.Wrap(mem, otelstore.Config{MeterProvider: mp, TracerProvider: noop.NewTracerProvider()})
	require.NoError(t, err)
	ctx := context.WithValue(context.Background(), struct{}{}, "the caller's")
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme"}))
	_, err = b.Users.Get(ctx, "acme", "no-such-user")
	require.ErrorIs(t, err, store.ErrNotFound)
	assert.Equal(t, ctx, inner.got, "the caller's context, without a span")
	assert.Equal(t, map[string]uint64{
		"db.operation.name=tenants.create":                 1,
		"db.operation.name=users.get,error.type=not_found": 1,
	}, durations(t, reader))
	// Fewer allocations than with the global tracer provider, which makes a span and a context.
	global, err := otelstore.Wrap(mem, otelstore.Config{MeterProvider: mp})
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() { _, _ = b.Users.Get(ctx, "acme", "no-such-user") })
	withSpans := testing.AllocsPerRun(100, func() { _, _ = global.Users.Get(ctx, "acme", "no-such-user") })
	assert.Less(t, allocs, withSpans, "no span's allocations")
}

type unavailableUsers struct{ store.Users }

func (unavailableUsers) Get(context.Context, string, string) (*store.User, error) {
	return nil, fmt.Errorf("sqlstore: no database connection came free before the deadline: %w: %w",
		store.ErrUnavailable, context.DeadlineExceeded)
}

// A store that is unavailable is error.type unavailable, even when a deadline passed waiting
// for a connection.
func TestUnavailableKind(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	b, err := otelstore.Wrap(store.Backend{Users: unavailableUsers{}}, otelstore.Config{MeterProvider: mp})
	require.NoError(t, err)
	_, err = b.Users.Get(context.Background(), "acme", "u1")
	require.ErrorIs(t, err, store.ErrUnavailable)
	assert.Equal(t, map[string]uint64{"db.operation.name=users.get,error.type=unavailable": 1}, durations(t, reader))
}
