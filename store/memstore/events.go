package memstore

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// eventLog is one tenant's events, in the order they were recorded, behind the tenant's lock:
// the write that records an event is the write that makes its change.
type eventLog struct {
	last    int64 // the sequence number of the latest event recorded, removed or not
	entries []logEntry
}

// logEntry is what the log keeps of an event: the least that gives it back. The tenant is the
// log's, the cursor is made from the sequence number, the time is kept as Unix seconds and
// nanoseconds in UTC, and the data is packed (see packTable): a user's event costs about 340
// bytes of memory (the entry, its data and its subject id).
type logEntry struct {
	seq     int64
	sec     int64
	nsec    int32
	typ     store.EventType
	actor   string
	kind    string
	subject string
	data    string // packed
}

// commit appends the events p collected to t's log; the caller holds t's write lock and has
// made the change.
func commit(p *changes.Pending, t *tenantData) {
	t.log.add(t.pack, p.Events(time.Now))
}

// add appends events to the log, numbering them.
func (l *eventLog) add(pt *packTable, events []store.Event) {
	for _, e := range events {
		l.last++
		l.entries = append(l.entries, logEntry{
			seq: l.last, sec: e.Time.Unix(), nsec: int32(e.Time.Nanosecond()),
			typ: e.Type, actor: e.Actor, kind: e.SubjectKind, subject: e.SubjectID,
			data: pt.pack(e.Data),
		})
	}
}

// event returns the event of entry x of tenant's log.
func (x *logEntry) event(pt *packTable, tenant string) store.Event {
	return store.Event{
		Cursor: changes.FormatCursor(x.seq), Tenant: tenant, Type: x.typ,
		Time:  time.Unix(x.sec, int64(x.nsec)).UTC(),
		Actor: x.actor, SubjectKind: x.kind, SubjectID: x.subject,
		Data: pt.unpack(x.data),
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
		entries := t.log.entries
		i := sort.Search(len(entries), func(i int) bool { return entries[i].seq > from })
		end := min(len(entries), i+limit)
		out = make([]store.Event, 0, end-i)
		for j := i; j < end; j++ {
			out = append(out, entries[j].event(t.pack, tenant))
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
		t.log.add(t.pack, list)
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
		for _, x := range t.log.entries {
			if time.Unix(x.sec, int64(x.nsec)).Before(before) {
				continue
			}
			t.log.entries[keep] = x
			keep++
		}
		n += len(t.log.entries) - keep
		clear(t.log.entries[keep:])
		t.log.entries = t.log.entries[:keep]
		t.mu.Unlock()
	}
	return n, nil
}
