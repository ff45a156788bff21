package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// redisLogger is go-redis's logger (redis.SetLogger) as records of a slog.Logger: the lines the
// client writes on its own, chiefly while Redis is away ("connection pool: failed to dial …"),
// become Warn records with component=redis in the service's log format instead of unstructured
// lines on stderr.
//
// go-redis keeps its logger in a package-level variable, shared by every client of the process,
// so only main sets it, once, before anything runs; run, which tests call many times at once,
// never does.
type redisLogger struct{ log *slog.Logger }

// Printf implements go-redis's internal.Logging.
func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimPrefix(strings.TrimSpace(fmt.Sprintf(format, v...)), "redis: ")
	l.log.WarnContext(ctx, msg, "component", "redis")
}
