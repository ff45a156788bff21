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
