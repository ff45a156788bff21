package scimsvc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/visid/visid/internal/scimbench"
	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// benchEnv is a SCIM handler over memstore whose rate limit never bites; configure may change
// the Config before New.
func benchEnv(b *testing.B, configure ...func(*scimsvc.Config)) (http.Handler, *memstore.Store, string) {
	b.Helper()
	ctx := context.Background()
	mem := memstore.New()
	if err := mem.Tenants().Create(ctx, store.Tenant{ID: "acme"}); err != nil {
		b.Fatal(err)
	}
	key, _, err := scimsvc.IssueAPIKey(ctx, mem.APIKeys(), scimsvc.KeySpec{Tenants: []string{"acme"}})
	if err != nil {
		b.Fatal(err)
	}
	huge, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: 1 << 30, Period: time.Second}})
	if err != nil {
		b.Fatal(err)
	}
	cfg := scimsvc.Config{
		Tenants: mem.Tenants(), Users: mem.Users(), Groups: mem.Groups(), APIKeys: mem.APIKeys(),
		BaseURL: "https://id.example.com/scim/v2", RateLimiter: huge,
	}
	for _, f := range configure {
		f(&cfg)
	}
	h, err := scimsvc.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return h, mem, key
}

// benchUser is a user with the attributes Entra ID provisions.
func benchUser(i int) store.User {
	name := fmt.Sprintf("user%07d@example.com", i)
	return store.User{
		UserName: name, ExternalID: fmt.Sprintf("ext-%07d", i), Active: true,
		DisplayName: "Ann Lee", Name: store.Name{GivenName: "Ann", FamilyName: "Lee", Formatted: "Ann Lee"},
		Emails:     []store.MultiValue{{Value: name, Type: "work", Primary: true}},
		Enterprise: store.EnterpriseUser{Department: "R&D", EmployeeNumber: "1234"},
	}
}

