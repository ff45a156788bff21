package cli

import (
	"fmt"
	"log/slog"
	"strings"
)

// ParseLogLevel reads the value of -log-level: debug, info, warn or error, in any case.
// Anything else is a *UsageError.
func ParseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, &UsageError{Msg: fmt.Sprintf("-log-level %q: use debug, info, warn or error", s)}
}
