package httpserve

import (
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// NewAccessLogger returns a logger for AccessLog that writes to w what
// slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}) writes, byte for byte, but formats
// AccessLog's own records itself: a request's line then costs a fraction of a text handler's
// work. Every other record goes through the text handler.
func NewAccessLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	lw := &lockedWriter{w: w}
	return slog.New(&accessHandler{Handler: slog.NewTextHandler(lw, &slog.HandlerOptions{Level: level}), out: lw})
}

// accessHandler is NewAccessLogger's handler: a text handler, and AccessLog's line beside it.
type accessHandler struct {
	slog.Handler
	out *lockedWriter
}

// lockedWriter serializes the writes of a text handler and of accessHandler's lines, each a
// whole line in one Write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// linePool holds the buffers lines are formatted in.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// request writes AccessLog's record of a request, at Info, as the text handler would: its
// time, level, message "request", method, path, status and duration.
func (h *accessHandler) request(end time.Time, method, path string, status int, took time.Duration) {
	bp := linePool.Get().(*[]byte)
	b := append((*bp)[:0], "time="...)
	b = appendRFC3339Millis(b, end.Round(0))
	b = append(b, " level=INFO msg=request method="...)
	b = appendText(b, method)
	b = append(b, " path="...)
	b = appendText(b, path)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, " duration="...)
	b = append(b, took.String()...)
	b = append(b, '\n')
	_, _ = h.out.Write(b) // as slog.Logger does: a handler that cannot write has nowhere to say so
	*bp = b
	linePool.Put(bp)
}

// appendRFC3339Millis appends t as the text handler writes a record's time: RFC 3339 with
// exactly three digits of milliseconds, truncated.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10) // so that 4 digits are written
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // without the 4th
}

// appendText appends s as the text handler writes a string value: as it is, or quoted when it
// is empty or holds a space, an equals sign, a quote, a control character, or a rune that is
// not printable or not valid.
func appendText(b []byte, s string) []byte {
	if needsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

func needsQuoting(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < ' ' || c == ' ' || c == '=' || c == '"' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}
