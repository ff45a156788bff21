package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/visid/visid/ratelimit"
)

func ExampleNewMemory() {
	lim, err := ratelimit.NewMemory(ratelimit.MemoryConfig{
		Rate: ratelimit.Rate{Limit: 2, Period: time.Minute}, // a request every 30s, 2 at once
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for range 3 {
		d, err := lim.Allow(ctx, "key_1")
		if err != nil {
			panic(err)
		}
		fmt.Printf("allowed=%t remaining=%d retry after %v, whole again in %v\n",
			d.Allowed, d.Remaining, d.RetryAfter.Round(time.Second), d.Reset.Round(time.Second))
	}
	d, _ := lim.Peek(ctx, "key_2")
	fmt.Printf("key_2: allowed=%t remaining=%d\n", d.Allowed, d.Remaining)
	// Output:
	// allowed=true remaining=1 retry after 0s, whole again in 30s
	// allowed=true remaining=0 retry after 0s, whole again in 1m0s
	// allowed=false remaining=0 retry after 30s, whole again in 1m0s
	// key_2: allowed=true remaining=2
}

func ExampleMiddleware() {
	lim, err := ratelimit.NewMemory(ratelimit.MemoryConfig{
		Rate: ratelimit.Rate{Limit: 2, Period: time.Minute},
	})
	if err != nil {
		panic(err)
	}
	// Without a Key, requests count against the client's address.
	limit, err := ratelimit.Middleware(ratelimit.MiddlewareConfig{Limiter: lim})
	if err != nil {
		panic(err)
	}
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))

	for range 3 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "192.0.2.1:50000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("%d remaining=%s reset=%s retry-after=%q body=%q\n", w.Code,
			w.Header().Get("RateLimit-Remaining"), w.Header().Get("RateLimit-Reset"),
			w.Header().Get("Retry-After"), w.Body.String())
	}
	// Output:
	// 200 remaining=1 reset=30 retry-after="" body="hello\n"
	// 200 remaining=0 reset=60 retry-after="" body="hello\n"
	// 429 remaining=0 reset=60 retry-after="30" body="rate limit exceeded\n"
}
