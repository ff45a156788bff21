package ratelimit

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidRate is wrapped by the errors of Rate.Validate.
var ErrInvalidRate = errors.New("ratelimit: invalid rate")

// ErrInvalidConfig is wrapped by the errors NewMemory and Middleware return for a Config they
// cannot use (other than an invalid Rate, which wraps ErrInvalidRate).
var ErrInvalidConfig = errors.New("ratelimit: invalid config")

// Rate is a quota: Limit requests per Period, at most Burst at once.
//
// It is a token bucket of Burst tokens, full at first, that regains Limit tokens per Period
// (one every Period/Limit) and never holds more than Burst. Each allowed request takes one.
type Rate struct {
	// Limit is the number of requests a key regains per Period; it must be positive.
	Limit int
	// Period is the time over which Limit requests are regained; it must be positive.
	Period time.Duration
	// Burst is how many requests a key with a whole quota may make at once. 0 means Limit.
	Burst int
}

// Validate reports whether r can be used: Limit and Period positive, Burst not negative. Its
// errors wrap ErrInvalidRate.
func (r Rate) Validate() error {
	switch {
	case r.Limit <= 0:
		return fmt.Errorf("%w: Limit is %d, must be positive", ErrInvalidRate, r.Limit)
	case r.Period <= 0:
		return fmt.Errorf("%w: Period is %v, must be positive", ErrInvalidRate, r.Period)
	case r.Burst < 0:
		return fmt.Errorf("%w: Burst is %d, must not be negative", ErrInvalidRate, r.Burst)
	}
	return nil
}

// burst is the bucket's size: Burst, or Limit when Burst is 0.
func (r Rate) burst() int {
	if r.Burst == 0 {
		return r.Limit
	}
	return r.Burst
}

// perSecond is the refill rate in tokens per second.
func (r Rate) perSecond() float64 {
	return float64(r.Limit) / r.Period.Seconds()
}
