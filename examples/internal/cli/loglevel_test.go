package cli_test

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/examples/internal/cli"
)

func TestParseLogLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{
		"debug": slog.LevelDebug,
		"info":  slog.LevelInfo,
		"warn":  slog.LevelWarn,
		"error": slog.LevelError,
		"WARN":  slog.LevelWarn,
		"Debug": slog.LevelDebug,
	} {
		got, err := cli.ParseLogLevel(in)
		require.NoError(t, err, "%q", in)
		assert.Equal(t, want, got, "%q", in)
	}
}

func TestParseLogLevelMistake(t *testing.T) {
	for _, in := range []string{"", "verbose", "warning", "-4"} {
		_, err := cli.ParseLogLevel(in)
		var ue *cli.UsageError
		require.ErrorAs(t, err, &ue, "%q", in)
		assert.False(t, ue.Printed, "the caller reports it")
		assert.Contains(t, err.Error(), "use debug, info, warn or error")
		assert.Contains(t, err.Error(), `-log-level "`+in+`"`)
	}
}
