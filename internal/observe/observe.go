// Package observe holds what visid's instrumented packages (scimsvc, oidc2fa, picture,
// otelstore) share about the OpenTelemetry API: their meter and tracer from a Config's
// providers, and a ResponseWriter that records a response's status.
package observe

import (
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Providers returns the meter and the tracer named name of mp and tp; a nil provider is the
// global one (otel.GetMeterProvider, otel.GetTracerProvider), which records nothing until a host
// installs an SDK.
func Providers(name string, mp metric.MeterProvider, tp trace.TracerProvider) (metric.Meter, trace.Tracer) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return mp.Meter(name), tp.Tracer(name)
}

// Traces reports whether tp may record spans: false only for OpenTelemetry's no-op provider
// (noop.NewTracerProvider), with which a host says that it traces nothing, so that an
// instrumented package starts no span at all rather than one that records nothing.
func Traces(tp trace.TracerProvider) bool {
	_, off := tp.(noop.TracerProvider)
	return !off
}

// StatusWriter records the status of the response written through it: the first
// WriteHeader's, or 200 at the first Write; 0 while nothing was written.
type StatusWriter struct {
	http.ResponseWriter
	Status int
}

func (s *StatusWriter) WriteHeader(code int) {
	if s.Status == 0 {
		s.Status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *StatusWriter) Write(b []byte) (int, error) {
	if s.Status == 0 {
		s.Status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *StatusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
