package ratelimittest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func peekTests() []test {
	return []test{
		{"PeekTakesNothing", testPeekTakesNothing},
		{"PeekReportsWhatAllowWouldDecide", testPeekReportsWhatAllowWouldDecide},
		{"PeekDoesNotCreateState", testPeekDoesNotCreateState},
	}
}

// Peek takes nothing from the quota, however often it is called, on a fresh, a used and an
// exhausted key.
func testPeekTakesNothing(t *testing.T, s subject) {
	l := s.new(t, hourly(3, 0))
	for range 5 {
		l.whole(t, l.peek(t, "k"), "Peek of a fresh key, again")
	}
	assert.Equal(t, 2, l.allow(t, "k").Remaining, "Allow after 5 Peeks: Remaining")
	for range 5 {
		d := l.peek(t, "k")
		assert.True(t, d.Allowed, "Peek after one Allow: %+v", d)
		assert.Equal(t, 2, d.Remaining, "Peek after one Allow: Remaining")
		assert.Zero(t, d.RetryAfter, "Peek after one Allow: RetryAfter")
	}
	assert.Equal(t, 1, l.allow(t, "k").Remaining, "Allow after one Allow and 5 Peeks: Remaining")
	assert.Equal(t, 0, l.allow(t, "k").Remaining, "third Allow: Remaining")
	for range 5 {
		d := l.peek(t, "k")
		assert.False(t, d.Allowed, "Peek of an exhausted key: %+v", d)
		assert.Zero(t, d.Remaining, "Peek of an exhausted key: Remaining")
	}
}

// Peek reports what Allow would decide now: the same Allowed, the Remaining Allow would leave
// plus the one it would take, and for a denial the same RetryAfter and Reset.
func testPeekReportsWhatAllowWouldDecide(t *testing.T, s subject) {
	l := s.new(t, everyTwentySeconds)
	for i := range l.burst() + 2 {
		p := l.peek(t, "k")
		d := l.allow(t, "k")
		require.Equal(t, d.Allowed, p.Allowed, "request #%d: Peek said %+v, Allow decided %+v", i+1, p, d)
		if d.Allowed {
			assert.Equal(t, p.Remaining-1, d.Remaining, "request #%d: Remaining after Allow, against Peek's", i+1)
			continue
		}
		assert.Equal(t, p.Remaining, d.Remaining, "denied request #%d: Remaining", i+1)
		l.near(t, p.RetryAfter, d.RetryAfter, "denied request #"+itoa(i+1)+": RetryAfter, against Peek's")
		l.near(t, p.Reset, d.Reset, "denied request #"+itoa(i+1)+": Reset, against Peek's")
	}
}

// Peek of a key that has not been seen stores nothing: checked on limiters with a method
// Len() int.
func testPeekDoesNotCreateState(t *testing.T, s subject) {
	l := s.new(t, hourly(3, 0))
	lener, ok := l.Limiter.(interface{ Len() int })
	if !ok {
		t.Skipf("%T has no method Len() int to count the keys it holds", l.Limiter)
	}
	require.Zero(t, lener.Len(), "Len of a fresh limiter")
	for i := range 100 {
		l.whole(t, l.peek(t, "peeked-"+itoa(i)), "Peek of a fresh key")
	}
	assert.Zero(t, lener.Len(), "Len after Peeks of 100 fresh keys")
	l.allow(t, "allowed")
	assert.Equal(t, 1, lener.Len(), "Len after an Allow")
	l.peek(t, "peeked-0")
	assert.Equal(t, 1, lener.Len(), "Len after an Allow and a Peek of another key")
}
