package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store/sqlstore"
)

// getJSON fetches path from h and returns the status and the JSON body.
func getJSON(t *testing.T, h http.Handler, path string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	var m map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m), "%s", rec.Body)
	return rec.Code, m
}

// TestReadyzFailsOnFullStore: /readyz is 503, naming the store, when the store answers reads
// but takes no write (SQLite whose file may grow no further, as on a full disk), and the write
// probe runs at most once every checkEvery however often /readyz is asked.
func TestReadyzFailsOnFullStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idp.db")
	s, err := sqlstore.Config{KeyEncryptionKey: randomKEK()}.Open(ctx, "sqlite:"+path)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(ctx))
	var pages int
	require.NoError(t, s.DB().QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages))
	require.NoError(t, s.Close())

	for _, tc := range []struct {
		name   string
		dsn    string
		status int
		failed []any
	}{
		{"writable", "sqlite:" + path, http.StatusOK, nil},
		{"full", fmt.Sprintf("sqlite:%s?_pragma=max_page_count(%d)", path, pages), http.StatusServiceUnavailable, []any{"store"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sqlstore.Config{KeyEncryptionKey: randomKEK()}.Open(ctx, tc.dsn)
			require.NoError(t, err)
			defer s.Close()
			var probes atomic.Int32
			rd := &readiness{tenants: s.Tenants(), keys: s.SigningKeys(), log: slog.New(slog.NewTextHandler(io.Discard, nil)),
				probe: func(ctx context.Context) error { probes.Add(1); return s.Probe(ctx) }}
			h := adminHandler(http.NotFoundHandler(), rd)
			for range 5 {
				status, body := getJSON(t, h, "/readyz")
				assert.Equal(t, tc.status, status, "%v", body)
				if tc.failed == nil {
					assert.NotContains(t, body, "failed")
				} else {
					assert.Equal(t, tc.failed, body["failed"])
				}
			}
			assert.Equal(t, int32(1), probes.Load(), "one probe for five /readyz within %v", checkEvery)
			status, _ := getJSON(t, h, "/healthz")
			assert.Equal(t, http.StatusOK, status, "the process is up either way")
		})
	}
	n, err := os.Stat(path)
	require.NoError(t, err)
	assert.LessOrEqual(t, n.Size(), int64(pages)*4096, "the probes left nothing")
}

// TestRedisOutageKeepsReady: with Redis gone the instance stays ready (its rate limits fall
// back to memory); /healthz names Redis unreachable, visid_redis_up is 0 and the log says so,
// and all of it turns back once Redis answers.
func TestRedisOutageKeepsReady(t *testing.T) {
	px := newProxy(t, serviceEnv(t, "VISID_TEST_REDIS_ADDR"))
	s := startObserved(t, "-redis", "redis://"+px.addr+"/0")
	redisUp := func() float64 {
		f := s.scrape(t)["visid_redis_up"]
		require.NotNil(t, f, "visid_redis_up in /metrics")
		return f.GetMetric()[0].GetGauge().GetValue()
	}
	health := func() any {
		status, body := s.get(t, "/healthz")
		require.Equal(t, http.StatusOK, status)
		var m map[string]any
		require.NoError(t, json.Unmarshal(body, &m))
		return m["checks"].(map[string]any)["redis"]
	}
	status, ready := s.ready(t)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ok", ready["checks"].(map[string]any)["redis"])
	assert.Equal(t, "ok", health())
	assert.Equal(t, 1.0, redisUp())

	px.stop()
	require.Eventually(t, func() bool { return health() == "unreachable" }, 3*checkEvery, 100*time.Millisecond)
	assert.Equal(t, 0.0, redisUp())
	status, ready = s.ready(t)
	assert.Equal(t, http.StatusOK, status, "ready without Redis: %v", ready)
	assert.Equal(t, "unreachable", ready["checks"].(map[string]any)["redis"])
	assert.Contains(t, s.logs.String(), "redis unreachable")
	resp, _ := scimRequest(t, "GET", s.vars["scim_base_url"]+"/Users", s.vars["scim_api_key"], "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "SCIM is served, limited in memory")

	px.start()
	require.Eventually(t, func() bool { return health() == "ok" }, 3*checkEvery, 100*time.Millisecond)
	assert.Equal(t, 1.0, redisUp())
	assert.Contains(t, s.logs.String(), "redis reachable again")
}

// TestRuntimeMetrics: /metrics has the Go runtime's and the process's metrics beside the
// service's own.
func TestRuntimeMetrics(t *testing.T) {
	s := startObserved(t)
	families := s.scrape(t)
	for _, name := range []string{
		"go_goroutines", "go_threads", "go_gc_duration_seconds", "go_memstats_alloc_bytes", "go_memstats_heap_inuse_bytes",
		"process_resident_memory_bytes", "process_open_fds", "process_cpu_seconds_total", "process_start_time_seconds",
		"visid_picture_hashes_in_flight",
	} {
		assert.Contains(t, families, name, "families: %s", familyNames(families))
	}
	assert.Positive(t, families["go_goroutines"].GetMetric()[0].GetGauge().GetValue())
	assert.Positive(t, families["process_resident_memory_bytes"].GetMetric()[0].GetGauge().GetValue())
}

// TestStoreSize: the admin address reports the bytes the store's data takes, as the gauge
// visid_store_size_bytes and as /healthz's store_bytes.
func TestStoreSize(t *testing.T) {
	s := startObserved(t, "-db", "sqlite:"+filepath.Join(t.TempDir(), "idp.db"))
	families := s.scrape(t)
	require.Contains(t, families, "visid_store_size_bytes", "families: %s", familyNames(families))
	size := families["visid_store_size_bytes"].GetMetric()[0].GetGauge().GetValue()
	assert.Greater(t, size, 10_000.0, "the schema and the demo take room")
	resp, err := http.Get(s.admin + "/healthz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var health struct {
		StoreBytes int64 `json:"store_bytes"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&health))
	assert.Equal(t, int64(size), health.StoreBytes, "the same reading")
}
