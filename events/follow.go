// Package events lets a host act on what visid's stores record in their event log
// (store.Events): Follow calls a function with each event of a tenant, in order, as they are
// committed, and tells where to resume.
//
//	cursor := loadCursor() // "" the first time
//	cursor, err := events.Follow(ctx, backend.Events, "acme", cursor, func(e store.Event) error {
//		switch e.Type {
//		case store.EventUserDeactivated, store.EventUserDeleted:
//			return endSessions(e.SubjectID)
//		}
//		return nil
//	})
//	saveCursor(cursor) // the last event handled: the next Follow starts after it
//
// The store records events only for writes whose context carries a store.Change: set
// scimsvc.Config.Events (and the other handlers' Events) so that they do.
//
// The guide to events and webhooks is https://github.com/visid/visid/blob/main/docs/events-webhooks.md.
package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/visid/visid/store"
)

// Defaults of Follower.
const (
	DefaultBatch   = 100
	DefaultMinWait = 250 * time.Millisecond
	DefaultMaxWait = 10 * time.Second
)

// Follower reads one tenant's event log as it grows. Events and Tenant are required; every
// other field has the default its comment gives.
type Follower struct {
	Events store.Events
	Tenant string
	// Batch is how many events one List asks for. 0: DefaultBatch.
	Batch int
	// MinWait and MaxWait bound the wait between polls of a log that has nothing new, or
	// after a List that failed: it starts at MinWait and doubles to MaxWait, and goes back to
	// MinWait once events come. 0: DefaultMinWait and DefaultMaxWait.
	MinWait, MaxWait time.Duration
	// Logger receives a warning for each List that failed (Follow then waits and tries
	// again). nil: slog.Default().
	Logger *slog.Logger
}

// Follow is Follower{Events: es, Tenant: tenant}.Follow.
func Follow(ctx context.Context, es store.Events, tenant, after string, fn func(store.Event) error) (string, error) {
	return Follower{Events: es, Tenant: tenant}.Follow(ctx, after, fn)
}

// Follow calls fn with each event of the tenant's log after the cursor after ("" for the
// start), oldest first, one at a time, waiting for new events when it has seen them all. It
// returns when ctx is done (with ctx's error) or when fn returns an error (wrapped, the event
// not counted as handled), and always returns the cursor of the last event fn handled (after,
// if none): Follow again from it goes on with the next event, so that each event is handled
// once as long as the caller keeps that cursor with what fn did. A List that fails is retried
// after a wait; a malformed after is an error wrapping store.ErrInvalid at once.
func (f Follower) Follow(ctx context.Context, after string, fn func(store.Event) error) (string, error) {
	if f.Events == nil || f.Tenant == "" || fn == nil {
		return after, fmt.Errorf("events: Follow needs a store.Events, a tenant and a function: %w", store.ErrInvalid)
	}
	batch := f.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	minWait, maxWait := f.MinWait, f.MaxWait
	if minWait <= 0 {
		minWait = DefaultMinWait
	}
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	maxWait = max(maxWait, minWait)
	log := f.Logger
	if log == nil {
		log = slog.Default()
	}

	wait := minWait
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return after, ctx.Err()
		case <-timer.C:
		}
		page, err := f.Events.List(ctx, f.Tenant, after, batch)
		switch {
		case ctx.Err() != nil:
			return after, ctx.Err()
		case errors.Is(err, store.ErrInvalid): // a malformed cursor: waiting will not mend it
			return after, fmt.Errorf("events: %w", err)
		case err != nil:
			log.WarnContext(ctx, "events: listing the event log failed; trying again", "tenant", f.Tenant, "err", err)
		}
		for _, e := range page {
			if err := ctx.Err(); err != nil {
				return after, err
			}
			if err := fn(e); err != nil {
				return after, fmt.Errorf("events: handling %s %s: %w", e.Type, e.Cursor, err)
			}
			after = e.Cursor
		}
		switch {
		case err == nil && len(page) == batch:
			wait = minWait
			timer.Reset(0) // more may be waiting
			continue
		case err == nil && len(page) > 0:
			wait = minWait
		}
		timer.Reset(wait)
		wait = min(2*wait, maxWait)
	}
}
