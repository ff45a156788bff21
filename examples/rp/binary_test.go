package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/httpserve"
)

// TestBinary builds the program and runs it as a newcomer would: against a running visid,
// with the secret in the environment, through a sign-in, then stopped with SIGINT; and without
// credentials or without visid, where it must say what to do.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGINT")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	bin := filepath.Join(t.TempDir(), "rp")
	out, err := exec.CommandContext(t.Context(), goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	t.Run("serve", func(t *testing.T) {
		v := newVisid(t, true)
		cmd := exec.CommandContext(t.Context(), bin, "-addr", "127.0.0.1:0", "-issuer", v.issuer, "-client-id", v.clientID)
		cmd.Env = append(os.Environ(), secretEnv+"="+v.secret)
		cmd.Stderr = t.Output()
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())

		r := bufio.NewReader(stdout)
		line, err := r.ReadString('\n')
		require.NoError(t, err, "reading the app's stdout")
		a := &appRun{url: strings.TrimPrefix(strings.TrimSuffix(line, "\n"), "rp_url=")}
		require.Regexp(t, `^http://127\.0\.0\.1:[1-9][0-9]*$`, a.url, "first line: %q", line)
		drained := make(chan struct{})
		go func() { // the app must never block on stdout
			_, _ = io.Copy(io.Discard, r)
			close(drained)
		}()
		v.useApp(t, a)

		p := newBrowser(t).signIn(a, demoEmail, demoPassword)
		assert.Contains(t, p.body, signedInAs(demoEmail))

		require.NoError(t, cmd.Process.Signal(os.Interrupt))
		select {
		case <-drained:
		case <-time.After(httpserve.ShutdownTimeout + 5*time.Second):
			t.Fatal("the app did not stop after SIGINT")
		}
		assert.NoError(t, cmd.Wait(), "exit status 0 after SIGINT")
	})

	for _, tt := range []struct {
		name      string
		args      []string
		status    int
		mentioned []string
	}{
		{"no credentials", nil, 2, []string{"missing -client-id", "client_id=", "client_secret="}},
		{"visid not running", []string{"-addr", "127.0.0.1:0", "-issuer", "http://127.0.0.1:1/oidc/demo",
			"-client-id", "client_1", "-client-secret", "secret_1"}, 1, []string{"visid is not reachable", "go run ./examples/idp"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), bin, tt.args...)
			cmd.Env = append(os.Environ(), secretEnv+"=")
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "%v: %s", err, out)
			assert.Equal(t, tt.status, exit.ExitCode())
			for _, m := range tt.mentioned {
				assert.Contains(t, string(out), m)
			}
		})
	}
}
