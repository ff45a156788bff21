package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
)

// defaultAdminAddr is where the admin server listens unless -admin-addr says otherwise: on
// loopback, off the public port.
const defaultAdminAddr = "127.0.0.1:9090"

// readyTimeout bounds each check of /readyz.
const readyTimeout = 2 * time.Second

// tracerProvider is where the service's spans go. It exports none (metrics are its telemetry),
// so it uses the no-op provider explicitly: a span then costs a request nothing, where the
// global provider, which may be replaced at any time, makes a span and a context for each.
var tracerProvider = noop.NewTracerProvider()

// newMeterProvider is an OpenTelemetry SDK meter provider whose metrics a Prometheus scrape of
// the returned handler reads, through the OpenTelemetry Prometheus exporter. It keeps no
// exemplars: they name sampled spans, and the service has none (tracerProvider), so a
// measurement need not look for one.
func newMeterProvider() (*sdkmetric.MeterProvider, http.Handler, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, nil, fmt.Errorf("the Prometheus exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter))
	return mp, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}

// readiness checks what the service needs to serve: the store answers a read, Redis (when
// configured) answers a PING, and the signing keys are loaded.
type readiness struct {
	tenants store.Tenants
	redis   func(context.Context) error // nil: no Redis
	keys    store.SigningKeys
	log     *slog.Logger
}

// check runs every check and returns what each found: "ok" or why not.
func (rd *readiness) check(ctx context.Context) (checks map[string]string, failed []string) {
	checks = map[string]string{}
	run := func(name string, f func(ctx context.Context) error) {
		ctx, cancel := context.WithTimeout(ctx, readyTimeout)
		defer cancel()
		if err := f(ctx); err != nil {
			rd.log.WarnContext(ctx, "readiness check failed", "check", name, "err", err)
			checks[name] = "failed"
			failed = append(failed, name)
			return
		}
		checks[name] = "ok"
	}
	run("store", func(ctx context.Context) error {
		_, err := rd.tenants.Get(ctx, demoTenant)
		if errors.Is(err, store.ErrNotFound) {
			return nil // the store answered
		}
		return err
	})
	if rd.redis != nil {
		run("redis", rd.redis)
	}
	run("signing_key", func(ctx context.Context) error {
		// The key ring serves keys from memory; what may fail is the store they come from.
		return openSigningKeys(ctx, rd.keys)
	})
	return checks, failed
}

// adminHandler serves /metrics, /healthz (the process is up) and /readyz (200 when every check
// of rd passes, otherwise 503; both with a JSON body naming each check's result).
func adminHandler(metrics http.Handler, rd *readiness) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		checks, failed := rd.check(r.Context())
		if len(failed) > 0 {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "failed": failed, "checks": checks})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "checks": checks})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, _ := json.Marshal(v) // maps of strings: cannot fail
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// defaultSCIMRate is -scim-rate's default: scimsvc's own limit.
var defaultSCIMRate = strconv.Itoa(scimsvc.DefaultRequestsPerMinute) + "/min"

// ratePeriods are the units -scim-rate accepts.
var ratePeriods = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "second": time.Second,
	"m": time.Minute, "min": time.Minute, "minute": time.Minute,
	"h": time.Hour, "hour": time.Hour,
}

// parseSCIMRate reads -scim-rate, N/UNIT such as 200/min or 25/s, and -scim-burst (0: N) into
// a ratelimit.Rate, or a usage error that says what is wrong.
func parseSCIMRate(s string, burst int) (ratelimit.Rate, error) {
	bad := func(why string) error {
		return &cli.UsageError{Msg: fmt.Sprintf("-scim-rate %q: %s; give requests per second, minute or hour, such as 25/s or 200/min", s, why)}
	}
	n, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return ratelimit.Rate{}, bad("no /")
	}
	limit, err := strconv.Atoi(n)
	if err != nil || limit <= 0 {
		return ratelimit.Rate{}, bad("the count must be a whole number above 0")
	}
	period, ok := ratePeriods[strings.ToLower(unit)]
	if !ok {
		return ratelimit.Rate{}, bad("the unit must be s, min or h")
	}
	if burst < 0 {
		return ratelimit.Rate{}, &cli.UsageError{Msg: fmt.Sprintf("-scim-burst %d: must not be negative (0: the rate's count)", burst)}
	}
	r := ratelimit.Rate{Limit: limit, Period: period, Burst: burst}
	if err := r.Validate(); err != nil {
		return ratelimit.Rate{}, bad(err.Error())
	}
	return r, nil
}
