package ratelimit_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/ratelimit"
)

// hello is the handler behind the middleware.
var hello = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("hello"))
})

// serve sends a GET from remoteAddr through h.
func serve(h http.Handler, remoteAddr string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/Users", nil)
	r.RemoteAddr = remoteAddr
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func newMiddleware(t *testing.T, cfg ratelimit.MiddlewareConfig) http.Handler {
	t.Helper()
	mw, err := ratelimit.Middleware(cfg)
	require.NoError(t, err)
	return mw(hello)
}

// rateHeaders returns the RateLimit headers and Retry-After of a response, "" when absent.
func rateHeaders(w *httptest.ResponseRecorder) [4]string {
	h := w.Result().Header
	return [4]string{h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"), h.Get("RateLimit-Reset"), h.Get("Retry-After")}
}

func TestMiddleware(t *testing.T) {
	m, clock := newMemory(t, ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: 3, Period: time.Minute}})
	h := newMiddleware(t, ratelimit.MiddlewareConfig{Limiter: m})
	const client = "192.0.2.1:5000"

	tests := []struct {
		status  int
		body    string
		headers [4]string // Limit, Remaining, Reset, Retry-After
	}{
		{200, "hello", [4]string{"3", "2", "20", ""}},
		{200, "hello", [4]string{"3", "1", "40", ""}},
		{200, "hello", [4]string{"3", "0", "60", ""}},
		{429, "rate limit exceeded\n", [4]string{"3", "0", "60", "20"}},
		{429, "rate limit exceeded\n", [4]string{"3", "0", "60", "20"}},
	}
	for i, tc := range tests {
		w := serve(h, client)
		assert.Equal(t, tc.status, w.Code, "request #%d: status", i+1)
		assert.Equal(t, tc.body, w.Body.String(), "request #%d: body", i+1)
		assert.Equal(t, tc.headers, rateHeaders(w), "request #%d: Limit, Remaining, Reset, Retry-After", i+1)
	}

	other := serve(h, "192.0.2.2:5000")
	assert.Equal(t, http.StatusOK, other.Code, "another client address has its own quota")
	assert.Equal(t, [4]string{"3", "2", "20", ""}, rateHeaders(other), "another client address")

	clock.Advance(19500 * time.Millisecond)
	w := serve(h, client)
	assert.Equal(t, http.StatusTooManyRequests, w.Code, "19.5s after the quota ran out")
	assert.Equal(t, [4]string{"3", "0", "41", "1"}, rateHeaders(w), "19.5s after: seconds are rounded up")
	assert.Equal(t, "text/plain; charset=utf-8", w.Header().Get("Content-Type"), "Content-Type of the default denial")
	clock.Advance(500 * time.Millisecond)
	assert.Equal(t, http.StatusOK, serve(h, client).Code, "Retry-After later")
}

func TestMiddlewareKeyAndDeny(t *testing.T) {
	m, _ := newMemory(t, ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: 1, Period: time.Hour}})
	h := newMiddleware(t, ratelimit.MiddlewareConfig{
		Limiter: m,
		Key:     func(r *http.Request) string { return r.Header.Get("X-Api-Key-Id") },
		Deny: func(w http.ResponseWriter, _ *http.Request, d ratelimit.Decision) {
			w.Header().Set("Content-Type", "application/scim+json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"status":"429"}`))
		},
	})
	send := func(keyID, remoteAddr string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/Users", nil)
		r.Header.Set("X-Api-Key-Id", keyID)
		r.RemoteAddr = remoteAddr
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	assert.Equal(t, http.StatusOK, send("key_1", "192.0.2.1:1").Code, "key_1's first request")
	w := send("key_1", "192.0.2.2:1")
	assert.Equal(t, http.StatusTooManyRequests, w.Code, "key_1's second request, from another address")
	assert.Equal(t, `{"status":"429"}`, w.Body.String(), "Deny's body")
	assert.Equal(t, "application/scim+json", w.Header().Get("Content-Type"), "Deny's Content-Type")
	assert.Equal(t, [4]string{"1", "0", "3600", "3600"}, rateHeaders(w), "headers are set before Deny")
	assert.Equal(t, http.StatusOK, send("key_2", "192.0.2.1:1").Code, "key_2, from key_1's address")
}

// failing is a Limiter whose backend is down.
type failing struct{}

var errDown = errors.New("backend down")

func (failing) Allow(context.Context, string) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errDown
}

func (failing) Peek(context.Context, string) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errDown
}

