package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/ratelimit"
)

// observedService is a run of the service in this process whose admin server the test reaches.
type observedService struct {
	vars  map[string]string
	admin string // http://host:port of the admin server
	logs  *syncBuffer
}

// startObserved runs the service with extra flags, its admin server on a free port, and
// returns its key=value lines and the admin server's URL, read from its log.
func startObserved(t *testing.T, extra ...string) *observedService {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	logs := &syncBuffer{}
	args := []string{"-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0"}
	if !slices.Contains(extra, "-db") {
		args = append(args, "-db", "memory")
	}
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append(args, extra...), pw, io.MultiWriter(t.Output(), logs))
		pw.CloseWithError(fmt.Errorf("run returned %v", err))
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	r := bufio.NewReader(pr)
	_, vars, err := readVars(r)
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, r) }()
	require.Eventually(t, func() bool { return adminRE.MatchString(logs.String()) }, 10*time.Second, 10*time.Millisecond)
	return &observedService{vars: vars, admin: "http://" + adminRE.FindStringSubmatch(logs.String())[1], logs: logs}
}

// get fetches path from the admin server and returns the status and body.
func (s *observedService) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", s.admin+path, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

// ready returns the status and JSON body of /readyz.
func (s *observedService) ready(t *testing.T) (int, map[string]any) {
	t.Helper()
	status, body := s.get(t, "/readyz")
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m), "%s", body)
	return status, m
}

// scrape reads /metrics with the Prometheus text parser.
func (s *observedService) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	status, body := s.get(t, "/metrics")
	require.Equal(t, http.StatusOK, status)
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err)
	return families
}

// counter is the value of family's sample whose labels include want, or 0 when there is none.
func counter(families map[string]*dto.MetricFamily, family string, want map[string]string) float64 {
	f := families[family]
	if f == nil {
		return 0
	}
	total := 0.0
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		total += m.GetCounter().GetValue()
	}
	return total
}

// familyNames lists the names of families, for failure messages.
func familyNames(families map[string]*dto.MetricFamily) string {
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

// TestAdminServer runs the README's quick-start requests and reads their counts back from
// /metrics, parsed as Prometheus text; /healthz and /readyz answer 200.
func TestAdminServer(t *testing.T) {
	s := startObserved(t)
	status, body := s.get(t, "/healthz")
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"status":"ok"}`, string(body))
	status, ready := s.ready(t)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, map[string]any{"status": "ready", "checks": map[string]any{"store": "ok", "signing_key": "ok"}}, ready)

	base, key := s.vars["scim_base_url"], s.vars["scim_api_key"]
	resp, created := scimRequest(t, "POST", base+"/Users", key,
		`{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"bjensen@example.com","active":true}`)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	id := created["id"].(string)
	resp, _ = scimRequest(t, "GET", base+"/Users?filter="+url.QueryEscape(`userName eq "bjensen@example.com"`), key, "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = scimRequest(t, "PATCH", base+"/Users/"+id, key,
		`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"replace","path":"active","value":false}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = scimRequest(t, "DELETE", base+"/Users/"+id, key, "")
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	resp, _ = scimRequest(t, "GET", base+"/Users", "", "")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	families := s.scrape(t)
	for _, c := range []struct {
		method, status string
	}{{"POST", "201"}, {"GET", "200"}, {"PATCH", "200"}, {"DELETE", "204"}, {"GET", "401"}} {
		assert.Equal(t, 1.0, counter(families, "visid_scim_requests_total", map[string]string{
			"visid_scim_resource_type": "Users", "http_request_method": c.method, "http_response_status_code": c.status,
		}), "%s %s; families: %s", c.method, c.status, familyNames(families))
	}
	assert.Equal(t, 1.0, counter(families, "visid_scim_auth_failures_total", map[string]string{"visid_reason": "missing"}))
	hist := families["http_server_request_duration_seconds"]
	require.NotNil(t, hist, familyNames(families))
	assert.Equal(t, dto.MetricType_HISTOGRAM, hist.GetType())
	store := families["db_client_operation_duration_seconds"]
	require.NotNil(t, store, familyNames(families))
	ops := map[string]bool{}
	for _, m := range store.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "db_operation_name" {
				ops[l.GetValue()] = true
			}
		}
	}
	for _, op := range []string{"users.create", "users.list", "users.update", "users.delete", "api_keys.by_hash"} {
		assert.True(t, ops[op], "store operation %s in %v", op, ops)
	}

	// The counters move with the next request.
	resp, _ = scimRequest(t, "GET", base+"/Users", key, "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 1.0, counter(s.scrape(t), "visid_scim_requests_total", map[string]string{
		"http_request_method": "GET", "http_response_status_code": "200", "visid_scim_resource_type": "Users"})-
		counter(families, "visid_scim_requests_total", map[string]string{
			"http_request_method": "GET", "http_response_status_code": "200", "visid_scim_resource_type": "Users"}))
}

