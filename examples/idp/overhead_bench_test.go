package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/visid/visid/internal/scimbench"
	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// overheadUsers is how many users each server holds before BenchmarkIdPOverhead runs.
const overheadUsers = 10_000

// BenchmarkIdPOverhead runs the four operations of SCIM provisioning — GET /Users/{id},
// GET /Users?filter=userName eq "…", PATCH replacing active, POST /Users — against the service
// as `idp -db memory` runs it (serve itself, in this process: the store wrapped by otelstore,
// the Prometheus meter provider, the event log, the access log written to a file, the demo
// tenant's key), against the library alone (scimsvc over memstore, mounted as docs/scim.md
// shows), and against the library with the event log on (library-events), each holding 10,000
// users and served over loopback HTTP with keep-alive in the same run. All have a rate limit
// that never bites. cpu-ns/op is the CPU time the process (server and client) spent per
// request; the figure to quote is, per operation, idp's cpu-ns/op divided by the library's.
// Run it a few times rather than with -count, so that the servers alternate round by round:
//
//	for i in 1 2 3 4 5 6; do go test ./examples/idp -run '^$' -bench IdPOverhead; done > out.txt
//	benchstat -col /impl out.txt
func BenchmarkIdPOverhead(b *testing.B) {
	targets := []*benchTarget{startBenchService(b), startLibrary(b, "library", false), startLibrary(b, "library-events", true)}
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, s := range targets {
		wg.Go(func() { s.ids = s.preload(b, ctx) })
	}
	wg.Wait()
	if b.Failed() {
		return
	}
	created := atomic.Int64{}
	created.Store(overheadUsers)
	for _, op := range scimbench.Ops(&created) {
		for _, s := range targets {
			// The count goes on from one run of the sub-benchmark to the next, so that every
			// PATCH changes its user.
			var next atomic.Int64
			b.Run("op="+op.Name+"/impl="+s.name, func(b *testing.B) {
				b.ReportAllocs()
				b.ResetTimer()
				cpu := scimbench.ProcessCPU()
				defer func() { b.ReportMetric(float64(scimbench.ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op") }()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						p, body := op.Req(s.ids, int(next.Add(1)))
						if err := s.do(op.Method, p, body, op.Status); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// benchTarget is a SCIM server under BenchmarkIdPOverhead: its tenant's base URL, an API key,
// a keep-alive client, and its users' ids once preloaded.
type benchTarget struct {
	name   string
	base   string // the tenant's SCIM base URL
	key    string
	client *http.Client
	ids    []string
}

// startBenchService runs serve as `idp -db memory` runs, with every flag at its default but
// the addresses (free ports) and -scim-rate (never refuses), until the benchmark ends; its log
// goes to the null device, as a file, and its stdout gives the demo tenant's URL and key.
func startBenchService(b *testing.B) *benchTarget {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-db", "memory", "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0",
			"-scim-rate", "1000000000/s"}, pw, logs)
		pw.CloseWithError(fmt.Errorf("run returned %v", err))
		done <- err
	}()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
		logs.Close()
	})
	r := bufio.NewReader(pr)
	_, vars, err := readVars(r)
	if err != nil {
		b.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	return newBenchTarget("idp", vars["scim_base_url"], vars["scim_api_key"])
}

// startLibrary serves scimsvc over a bare memstore, mounted as docs/scim.md shows, with a rate
// limit that never bites, until the benchmark ends; with events, the handler records its
// changes in the store's event log (Config.Events), as the service's does.
func startLibrary(b *testing.B, name string, events bool) *benchTarget {
	b.Helper()
	ctx := context.Background()
	backend := memstore.New().Backend()
	if err := backend.Tenants.Create(ctx, store.Tenant{ID: "acme", DisplayName: "Acme Corp", Created: time.Now()}); err != nil {
		b.Fatal(err)
	}
	key, _, err := scimsvc.IssueAPIKey(ctx, backend.APIKeys, scimsvc.KeySpec{Name: "bench", Tenants: []string{"acme"}})
	if err != nil {
		b.Fatal(err)
	}
	huge, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: 1_000_000_000, Period: time.Second}})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	cfg := scimsvc.Config{
		Tenants: backend.Tenants, Users: backend.Users, Groups: backend.Groups, APIKeys: backend.APIKeys,
		BaseURL: "http://" + srv.Listener.Addr().String() + "/scim/v2", RateLimiter: huge,
	}
	if events {
		cfg.Events = backend.Events
	}
	scim, err := scimsvc.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/scim/v2/", http.StripPrefix("/scim/v2", scim))
	srv.Config.Handler = mux
	srv.Start()
	b.Cleanup(srv.Close)
	return newBenchTarget(name, srv.URL+"/scim/v2/acme", key)
}

// newBenchTarget is a benchTarget with its own keep-alive client.
func newBenchTarget(name, base, key string) *benchTarget {
	return &benchTarget{name: name, base: base, key: key,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// do sends method to the path under the tenant's base URL with body (none when ""), reads the
// answer, and returns an error unless its status is want.
func (s *benchTarget) do(method, path, body string, want int) error {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/scim+json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, msg)
	}
	return nil
}

// preload POSTs overheadUsers users, four at a time, and returns their ids in order.
func (s *benchTarget) preload(b *testing.B, ctx context.Context) []string {
	ids := make([]string, overheadUsers)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < overheadUsers && !failed.Load() && ctx.Err() == nil; i += 4 {
				id, err := s.create(i)
				if err != nil {
					b.Error(err)
					failed.Store(true)
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	return ids
}

// create POSTs user i and returns its id.
func (s *benchTarget) create(i int) (string, error) {
	req, err := http.NewRequest("POST", s.base+"/Users", strings.NewReader(scimbench.UserJSON(int64(i))))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/scim+json")
	resp, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var u struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&u); err != nil || resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("creating user %d: status %d, %v", i, resp.StatusCode, err)
	}
	return u.ID, nil
}
