package scimsvc_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/visid/visid/internal/scimbench"
	"github.com/visid/visid/scimsvc"
)

// BenchmarkEventLogMemory POSTs users through the handler over memstore with the event log off
// and on, and reports the live heap per user after a GC (heap-B/user) and, with events, what
// the log adds per event (log-B/event, against the run without events). It POSTs 2,000 users;
// VISID_BENCH_EVENT_USERS sets another number (100000 for the figure docs/events-webhooks.md quotes). Run
// it with -benchtime 1x: each iteration POSTs them all.
func BenchmarkEventLogMemory(b *testing.B) {
	n := 2000
	if s := os.Getenv("VISID_BENCH_EVENT_USERS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	perUser := map[bool]float64{}
	for _, events := range []bool{false, true} {
		b.Run(fmt.Sprintf("events=%v", events), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				b.StartTimer()
				h, mem, key := benchEnv(b, func(c *scimsvc.Config) {})
				if events {
					h, _, _ = benchEnv(b, func(c *scimsvc.Config) {
						c.Users, c.Groups, c.APIKeys, c.Tenants, c.Events = mem.Users(), mem.Groups(), mem.APIKeys(), mem.Tenants(), mem.Events()
					})
				}
				for i := range n {
					req := httptest.NewRequest("POST", "/acme/Users", strings.NewReader(scimbench.UserJSON(int64(i))))
					req.Header.Set("Authorization", "Bearer "+key)
					req.Header.Set("Content-Type", "application/scim+json")
					w := discard{h: http.Header{}}
					h.ServeHTTP(&w, req)
					if w.code != http.StatusCreated {
						b.Fatalf("status %d", w.code)
					}
				}
				b.StopTimer()
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				perUser[events] = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
				runtime.KeepAlive(mem)
				runtime.KeepAlive(h)
				b.StartTimer()
			}
			b.ReportMetric(perUser[events], "heap-B/user")
			// The process's resident memory at the end: run each sub-benchmark in a process
			// of its own (-bench 'EventLogMemory/events=true$') for it to be the run's.
			if rss := residentMiB(); rss > 0 {
				b.ReportMetric(rss, "rss-MiB")
			}
			if events {
				b.ReportMetric(perUser[true]-perUser[false], "log-B/event")
			}
		})
	}
}

// residentMiB is the process's resident memory (VmRSS) in MiB, 0 where /proc does not say.
func residentMiB() float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				return 0
			}
			return float64(kb) / 1024
		}
	}
	return 0
}