// proxy forwards TCP connections from a port of its own to target; stop closes the port and
// every connection, start opens the same port again.
type proxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{t: t, target: target, addr: "127.0.0.1:0"}
	p.start()
	p.addr = p.ln.Addr().String()
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) start() {
	ln, err := net.Listen("tcp", p.addr)
	require.NoError(p.t, err)
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestReadyzFollowsPostgres: /readyz is 503, naming the store, while PostgreSQL cannot be
// reached (its port closed), and 200 again once it can; /healthz stays 200.
func TestReadyzFollowsPostgres(t *testing.T) {
	t.Setenv(kekEnv, base64.StdEncoding.EncodeToString(randomKEK()))
	dsn, err := url.Parse(postgresSchema(t, serviceEnv(t, "VISID_TEST_POSTGRES_DSN")))
	require.NoError(t, err)
	px := newProxy(t, dsn.Host)
	dsn.Host = px.addr
	q := dsn.Query()
	q.Set("connect_timeout", "1")
	dsn.RawQuery = q.Encode()
	s := startObserved(t, "-db", dsn.String())

	steps := []struct {
		name   string
		change func()
		status int
		body   map[string]any
	}{
		{"reachable", func() {}, http.StatusOK,
			map[string]any{"status": "ready", "checks": map[string]any{"store": "ok", "signing_key": "ok"}}},
		{"port closed", px.stop, http.StatusServiceUnavailable,
			// The JWKS reads the keys from the store, so they cannot be published either.
			map[string]any{"status": "not ready", "failed": []any{"store", "signing_key"}, "checks": map[string]any{"store": "failed", "signing_key": "failed"}}},
		{"port open again", px.start, http.StatusOK,
			map[string]any{"status": "ready", "checks": map[string]any{"store": "ok", "signing_key": "ok"}}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.change()
			var status int
			var body map[string]any
			// The pool may hold a connection that breaks only when used: a check or two; and
			// the store's check is reused for checkEvery.
			require.Eventually(t, func() bool {
				status, body = s.ready(t)
				return status == st.status && assert.ObjectsAreEqual(st.body, body)
			}, 15*time.Second, 100*time.Millisecond, "last answer %d %v", status, body)
			assert.Equal(t, st.body, body)
			hs, _ := s.get(t, "/healthz")
			assert.Equal(t, http.StatusOK, hs, "the process is up either way")
		})
	}
}

// TestSCIMRateFlags: -scim-rate and -scim-burst set how many requests a key gets before 429,
// in memory and on Redis; /readyz checks Redis when it is used.
func TestSCIMRateFlags(t *testing.T) {
	redisURL := func(t *testing.T) string { return "redis://" + serviceEnv(t, "VISID_TEST_REDIS_ADDR") + "/0" }
	for _, tt := range []struct {
		name    string
		flags   func(t *testing.T) []string
		allowed int
		checks  map[string]any
	}{
		{"3 a minute", func(*testing.T) []string { return []string{"-scim-rate", "3/min"} }, 3,
			map[string]any{"store": "ok", "signing_key": "ok"}},
		{"1 a second, burst 5", func(*testing.T) []string { return []string{"-scim-rate", "1/s", "-scim-burst", "5"} }, 5,
			map[string]any{"store": "ok", "signing_key": "ok"}},
		{"4 an hour on Redis", func(t *testing.T) []string { return []string{"-scim-rate", "4/h", "-redis", redisURL(t)} }, 4,
			map[string]any{"store": "ok", "signing_key": "ok", "redis": "ok"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := startObserved(t, tt.flags(t)...)
			status, ready := s.ready(t)
			require.Equal(t, http.StatusOK, status)
			assert.Equal(t, tt.checks, ready["checks"])
			target := s.vars["scim_base_url"] + "/Users"
			for i := range tt.allowed {
				resp, _ := scimRequest(t, "GET", target, s.vars["scim_api_key"], "")
				require.Equal(t, http.StatusOK, resp.StatusCode, "request %d", i+1)
			}
			resp, body := scimRequest(t, "GET", target, s.vars["scim_api_key"], "")
			assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
			assert.Equal(t, "429", body["status"])
			assert.NotEmpty(t, resp.Header.Get("Retry-After"))
			assert.Equal(t, 1.0, counter(s.scrape(t), "visid_scim_rate_limited_total", map[string]string{"visid_limit": "key"}))
		})
	}
}

