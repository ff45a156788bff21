// Package ratelimittest is the conformance suite of ratelimit.Limiter. Every Limiter runs it
// from its own tests; it is the only place the contract is tested:
//
//	func TestConformance(t *testing.T) {
//		ratelimittest.Run(t, func(t *testing.T, r ratelimit.Rate) (ratelimit.Limiter, ratelimittest.Advance) {
//			clock := ratelimittest.NewClock(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
//			m, err := ratelimit.NewMemory(ratelimit.MemoryConfig{Rate: r, Now: clock.Now})
//			if err != nil {
//				t.Fatal(err)
//			}
//			return m, clock.Advance
//		})
//	}
//
// Run calls newLimiter once for each subtest, from parallel subtests (t.Parallel), and expects
// a limiter that enforces the Rate it is given and shares no state with any other it returned
// (a shared backend: a fresh key prefix for each). newLimiter may register cleanup with
// t.Cleanup. A limiter that needs a server skips in its own test, before calling Run, when it
// has no address to connect to.
//
// # Time
//
// newLimiter also returns an Advance that moves the limiter's clock forward, or nil when the
// limiter runs on real time (a Redis limiter reads the server's clock). With nil, the subtests
// that need time to pass sleep instead, on a Rate of 2 requests a second, about 4 seconds in
// all; the others use Rates whose refill during a test is negligible (a token every 20 seconds
// or slower), and durations are compared with a slack of a second (a millisecond on a
// controlled clock). A limiter that rounds RetryAfter and Reset must round them up.
//
// # Optional capability
//
// A limiter with a method Len() int, reporting the number of keys it holds state for (as
// ratelimit.Memory has), is also checked not to create state in Peek.
//
// # Subtests
//
// The subtests are named after the sentence of the ratelimit.Limiter and ratelimit.Decision
// comments they check. Run a single one with, for example,
//
//	go test -run 'TestConformance/ConcurrentAllowsOnOneKey' ./ratelimit
//
// The SCIM API's rate limits are described in https://github.com/visid/visid/blob/main/docs/scim.md#rate-limits.
package ratelimittest
