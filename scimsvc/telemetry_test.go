package scimsvc_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/visid/visid/internal/telemetrytest"
	"github.com/visid/visid/scimsvc"
)

// telemetryEnv is an env whose handler reports to an in-memory meter and tracer.
type telemetryEnv struct {
	*env
	rec   *telemetrytest.Recorder
	spans *tracetest.SpanRecorder
}

func newTelemetryEnv(t *testing.T, configure ...func(*scimsvc.Config)) *telemetryEnv {
	rec := telemetrytest.New(t)
	e := newEnv(t, append([]func(*scimsvc.Config){func(c *scimsvc.Config) {
		c.MeterProvider, c.TracerProvider = rec.MeterProvider, rec.TracerProvider
	}}, configure...)...)
	return &telemetryEnv{env: e, rec: rec, spans: rec.Spans}
}

// metrics returns, for each metric name, each attribute set written "k=v,k=v" (sorted by key)
// with its value: a counter's sum, a histogram's count.
func (e *telemetryEnv) metrics() map[string]map[string]int64 {
	e.t.Helper()
	return e.rec.Metrics(e.t)
}

func TestMetricsCountRequests(t *testing.T) {
	e := newTelemetryEnv(t)
	created := e.do("POST", "/acme/Users", map[string]any{
		"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:User"}, "userName": "ann@example.com"})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Body))
	id := created.JSON(t)["id"].(string)
	steps := []struct {
		method, path string
		status       int
	}{
		{"GET", "/acme/Users/" + id, http.StatusOK},
		{"GET", "/acme/Users/" + id, http.StatusOK},
		{"GET", "/acme/Users/no-such-id", http.StatusNotFound},
		{"GET", "/acme/Groups", http.StatusOK},
		{"GET", "/acme/Users?filter=" + "userName%20eq", http.StatusBadRequest},
		{"GET", "/acme/ServiceProviderConfig", http.StatusOK},
		{"DELETE", "/acme/Users/" + id, http.StatusNoContent},
	}
	for _, s := range steps {
		require.Equal(t, s.status, e.do(s.method, s.path, nil).Status, "%s %s", s.method, s.path)
	}

	m := e.metrics()
	assert.Equal(t, map[string]int64{
		"http.request.method=POST,http.response.status_class=2xx,http.response.status_code=201,visid.scim.resource_type=Users":                1,
		"http.request.method=GET,http.response.status_class=2xx,http.response.status_code=200,visid.scim.resource_type=Users":                 2,
		"http.request.method=GET,http.response.status_class=4xx,http.response.status_code=404,visid.scim.resource_type=Users":                 1,
		"http.request.method=GET,http.response.status_class=2xx,http.response.status_code=200,visid.scim.resource_type=Groups":                1,
		"http.request.method=GET,http.response.status_class=4xx,http.response.status_code=400,visid.scim.resource_type=Users":                 1,
		"http.request.method=GET,http.response.status_class=2xx,http.response.status_code=200,visid.scim.resource_type=ServiceProviderConfig": 1,
		"http.request.method=DELETE,http.response.status_class=2xx,http.response.status_code=204,visid.scim.resource_type=Users":              1,
	}, m[scimsvc.MetricRequests])
	assert.Equal(t, m[scimsvc.MetricRequests], m[scimsvc.MetricRequestDuration], "one duration per request")
	assert.Equal(t, map[string]int64{"": 1}, m[scimsvc.MetricFilterErrors])
	assert.NotContains(t, m, scimsvc.MetricAuthFailures, "no request failed its key")
	assert.NotContains(t, m, scimsvc.MetricRateLimited)
}

func TestMetricsCountAuthFailures(t *testing.T) {
	e := newTelemetryEnv(t)
	revoked, rk := e.issueKey(scimsvc.KeySpec{Name: "old", Tenants: []string{"acme"}})
	require.NoError(t, scimsvc.RevokeAPIKey(context.Background(), e.mem.APIKeys(), rk.ID, e.clock.Now()))
	audit, _ := e.issueKey(scimsvc.KeySpec{Name: "audit", Tenants: []string{"acme"}, Scopes: []string{"audit"}})
	unknown := e.key[:len(e.key)-4] + "AAAA"
	if unknown == e.key {
		unknown = e.key[:len(e.key)-4] + "BBBB"
	}
	cases := []struct {
		name, key, path, reason string
		status                  int
	}{
		{"no key", "", "/acme/Users", "missing", http.StatusUnauthorized},
		{"not a visid key", "hello", "/acme/Users", "missing", http.StatusUnauthorized},
		{"unknown key", unknown, "/acme/Users", "unknown", http.StatusUnauthorized},
		{"revoked key", revoked, "/acme/Users", "revoked", http.StatusUnauthorized},
		{"key without the scim scope", audit, "/acme/Users", "scope", http.StatusForbidden},
		{"another tenant", e.key, "/globex/Users", "tenant", http.StatusForbidden},
		{"no such tenant", e.key, "/initech/Users", "tenant", http.StatusForbidden},
	}
	want := map[string]int64{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.status, e.doKey(c.key, "GET", c.path, nil).Status)
			want["visid.reason="+c.reason]++
			assert.Equal(t, want, e.metrics()[scimsvc.MetricAuthFailures])
		})
	}
}

