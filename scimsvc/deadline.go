package scimsvc

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// deadlineCtx is a context with a deadline that arms no timer until something waits on it:
// Deadline and Err answer from the clock, and Done, which a store that blocks (a database
// driver, a network call) asks for, creates the context.WithDeadline it stands for on first use.
// A request served from memory never calls Done, so its deadline costs a clock read per check
// instead of a timer armed and stopped per request. Err reports context.DeadlineExceeded once
// the deadline has passed, as the timer would, the parent's error before that, and
// context.Canceled once the request has ended.
type deadlineCtx struct {
	context.Context // the parent
	deadline        time.Time

	mu       sync.Mutex
	armed    atomic.Pointer[armedDeadline] // set by Done
	released atomic.Bool                   // the request has ended
	// keyID is the id of the request's API key, which Value gives for keyIDContext once the
	// key is known: the request's context carries it without a context of its own.
	keyID atomic.Pointer[string]
	// events is what a write with events carries (see setEvents), which Value gives before the
	// parent's values, without a context of its own and a copy of the request.
	events atomic.Pointer[requestEvents]
}

// requestEvents is what a write's context carries when the handler records events: the
// request's eventRender (Value of eventRenderContext) and a context that holds only the
// store.Change whose Render it is.
type requestEvents struct {
	render eventRender
	change context.Context
}

// setEvents makes the context carry c, whose Render is render's, and render.
func (c *deadlineCtx) setEvents(e *requestEvents) { c.events.Store(e) }

// setKeyID makes id the value of keyIDContext.
func (c *deadlineCtx) setKeyID(id string) { c.keyID.Store(&id) }

func (c *deadlineCtx) Value(key any) any {
	if _, ok := key.(keyIDContext); ok {
		if id := c.keyID.Load(); id != nil {
			return *id
		}
	}
	if e := c.events.Load(); e != nil {
		if _, ok := key.(eventRenderContext); ok {
			return &e.render
		}
		if v := e.change.Value(key); v != nil {
			return v
		}
	}
	return c.Context.Value(key)
}

// armedDeadline is the context.WithDeadline that Done returns the channel of.
type armedDeadline struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// withLazyDeadline returns ctx bounded by d; the caller must call its release method when the
// request ends.
func withLazyDeadline(ctx context.Context, d time.Duration) *deadlineCtx {
	return &deadlineCtx{Context: ctx, deadline: time.Now().Add(d)}
}

// arm returns the armed context, creating it on first use.
func (c *deadlineCtx) arm() *armedDeadline {
	if a := c.armed.Load(); a != nil {
		return a
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.armed.Load(); a != nil {
		return a
	}
	ctx, cancel := context.WithDeadline(c.Context, c.deadline)
	a := &armedDeadline{ctx, cancel}
	c.armed.Store(a)
	if c.released.Load() {
		cancel()
	}
	return a
}

// release ends the request: it stops the timer of Done, if one was armed.
func (c *deadlineCtx) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.released.Store(true)
	if a := c.armed.Load(); a != nil {
		a.cancel()
	}
}

func (c *deadlineCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *deadlineCtx) Done() <-chan struct{} { return c.arm().ctx.Done() }

func (c *deadlineCtx) Err() error {
	if a := c.armed.Load(); a != nil {
		return a.ctx.Err()
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	if c.released.Load() {
		return context.Canceled
	}
	return nil
}

func (c *deadlineCtx) String() string { return "scimsvc.deadlineCtx" }
