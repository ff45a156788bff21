package redislimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/ratelimit/redislimit"
)

// benchRate is SCIM's quota.
var benchRate = ratelimit.Rate{Limit: 200, Period: time.Minute}

// benchKeys are the keys the benchmarks cycle through: enough that most Allows are allowed,
// and so write, for the first 200 × 4096 calls.
func benchKeys() []string {
	keys := make([]string, 4096)
	for i := range keys {
		keys[i] = fmt.Sprintf("key_%08d/tenant", i)
	}
	return keys
}

// benchAllow runs l.Allow over benchKeys, from one goroutine or, when parallel, from
// 8 × GOMAXPROCS goroutines, as a server's concurrent requests.
func benchAllow(b *testing.B, l ratelimit.Limiter, parallel bool) {
	keys := benchKeys()
	ctx := context.Background()
	if !parallel {
		i := 0
		for b.Loop() {
			if _, err := l.Allow(ctx, keys[i&(len(keys)-1)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
		return
	}
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		i := int(time.Now().UnixNano())
		for pb.Next() {
			if _, err := l.Allow(ctx, keys[i&(len(keys)-1)]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

func newBenchRedis(b *testing.B) ratelimit.Limiter {
	c := newClient(b)
	l, err := redislimit.New(redislimit.Config{Client: c, Rate: benchRate, Prefix: newPrefix(b, c), Fallback: failFallback{}})
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func newBenchMemory(b *testing.B) ratelimit.Limiter {
	m, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: benchRate})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// failFallback makes a benchmark fail rather than measure the in-memory fallback.
type failFallback struct{}

func (failFallback) Allow(context.Context, string) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errFellBack
}

func (failFallback) Peek(context.Context, string) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errFellBack
}

// BenchmarkRedisAllow is Limiter.Allow, one EVALSHA round trip to the test Redis at a time.
// Quote it against BenchmarkMemoryAllow, measured in the same run.
func BenchmarkRedisAllow(b *testing.B) { benchAllow(b, newBenchRedis(b), false) }

// BenchmarkMemoryAllow is the baseline: ratelimit.Memory's Allow on the same Rate and keys.
func BenchmarkMemoryAllow(b *testing.B) { benchAllow(b, newBenchMemory(b), false) }

// BenchmarkRedisAllowParallel is Limiter.Allow from 8 × GOMAXPROCS goroutines
// (b.RunParallel), sharing the client's pool: the throughput of one instance.
func BenchmarkRedisAllowParallel(b *testing.B) { benchAllow(b, newBenchRedis(b), true) }

// BenchmarkMemoryAllowParallel is the baseline of BenchmarkRedisAllowParallel.
func BenchmarkMemoryAllowParallel(b *testing.B) { benchAllow(b, newBenchMemory(b), true) }

// BenchmarkRedisGet is the round trip the script rides on: a GET of a missing key, on the same
// client settings, to quote BenchmarkRedisAllow against.
func BenchmarkRedisGet(b *testing.B) {
	c := newClient(b)
	key := newPrefix(b, c) + "missing"
	ctx := context.Background()
	for b.Loop() {
		if err := c.Get(ctx, key).Err(); err != redis.Nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedisPing is a bare PING round trip on the same client settings: the floor that
// BenchmarkRedisAllow is quoted against.
func BenchmarkRedisPing(b *testing.B) {
	c := newClient(b)
	ctx := context.Background()
	for b.Loop() {
		if err := c.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
}
