package main

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// redisLogger is what redis.SetLogger takes (checked when compiling; never run, since the
// logger is the process's).
var _ = func() { redis.SetLogger(redisLogger{}) }

// TestRedisLogger: a go-redis line becomes one Warn record of the service's format, without
// go-redis's own prefix.
func TestRedisLogger(t *testing.T) {
	var buf bytes.Buffer
	l := redisLogger{log: slog.New(slog.NewTextHandler(&buf, nil))}
	l.Printf(context.Background(), "redis: connection pool: failed to dial after %d attempts: %v\n", 1, "dial tcp 127.0.0.1:6379: connect: connection refused")
	line := buf.String()
	assert.Contains(t, line, "level=WARN")
	assert.Contains(t, line, `msg="connection pool: failed to dial after 1 attempts: dial tcp 127.0.0.1:6379: connect: connection refused"`)
	assert.Contains(t, line, "component=redis")
	assert.Equal(t, 1, bytes.Count(buf.Bytes(), []byte("\n")), "one line")
}
