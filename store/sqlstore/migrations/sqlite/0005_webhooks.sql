-- webhooks: the endpoints each tenant's events are posted to (store.Webhooks), with where
-- delivery to each stands and the lease of the instance delivering. n orders them by creation.
-- The secret is sealed under the key-encryption key, like signing keys.
CREATE TABLE webhooks (
	n             INTEGER PRIMARY KEY,
	tenant        TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	id            TEXT NOT NULL,
	url           TEXT NOT NULL,
	types         TEXT NOT NULL,
	secret        BLOB NOT NULL,
	created       INTEGER,
	cursor        TEXT NOT NULL,
	attempts      INTEGER NOT NULL DEFAULT 0,
	first_failure INTEGER,
	next_attempt  INTEGER,
	failing       INTEGER NOT NULL DEFAULT 0,
	last_error    TEXT NOT NULL DEFAULT '',
	lease_holder  TEXT NOT NULL DEFAULT '',
	lease_until   INTEGER,
	UNIQUE (tenant, id)
);
