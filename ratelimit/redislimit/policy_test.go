package redislimit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/ratelimit/redislimit"
)

// logRecords collects a Logger's records as JSON.
type logRecords struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *logRecords) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.Write(p)
}

func (r *logRecords) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(r, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// all returns the records logged so far.
func (r *logRecords) all(t *testing.T) []map[string]any {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.buf.Bytes()))
	for dec.More() {
		var rec map[string]any
		require.NoError(t, dec.Decode(&rec))
		out = append(out, rec)
	}
	return out
}

// unreachableClient returns a client of an address where nothing listens, which fails at once
// (connection refused) and neither retries nor waits between dials.
func unreachableClient(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr:          "127.0.0.1:1",
		DialTimeout:   100 * time.Millisecond,
		DialerRetries: 1,
		MaxRetries:    -1,
	})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// When Redis is unreachable, the Policy decides, and the failure is logged once, with the
// cause, however many decisions follow.
func TestUnreachable(t *testing.T) {
	rate := ratelimit.Rate{Limit: 3, Period: time.Hour} // a request every 20 minutes, 3 at once
	allowed := func(remaining int, reset time.Duration) ratelimit.Decision {
		return ratelimit.Decision{Allowed: true, Limit: 3, Remaining: remaining, Reset: reset}
	}
	denied := ratelimit.Decision{Limit: 3, RetryAfter: 20 * time.Minute, Reset: time.Hour}
	whole := ratelimit.Decision{Allowed: true, Limit: 3, Remaining: 3}
	tests := []struct {
		name   string
		policy redislimit.Policy
		// allows are the decisions of 5 Allows on a key, peek that of a Peek then.
		allows []ratelimit.Decision
		peek   ratelimit.Decision
		msg    string
	}{
		{
			name:   "UseFallback",
			policy: redislimit.UseFallback,
			allows: []ratelimit.Decision{
				allowed(2, 20*time.Minute), allowed(1, 40*time.Minute), allowed(0, time.Hour), denied, denied,
			},
			peek: denied,
			msg:  "redis unreachable; falling back to the in-memory limiter",
		},
		{
			name:   "FailOpen",
			policy: redislimit.FailOpen,
			allows: []ratelimit.Decision{whole, whole, whole, whole, whole},
			peek:   whole,
			msg:    "redis unreachable; allowing every request",
		},
		{
			name:   "FailClosed",
			policy: redislimit.FailClosed,
			allows: []ratelimit.Decision{denied, denied, denied, denied, denied},
			peek:   denied,
			msg:    "redis unreachable; denying every request",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			var logs logRecords
			l, err := redislimit.New(redislimit.Config{
				Client: unreachableClient(t), Rate: rate, Policy: tt.policy, Logger: logs.logger(),
			})
			require.NoError(t, err)
			for i, want := range tt.allows {
				d, err := l.Allow(ctx, "k")
				require.NoError(t, err, "Allow #%d", i+1)
				assertDecision(t, want, d, "Allow #"+strconv.Itoa(i+1))
			}
			d, err := l.Peek(ctx, "k")
			require.NoError(t, err, "Peek")
			assertDecision(t, tt.peek, d, "Peek")
			d, err = l.Peek(ctx, "other")
			require.NoError(t, err, "Peek")
			other := whole
			if tt.policy == redislimit.FailClosed {
				other = denied
			}
			assertDecision(t, other, d, "Peek of another key")

			recs := logs.all(t)
			require.Len(t, recs, 1, "log records after 7 decisions without Redis: %v", recs)
			assert.Equal(t, "ERROR", recs[0]["level"])
			assert.Equal(t, tt.msg, recs[0]["msg"])
			assert.Contains(t, recs[0]["err"], "127.0.0.1:1", "the record's err")
			assert.EqualValues(t, 1, recs[0]["decisions"], "the record's decision count")
		})
	}
}

// assertDecision compares durations to the second: the in-memory limiter runs on the real
// clock.
func assertDecision(t *testing.T, want, got ratelimit.Decision, what string) {
	t.Helper()
	assert.Equal(t, want.Allowed, got.Allowed, "%s: Allowed (%+v)", what, got)
	assert.Equal(t, want.Limit, got.Limit, "%s: Limit", what)
	assert.Equal(t, want.Remaining, got.Remaining, "%s: Remaining", what)
	assert.InDelta(t, float64(want.RetryAfter), float64(got.RetryAfter), float64(time.Second), "%s: RetryAfter", what)
	assert.InDelta(t, float64(want.Reset), float64(got.Reset), float64(time.Second), "%s: Reset", what)
}

