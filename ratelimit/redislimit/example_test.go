package redislimit_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/ratelimit/redislimit"
)

// With Redis unreachable, the in-memory fallback decides, and the outage is logged once.
func ExampleNew_unreachable() {
	rdb := redis.NewClient(&redis.Options{
		Addr:          "127.0.0.1:1", // nothing listens there
		DialTimeout:   100 * time.Millisecond,
		DialerRetries: 1,
		MaxRetries:    -1,
	})
	defer rdb.Close()
	lim, err := redislimit.New(redislimit.Config{
		Client: rdb,
		Rate:   ratelimit.Rate{Limit: 2, Period: time.Minute},
		Prefix: "example:rl:",
		Logger: slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey || a.Key == "err" { // for a stable Output
					return slog.Attr{}
				}
				return a
			},
		})),
	})
	if err != nil {
		panic(err)
	}
	for range 3 {
		d, err := lim.Allow(context.Background(), "key_1")
		if err != nil {
			panic(err)
		}
		fmt.Printf("allowed=%t remaining=%d retry after %v\n", d.Allowed, d.Remaining, d.RetryAfter.Round(time.Second))
	}
	// Output:
	// level=ERROR msg="redis unreachable; falling back to the in-memory limiter" decisions=1
	// allowed=true remaining=1 retry after 0s
	// allowed=true remaining=0 retry after 0s
	// allowed=false remaining=0 retry after 30s
}
