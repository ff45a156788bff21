-- pushed_requests: authorization requests pushed by clients (RFC 9126), keyed by the SHA-256 of
-- the random part of their request_uri; each is consumed once.
CREATE TABLE pushed_requests (
	hash         BYTEA PRIMARY KEY,
	tenant       TEXT COLLATE "C" NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	client_id    TEXT COLLATE "C" NOT NULL,
	redirect_uri TEXT COLLATE "C" NOT NULL,
	state        TEXT COLLATE "C" NOT NULL,
	nonce        TEXT COLLATE "C" NOT NULL,
	challenge    TEXT COLLATE "C" NOT NULL,
	login_hint   TEXT COLLATE "C" NOT NULL,
	created      BIGINT,
	expires      BIGINT NOT NULL
);
CREATE INDEX pushed_requests_expires ON pushed_requests (expires);

-- A client that must push its authorization requests.
ALTER TABLE clients ADD COLUMN require_par BOOLEAN NOT NULL DEFAULT false;

-- An enrollment that may replace the user's factor.
ALTER TABLE interactions ADD COLUMN replace_factor BOOLEAN NOT NULL DEFAULT false;

-- When the latest failure of a picture login was counted: a lock runs from it.
ALTER TABLE pictures ADD COLUMN last_failure BIGINT;
