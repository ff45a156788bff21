-- unique_values: the store.UniqueValue list of every user (kind 'u') and group (kind 'g'), one
-- row a value. The primary key is what makes a value held by at most one resource of a kind in
-- a tenant: a write that would give a second resource the value fails on it, so two concurrent
-- writes of one value cannot both succeed. Users and groups keep the list in their doc too.
CREATE TABLE unique_values (
	tenant TEXT NOT NULL,
	kind   TEXT NOT NULL,
	attr   TEXT NOT NULL,
	value  TEXT NOT NULL,
	rid    TEXT NOT NULL,
	PRIMARY KEY (tenant, kind, attr, value)
);
CREATE INDEX unique_values_rid ON unique_values (tenant, kind, rid);
