package events_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/events"
	"github.com/visid/visid/store"
	"github.com/visid/visid/store/memstore"
)

// newLog returns a backend with tenant acme and n users created with a Change, so its log
// holds n user.created events.
func newLog(t *testing.T, n int) store.Backend {
	t.Helper()
	b := memstore.New().Backend()
	require.NoError(t, b.Tenants.Create(context.Background(), store.Tenant{ID: "acme"}))
	addUsers(t, b, 0, n)
	return b
}

func addUsers(t *testing.T, b store.Backend, from, to int) {
	t.Helper()
	ctx := store.WithChange(context.Background(), store.Change{Actor: "admin"})
	for i := from; i < to; i++ {
		_, err := b.Users.Create(ctx, "acme", store.User{UserName: fmt.Sprintf("u%03d", i), Active: true})
		require.NoError(t, err)
	}
}

// collector is a Follow function that keeps the subject ids of the events it was given, and cancels
// ctx once it has want of them.
type collector struct {
	mu     sync.Mutex
	names  []string
	want   int
	cancel context.CancelFunc
}

func (c *collector) fn(e store.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.names = append(c.names, e.SubjectID)
	if len(c.names) == c.want {
		c.cancel()
	}
	return nil
}

func TestFollowSeesEveryEventInOrder(t *testing.T) {
	b := newLog(t, 25)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := &collector{want: 40, cancel: cancel}
	f := events.Follower{Events: b.Events, Tenant: "acme", Batch: 7, MinWait: time.Millisecond, MaxWait: 5 * time.Millisecond}
	done := make(chan struct{})
	var last string
	var ferr error
	go func() {
		defer close(done)
		last, ferr = f.Follow(ctx, "", c.fn)
	}()
	addUsers(t, b, 25, 40) // while it follows
	<-done
	require.ErrorIs(t, ferr, context.Canceled)

	all, err := b.Events.List(context.Background(), "acme", "", 1000)
	require.NoError(t, err)
	require.Len(t, all, 40)
	want := make([]string, len(all))
	for i, e := range all {
		want[i] = e.SubjectID
	}
	assert.Equal(t, want, c.names, "every event once, in the log's order")
	assert.Equal(t, all[39].Cursor, last, "the cursor of the last event handled")
}

func TestFollowResumesAfterTheLastEventHandled(t *testing.T) {
	b := newLog(t, 10)
	all, err := b.Events.List(context.Background(), "acme", "", 100)
	require.NoError(t, err)

	refused := errors.New("the host's database is down")
	var handled []string
	last, err := events.Follow(context.Background(), b.Events, "acme", "", func(e store.Event) error {
		if len(handled) == 4 {
			return refused
		}
		handled = append(handled, e.Cursor)
		return nil
	})
	require.ErrorIs(t, err, refused)
	assert.Equal(t, all[3].Cursor, last, "the fifth event was not handled")

	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{want: 6, cancel: cancel}
	last, err = events.Follower{Events: b.Events, Tenant: "acme", MinWait: time.Millisecond}.Follow(ctx, last, c.fn)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, all[9].Cursor, last)
	want := []string{}
	for _, e := range all[4:] {
		want = append(want, e.SubjectID)
	}
	assert.Equal(t, want, c.names, "it goes on with the fifth event")
}

// flaky fails its first List calls.
type flaky struct {
	store.Events
	mu    sync.Mutex
	fails int
	calls int
}

func (f *flaky) List(ctx context.Context, tenant, after string, limit int) ([]store.Event, error) {
	f.mu.Lock()
	f.calls++
	failing := f.calls <= f.fails
	f.mu.Unlock()
	if failing {
		return nil, errors.New("connection refused")
	}
	return f.Events.List(ctx, tenant, after, limit)
}

func TestFollowRetriesAFailedList(t *testing.T) {
	b := newLog(t, 3)
	es := &flaky{Events: b.Events, fails: 3}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := &collector{want: 3, cancel: cancel}
	_, err := events.Follower{Events: es, Tenant: "acme", MinWait: time.Millisecond, MaxWait: 2 * time.Millisecond}.Follow(ctx, "", c.fn)
	require.ErrorIs(t, err, context.Canceled, "cancelled by the collector, not by the timeout")
	assert.Len(t, c.names, 3)
	assert.Greater(t, es.calls, 3)
}

func TestFollowRefusesBadArguments(t *testing.T) {
	b := newLog(t, 1)
	noop := func(store.Event) error { return nil }
	_, err := events.Follow(context.Background(), b.Events, "acme", "not a cursor", noop)
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = events.Follow(context.Background(), nil, "acme", "", noop)
	assert.ErrorIs(t, err, store.ErrInvalid)
	_, err = events.Follow(context.Background(), b.Events, "acme", "", nil)
	assert.ErrorIs(t, err, store.ErrInvalid)
}
