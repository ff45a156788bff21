package scimsvc_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/internal/testclock"
	"github.com/visid/visid/scimsvc"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// testBase is the BaseURL every test handler is configured with.
const testBase = "https://id.example.com/scim/v2"

// clock is the fake time source tests move by hand.
type clock = testclock.Clock

func newClock() *clock { return testclock.New() }

// env is a SCIM handler over a fresh memstore with tenant "acme" and a key for it.
type env struct {
	t       *testing.T
	mem     *memstore.Store
	clock   *clock
	handler http.Handler
	key     string // a valid API key for acme
}

// newEnv builds an env; configure may change the Config before New.
func newEnv(t *testing.T, configure ...func(*scimsvc.Config)) *env {
	t.Helper()
	ctx := context.Background()
	mem := memstore.New()
	c := newClock()
	require.NoError(t, mem.Tenants().Create(ctx, store.Tenant{ID: "acme", Created: c.Now()}))
	require.NoError(t, mem.Tenants().Create(ctx, store.Tenant{ID: "globex", Created: c.Now()}))
	secret, _, err := scimsvc.IssueAPIKey(ctx, mem.APIKeys(), scimsvc.KeySpec{Name: "test", Tenants: []string{"acme"}, Now: c.Now()})
	require.NoError(t, err)
	cfg := scimsvc.Config{
		Tenants: mem.Tenants(), Users: mem.Users(), Groups: mem.Groups(), APIKeys: mem.APIKeys(),
		BaseURL: testBase,
		Now:     c.Now,
	}
	for _, f := range configure {
		f(&cfg)
	}
	h, err := scimsvc.New(cfg)
	require.NoError(t, err)
	return &env{t: t, mem: mem, clock: c, handler: h, key: secret}
}

// response is what a test sees of an answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map.
func (r *response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &m), "body: %s", r.Body)
	return m
}

// do sends a request with the env's key; body may be a string, []byte or a value to marshal.
func (e *env) do(method, path string, body any) *response {
	e.t.Helper()
	return e.doKey(e.key, method, path, body)
}

// doKey sends a request with the given bearer key ("" for none).
func (e *env) doKey(key, method, path string, body any) *response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = strings.NewReader(string(b))
	default:
		raw, err := json.Marshal(b)
		require.NoError(e.t, err)
		rd = strings.NewReader(string(raw))
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/scim+json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// patchOps wraps operations (a JSON array) in a PatchOp request body.
func patchOps(ops string) string {
	return `{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":` + ops + `}`
}

// jsonAt walks decoded JSON by object keys (string) and array indexes (int); nil when the path
// is absent.
func jsonAt(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k < 0 || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// doHeader sends a bodiless request with the Authorization header auth ("" for none).
func (e *env) doHeader(method, path, auth string) *response {
	e.t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}
