package ratelimit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/visid/visid/ratelimit"
	"github.com/visid/visid/ratelimit/ratelimittest"
)

var start = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func TestConformance(t *testing.T) {
	ratelimittest.Run(t, func(t *testing.T, r ratelimit.Rate) (ratelimit.Limiter, ratelimittest.Advance) {
		clock := ratelimittest.NewClock(start)
		m, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: r, Now: clock.Now})
		require.NoError(t, err)
		return m, clock.Advance
	})
}

// TestConformanceRealTime runs the suite as a limiter whose clock cannot be controlled runs it
// (ratelimit/redislimit), so that that path of the suite is checked too. It sleeps for about 4
// seconds.
func TestConformanceRealTime(t *testing.T) {
	if testing.Short() {
		t.Skip("sleeps; -short")
	}
	ratelimittest.Run(t, func(t *testing.T, r ratelimit.Rate) (ratelimit.Limiter, ratelimittest.Advance) {
		m, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: r})
		require.NoError(t, err)
		return m, nil
	})
}
