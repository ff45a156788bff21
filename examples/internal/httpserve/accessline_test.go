package httpserve

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// textLine is the line slog's text handler writes of AccessLog's record.
func textLine(t testing.TB, end time.Time, method, path string, status int, took time.Duration) string {
	var buf bytes.Buffer
	rec := slog.NewRecord(end, slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("method", method), slog.String("path", path), slog.Int("status", status), slog.Duration("duration", took))
	require.NoError(t, slog.NewTextHandler(&buf, nil).Handle(context.Background(), rec))
	return buf.String()
}

// accessLine is the line NewAccessLogger's handler writes of the same request.
func accessLine(end time.Time, method, path string, status int, took time.Duration) string {
	var buf bytes.Buffer
	NewAccessLogger(&buf, slog.LevelInfo).Handler().(*accessHandler).request(end, method, path, status, took)
	return buf.String()
}

// NewAccessLogger's lines are the text handler's, byte for byte, whatever the path holds.
func TestAccessLineIsTextHandlers(t *testing.T) {
	end := time.Date(2026, 11, 26, 9, 41, 7, 999_999_999, time.FixedZone("x", 5*3600+30*60))
	for _, path := range []string{
		"/scim/v2/demo/Users/user_01m8bhvqq2mhxvxkqhk9cwcw4w", "/", "", "/a b", "/a=b", `/a"b`, `/a\b`,
		"/a\tb", "/a\x00b", "/a\x7fb", "/é", "/\u00a0", "/\u2028", "/\xff", "/\u200b", "/日本",
	} {
		for _, took := range []time.Duration{0, 340 * time.Microsecond, 1167 * time.Microsecond, 3 * time.Second, 90 * time.Minute} {
			for _, when := range []time.Time{end, end.UTC(), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Now()} {
				assert.Equal(t, textLine(t, when, "PATCH", path, 200, took), accessLine(when, "PATCH", path, 200, took))
			}
		}
	}
	assert.Equal(t, textLine(t, end, "", "/", 404, 0), accessLine(end, "", "/", 404, 0))
	assert.Equal(t, textLine(t, end, "M E", "/", 599, 0), accessLine(end, "M E", "/", 599, 0))
}

func FuzzAccessLine(f *testing.F) {
	f.Add("GET", "/scim/v2/demo/Users", 200, int64(340000), int64(1764150067123456789))
	f.Add("", "/a b=\"c\"", 0, int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, method, path string, status int, took, unixNano int64) {
		when := time.Unix(0, unixNano).In(time.FixedZone("z", int(unixNano%50400)))
		d := time.Duration(took)
		if got, want := accessLine(when, method, path, status, d), textLine(t, when, method, path, status, d); got != want {
			t.Fatalf("got  %q\nwant %q", got, want)
		}
	})
}

// Through AccessLog, a logger of NewAccessLogger writes a request's line, and any other record
// as the text handler; below its level it writes nothing.
func TestNewAccessLogger(t *testing.T) {
	var buf bytes.Buffer
	log := NewAccessLogger(&buf, slog.LevelInfo)
	h := AccessLog(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }), nil)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("DELETE", "/scim/v2/demo/Users/u1?x=secret", nil))
	log.Warn("other", "n", 1)
	line := regexp.MustCompile(`^time=\S+ level=INFO msg=request method=DELETE path=/scim/v2/demo/Users/u1 status=418 duration=\S+\n` +
		`time=\S+ level=WARN msg=other n=1\n$`)
	assert.Regexp(t, line, buf.String())

	buf.Reset()
	quiet := AccessLog(NewAccessLogger(&buf, slog.LevelWarn), http.NotFoundHandler(), nil)
	quiet.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	assert.Empty(t, buf.String())
}

// BenchmarkAccessLog is AccessLog's cost per request, with a text handler and with
// NewAccessLogger, both writing to a writer that keeps nothing.
func BenchmarkAccessLog(b *testing.B) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, c := range []struct {
		name string
		log  *slog.Logger
	}{
		{"text", slog.New(slog.NewTextHandler(discard{}, nil))},
		{"access", NewAccessLogger(discard{}, slog.LevelInfo)},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := AccessLog(c.log, next, nil)
			r := httptest.NewRequest("PATCH", "/scim/v2/demo/Users/user_01m8bhvqq2mhxvxkqhk9cwcw4w", nil)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