func TestMetricsCountRateLimited(t *testing.T) {
	cases := []struct {
		name      string
		configure func(*scimsvc.Config)
		key       bool // send the env's valid key
		allowed   int  // requests answered before the first 429
		limit     string
	}{
		{"key rate", func(c *scimsvc.Config) { c.RateLimiter = perMinuteLimiter(t, c, 3) }, true, 3, "key"},
		{"failures of an address", func(c *scimsvc.Config) { c.AddressLimiter = perMinuteLimiter(t, c, 2) }, false, 2, "address"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTelemetryEnv(t, c.configure)
			key := ""
			if c.key {
				key = e.key
			}
			for range c.allowed {
				require.NotEqual(t, http.StatusTooManyRequests, e.doKey(key, "GET", "/acme/Users", nil).Status)
			}
			for range 2 {
				require.Equal(t, http.StatusTooManyRequests, e.doKey(key, "GET", "/acme/Users", nil).Status)
			}
			m := e.metrics()
			assert.Equal(t, map[string]int64{"visid.limit=" + c.limit: 2}, m[scimsvc.MetricRateLimited])
			assert.Equal(t, int64(2), m[scimsvc.MetricRequests]["http.request.method=GET,http.response.status_class=4xx,http.response.status_code=429,visid.scim.resource_type=Users"])
		})
	}
}

func TestMetricsTenant(t *testing.T) {
	cases := []struct {
		name     string
		tenants  bool
		requests map[string]int64
	}{
		{"off by default", false, map[string]int64{
			"http.request.method=GET,http.response.status_class=2xx,http.response.status_code=200,visid.scim.resource_type=Users": 1,
			"http.request.method=GET,http.response.status_class=4xx,http.response.status_code=403,visid.scim.resource_type=Users": 1,
			"http.request.method=GET,http.response.status_class=4xx,http.response.status_code=401,visid.scim.resource_type=Users": 1,
		}},
		{"on: only a tenant the key may act on", true, map[string]int64{
			"http.request.method=GET,http.response.status_class=2xx,http.response.status_code=200,visid.scim.resource_type=Users,visid.tenant=acme": 1,
			"http.request.method=GET,http.response.status_class=4xx,http.response.status_code=403,visid.scim.resource_type=Users":                   1,
			"http.request.method=GET,http.response.status_class=4xx,http.response.status_code=401,visid.scim.resource_type=Users":                   1,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTelemetryEnv(t, func(cfg *scimsvc.Config) { cfg.MetricsTenant = c.tenants })
			require.Equal(t, http.StatusOK, e.do("GET", "/acme/Users", nil).Status)
			require.Equal(t, http.StatusForbidden, e.do("GET", "/globex/Users", nil).Status)
			require.Equal(t, http.StatusUnauthorized, e.doKey("", "GET", "/made-up-by-a-client/Users", nil).Status)
			m := e.metrics()
			assert.Equal(t, c.requests, m[scimsvc.MetricRequests])
			assert.Equal(t, map[string]int64{"visid.reason=tenant": 1, "visid.reason=missing": 1}, m[scimsvc.MetricAuthFailures],
				"refused before any tenant is known to be the key's: no tenant")
		})
	}
}

func TestSpansCarryNoSecrets(t *testing.T) {
	e := newTelemetryEnv(t)
	created := e.do("POST", "/acme/Users", map[string]any{
		"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:User"}, "userName": "ann@example.com"})
	require.Equal(t, http.StatusCreated, created.Status)
	id := created.JSON(t)["id"].(string)
	require.Equal(t, http.StatusOK, e.do("GET", `/acme/Users?filter=userName%20eq%20%22ann@example.com%22`, nil).Status)
	require.Equal(t, http.StatusUnauthorized, e.doKey(e.key+"x", "GET", "/acme/Users/"+id, nil).Status)

	spans := e.spans.Ended()
	require.Len(t, spans, 3)
	want := []struct {
		name   string
		status int64
	}{{"SCIM POST Users", 201}, {"SCIM GET Users", 200}, {"SCIM GET Users", 401}}
	for i, s := range spans {
		assert.Equal(t, want[i].name, s.Name())
		assert.Equal(t, trace.SpanKindServer, s.SpanKind())
		attrs := attribute.NewSet(s.Attributes()...)
		code, ok := attrs.Value("http.response.status_code")
		require.True(t, ok)
		assert.Equal(t, want[i].status, code.AsInt64())
		for _, kv := range s.Attributes() {
			v := kv.Value.Emit()
			for _, secret := range []string{e.key, id, "ann@example.com", "acme"} {
				assert.NotContains(t, v, secret, "attribute %s", kv.Key)
			}
		}
	}
}

// With OpenTelemetry's no-op tracer provider (a host that traces nothing), requests are still
// measured.
func TestMetricsWithoutTracing(t *testing.T) {
	rec := telemetrytest.New(t)
	e := newEnv(t, func(c *scimsvc.Config) {
		c.MeterProvider, c.TracerProvider = rec.MeterProvider, noop.NewTracerProvider()
	})
	created := e.do("POST", "/acme/Users", map[string]any{
		"schemas": []string{"urn:ietf:params:scim:schemas:core:2.0:User"}, "userName": "ann@example.com"})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Body))
	require.Equal(t, http.StatusNotFound, e.do("GET", "/acme/Users/no-such-id", nil).Status)
	m := rec.Metrics(t)
	assert.Equal(t, map[string]int64{
		"http.request.method=POST,http.response.status_class=2xx,http.response.status_code=201,visid.scim.resource_type=Users": 1,
		"http.request.method=GET,http.response.status_class=4xx,http.response.status_code=404,visid.scim.resource_type=Users":  1,
	}, m[scimsvc.MetricRequests])
	assert.Equal(t, m[scimsvc.MetricRequests], m[scimsvc.MetricRequestDuration])
	assert.Empty(t, rec.Spans.Ended())
}
