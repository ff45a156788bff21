// Package testclock is the fake clock of visid's tests: a time that moves only when a test moves
// it, safe for concurrent use, whose Now fits every Config.Now of the library.
package testclock

import (
	"sync"
	"time"
)

// Start is the time New starts at: any fixed time works, and one for every test keeps their
// logs comparable.
var Start = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// Clock is a fake time source. The zero value is not usable: make one with New or At.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock at Start.
func New() *Clock { return At(Start) }

// At returns a clock at t.
func At(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d forward (back, for a negative d).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
