package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// eventLog is one tenant's events, in the order they were recorded, behind the tenant's lock:
// the write that records an event is the write that makes its change.
type eventLog struct {
	last   int64 // the sequence number of the latest event recorded, removed or not
	events []store.Event
	seqs   []int64 // seqs[i] is the sequence number of events[i]
}

// commit appends the events p collected to t's log; the caller holds t's write lock and has
// made the change.
func commit(p *changes.Pending, t *tenantData) {
	t.log.add(p.Events(time.Now))
}

// add appends events to the log, numbering them. What the log keeps of an event is the least
// that gives it back: its Data copied to a slice of its own length (a renderer's buffer may have
// twice the capacity it fills), and no cursor, which List makes from the sequence number.
func (l *eventLog) add(events []store.Event) {
	for _, e := range events {
		l.last++
		e.Cursor = ""
		if cap(e.Data) > len(e.Data) {
			e.Data = append(make(json.RawMessage, 0, len(e.Data)), e.Data...)
		}
		l.events = append(l.events, e)
		l.seqs = append(l.seqs, l.last)
	}
}

// Events implements store.Events.
type Events struct{ s *Store }

var _ store.Events = (*Events)(nil)

// List implements store.Events.
func (es *Events) List(ctx context.Context, tenant, after string, limit int) ([]store.Event, error) {
	from, err := changes.ListFrom(after, limit)
	if err != nil {
		return nil, err
	}
	var out []store.Event
	err = es.s.read(ctx, tenant, func(t *tenantData) error {
		i := sort.Search(len(t.log.seqs), func(i int) bool { return t.log.seqs[i] > from })
		end := min(len(t.log.events), i+limit)
		out = make([]store.Event, 0, end-i)
		for j, e := range t.log.events[i:end] {
			e.Data = slices.Clone(e.Data)
			e.Cursor = changes.FormatCursor(t.log.seqs[i+j])
			out = append(out, e)
		}
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return []store.Event{}, nil // a tenant that does not exist has an empty log
	}
	return out, err
}

// Append implements store.Events.
func (es *Events) Append(ctx context.Context, tenant string, events ...store.Event) error {
	list, err := changes.Appended(tenant, events, time.Now)
	if err != nil {
		return err
	}
	return es.s.write(ctx, tenant, func(t *tenantData) error {
		t.log.add(list)
		return nil
	})
}

// DeleteExpired implements store.Events.
func (es *Events) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	es.s.mu.RLock()
	tenants := make([]*tenantData, 0, len(es.s.tenants))
	for _, t := range es.s.tenants {
		tenants = append(tenants, t)
	}
	es.s.mu.RUnlock()
	n := 0
	for _, t := range tenants {
		t.mu.Lock()
		keep := 0
		for i, e := range t.log.events {
			if e.Time.Before(before) {
				continue
			}
			t.log.events[keep], t.log.seqs[keep] = e, t.log.seqs[i]
			keep++
		}
		n += len(t.log.events) - keep
		clear(t.log.events[keep:])
		t.log.events, t.log.seqs = t.log.events[:keep], t.log.seqs[:keep]
		t.mu.Unlock()
	}
	return n, nil
}