// BenchmarkGetUser compares GET /Users/{id} through the full handler (API key, tenant check, rate
// limiter with a huge limit, store, projection, encoding) with a bare net/http handler that
// writes the same response bytes, both served over loopback HTTP with keep-alive. The figure to
// quote is full's throughput as a fraction of bare's.
//
// otel is full with an OpenTelemetry SDK meter (a manual reader) and tracer (every span
// sampled, exported in batches to an exporter that counts them) installed; full has the default
// providers, which record nothing. The figure to quote for instrumentation is otel's throughput
// as a fraction of full's, or full's cpu-ns/op (the CPU time of the process, server and client,
// per request, which other load on the machine changes less) as a fraction of otel's.
func BenchmarkGetUser(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	spans := &countingExporter{}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(spans))
	defer func() {
		_ = mp.Shutdown(context.Background())
		_ = tp.Shutdown(context.Background())
	}()
	h, mem, key := benchEnv(b)
	withOtel, _, _ := benchEnv(b, func(c *scimsvc.Config) {
		c.Users, c.APIKeys, c.Tenants = mem.Users(), mem.APIKeys(), mem.Tenants()
		c.MeterProvider, c.TracerProvider = mp, tp
	})
	u, err := mem.Users().Create(context.Background(), "acme", benchUser(1))
	if err != nil {
		b.Fatal(err)
	}
	path := "/acme/Users/" + u.ID
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	body := rec.Body.Bytes()
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/scim+json")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		_, _ = w.Write(body)
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"full", h}, {"otel", withOtel}, {"bare", bare}} {
		b.Run(c.name, func(b *testing.B) {
			srv := httptest.NewServer(c.h)
			defer srv.Close()
			client := srv.Client()
			client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := scimbench.ProcessCPU()
			defer func() { b.ReportMetric(float64(scimbench.ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op") }()
			b.RunParallel(func(pb *testing.PB) {
				req, _ := http.NewRequest("GET", srv.URL+path, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				for pb.Next() {
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
		})
	}
	if err := tp.ForceFlush(context.Background()); err != nil || spans.spans.Load() == 0 {
		b.Fatalf("no span exported (%v)", err)
	}
}

// countingExporter is a span exporter that counts the spans it is given and keeps none: an
// exporter's own cost (encoding, sending) is not visid's, and one that kept every span, as
// tracetest's does, would grow the heap with the run's length, and the collector's work with it.
type countingExporter struct{ spans atomic.Int64 }

func (e *countingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.spans.Add(int64(len(spans)))
	return nil
}

func (e *countingExporter) Shutdown(context.Context) error { return nil }

// BenchmarkGetUserInProcess is BenchmarkGetUser without the network: ServeHTTP called directly,
// so the handler's own cost is all that is measured. Its baseline marshals the same user with
// encoding/json, as a handler without visid's encoder would.
func BenchmarkGetUserInProcess(b *testing.B) {
	h, mem, key := benchEnv(b)
	u, err := mem.Users().Create(context.Background(), "acme", benchUser(1))
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/acme/Users/"+u.ID, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w := discard{h: http.Header{}}
			h.ServeHTTP(&w, req)
			if w.code != http.StatusOK {
				b.Fatalf("status %d", w.code)
			}
		}
	})
	b.Run("otel", func(b *testing.B) {
		// full with an OpenTelemetry SDK meter and tracer (every span sampled, exported in
		// batches to an exporter that counts them), as BenchmarkGetUser/otel.
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
			sdktrace.WithBatcher(&countingExporter{}))
		defer func() {
			_ = mp.Shutdown(context.Background())
			_ = tp.Shutdown(context.Background())
		}()
		withOtel, _, _ := benchEnv(b, func(c *scimsvc.Config) {
			c.Users, c.APIKeys, c.Tenants = mem.Users(), mem.APIKeys(), mem.Tenants()
			c.MeterProvider, c.TracerProvider = mp, tp
		})
		b.ReportAllocs()
		for b.Loop() {
			w := discard{h: http.Header{}}
			withOtel.ServeHTTP(&w, req)
			if w.code != http.StatusOK {
				b.Fatalf("status %d", w.code)
			}
		}
	})
	b.Run("bare-encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		bare := bareJSONHandler(mem)
		for b.Loop() {
			w := discard{h: http.Header{}}
			bare.ServeHTTP(&w, req)
		}
	})
}

// discard is a ResponseWriter that keeps only the status.
type discard struct {
	h    http.Header
	code int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) WriteHeader(c int)   { d.code = c }
func (d *discard) Write(p []byte) (int, error) {
	if d.code == 0 {
		d.code = http.StatusOK
	}
	return len(p), nil
}

// bareJSONHandler reads the user from the store and writes it with encoding/json, with no
// authentication, limit or projection.
func bareJSONHandler(mem *memstore.Store) http.Handler {
	type email struct {
		Value   string `json:"value"`
		Type    string `json:"type"`
		Primary bool   `json:"primary"`
	}
	type out struct {
		Schemas     []string          `json:"schemas"`
		ID          string            `json:"id"`
		ExternalID  string            `json:"externalId"`
		UserName    string            `json:"userName"`
		Name        map[string]string `json:"name"`
		DisplayName string            `json:"displayName"`
		Active      bool              `json:"active"`
		Emails      []email           `json:"emails"`
		Enterprise  map[string]string `json:"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"`
		Meta        map[string]any    `json:"meta"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		u, err := mem.Users().Get(r.Context(), "acme", id)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		o := out{
			Schemas: []string{"urn:ietf:params:scim:schemas:core:2.0:User", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"},
			ID:      u.ID, ExternalID: u.ExternalID, UserName: u.UserName, DisplayName: u.DisplayName, Active: u.Active,
			Name:       map[string]string{"formatted": u.Name.Formatted, "familyName": u.Name.FamilyName, "givenName": u.Name.GivenName},
			Enterprise: map[string]string{"employeeNumber": u.Enterprise.EmployeeNumber, "department": u.Enterprise.Department},
			Meta: map[string]any{"resourceType": "User", "created": u.Meta.Created, "lastModified": u.Meta.LastModified,
				"location": "https://id.example.com/scim/v2/acme/Users/" + u.ID},
		}
		for _, e := range u.Emails {
			o.Emails = append(o.Emails, email{e.Value, e.Type, e.Primary})
		}
		w.Header().Set("Content-Type", "application/scim+json")
		enc := jsonEncoder(w)
		_ = enc.Encode(o)
	})
}

// BenchmarkEntraMatchAndCreate is Entra ID's provisioning pair — GET ?filter=userName eq "…"
// (no match) then POST the user — on an empty tenant and on one that already holds 100k users.
// The figure to quote is the per-pair cost at 100k as a multiple of the cost on the empty tenant.
func BenchmarkEntraMatchAndCreate(b *testing.B) {
	for _, n := range []int{0, 100_000} {
		b.Run(fmt.Sprintf("users=%d", n), func(b *testing.B) {
			h, mem, key := benchEnv(b)
			ctx := context.Background()
			for i := range n {
				if _, err := mem.Users().Create(ctx, "acme", benchUser(i)); err != nil {
					b.Fatal(err)
				}
			}
			i := n
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				i++
				name := fmt.Sprintf("user%07d@example.com", i)
				req := httptest.NewRequest("GET", "/acme/Users?filter="+url.QueryEscape(`userName eq "`+name+`"`), nil)
				req.Header.Set("Authorization", "Bearer "+key)
				w := discard{h: http.Header{}}
				h.ServeHTTP(&w, req)
				if w.code != http.StatusOK {
					b.Fatalf("match: status %d", w.code)
				}
				body := `{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User","urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],` +
					`"externalId":"ext-` + fmt.Sprint(i) + `","userName":"` + name + `","active":true,` +
					`"emails":[{"primary":true,"type":"work","value":"` + name + `"}],` +
					`"name":{"formatted":"Ann Lee","familyName":"Lee","givenName":"Ann"},"roles":[],` +
					`"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"department":"R&D"}}`
				req = httptest.NewRequest("POST", "/acme/Users", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/scim+json")
				w = discard{h: http.Header{}}
				h.ServeHTTP(&w, req)
				if w.code != http.StatusCreated {
					b.Fatalf("create: status %d", w.code)
				}
			}
		})
	}
}

func jsonEncoder(w io.Writer) *json.Encoder { return json.NewEncoder(w) }
