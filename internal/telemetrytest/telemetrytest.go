// Package telemetrytest gives visid's tests an OpenTelemetry SDK that keeps what it records in
// memory: a meter provider with a manual reader and a tracer provider that samples every span.
// Only tests import it, so the SDK stays out of the library.
package telemetrytest

import (
	"context"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Recorder is an in-memory SDK: pass MeterProvider and TracerProvider to the Config under test,
// then read Metrics and Spans.
type Recorder struct {
	MeterProvider  *sdkmetric.MeterProvider
	TracerProvider *sdktrace.TracerProvider
	Reader         *sdkmetric.ManualReader
	Spans          *tracetest.SpanRecorder
}

// New returns a Recorder whose providers are shut down when t ends.
func New(t testing.TB) *Recorder {
	r := &Recorder{Reader: sdkmetric.NewManualReader(), Spans: tracetest.NewSpanRecorder()}
	r.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.Reader))
	r.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(r.Spans))
	t.Cleanup(func() {
		_ = r.MeterProvider.Shutdown(context.Background())
		_ = r.TracerProvider.Shutdown(context.Background())
	})
	return r
}

// Metrics returns, for each metric name, each attribute set written "k=v,k=v" (sorted by key)
// with its value: a counter's sum, a histogram's count.
func (r *Recorder) Metrics(t testing.TB) map[string]map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collecting the metrics: %v", err)
	}
	out := map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			series := map[string]int64{}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					series[AttrString(p.Attributes)] = p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					series[AttrString(p.Attributes)] = int64(p.Count)
				}
			default:
				t.Fatalf("metric %s has unexpected data %T", m.Name, m.Data)
			}
			out[m.Name] = series
		}
	}
	return out
}

// AttrString writes s as "k=v,k=v", sorted by key.
func AttrString(s attribute.Set) string {
	parts := make([]string, 0, s.Len())
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.Emit())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
