package main

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/httpserve"
)

// TestBinary builds the program and runs it as a user would: it reads the key=value lines,
// makes a SCIM request with them, and stops the service with SIGINT, which it logs once; and an
// admin command without a store refuses with exit status 1 and leaves no file.
func TestBinary(t *testing.T) {
	bin := buildIDP(t)

	t.Run("serve", func(t *testing.T) {
		cmd := exec.CommandContext(t.Context(), bin, "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0")
		cmd.Dir = t.TempDir() // the default store, sqlite:idp.db, goes there
		logs := &syncBuffer{}
		cmd.Stderr = io.MultiWriter(t.Output(), logs)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())

		r := bufio.NewReader(stdout)
		_, vars, err := readVars(r)
		require.NoError(t, err)
		drained := make(chan struct{})
		go func() { // the service must never block on stdout
			_, _ = io.Copy(io.Discard, r)
			close(drained)
		}()

		req, err := http.NewRequestWithContext(t.Context(), "GET", vars["scim_base_url"]+"/ServiceProviderConfig", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+vars["scim_api_key"])
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)

		require.NoError(t, cmd.Process.Signal(os.Interrupt))
		select {
		case <-drained:
		case <-time.After(httpserve.ShutdownTimeout + 5*time.Second):
			t.Fatal("the service did not stop after SIGINT")
		}
		assert.NoError(t, cmd.Wait(), "exit status 0 after SIGINT")
		assert.Equal(t, 1, strings.Count(logs.String(), "msg=stopped"), "%s", logs)
	})

	t.Run("admin command without a store", func(t *testing.T) {
		dir := t.TempDir()
		cmd := exec.CommandContext(t.Context(), bin, "tenant", "list")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), kekEnv+"=")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%v: %s", err, out)
		assert.Equal(t, 1, exit.ExitCode())
		assert.Equal(t, "idp: no visid store at idp.db (the default -db sqlite:idp.db, in the working directory): "+
			"start the service once (idp, or go run ./examples/idp), or pass -db\n", string(out))
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "files left by an admin command")

		cmd = exec.CommandContext(t.Context(), bin, "-db", "memory", "tenant", "list")
		out, err = cmd.CombinedOutput()
		assert.NoError(t, err, "flags before the command: %s", out)
	})

	t.Run("unknown command", func(t *testing.T) {
		cmd := exec.CommandContext(t.Context(), bin, "frobnicate")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%v", err)
		assert.Equal(t, 2, exit.ExitCode())
		assert.Contains(t, string(out), `idp: unknown command "frobnicate"`)
		assert.Contains(t, string(out), "Usage:")
	})
}
