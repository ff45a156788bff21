package cli_test

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
)

// TestRunInterruptible: run gets the command line and the standard streams, and SIGINT
// cancels its context instead of stopping the process.
func TestRunInterruptible(t *testing.T) {
	self, err := os.FindProcess(os.Getpid())
	require.NoError(t, err)
	err = cli.RunInterruptible(func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		assert.Equal(t, os.Args[1:], args)
		assert.Equal(t, os.Stdout, stdout)
		assert.Equal(t, os.Stderr, stderr)
		require.NoError(t, ctx.Err())
		if err := self.Signal(os.Interrupt); err != nil {
			t.Skipf("cannot send SIGINT here: %v", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(10 * time.Second):
			t.Fatal("SIGINT did not cancel the context")
			return nil
		}
	})
	assert.NoError(t, err)
}
