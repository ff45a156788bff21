package httpserve_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/httpserve"
)

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// wait runs s.Wait(ctx) in the background.
func wait(ctx context.Context, s *httpserve.Server) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.Wait(ctx) }()
	return done
}

func receive(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(httpserve.ShutdownTimeout + 5*time.Second):
		t.Fatal("Wait did not return")
		return nil
	}
}

// TestGracefulShutdown: cancelling ctx closes the listener, lets the request in flight
// finish, and Wait returns nil.
func TestGracefulShutdown(t *testing.T) {
	ln := listen(t)
	entered, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "done")
	})
	var logs bytes.Buffer // written by Wait only: read once it has returned
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := wait(ctx, httpserve.Start(ln, h, slog.New(slog.NewTextHandler(&logs, nil))))

	answered := make(chan string, 1)
	go func() {
		resp, err := http.Get(httpserve.BaseURL(ln.Addr()))
		if !assert.NoError(t, err) {
			answered <- ""
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- string(b)
	}()
	<-entered
	cancel()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 5*time.Second, 10*time.Millisecond, "the shutdown closes the listener while the request is in flight")
	close(release)

	assert.Equal(t, "done", <-answered, "the request in flight is answered")
	require.NoError(t, receive(t, done), "a cancelled context is a graceful shutdown")
	assert.Regexp(t, `msg="shutting down" timeout=10s\n.* msg=stopped\n$`, logs.String())
}

// TestServeFails: when serving fails before ctx is done, Wait returns the error at once.
func TestServeFails(t *testing.T) {
	ln := listen(t)
	require.NoError(t, ln.Close())
	err := receive(t, wait(t.Context(), httpserve.Start(ln, http.NotFoundHandler(), slog.New(slog.DiscardHandler))))
	require.Error(t, err)
	assert.ErrorIs(t, err, net.ErrClosed)
}

// TestWaitAll: the servers of one program shut down together, and the log says "shutting down"
// and "stopped" once for all of them.
func TestWaitAll(t *testing.T) {
	var logs bytes.Buffer // written by WaitAll only: read once it has returned
	log := slog.New(slog.NewTextHandler(&logs, nil))
	quiet := slog.New(slog.DiscardHandler)
	a, b := listen(t), listen(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- httpserve.WaitAll(ctx, log, httpserve.Start(a, http.NotFoundHandler(), quiet), httpserve.Start(b, http.NotFoundHandler(), quiet))
	}()
	cancel()
	require.NoError(t, receive(t, done))
	for _, ln := range []net.Listener{a, b} {
		_, err := net.Dial("tcp", ln.Addr().String())
		assert.Error(t, err, "both listeners are closed")
	}
	assert.Regexp(t, `^[^\n]* msg="shutting down" timeout=10s\n[^\n]* msg=stopped\n$`, logs.String())
}

// TestWaitAllOneFails: when one server fails, WaitAll shuts the others down and returns its
// error at once, without logging that the program stopped.
func TestWaitAllOneFails(t *testing.T) {
	var logs bytes.Buffer
	broken, good := listen(t), listen(t)
	require.NoError(t, broken.Close())
	quiet := slog.New(slog.DiscardHandler)
	done := make(chan error, 1)
	go func() {
		done <- httpserve.WaitAll(t.Context(), slog.New(slog.NewTextHandler(&logs, nil)),
			httpserve.Start(good, http.NotFoundHandler(), quiet), httpserve.Start(broken, http.NotFoundHandler(), quiet))
	}()
	err := receive(t, done)
	assert.ErrorIs(t, err, net.ErrClosed)
	_, err = net.Dial("tcp", good.Addr().String())
	assert.Error(t, err, "the good server is shut down")
	assert.NotContains(t, logs.String(), "stopped")
}
