package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/visid/visid/store"
)

// A log of several chunks lists every event once and in order across the chunks' edges, from
// any cursor, and DeleteExpired removes events in any places (old ones among new ones too, as
// a host may append events of its own times), leaving the chunks full but the last.
func TestEventLogChunks(t *testing.T) {
	ctx := context.Background()
	s := New()
	b := s.Backend()
	require.NoError(t, b.Tenants.Create(ctx, store.Tenant{ID: "acme", DisplayName: "Acme", Created: time.Now()}))
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recent := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const total = 3*logChunk + 17
	expired := 0
	for i := range total {
		when := recent
		// The first chunk and a bit of the second are old, then every seventh event.
		if i < logChunk+5 || i%7 == 0 {
			when = old
			expired++
		}
		require.NoError(t, b.Events.Append(ctx, "acme", store.Event{Type: "host.tick", Actor: "test", SubjectKind: "tick",
			SubjectID: fmt.Sprint(i), Time: when, Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}))
	}
	listAll := func(page int) []store.Event {
		var all []store.Event
		after := ""
		for {
			events, err := b.Events.List(ctx, "acme", after, page)
			require.NoError(t, err)
			if len(events) == 0 {
				return all
			}
			all = append(all, events...)
			after = events[len(events)-1].Cursor
		}
	}
	for _, page := range []int{1000, logChunk, 100, 7} {
		all := listAll(page)
		require.Len(t, all, total, "page %d", page)
		for i, e := range all {
			require.Equal(t, fmt.Sprint(i), e.SubjectID, "page %d", page)
			require.JSONEq(t, fmt.Sprintf(`{"n":%d}`, i), string(e.Data))
		}
	}

	n, err := b.Events.DeleteExpired(ctx, recent.Add(-time.Hour))
	require.NoError(t, err)
	assert.Equal(t, expired, n)
	all := listAll(100)
	require.Len(t, all, total-expired)
	prev := -1
	for _, e := range all {
		var i int
		_, err := fmt.Sscan(e.SubjectID, &i)
		require.NoError(t, err)
		assert.Greater(t, i, prev, "in order")
		assert.False(t, i < logChunk+5 || i%7 == 0, "event %d was expired", i)
		prev = i
	}
	l := &s.tenants["acme"].log
	assert.Equal(t, total-expired, l.len())
	for i, c := range l.chunks {
		if i < len(l.chunks)-1 {
			assert.Len(t, c, logChunk, "chunk %d is full", i)
		}
		for _, x := range c[len(c):cap(c)] {
			assert.Zero(t, x, "a released entry keeps nothing")
		}
	}
	// The log grows again from where it stands, and a cursor from before the removal still works.
	require.NoError(t, b.Events.Append(ctx, "acme", store.Event{Type: "host.tick", Actor: "test", SubjectKind: "tick", SubjectID: "last", Time: recent}))
	tail, err := b.Events.List(ctx, "acme", all[len(all)-2].Cursor, 10)
	require.NoError(t, err)
	require.Len(t, tail, 2)
	assert.Equal(t, all[len(all)-1].SubjectID, tail[0].SubjectID)
	assert.Equal(t, "last", tail[1].SubjectID)

	// Removing everything leaves an empty log that grows again.
	_, err = b.Events.DeleteExpired(ctx, recent.Add(time.Hour))
	require.NoError(t, err)
	assert.Zero(t, l.len())
	assert.Empty(t, l.chunks)
	require.NoError(t, b.Events.Append(ctx, "acme", store.Event{Type: "host.tick", Actor: "test", SubjectKind: "tick", SubjectID: "again", Time: recent}))
	again, err := b.Events.List(ctx, "acme", "", 10)
	require.NoError(t, err)
	require.Len(t, again, 1)
	assert.Equal(t, "again", again[0].SubjectID)
}