// Config.Fallback, when set, is the limiter that decides without Redis.
func TestUnreachableCustomFallback(t *testing.T) {
	t.Parallel()
	rate := ratelimit.Rate{Limit: 3, Period: time.Hour}
	mem, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: rate})
	require.NoError(t, err)
	var logs logRecords
	l, err := redislimit.New(redislimit.Config{Client: unreachableClient(t), Rate: rate, Fallback: mem, Logger: logs.logger()})
	require.NoError(t, err)
	for _, k := range []string{"a", "b", "c"} {
		d, err := l.Allow(t.Context(), k)
		require.NoError(t, err)
		assert.True(t, d.Allowed)
	}
	assert.Equal(t, 3, mem.Len(), "keys the Fallback holds after Allows of 3 keys")
	recs := logs.all(t)
	require.Len(t, recs, 1)
	assert.Equal(t, "redis unreachable; falling back to Config.Fallback", recs[0]["msg"])
}

// An Allow whose ctx is done returns ctx's error, not a decision of the Policy, and logs
// nothing.
func TestDoneContext(t *testing.T) {
	t.Parallel()
	var logs logRecords
	l, err := redislimit.New(redislimit.Config{
		Client: unreachableClient(t), Rate: ratelimit.Rate{Limit: 3, Period: time.Hour}, Logger: logs.logger(),
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = l.Allow(ctx, "k")
	assert.ErrorIs(t, err, context.Canceled)
	_, err = l.Peek(ctx, "k")
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, logs.all(t), "log records")
}

// switchable is a Redis connection that can be cut: while down is set, dials and every Read and
// Write fail.
type switchable struct {
	net.Conn
	down *atomic.Bool
}

var errCut = errors.New("test: the connection to Redis is cut")

func (c switchable) Read(p []byte) (int, error) {
	if c.down.Load() {
		return 0, errCut
	}
	return c.Conn.Read(p)
}

func (c switchable) Write(p []byte) (int, error) {
	if c.down.Load() {
		return 0, errCut
	}
	return c.Conn.Write(p)
}

// When Redis comes back, the Limiter decides with it again (after leaving it alone for a
// second), from the state Redis kept, and logs that it is back, once.
func TestRecovery(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var down atomic.Bool
	var dialer net.Dialer
	c := redis.NewClient(&redis.Options{
		Addr: redisAddr(t),
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if down.Load() {
				return nil, errCut
			}
			conn, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return switchable{conn, &down}, nil
		},
		DialerRetries: 1,
		MaxRetries:    -1,
	})
	t.Cleanup(func() { _ = c.Close() })
	var logs logRecords
	l, err := redislimit.New(redislimit.Config{
		Client: c, Rate: ratelimit.Rate{Limit: 5, Period: time.Hour}, Prefix: newPrefix(t, c), Logger: logs.logger(),
	})
	require.NoError(t, err)
	remaining := func(what string) int {
		t.Helper()
		d, err := l.Allow(ctx, "k")
		require.NoError(t, err, what)
		require.True(t, d.Allowed, "%s: %+v", what, d)
		return d.Remaining
	}

	assert.Equal(t, 4, remaining("Allow with Redis"))
	down.Store(true)
	assert.Equal(t, 4, remaining("first Allow without Redis, from the fallback's fresh quota"))
	assert.Equal(t, 3, remaining("second Allow without Redis"))
	down.Store(false)
	assert.Equal(t, 2, remaining("Allow within a second of the failure, still from the fallback"))
	time.Sleep(1100 * time.Millisecond)
	assert.Equal(t, 3, remaining("Allow with Redis back, from Redis's state"))
	assert.Equal(t, 2, remaining("second Allow with Redis back"))

	recs := logs.all(t)
	require.Len(t, recs, 2, "log records: %v", recs)
	assert.Equal(t, "redis unreachable; falling back to the in-memory limiter", recs[0]["msg"])
	assert.Contains(t, recs[0]["err"], errCut.Error())
	assert.Equal(t, "INFO", recs[1]["level"])
	assert.Equal(t, "redis reachable again", recs[1]["msg"])
	assert.EqualValues(t, 2, recs[1]["decisions"], "decisions without Redis since the outage was logged")
}

// A key whose Redis value is not a timestamp (written by something else under the prefix) is
// a failure of Redis: the Policy decides, the record says why, and the value is left alone.
func TestForeignValue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := newClient(t)
	prefix := newPrefix(t, c)
	require.NoError(t, c.Set(ctx, prefix+"k", "not a time", time.Minute).Err())
	var logs logRecords
	l, err := redislimit.New(redislimit.Config{
		Client: c, Rate: ratelimit.Rate{Limit: 3, Period: time.Hour}, Prefix: prefix,
		Policy: redislimit.FailClosed, Logger: logs.logger(),
	})
	require.NoError(t, err)
	d, err := l.Allow(ctx, "k")
	require.NoError(t, err)
	assert.False(t, d.Allowed, "Allow of a key holding a foreign value, under FailClosed")
	recs := logs.all(t)
	require.Len(t, recs, 1)
	assert.Equal(t, "redis unreachable; denying every request", recs[0]["msg"])
	assert.Contains(t, recs[0]["err"], "holds no timestamp")
	v, err := c.Get(ctx, prefix+"k").Result()
	require.NoError(t, err)
	assert.Equal(t, "not a time", v)
}
