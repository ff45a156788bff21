package redislimit_test

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/ratelimit/ratelimittest"
	"github.com/visid/visid/ratelimit/redislimit"
)

// redisAddr returns the address of the test Redis, VISID_TEST_REDIS_ADDR. Without it, tb is
// skipped, or fails when VISID_REQUIRE_SERVICES=1.
func redisAddr(tb testing.TB) string {
	tb.Helper()
	addr := os.Getenv("VISID_TEST_REDIS_ADDR")
	if addr == "" {
		if os.Getenv("VISID_REQUIRE_SERVICES") == "1" {
			tb.Fatal("VISID_TEST_REDIS_ADDR is not set, and VISID_REQUIRE_SERVICES=1")
		}
		tb.Skip("VISID_TEST_REDIS_ADDR is not set")
	}
	return addr
}

// newClient returns a client of the test Redis, closed when tb ends.
func newClient(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: redisAddr(tb)})
	tb.Cleanup(func() { _ = c.Close() })
	require.NoError(tb, c.Ping(context.Background()).Err(), "ping the test Redis")
	return c
}

// newPrefix returns a key prefix no other test uses, and deletes every key under it when tb
// ends.
func newPrefix(tb testing.TB, c redis.UniversalClient) string {
	tb.Helper()
	prefix := "visid-test:rl:" + rand.Text() + ":"
	tb.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			tb.Errorf("listing the test's keys: %v", err)
		}
		for chunk := range slices.Chunk(keys, 500) {
			if err := c.Del(ctx, chunk...).Err(); err != nil {
				tb.Errorf("deleting the test's keys: %v", err)
			}
		}
	})
	return prefix
}

// newLimiter returns a Limiter of cfg under a fresh prefix (unless cfg has one) that fails t
// if it ever decides without Redis.
func newLimiter(t *testing.T, cfg redislimit.Config) *redislimit.Limiter {
	t.Helper()
	if cfg.Prefix == "" {
		cfg.Prefix = newPrefix(t, cfg.Client)
	}
	cfg.Fallback = noFallback{t}
	cfg.Logger = slog.New(slog.NewTextHandler(t.Output(), nil))
	l, err := redislimit.New(cfg)
	require.NoError(t, err)
	return l
}

// noFallback is a Fallback that fails the test: the tests that expect Redis to decide must
// not pass on the in-memory limiter's decisions.
type noFallback struct{ t *testing.T }

var errFellBack = errors.New("the limiter fell back; Redis failed (see the log)")

func (f noFallback) Allow(context.Context, string) (ratelimit.Decision, error) {
	f.t.Error(errFellBack)
	return ratelimit.Decision{}, errFellBack
}

func (f noFallback) Peek(context.Context, string) (ratelimit.Decision, error) {
	f.t.Error(errFellBack)
	return ratelimit.Decision{}, errFellBack
}

func TestConformance(t *testing.T) {
	c := newClient(t)
	ratelimittest.Run(t, func(t *testing.T, r ratelimit.Rate) (ratelimit.Limiter, ratelimittest.Advance) {
		return newLimiter(t, redislimit.Config{Client: c, Rate: r}), nil
	})
}

// Many instances, each with its own client, share one quota exactly: of 300 concurrent Allows
// on a key with 200 left, 200 are allowed, each leaving a different Remaining. The Rate refills
// a request every 18 seconds, so that no refill during the test blurs the count.
func TestInstancesShareQuotaExactly(t *testing.T) {
	const instances, calls, quota = 20, 300, 200
	rate := ratelimit.Rate{Limit: quota, Period: time.Hour, Burst: quota}
	prefix := newPrefix(t, newClient(t))
	limiters := make([]*redislimit.Limiter, instances)
	for i := range limiters {
		c := newClient(t) // a pool of its own, as another process has
		limiters[i] = newLimiter(t, redislimit.Config{Client: c, Rate: rate, Prefix: prefix})
	}

	type result struct {
		d   ratelimit.Decision
		err error
	}
	results := make(chan result, calls)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range calls {
		l := limiters[i%instances]
		wg.Go(func() {
			<-start
			d, err := l.Allow(t.Context(), "apikey-1/acme")
			results <- result{d, err}
		})
	}
	close(start)
	wg.Wait()
	close(results)

	var remaining []int
	denied := 0
	for r := range results {
		require.NoError(t, r.err)
		if r.d.Allowed {
			remaining = append(remaining, r.d.Remaining)
			continue
		}
		denied++
		assert.Zero(t, r.d.Remaining, "denied Allow: Remaining")
		assert.Positive(t, r.d.RetryAfter, "denied Allow: RetryAfter")
	}
	require.Len(t, remaining, quota, "allowed of %d Allows from %d instances on a quota of %d", calls, instances, quota)
	assert.Equal(t, calls-quota, denied, "denied")
	slices.Sort(remaining)
	want := make([]int, quota)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, remaining, "Remaining of the allowed Allows: each value once")
}

