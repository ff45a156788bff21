package httpserve

import (
	"io"
	"sync"
	"time"
)

// LogWriter is where a program's log goes: the lines written to it wait in memory, up to delay
// or logBatch bytes, and reach the underlying writer together in one write, so that a service
// busy with requests makes one system call for many access log lines instead of one for each.
// The lines written through Now are written at once, after the lines waiting before them:
// the program's own records (start, errors, shutdown) are never late and never out of order.
// A LogWriter is safe for concurrent use; each Write must be whole lines, as a slog handler's
// are.
//
// What waits is lost if the process dies before delay has passed; Flush writes it, and a
// program calls it before it exits.
type LogWriter struct {
	w     io.Writer
	delay time.Duration

	mu    sync.Mutex
	buf   []byte
	timer *time.Timer // flushes buf delay after its first line; nil until then
	armed bool        // timer is running
}

// logBatch is how many bytes of lines a LogWriter keeps at most before it writes them: about
// 300 access log lines.
const logBatch = 32 << 10

// NewLogWriter returns a LogWriter over w whose lines wait at most delay. With delay 0 (or
// less) every line is written at once.
func NewLogWriter(w io.Writer, delay time.Duration) *LogWriter {
	return &LogWriter{w: w, delay: delay}
}

// Write keeps p, whole lines, to write it with the others within the delay.
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.delay <= 0 {
		return l.w.Write(p)
	}
	l.buf = append(l.buf, p...)
	switch {
	case len(l.buf) >= logBatch:
		if err := l.flushLocked(); err != nil {
			return 0, err
		}
	case !l.armed:
		l.armed = true
		if l.timer == nil {
			l.timer = time.AfterFunc(l.delay, l.flushTimer)
		} else {
			l.timer.Reset(l.delay)
		}
	}
	return len(p), nil
}

// Now is a writer that writes its lines at once, after the lines waiting in l.
func (l *LogWriter) Now() io.Writer { return nowWriter{l} }

// nowWriter is LogWriter.Now.
type nowWriter struct{ l *LogWriter }

func (n nowWriter) Write(p []byte) (int, error) {
	n.l.mu.Lock()
	defer n.l.mu.Unlock()
	if len(n.l.buf) > 0 {
		n.l.buf = append(n.l.buf, p...)
		if err := n.l.flushLocked(); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return n.l.w.Write(p)
}

// Flush writes the lines waiting.
func (l *LogWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flushLocked()
}

// flushTimer is the timer's Flush: a failure has nowhere to be logged, as slog.Logger's own
// writes have not.
func (l *LogWriter) flushTimer() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = false
	_ = l.flushLocked()
}

// flushLocked writes buf and empties it; the caller holds mu.
func (l *LogWriter) flushLocked() error {
	if len(l.buf) == 0 {
		return nil
	}
	if l.armed {
		l.timer.Stop()
		l.armed = false
	}
	_, err := l.w.Write(l.buf)
	if cap(l.buf) > 2*logBatch {
		l.buf = nil // one long record made it large: do not keep that much
	} else {
		l.buf = l.buf[:0]
	}
	return err
}
