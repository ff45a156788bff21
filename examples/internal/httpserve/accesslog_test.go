package httpserve_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/httpserve"
)

// accessLogLine serves one request to h through AccessLog and returns the line it logged,
// without time and duration.
func accessLogLine(t *testing.T, h http.HandlerFunc, method, target string) string {
	t.Helper()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" {
				return slog.Attr{}
			}
			return a
		},
	}))
	httpserve.AccessLog(log, h, nil).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, target, nil))
	return buf.String()
}

func TestAccessLog(t *testing.T) {
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		method  string
		target  string
		want    string
	}{
		{
			name:    "without the query",
			handler: func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) },
			method:  "GET",
			target:  "/scim/v2/demo/Users?filter=userName+eq+%22ann%40example.com%22",
			want:    "level=INFO msg=request method=GET path=/scim/v2/demo/Users status=200\n",
		},
		{
			name:    "authorization code",
			handler: func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/", http.StatusSeeOther) },
			method:  "GET",
			target:  "/callback?code=secret_code&state=s",
			want:    "level=INFO msg=request method=GET path=/callback status=303\n",
		},
		{
			name:    "nothing written",
			handler: func(http.ResponseWriter, *http.Request) {},
			method:  "POST",
			target:  "/",
			want:    "level=INFO msg=request method=POST path=/ status=200\n",
		},
		{
			name: "informational header first",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusEarlyHints)
				w.WriteHeader(http.StatusCreated)
				w.WriteHeader(http.StatusInternalServerError) // superfluous, not the status
			},
			method: "POST",
			target: "/Users",
			want:   "level=INFO msg=request method=POST path=/Users status=201\n",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			line := accessLogLine(t, tt.handler, tt.method, tt.target)
			assert.Equal(t, tt.want, line)
			assert.NotContains(t, line, "?")
		})
	}
}

func TestAccessLogDuration(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	httpserve.AccessLog(log, http.NotFoundHandler(), nil).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	assert.Regexp(t, `^time=\S+ level=INFO msg=request method=GET path=/x status=404 duration=\S+s\n$`, buf.String())
}

// TestAccessLogUnwrap: http.ResponseController reaches the writer under the access log.
func TestAccessLogUnwrap(t *testing.T) {
	rec := httptest.NewRecorder()
	h := httpserve.AccessLog(slog.New(slog.DiscardHandler), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("partial"))
		require.NoError(t, http.NewResponseController(w).Flush())
	}), nil)
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	assert.True(t, rec.Flushed)
}
