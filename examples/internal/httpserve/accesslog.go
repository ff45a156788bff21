package httpserve

import (
	"log/slog"
	"net/http"
	"time"
)

// AccessLog logs each request at Info when it is done: method, path, status and duration.
// Never the query, which may hold a secret or personal data (an authorization code, a SCIM
// filter on an email address). A record costs no boxing of its values and no walk of the stack
// (it names no source line, which would be this function's).
//
// With a logger of NewAccessLogger, a line costs a fraction of a text handler's work.
//
// redact, unless nil, returns the path as the line shows it: a path that carries a secret (an
// enrollment link's token, a login's interaction id) must never reach the log.
func AccessLog(log *slog.Logger, next http.Handler, redact func(path string) string) http.Handler {
	h := log.Handler()
	fast, _ := h.(*accessHandler)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		ctx := r.Context()
		if !h.Enabled(ctx, slog.LevelInfo) {
			return
		}
		end := time.Now()
		path := r.URL.Path
		if redact != nil {
			path = redact(path)
		}
		if fast != nil {
			fast.request(end, r.Method, path, sw.status, end.Sub(start).Round(time.Microsecond))
			return
		}
		rec := slog.NewRecord(end, slog.LevelInfo, "request", 0)
		rec.AddAttrs(slog.String("method", r.Method), slog.String("path", path),
			slog.Int("status", sw.status), slog.Duration("duration", end.Sub(start).Round(time.Microsecond)))
		_ = h.Handle(ctx, rec) // as slog.Logger does: a handler that cannot write has nowhere to say so
	})
}

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

// WriteHeader records the first final status (2xx and up) and writes code.
func (w *statusWriter) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write writes b; a status not set by then is 200.
func (w *statusWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
