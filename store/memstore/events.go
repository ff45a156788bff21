package memstore

import (
	"context"
	"encoding/binary"
	"errors"
	"sort"
	"time"

	"github.com/visid/visid/store"
	"github.com/visid/visid/store/internal/changes"
)

// eventLog is one tenant's events, in the order they were recorded, behind the tenant's lock:
// the write that records an event is the write that makes its change.
type eventLog struct {
	last int64 // the sequence number of the latest event recorded, removed or not
	// chunks hold the entries in order, logChunk in each but the last. A log that grows never
	// copies the entries it has: one slice of them all, reallocated as it grew, cost more than
	// the rest of recording an event (its whole length copied, with the collector's write
	// barriers, at each growth).
	chunks [][]logEntry
	// dicts are, per subject kind (an entry's kind: 0 for a kind logNames lacks, else the
	// index of a visid kind), the data of the first event of that kind recorded with data, up to
	// logDictSize bytes, which the data of every entry of the kind is packed against: the URL
	// of the tenant's resources, the domains and values its users share are references to it.
	// A dict never changes once set. Each kind has its own, so that the first user event of a
	// tenant whose first event was an API key's still gives users a user to refer to.
	dicts [1 + numLogKinds]*packDict
	// scratch and packing are entryBlob's buffers, kept from one event to the next.
	scratch, packing []byte
}

// logChunk is how many entries a chunk of an event log holds: 28 KiB.
const logChunk = 512

// len returns how many entries l holds.
func (l *eventLog) len() int {
	if len(l.chunks) == 0 {
		return 0
	}
	return (len(l.chunks)-1)*logChunk + len(l.chunks[len(l.chunks)-1])
}

// entry returns entry i of l, which holds it.
func (l *eventLog) entry(i int) *logEntry { return &l.chunks[i/logChunk][i%logChunk] }

// push appends x to l. The first chunk grows as a slice does, so that a small log stays
// small; the next ones are made whole.
func (l *eventLog) push(x logEntry) {
	n := len(l.chunks)
	if n == 0 || len(l.chunks[n-1]) == logChunk {
		var c []logEntry
		if n > 0 {
			c = make([]logEntry, 0, logChunk)
		}
		l.chunks = append(l.chunks, c)
		n++
	}
	l.chunks[n-1] = append(l.chunks[n-1], x)
}

// truncate keeps the first n entries of l and releases the rest.
func (l *eventLog) truncate(n int) {
	if n >= l.len() {
		return
	}
	keep := (n + logChunk - 1) / logChunk // chunks that still hold an entry
	if keep > 0 {
		last := l.chunks[keep-1]
		clear(last[n-(keep-1)*logChunk:])
		l.chunks[keep-1] = last[:n-(keep-1)*logChunk]
	}
	clear(l.chunks[keep:])
	l.chunks = l.chunks[:keep]
}

// logDictSize is the most bytes of an event's data that become a log's dict: a user as the
// SCIM API renders it fits.
const logDictSize = 1024

// logEntry is what the log keeps of an event: the least that gives it back, in 56 bytes and
// one string. The tenant is the log's, the cursor is made from the sequence number, the time is
// kept as Unix seconds and nanoseconds in UTC, the type and subject kind as their index in
// logNames, and the rest in blob (see entryBlob): a user's event costs about 250 bytes of
// memory (the entry and its blob).
type logEntry struct {
	seq   int64
	sec   int64
	nsec  int32
	typ   uint8 // 1 + index in logNames; 0: the type is the blob's first string
	kind  uint8 // 1 + index in logNames; 0: the subject kind is the blob's next string
	actor string
	blob  string
}

// logKinds are the subject kinds visid records, first in logNames.
var logKinds = [...]string{store.SubjectUser, store.SubjectGroup, store.SubjectClient, store.SubjectAPIKey, store.SubjectTenant}

// numLogKinds is how many subject kinds logNames starts with.
const numLogKinds = len(logKinds)

// logNames are the event types and subject kinds visid records, which an entry names by index;
// any other (an event a host appended) is kept in the entry's blob.
var logNames = func() []string {
	names := append([]string(nil), logKinds[:]...)
	for _, t := range []store.EventType{
		store.EventUserCreated, store.EventUserUpdated, store.EventUserDeactivated,
		store.EventUserReactivated, store.EventUserDeleted, store.EventGroupCreated,
		store.EventGroupUpdated, store.EventGroupDeleted, store.EventGroupMemberAdded,
		store.EventGroupMemberRemoved, store.EventSecondFactorSucceeded, store.EventSecondFactorFailed,
		store.EventSecondFactorLocked, store.EventSecondFactorUnlocked, store.EventEnrollmentCompleted,
		store.EventClientCreated, store.EventClientUpdated, store.EventClientSecretRotated,
		store.EventClientDeleted, store.EventAPIKeyCreated, store.EventAPIKeyRevoked,
		store.EventTenantUpdated, store.EventPasskeyRemoved,
	} {
		names = append(names, string(t))
	}
	return names
}()

