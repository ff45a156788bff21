-- events: each tenant's log of changes (store.Events), written in the transaction that makes
-- the change. seq numbers a tenant's events in the order their transactions committed: it is
-- taken from event_heads, whose row stays locked until the commit (a sequence would number
-- them in the order they began, and a reader could pass an event still uncommitted).
CREATE TABLE event_heads (
	tenant TEXT COLLATE "C" PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
	last   BIGINT NOT NULL
);
CREATE TABLE events (
	tenant       TEXT COLLATE "C" NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	seq          BIGINT NOT NULL,
	type         TEXT COLLATE "C" NOT NULL,
	at           BIGINT NOT NULL,
	actor        TEXT COLLATE "C" NOT NULL,
	subject_kind TEXT COLLATE "C" NOT NULL,
	subject_id   TEXT COLLATE "C" NOT NULL,
	data         TEXT NOT NULL,
	PRIMARY KEY (tenant, seq)
);
CREATE INDEX events_at ON events (at);
