-- webhooks: the endpoints each tenant's events are posted to (store.Webhooks), with where
-- delivery to each stands and the lease of the instance delivering. n orders them by creation.
-- The secret is sealed under the key-encryption key, like signing keys.
CREATE TABLE webhooks (
	n             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	tenant        TEXT COLLATE "C" NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	id            TEXT COLLATE "C" NOT NULL,
	url           TEXT COLLATE "C" NOT NULL,
	types         TEXT NOT NULL,
	secret        BYTEA NOT NULL,
	created       BIGINT,
	cursor        TEXT COLLATE "C" NOT NULL,
	attempts      INTEGER NOT NULL DEFAULT 0,
	first_failure BIGINT,
	next_attempt  BIGINT,
	failing       BOOLEAN NOT NULL DEFAULT false,
	last_error    TEXT NOT NULL DEFAULT '',
	lease_holder  TEXT COLLATE "C" NOT NULL DEFAULT '',
	lease_until   BIGINT,
	UNIQUE (tenant, id)
);
