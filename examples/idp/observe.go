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
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
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
// measurement need not look for one. Beside them the scrape has the Prometheus client's Go
// runtime metrics (go_goroutines, go_memstats_…, go_gc_duration_seconds) and process metrics
// (process_resident_memory_bytes, process_open_fds, process_cpu_seconds_total), the names
// every Go dashboard expects.
func newMeterProvider() (*sdkmetric.MeterProvider, http.Handler, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, nil, fmt.Errorf("the Go runtime metrics: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, nil, fmt.Errorf("the process metrics: %w", err)
	}
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, nil, fmt.Errorf("the Prometheus exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter))
	return mp, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}

// checkEvery is how long a result of the store's and Redis's checks is reused: the store's
// write probe and Redis's PING run at most once in that time, however often the balancer asks
// /readyz or Prometheus scrapes.
const checkEvery = 5 * time.Second

// readiness checks what the service needs to serve traffic: the store answers a read and takes
// a write (probe), and the signing keys can be read. Redis is not one of them: without it the
// rate limits fall back to each instance's memory, so an outage shows in /healthz, the metric
// visid_redis_up and the log, and the instance stays ready.
type readiness struct {
	tenants store.Tenants
	// probe checks that the store takes writes, leaving nothing (sqlstore's Probe); nil: the
	// store always does (memory).
	probe func(context.Context) error
	redis *redisHealth // nil: no Redis
	size  *storeSize   // nil: a store without a size (memory)
	keys  store.SigningKeys
	log   *slog.Logger

	mu        sync.Mutex
	storeAt   time.Time // when storeErr was found; zero: never
	storeErr  error
	storeBusy chan struct{} // closed when the running store check ends; nil when none runs
}

// check runs every check and returns what each found: "ok" or why not. failed names the checks
// that make the instance unready.
func (rd *readiness) check(ctx context.Context) (checks map[string]string, failed []string) {
	checks = map[string]string{}
	result := func(name string, err error) {
		if err != nil {
			rd.log.WarnContext(ctx, "readiness check failed", "check", name, "err", err)
			checks[name] = "failed"
			failed = append(failed, name)
			return
		}
		checks[name] = "ok"
	}
	result("store", rd.storeCheck(ctx))
	if rd.redis != nil {
		checks["redis"] = rd.redis.state(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	// The key ring serves keys from memory; what may fail is the store they come from.
	result("signing_key", openSigningKeys(ctx, rd.keys))
	return checks, failed
}

// storeCheck reads a tenant and runs the write probe, or returns the result of a check less than
// checkEvery old. Requests that come while a check runs wait for its result.
func (rd *readiness) storeCheck(ctx context.Context) error {
	rd.mu.Lock()
	for rd.storeBusy != nil {
		busy := rd.storeBusy
		rd.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return ctx.Err()
		}
		rd.mu.Lock()
	}
	if !rd.storeAt.IsZero() && time.Since(rd.storeAt) < checkEvery {
		err := rd.storeErr
		rd.mu.Unlock()
		return err
	}
	busy := make(chan struct{})
	rd.storeBusy = busy
	rd.mu.Unlock()

	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readyTimeout)
	defer cancel()
	_, err := rd.tenants.Get(cctx, demoTenant)
	if errors.Is(err, store.ErrNotFound) {
		err = nil // the store answered
	}
	if err == nil && rd.probe != nil {
		if perr := rd.probe(cctx); perr != nil {
			err = fmt.Errorf("the store answers reads but takes no write: %w", perr)
		}
	}
	rd.mu.Lock()
	rd.storeAt, rd.storeErr, rd.storeBusy = time.Now(), err, nil
	rd.mu.Unlock()
	close(busy)
	return err
}

// redisHealth follows whether the Redis of the rate limits answers: it pings at most every
// checkEvery, and logs when Redis goes away and comes back.
type redisHealth struct {
	ping func(context.Context) error
	log  *slog.Logger

	mu      sync.Mutex
	checked time.Time
	up      bool
}

// state is "ok" when Redis answered its last PING, else "unreachable".
func (h *redisHealth) state(ctx context.Context) string {
	if h.isUp(ctx) {
		return "ok"
	}
	return "unreachable"
}

// isUp pings Redis unless it did less than checkEvery ago, and reports whether it answered.
func (h *redisHealth) isUp(ctx context.Context) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.checked.IsZero() && time.Since(h.checked) < checkEvery {
		return h.up
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	err := h.ping(ctx)
	up := err == nil
	switch {
	case !up && (h.up || h.checked.IsZero()):
		h.log.WarnContext(ctx, "redis unreachable: the rate limits fall back to this instance's memory", "err", err)
	case up && !h.up && !h.checked.IsZero():
		h.log.InfoContext(ctx, "redis reachable again: the rate limits are shared again")
	}
	h.checked, h.up = time.Now(), up
	return up
}

// observe registers the gauge visid_redis_up (1 when Redis answers, 0 when not) with mp.
func (h *redisHealth) observe(mp metric.MeterProvider) error {
	_, err := mp.Meter("github.com/visid/visid/examples/idp").Int64ObservableGauge("visid.redis.up",
		metric.WithDescription("Whether the Redis of the shared rate limits answers (1) or not (0): without it each instance limits in its own memory."),
		metric.WithInt64Callback(func(ctx context.Context, o metric.Int64Observer) error {
			v := int64(0)
			if h.isUp(ctx) {
				v = 1
			}
			o.Observe(v)
			return nil
		}))
	return err
}

// adminHandler serves /metrics, /healthz (200 while the process is up; its JSON names the
// state of Redis when there is one) and /readyz (200 when every check of rd passes, otherwise
// 503; its JSON names each check's result).
func adminHandler(metrics http.Handler, rd *readiness) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		body := map[string]any{"status": "ok"}
		if rd.redis != nil {
			body["checks"] = map[string]string{"redis": rd.redis.state(r.Context())}
		}
		if rd.size != nil {
			if n, err := rd.size.bytes(r.Context()); err == nil {
				body["store_bytes"] = n
			}
		}
		writeJSON(w, http.StatusOK, body)
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

// sizeEvery is how long a reading of the store's size is reused.
const sizeEvery = 30 * time.Second

// storeSize reports the bytes the store's data takes, on /healthz (store_bytes) and as the gauge
// visid_store_size_bytes, read at most once every sizeEvery.
type storeSize struct {
	read func(context.Context) (int64, error)

	mu  sync.Mutex
	at  time.Time
	n   int64
	err error
}

// bytes returns the store's size, read again when the last reading is sizeEvery old.
func (s *storeSize) bytes(ctx context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at.IsZero() || time.Since(s.at) >= sizeEvery {
		ctx, cancel := context.WithTimeout(ctx, readyTimeout)
		defer cancel()
		s.n, s.err = s.read(ctx)
		s.at = time.Now()
	}
	return s.n, s.err
}

// observe registers the gauge visid_store_size_bytes with mp.
func (s *storeSize) observe(mp metric.MeterProvider) error {
	_, err := mp.Meter("github.com/visid/visid/examples/idp").Int64ObservableGauge("visid.store.size",
		metric.WithUnit("By"),
		metric.WithDescription("The bytes the store's data takes in its database (SQLite: the database file; PostgreSQL: the schema's tables with their indexes)."),
		metric.WithInt64Callback(func(ctx context.Context, o metric.Int64Observer) error {
			if n, err := s.bytes(ctx); err == nil {
				o.Observe(n)
			}
			return nil
		}))
	return err
}
