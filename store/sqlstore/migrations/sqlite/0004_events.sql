-- events: each tenant's log of changes (store.Events), written in the transaction that makes
-- the change. seq numbers a tenant's events in the order their transactions committed: it is
-- taken from event_heads, whose row stays locked until the commit.
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