// A key's Redis key is Prefix+key and expires when its quota is whole again: it holds only
// what is not yet regained. A denied Allow does not extend it.
func TestKeysExpire(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)

	t.Run("TTLIsTimeToWholeQuota", func(t *testing.T) {
		prefix := newPrefix(t, c)
		l := newLimiter(t, redislimit.Config{Client: c, Rate: ratelimit.Rate{Limit: 3, Period: time.Minute}, Prefix: prefix})
		ttl := func() time.Duration {
			d, err := c.PTTL(ctx, prefix+"k").Result()
			require.NoError(t, err)
			return d
		}
		for i := 1; i <= 3; i++ {
			_, err := l.Allow(ctx, "k")
			require.NoError(t, err)
			got := ttl()
			assert.True(t, got > time.Duration(i-1)*20*time.Second && got <= time.Duration(i)*20*time.Second,
				"PTTL after %d Allows is %v, want in (%v, %v]", i, got, time.Duration(i-1)*20*time.Second, time.Duration(i)*20*time.Second)
		}
		d, err := l.Allow(ctx, "k")
		require.NoError(t, err)
		require.False(t, d.Allowed)
		assert.LessOrEqual(t, ttl(), time.Minute, "PTTL after a denied Allow")
	})

	t.Run("IdleKeyVanishes", func(t *testing.T) {
		// A request every 100ms, 2 at once: the quota is whole 200ms after it is spent.
		prefix := newPrefix(t, c)
		l := newLimiter(t, redislimit.Config{Client: c, Rate: ratelimit.Rate{Limit: 10, Period: time.Second, Burst: 2}, Prefix: prefix})
		for range 2 {
			_, err := l.Allow(ctx, "k")
			require.NoError(t, err)
		}
		ttl, err := c.PTTL(ctx, prefix+"k").Result()
		require.NoError(t, err)
		assert.True(t, ttl > 0 && ttl <= 200*time.Millisecond, "PTTL after the burst is %v, want in (0, 200ms]", ttl)
		time.Sleep(300 * time.Millisecond)
		n, err := c.Exists(ctx, prefix+"k").Result()
		require.NoError(t, err)
		assert.Zero(t, n, "the key 300ms after its quota was spent")
		d, err := l.Peek(ctx, "k")
		require.NoError(t, err)
		assert.Equal(t, ratelimit.Decision{Allowed: true, Limit: 10, Remaining: 2}, d, "Peek once the key vanished")
	})
}

// Peek writes nothing: no key for a fresh key, and the stored state unchanged, TTL included,
// for a used and an exhausted one.
func TestPeekWritesNothing(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	prefix := newPrefix(t, c)
	l := newLimiter(t, redislimit.Config{Client: c, Rate: ratelimit.Rate{Limit: 2, Period: time.Hour}, Prefix: prefix})

	for range 3 {
		_, err := l.Peek(ctx, "fresh")
		require.NoError(t, err)
	}
	n, err := c.Exists(ctx, prefix+"fresh").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "Redis keys after Peeks of a fresh key")

	state := func() (string, time.Duration) {
		v, err := c.Get(ctx, prefix+"k").Result()
		require.NoError(t, err)
		ttl, err := c.PTTL(ctx, prefix+"k").Result()
		require.NoError(t, err)
		return v, ttl
	}
	for i := range 3 { // used, exhausted, exhausted and denied
		_, err := l.Allow(ctx, "k")
		require.NoError(t, err)
		v, ttl := state()
		for range 3 {
			_, err := l.Peek(ctx, "k")
			require.NoError(t, err)
		}
		v2, ttl2 := state()
		assert.Equal(t, v, v2, "state after Peeks, Allow #%d", i+1)
		assert.LessOrEqual(t, ttl2, ttl, "PTTL after Peeks, Allow #%d", i+1)
	}
}

