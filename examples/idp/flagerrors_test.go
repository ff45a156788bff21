package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
	"github.com/visid/visid/examples/internal/httpserve"
)

// TestAddressInUse: an address that is taken is refused with exit status 1 and a message that
// names the flag and the address, and says how to pick another.
func TestAddressInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	taken := busy.Addr().String()
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"-addr", []string{"-addr", taken, "-admin-addr", ""},
			[]string{"-addr " + taken + ": the address is in use", "another address with -addr HOST:PORT"}},
		{"-admin-addr", []string{"-addr", "127.0.0.1:0", "-admin-addr", taken},
			[]string{"-admin-addr " + taken + ": the address is in use", "another address with -admin-addr HOST:PORT", `-admin-addr ""`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), append(tt.args, "-db", "memory"), &stdout, &stderr)
			require.Error(t, err)
			var exitOut bytes.Buffer
			assert.Equal(t, 1, exitCode(err, &exitOut))
			for _, w := range tt.want {
				assert.Contains(t, exitOut.String(), w)
			}
			assert.Empty(t, stdout.String(), "nothing for scripts on stdout")
		})
	}
}

// TestWebhookHTTPNamesTheFlag: webhook add with an http URL on a loopback host names the flag
// that allows it; one on another host does not, as no flag allows it.
func TestWebhookHTTPNamesTheFlag(t *testing.T) {
	db := newStore(t)
	runCmd(t, "tenant", "create", "acme", "-db", db)
	for url, flagNamed := range map[string]bool{
		"http://127.0.0.1:9/hook":       true,
		"http://localhost:9/hook":       true,
		"http://hooks.example.com/hook": false,
	} {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), []string{"webhook", "add", "--tenant", "acme", "--url", url, "-db", db}, &stdout, &stderr)
		var ue *cli.UsageError
		require.ErrorAs(t, err, &ue, url)
		assert.Equal(t, flagNamed, strings.Contains(err.Error(), "--allow-http-loopback"), "%s: %v", url, err)
		assert.Contains(t, err.Error(), "--url")
	}
	vars := runCmd(t, "webhook", "add", "--tenant", "acme", "--url", "http://127.0.0.1:9/hook", "--allow-http-loopback", "--allow-private-targets", "-db", db)
	assert.Regexp(t, `^webhook_`, vars["webhook_id"], "the flag the message names works")
}

// TestStoppedOnce: a shutdown with the admin server on logs "shutting down" and "stopped" once.
func TestStoppedOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0", "-db", "memory"}, pw, logs)
		pw.CloseWithError(fmt.Errorf("run returned %v", err))
		done <- err
	}()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	require.Eventually(t, func() bool { return listeningRE.MatchString(logs.String()) && adminRE.MatchString(logs.String()) },
		10*time.Second, 10*time.Millisecond, "%s", logs)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(httpserve.ShutdownTimeout + 5*time.Second):
		t.Fatal("run did not return")
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "msg=stopped"), "%s", logs)
	assert.Equal(t, 1, strings.Count(logs.String(), `msg="shutting down"`), "%s", logs)
}