func TestMiddlewareOnError(t *testing.T) {
	tests := []struct {
		name    string
		onError func(http.ResponseWriter, *http.Request, error) bool
		status  int
		body    string
	}{
		{"DefaultServes", nil, http.StatusOK, "hello"},
		{"Serve", func(http.ResponseWriter, *http.Request, error) bool { return true }, http.StatusOK, "hello"},
		{"FailClosed", func(w http.ResponseWriter, _ *http.Request, err error) bool {
			if errors.Is(err, errDown) {
				http.Error(w, "service unavailable", http.StatusServiceUnavailable)
			}
			return false
		}, http.StatusServiceUnavailable, "service unavailable\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := newMiddleware(t, ratelimit.MiddlewareConfig{
				Limiter: failing{},
				OnError: tc.onError,
				Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
			})
			w := serve(h, "192.0.2.1:5000")
			assert.Equal(t, tc.status, w.Code, "status")
			assert.Equal(t, tc.body, w.Body.String(), "body")
			assert.Equal(t, [4]string{}, rateHeaders(w), "no rate headers without a decision")
			assert.Contains(t, logs.String(), `level=WARN msg="rate limiter failed; request served" limiter=middleware err="backend down"`, "log")
			assert.NotContains(t, logs.String(), "192.0.2.1", "the key is not logged")
		})
	}
}

func TestMiddlewareConfig(t *testing.T) {
	_, err := ratelimit.Middleware(ratelimit.MiddlewareConfig{})
	assert.ErrorIs(t, err, ratelimit.ErrInvalidConfig, "without a Limiter")
}

func TestSetHeaders(t *testing.T) {
	tests := []struct {
		name string
		d    ratelimit.Decision
		want [4]string // Limit, Remaining, Reset, Retry-After
	}{
		{"WholeQuota", ratelimit.Decision{Allowed: true, Limit: 200, Remaining: 200}, [4]string{"200", "200", "0", ""}},
		{"ResetRoundedUp", ratelimit.Decision{Allowed: true, Limit: 200, Remaining: 199, Reset: 300 * time.Millisecond}, [4]string{"200", "199", "1", ""}},
		{"ResetWholeSeconds", ratelimit.Decision{Allowed: true, Limit: 200, Remaining: 0, Reset: time.Minute}, [4]string{"200", "0", "60", ""}},
		{"ResetJustOver", ratelimit.Decision{Allowed: true, Limit: 200, Remaining: 0, Reset: time.Minute + time.Nanosecond}, [4]string{"200", "0", "61", ""}},
		{"Denied", ratelimit.Decision{Limit: 200, RetryAfter: 300 * time.Millisecond, Reset: time.Minute}, [4]string{"200", "0", "60", "1"}},
		{"DeniedRetryAfterRoundedUp", ratelimit.Decision{Limit: 1, RetryAfter: 90*time.Second + 1, Reset: 2 * time.Minute}, [4]string{"1", "0", "120", "91"}},
		{"DeniedRetryAfterAtLeastOne", ratelimit.Decision{Limit: 1}, [4]string{"1", "0", "0", "1"}},
		{"Huge", ratelimit.Decision{Limit: 1, RetryAfter: 1<<63 - 1, Reset: 1<<63 - 1}, [4]string{"1", "0", "9223372037", "9223372037"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			ratelimit.SetHeaders(h, tc.d)
			assert.Equal(t, tc.want, [4]string{h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"), h.Get("RateLimit-Reset"), h.Get("Retry-After")})
		})
	}
	t.Run("Replaces", func(t *testing.T) {
		h := http.Header{"Ratelimit-Limit": {"1", "2"}, "Retry-After": {"5"}}
		ratelimit.SetHeaders(h, ratelimit.Decision{Allowed: true, Limit: 3, Remaining: 2})
		assert.Equal(t, []string{"3"}, h.Values("RateLimit-Limit"), "RateLimit-Limit replaced")
		assert.Equal(t, "5", h.Get("Retry-After"), "Retry-After left alone when allowed")
	})
}

func TestClientAddr(t *testing.T) {
	tests := []struct {
		remoteAddr string
		want       string
	}{
		{"192.0.2.1:5000", "192.0.2.1"},
		{"192.0.2.1:6000", "192.0.2.1"},
		{"[::ffff:192.0.2.1]:5000", "192.0.2.1"},
		{"[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2::9]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::9]:443", "2001:db8:1:3::/64"},
		{"[fe80::1%eth0]:443", "fe80::/64"},
		{"pipe", "pipe"},
		{"not-an-ip:80", "not-an-ip:80"},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.remoteAddr, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.remoteAddr
			assert.Equal(t, tc.want, ratelimit.ClientAddr(r))
		})
	}
}
