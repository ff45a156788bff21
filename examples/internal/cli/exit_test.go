package cli_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/visid/visid/examples/internal/cli"
)

// exit returns what ExitCode returns for err, and what it writes, for a program rp whose help
// is "rp -h".
func exit(err error) (int, string) {
	var stderr bytes.Buffer
	code := cli.ExitCode(err, &stderr, "rp", "rp -h")
	return code, stderr.String()
}

func TestExitCodeSuccess(t *testing.T) {
	code, out := exit(nil)
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
}

func TestExitCodeFailure(t *testing.T) {
	code, out := exit(errors.New("visid is not reachable"))
	assert.Equal(t, 1, code)
	assert.Equal(t, "rp: visid is not reachable\n", out)
}

// TestExitCodeUsage: a usage error, even wrapped, exits with 2 and points to the help, unless
// it was printed with the usage already.
func TestExitCodeUsage(t *testing.T) {
	missing := &cli.UsageError{Msg: "missing -client-id"}
	code, out := exit(missing)
	assert.Equal(t, 2, code)
	assert.Equal(t, "rp: missing -client-id\nRun \"rp -h\" for usage.\n", out)

	code, out = exit(fmt.Errorf("starting: %w", missing))
	assert.Equal(t, 2, code)
	assert.Equal(t, "rp: starting: missing -client-id\nRun \"rp -h\" for usage.\n", out)

	code, out = exit(&cli.UsageError{Msg: "flag provided but not defined: -port", Printed: true})
	assert.Equal(t, 2, code)
	assert.Empty(t, out, "printed once")
}

func TestUsageErrorMessage(t *testing.T) {
	assert.EqualError(t, &cli.UsageError{Msg: "missing -x", Printed: true}, "missing -x")
}