func TestParseSCIMRate(t *testing.T) {
	for _, tt := range []struct {
		in    string
		burst int
		want  ratelimit.Rate
		err   string // in the error; "" for none
	}{
		{"200/min", 0, ratelimit.Rate{Limit: 200, Period: time.Minute}, ""},
		{"25/s", 50, ratelimit.Rate{Limit: 25, Period: time.Second, Burst: 50}, ""},
		{"1000/hour", 0, ratelimit.Rate{Limit: 1000, Period: time.Hour}, ""},
		{" 10/Minute ", 0, ratelimit.Rate{Limit: 10, Period: time.Minute}, ""},
		{"200", 0, ratelimit.Rate{}, "no /"},
		{"0/s", 0, ratelimit.Rate{}, "above 0"},
		{"-5/s", 0, ratelimit.Rate{}, "above 0"},
		{"many/s", 0, ratelimit.Rate{}, "above 0"},
		{"25/day", 0, ratelimit.Rate{}, "s, min or h"},
		{"25/s", -1, ratelimit.Rate{}, "-scim-burst -1"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSCIMRate(tt.in, tt.burst)
			if tt.err == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			var ue *cli.UsageError
			require.True(t, errors.As(err, &ue), "a usage error: %v", err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

// TestServeRateFlagErrors: a bad -scim-rate or -scim-burst stops the service before it
// listens, with a usage error.
func TestServeRateFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-scim-rate", "fast"},
		{"-scim-rate", "25/s", "-scim-burst", "-3"},
		{"-scim-burst", "many"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), inMemory(append([]string{"-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0"}, args...)), &stdout, &stderr)
			var ue *cli.UsageError
			require.True(t, errors.As(err, &ue), "%v", err)
			assert.Contains(t, err.Error()+stderr.String(), "-scim-")
			assert.Empty(t, stdout.String())
		})
	}
}

// TestAdminAddrInUse: an admin address already taken stops the service with an error naming
// the flag.
func TestAdminAddrInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	var stdout, stderr bytes.Buffer
	err = run(t.Context(), inMemory([]string{"-addr", "127.0.0.1:0", "-admin-addr", busy.Addr().String()}), &stdout, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-admin-addr")
	assert.Contains(t, err.Error(), busy.Addr().String())
	assert.Empty(t, stdout.String())
}

// histogramCount is the sample count of family's histograms whose labels include want.
func histogramCount(families map[string]*dto.MetricFamily, family string, want map[string]string) uint64 {
	f := families[family]
	if f == nil {
		return 0
	}
	var total uint64
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		total += m.GetHistogram().GetSampleCount()
	}
	return total
}

// TestAdminServerSecondFactor: alice's sign-in shows in /metrics as a sign-in started and
// succeeded, a picture attempt, a code redeemed and the argon2id hashes, with no user in any
// label.
func TestAdminServerSecondFactor(t *testing.T) {
	s := startObserved(t)
	signInAlice(t, s.vars)
	families := s.scrape(t)
	for _, c := range []struct {
		family string
		labels map[string]string
	}{
		{"visid_secondfactor_authorizations_total", nil},
		{"visid_secondfactor_outcomes_total", map[string]string{"visid_outcome": "succeeded"}},
		{"visid_secondfactor_attempts_total", map[string]string{"visid_outcome": "succeeded"}},
		{"visid_oidc_codes_redeemed_total", nil},
	} {
		assert.Equal(t, 1.0, counter(families, c.family, c.labels), "%s; families: %s", c.family, familyNames(families))
	}
	assert.Equal(t, uint64(2), histogramCount(families, "visid_picture_hash_wait_seconds", nil),
		"alice's enrollment and her sign-in")
	assert.Equal(t, uint64(1), histogramCount(families, "http_server_request_duration_seconds",
		map[string]string{"visid_oidc_endpoint": "token", "http_response_status_code": "200"}))
	for name, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				assert.NotContains(t, l.GetValue(), "alice", "%s label %s", name, l.GetName())
				assert.NotContains(t, l.GetValue(), "user_", "%s label %s", name, l.GetName())
			}
		}
	}
}
