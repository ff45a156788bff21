-- events: each tenant's log of changes (store.Events), written in the transaction that makes
-- the change. seq numbers a tenant's events in the order their transactions committed (SQLite's
-- writers take turns): an event takes the tenant's last number in event_heads plus one, and the
-- trigger below moves that number on, so one INSERT writes an event.
CREATE TABLE event_heads (
	tenant TEXT PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
	last   INTEGER NOT NULL
);
CREATE TABLE events (
	tenant       TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	seq          INTEGER NOT NULL,
	type         TEXT NOT NULL,
	at           INTEGER NOT NULL,
	actor        TEXT NOT NULL,
	subject_kind TEXT NOT NULL,
	subject_id   TEXT NOT NULL,
	data         TEXT NOT NULL,
	PRIMARY KEY (tenant, seq)
) WITHOUT ROWID;
CREATE INDEX events_at ON events (at);
CREATE TRIGGER events_head AFTER INSERT ON events BEGIN
	INSERT INTO event_heads (tenant, last) VALUES (NEW.tenant, NEW.seq)
	ON CONFLICT (tenant) DO UPDATE SET last = max(last, excluded.last);
END;
