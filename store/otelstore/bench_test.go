package otelstore_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
	"github.com/visid/visid/store/otelstore"
)

// BenchmarkUsersGet is a memstore Users.Get bare and wrapped: with the default providers
// (which record nothing), with an SDK meter provider and the default tracer, with an SDK meter
// provider and OpenTelemetry's no-op tracer provider (as examples/idp runs: no span at all), and
// with an SDK meter and tracer that samples every span. The figures to quote are
// each wrapped variant's time per call minus bare's: what the wrapper adds to a call.
func BenchmarkUsersGet(b *testing.B) {
	ctx := context.Background()
	mem := memstore.New().Backend()
	if err := mem.Tenants.Create(ctx, store.Tenant{ID: "acme"}); err != nil {
		b.Fatal(err)
	}
	u, err := mem.Users.Create(ctx, "acme", store.User{UserName: "ann@example.com", Active: true})
	if err != nil {
		b.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(tracetest.NewInMemoryExporter()))
	defer func() {
		_ = mp.Shutdown(ctx)
		_ = tp.Shutdown(ctx)
	}()
	for _, c := range []struct {
		name string
		cfg  *otelstore.Config // nil: bare
	}{
		{"bare", nil},
		{"default", &otelstore.Config{}},
		{"meter", &otelstore.Config{MeterProvider: mp}},
		{"meter+noop", &otelstore.Config{MeterProvider: mp, TracerProvider: noop.NewTracerProvider()}},
		{"meter+tracer", &otelstore.Config{MeterProvider: mp, TracerProvider: tp}},
	} {
		b.Run(c.name, func(b *testing.B) {
			users := mem.Users
			if c.cfg != nil {
				w, err := otelstore.Wrap(mem, *c.cfg)
				if err != nil {
					b.Fatal(err)
				}
				users = w.Users
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := users.Get(ctx, "acme", u.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
