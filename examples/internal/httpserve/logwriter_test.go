package httpserve_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/httpserve"
)

// writes records each Write it is given, as a log's destination (stderr) sees them.
type writes struct {
	mu     sync.Mutex
	writes []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func (w *writes) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.writes)
}

// Access log lines wait, then reach the destination together in one write within the delay.
func TestLogWriterWritesLinesTogether(t *testing.T) {
	dst := &writes{}
	out := httpserve.NewLogWriter(dst, 50*time.Millisecond)
	h := httpserve.AccessLog(slog.New(slog.NewTextHandler(out, nil)), http.NotFoundHandler(), nil)
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	}
	assert.Empty(t, dst.get(), "no line is written before the delay")
	require.Eventually(t, func() bool { return len(dst.get()) == 1 }, 2*time.Second, 5*time.Millisecond)
	got := dst.get()[0]
	assert.Equal(t, 3, strings.Count(got, "msg=request method=GET path=/x status=404"), got)
	// The next line waits again.
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/y", nil))
	require.Eventually(t, func() bool { return len(dst.get()) == 2 }, 2*time.Second, 5*time.Millisecond)
	assert.Contains(t, dst.get()[1], "path=/y")
}

// The service's own records are written at once, after the access lines before them.
func TestLogWriterNowKeepsOrder(t *testing.T) {
	dst := &writes{}
	out := httpserve.NewLogWriter(dst, time.Hour)
	access := slog.New(slog.NewTextHandler(out, nil))
	log := slog.New(slog.NewTextHandler(out.Now(), nil))
	log.Info("listening")
	assert.Len(t, dst.get(), 1, "written at once with nothing waiting")
	access.Info("request", "n", 1)
	access.Info("request", "n", 2)
	assert.Len(t, dst.get(), 1, "access lines wait")
	log.Warn("store slow")
	require.Len(t, dst.get(), 2, "written at once")
	lines := strings.Split(strings.TrimSuffix(strings.Join(dst.get(), ""), "\n"), "\n")
	require.Len(t, lines, 4)
	for i, want := range []string{"msg=listening", "n=1", "n=2", "msg=\"store slow\""} {
		assert.Contains(t, lines[i], want)
	}
	access.Info("request", "n", 3)
	require.NoError(t, out.Flush())
	require.Len(t, dst.get(), 3)
	assert.Contains(t, dst.get()[2], "n=3")
	require.NoError(t, out.Flush())
	assert.Len(t, dst.get(), 3, "Flush with nothing waiting writes nothing")
}

// A batch of about 32 KiB is written without waiting; with delay 0 every line is written alone.
func TestLogWriterBatchAndNoDelay(t *testing.T) {
	dst := &writes{}
	out := httpserve.NewLogWriter(dst, time.Hour)
	line := strings.Repeat("x", 99) + "\n"
	for range 327 {
		_, err := out.Write([]byte(line))
		require.NoError(t, err)
	}
	assert.Empty(t, dst.get())
	_, err := out.Write([]byte(line))
	require.NoError(t, err)
	require.Len(t, dst.get(), 1, "32 KiB waiting are written")
	assert.Equal(t, strings.Repeat(line, 328), dst.get()[0])

	dst = &writes{}
	out = httpserve.NewLogWriter(dst, 0)
	for i := range 3 {
		_, err := fmt.Fprintf(out, "line %d\n", i)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"line 0\n", "line 1\n", "line 2\n"}, dst.get())
}

// Lines written from many goroutines at once, with the timer and batches flushing among them,
// each come out whole and once.
func TestLogWriterConcurrent(t *testing.T) {
	dst := &writes{}
	out := httpserve.NewLogWriter(dst, time.Millisecond)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				w := out.Now()
				if i%3 != 0 {
					w = out
				}
				_, _ = fmt.Fprintf(w, "g%d line %d %s\n", g, i, strings.Repeat("-", i%200))
			}
		})
	}
	wg.Wait()
	require.NoError(t, out.Flush())
	lines := strings.Split(strings.TrimSuffix(strings.Join(dst.get(), ""), "\n"), "\n")
	require.Len(t, lines, 8*2000)
	seen := map[string]bool{}
	last := map[int]int{}
	for _, l := range lines {
		var g, i int
		var rest string
		_, err := fmt.Sscanf(l, "g%d line %d %s", &g, &i, &rest)
		if i%200 == 0 {
			_, err = fmt.Sscanf(l, "g%d line %d", &g, &i)
		}
		require.NoError(t, err, l)
		assert.Equal(t, strings.Repeat("-", i%200), strings.TrimPrefix(l, fmt.Sprintf("g%d line %d ", g, i)), "whole line")
		assert.False(t, seen[l], "once: %s", l)
		seen[l] = true
		if n, ok := last[g]; ok {
			assert.Greater(t, i, n, "a goroutine's lines in its order")
		}
		last[g] = i
	}
}