// Limiters with different prefixes share no quota on one Redis, and within one Limiter the
// keys of different tenants are independent: the keys scimsvc passes, "<key id>/<tenant>".
func TestIsolation(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	rate := ratelimit.Rate{Limit: 2, Period: time.Hour}
	a := newLimiter(t, redislimit.Config{Client: c, Rate: rate})
	b := newLimiter(t, redislimit.Config{Client: c, Rate: rate})

	exhaust := func(l *redislimit.Limiter, key string) {
		t.Helper()
		for i := range 3 {
			d, err := l.Allow(ctx, key)
			require.NoError(t, err)
			require.Equal(t, i < 2, d.Allowed, "Allow #%d of %q: %+v", i+1, key, d)
		}
	}
	whole := func(l *redislimit.Limiter, key, what string) {
		t.Helper()
		d, err := l.Peek(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, ratelimit.Decision{Allowed: true, Limit: 2, Remaining: 2}, d, what)
	}

	exhaust(a, "key1/acme")
	whole(b, "key1/acme", "the same key in a Limiter with another prefix")
	whole(a, "key1/globex", "the same API key in another tenant")
	whole(a, "key2/acme", "another API key in the same tenant")
	exhaust(b, "key1/acme")
	exhaust(a, "key1/globex")
}

// The zero Prefix is DefaultPrefix.
func TestDefaultPrefix(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	l, err := redislimit.New(redislimit.Config{Client: c, Rate: ratelimit.Rate{Limit: 2, Period: time.Hour}})
	require.NoError(t, err)
	key := "test-" + rand.Text()
	t.Cleanup(func() { c.Del(context.Background(), redislimit.DefaultPrefix+key) })
	_, err = l.Allow(ctx, key)
	require.NoError(t, err)
	n, err := c.Exists(ctx, redislimit.DefaultPrefix+key).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "Redis keys named DefaultPrefix+key after an Allow")
}

// New checks its Config without contacting Redis.
func TestNew(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialed
	t.Cleanup(func() { _ = client.Close() })
	mem, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: ratelimit.Rate{Limit: 1, Period: time.Second}})
	require.NoError(t, err)
	rate := ratelimit.Rate{Limit: 200, Period: time.Minute}

	tests := []struct {
		name string
		cfg  redislimit.Config
		want error // nil: New succeeds
	}{
		{"Minimal", redislimit.Config{Client: client, Rate: rate}, nil},
		{"Everything", redislimit.Config{Client: client, Rate: rate, Prefix: "p:", Fallback: mem, Logger: slog.Default()}, nil},
		{"FailOpen", redislimit.Config{Client: client, Rate: rate, Policy: redislimit.FailOpen}, nil},
		{"FailClosed", redislimit.Config{Client: client, Rate: rate, Policy: redislimit.FailClosed}, nil},
		{"LongestTolerance", redislimit.Config{Client: client, Rate: ratelimit.Rate{Limit: 1, Period: redislimit.MaxTolerance}}, nil},
		{"NoClient", redislimit.Config{Rate: rate}, ratelimit.ErrInvalidConfig},
		{"NoRate", redislimit.Config{Client: client}, ratelimit.ErrInvalidRate},
		{"NegativeBurst", redislimit.Config{Client: client, Rate: ratelimit.Rate{Limit: 1, Period: time.Second, Burst: -1}}, ratelimit.ErrInvalidRate},
		{"ToleranceTooLong", redislimit.Config{Client: client, Rate: ratelimit.Rate{Limit: 1, Period: redislimit.MaxTolerance + 1}}, ratelimit.ErrInvalidRate},
		{"BurstTooLong", redislimit.Config{Client: client, Rate: ratelimit.Rate{Limit: 1, Period: time.Hour, Burst: 1 << 40}}, ratelimit.ErrInvalidRate},
		{"UnknownPolicy", redislimit.Config{Client: client, Rate: rate, Policy: redislimit.FailClosed + 1}, ratelimit.ErrInvalidConfig},
		{"FallbackWithFailOpen", redislimit.Config{Client: client, Rate: rate, Policy: redislimit.FailOpen, Fallback: mem}, ratelimit.ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := redislimit.New(tt.cfg)
			if tt.want == nil {
				require.NoError(t, err)
				assert.NotNil(t, l)
				return
			}
			assert.ErrorIs(t, err, tt.want)
			assert.Nil(t, l)
		})
	}
}