// logName returns 1 + the index of name in logNames, or 0 when it is not there.
func logName(name string) uint8 {
	for i, n := range logNames {
		if n == name {
			return uint8(i + 1)
		}
	}
	return 0
}

// commit appends the events p collected to t's log; the caller holds t's write lock and has
// made the change.
func commit(p *changes.Pending, t *tenantData) {
	t.record(p.Events(time.Now))
}

// record appends events to t's log and wakes t's webhook endpoints, which the events follow;
// the caller holds t's write lock.
func (t *tenantData) record(events []store.Event) {
	if len(events) == 0 {
		return
	}
	t.log.add(t.pack, events)
	t.due.wake(t.webhooks, t.log.last)
}

// after reports whether l holds an event after the one numbered seq.
func (l *eventLog) after(seq int64) bool { return l.lastKept() > seq }

// lastKept returns the number of the last event l holds, 0 for none.
func (l *eventLog) lastKept() int64 {
	if n := l.len(); n > 0 {
		return l.entry(n - 1).seq
	}
	return 0
}

// add appends events to the log, numbering them.
func (l *eventLog) add(pt *packTable, events []store.Event) {
	for _, e := range events {
		l.last++
		x := logEntry{
			seq: l.last, sec: e.Time.Unix(), nsec: int32(e.Time.Nanosecond()),
			typ: logName(string(e.Type)), kind: logName(e.SubjectKind), actor: e.Actor,
		}
		d := &l.dicts[x.dictIndex()]
		if *d == nil && len(e.Data) > 0 {
			*d = newPackDict(string(e.Data[:min(len(e.Data), logDictSize)]))
		}
		x.blob = l.entryBlob(x.typ, x.kind, e, pt, *d)
		l.push(x)
	}
}

// entryBlob returns the one string an entry keeps of e's variable part: the type and subject kind
// when logNames lacks them (typ or kind 0), then the subject id, each after its length as a
// uvarint, then e's data packed with dict (the log's for e's kind) and the subject id as its
// dictionary.
func (l *eventLog) entryBlob(typ, kind uint8, e store.Event, pt *packTable, dict *packDict) string {
	buf := l.scratch[:0]
	if typ == 0 {
		buf = binary.AppendUvarint(buf, uint64(len(e.Type)))
		buf = append(buf, e.Type...)
	}
	if kind == 0 {
		buf = binary.AppendUvarint(buf, uint64(len(e.SubjectKind)))
		buf = append(buf, e.SubjectKind...)
	}
	buf = binary.AppendUvarint(buf, uint64(len(e.SubjectID)))
	buf = append(buf, e.SubjectID...)
	buf = pt.appendPack(buf, &l.packing, dict, e.SubjectID, e.Data)
	l.scratch = buf
	return string(buf)
}

// dictIndex is the index in eventLog.dicts of the dict x's data is packed against: its kind's.
func (x *logEntry) dictIndex() int {
	if int(x.kind) > numLogKinds {
		return 0 // an event type's name as a kind: a kind of the host's
	}
	return int(x.kind)
}

// event returns the event of entry x of tenant's log l.
func (x *logEntry) event(pt *packTable, tenant string, l *eventLog) store.Event {
	dict := l.dicts[x.dictIndex()]
	rest := x.blob
	next := func() string {
		n, w := binary.Uvarint([]byte(rest[:min(len(rest), binary.MaxVarintLen64)]))
		s := rest[w : w+int(n)]
		rest = rest[w+int(n):]
		return s
	}
	var typ, kind string
	if x.typ == 0 {
		typ = next()
	} else {
		typ = logNames[x.typ-1]
	}
	if x.kind == 0 {
		kind = next()
	} else {
		kind = logNames[x.kind-1]
	}
	subject := next()
	return store.Event{
		Cursor: changes.FormatCursor(x.seq), Tenant: tenant, Type: store.EventType(typ),
		Time:  time.Unix(x.sec, int64(x.nsec)).UTC(),
		Actor: x.actor, SubjectKind: kind, SubjectID: subject,
		Data: pt.unpack(dict, subject, rest),
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
		l := &t.log
		n := l.len()
		i := sort.Search(n, func(i int) bool { return l.entry(i).seq > from })
		end := min(n, i+limit)
		out = make([]store.Event, 0, end-i)
		for j := i; j < end; j++ {
			out = append(out, l.entry(j).event(t.pack, tenant, l))
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
		t.record(list)
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
		l := &t.log
		keep, total := 0, l.len()
		for i := range total {
			x := l.entry(i)
			if time.Unix(x.sec, int64(x.nsec)).Before(before) {
				continue
			}
			if keep != i {
				*l.entry(keep) = *x
			}
			keep++
		}
		n += total - keep
		l.truncate(keep)
		t.mu.Unlock()
	}
	return n, nil
}
