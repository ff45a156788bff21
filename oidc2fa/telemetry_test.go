package oidc2fa_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/visid/visid/internal/telemetrytest"
	"github.com/visid/visid/oidc2fa"
	"github.com/visid/visid/store"
)

// telemetryEnv is an env whose provider reports to an in-memory meter and tracer.
type telemetryEnv struct {
	*env
	rec   *telemetrytest.Recorder
	spans *tracetest.SpanRecorder
}

func newTelemetryEnv(t *testing.T, configure ...func(*oidc2fa.Config)) *telemetryEnv {
	rec := telemetrytest.New(t)
	e := newEnv(t, append([]func(*oidc2fa.Config){func(c *oidc2fa.Config) {
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

func TestMetricsSignInAndCodes(t *testing.T) {
	e := newTelemetryEnv(t)
	code := e.code()
	e.redeem(code)
	require.Equal(t, http.StatusBadRequest, e.postToken(e.tokenForm(code), nil).Code, "a replay")
	e.pushed(e.pushParams())

	m := e.metrics()
	assert.Equal(t, map[string]int64{"": 1}, m[oidc2fa.MetricAuthorizations])
	assert.Equal(t, map[string]int64{"visid.outcome=succeeded": 1}, m[oidc2fa.MetricOutcomes])
	assert.Equal(t, map[string]int64{"": 1}, m[oidc2fa.MetricCodesRedeemed])
	assert.Equal(t, map[string]int64{"": 1}, m[oidc2fa.MetricCodeReplays])
	assert.Equal(t, map[string]int64{"": 1}, m[oidc2fa.MetricPushedRequests])
	assert.Equal(t, map[string]int64{
		"http.request.method=GET,http.response.status_code=303,visid.oidc.endpoint=authorize": 1,
		"http.request.method=GET,http.response.status_code=303,visid.oidc.endpoint=login":     1,
		"http.request.method=POST,http.response.status_code=200,visid.oidc.endpoint=token":    1,
		"http.request.method=POST,http.response.status_code=400,visid.oidc.endpoint=token":    1,
		"http.request.method=POST,http.response.status_code=201,visid.oidc.endpoint=par":      1,
	}, m[oidc2fa.MetricRequestDuration])

	for _, s := range e.spans.Ended() {
		assert.True(t, strings.HasPrefix(s.Name(), "OIDC "), s.Name())
		for _, kv := range s.Attributes() {
			v := kv.Value.Emit()
			for _, secret := range []string{code, e.secret, "ann@example.com", "st-123", "n-456", "acme"} {
				assert.NotContains(t, v, secret, "span %s attribute %s", s.Name(), kv.Key)
			}
		}
	}
	assert.Len(t, e.spans.Ended(), 5)
}

func TestMetricsOutcomes(t *testing.T) {
	cases := []struct {
		name, hint, decision, outcome string
	}{
		{"approved", "ann@example.com", "approve", "succeeded"},
		{"denied", "ann@example.com", "deny", "failed"},
		{"cancelled", "ann@example.com", "cancel", "cancelled"},
		{"inactive user", "bob@example.com", "approve", "failed"},
		{"unknown user approved", "nobody@example.com", "approve", "unknown_user"},
		{"unknown user cancelled", "nobody@example.com", "cancel", "unknown_user"},
		{"hint naming two users approved", "ann.lee@example.com", "approve", "ambiguous_hint"},
		{"hint naming two users cancelled", "ANN.LEE@example.com", "cancel", "ambiguous_hint"},
		{"hint naming two users denied", "Ann.Lee@Example.com", "deny", "ambiguous_hint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTelemetryEnv(t)
			// ann's primary email as another user's userName: that hint names two users.
			_, err := e.mem.Backend().Users.Create(t.Context(), "acme", store.User{UserName: "ann.lee@example.com", Active: true})
			require.NoError(t, err)
			e.manual()
			params := e.authParams()
			params.Set("login_hint", c.hint)
			b := e.browser()
			path, page := b.start(params)
			q := callback(t, b.decide(path, csrfToken(t, page), c.decision))
			assert.Equal(t, c.outcome == "succeeded", q.Get("code") != "", "callback: %v", q)
			m := e.metrics()
			assert.Equal(t, map[string]int64{"": 1}, m[oidc2fa.MetricAuthorizations])
			assert.Equal(t, map[string]int64{"visid.outcome=" + c.outcome: 1}, m[oidc2fa.MetricOutcomes])
		})
	}
}

func TestMetricsTenant(t *testing.T) {
	cases := []struct {
		name    string
		tenants bool
		want    string
	}{
		{"off by default", false, "visid.outcome=succeeded"},
		{"on", true, "visid.outcome=succeeded,visid.tenant=acme"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTelemetryEnv(t, func(cfg *oidc2fa.Config) { cfg.MetricsTenant = c.tenants })
			e.code()
			m := e.metrics()
			assert.Equal(t, map[string]int64{c.want: 1}, m[oidc2fa.MetricOutcomes])
			for series := range m[oidc2fa.MetricRequestDuration] {
				assert.NotContains(t, series, "visid.tenant", "a path may name any tenant")
			}
		})
	}
}

// TestMetricsUnknownPaths checks that a path naming no endpoint makes no series of its own.
func TestMetricsUnknownPaths(t *testing.T) {
	e := newTelemetryEnv(t)
	for _, p := range []string{"/nope", "/x/y/z", "/" + url.PathEscape("a b") + "/c"} {
		require.Equal(t, http.StatusNotFound, httpRecord(e.handler, "GET", p).Code, p)
	}
	assert.Equal(t, map[string]int64{
		"http.request.method=GET,http.response.status_code=404,visid.oidc.endpoint=other": 3,
	}, e.metrics()[oidc2fa.MetricRequestDuration])
}
