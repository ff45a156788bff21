package ratelimittest

import (
	"sync"
	"time"
)

// Advance moves a limiter's clock forward by d.
type Advance func(d time.Duration)

// Clock is a controllable clock for a limiter that takes a Now func (ratelimit.MemoryConfig.Now):
// Now returns its time, which only Advance changes. It is safe for concurrent use. The zero
// Clock stands at the zero time.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock standing at start.
func NewClock(start time.Time) *Clock {
	return &Clock{now: start}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d; a negative d is ignored.
func (c *Clock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
