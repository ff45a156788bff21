-- pushed_requests: authorization requests pushed by clients (RFC 9126), keyed by the SHA-256 of
-- the random part of their request_uri; each is consumed once.
CREATE TABLE pushed_requests (
	hash         BLOB PRIMARY KEY,
	tenant       TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	client_id    TEXT NOT NULL,
	redirect_uri TEXT NOT NULL,
	state        TEXT NOT NULL,
	nonce        TEXT NOT NULL,
	challenge    TEXT NOT NULL,
	login_hint   TEXT NOT NULL,
	created      INTEGER,
	expires      INTEGER NOT NULL
);
CREATE INDEX pushed_requests_expires ON pushed_requests (expires);

-- A client that must push its authorization requests.
ALTER TABLE clients ADD COLUMN require_par INTEGER NOT NULL DEFAULT 0;

-- An enrollment that may replace the user's factor.
ALTER TABLE interactions ADD COLUMN replace_factor INTEGER NOT NULL DEFAULT 0;

-- When the latest failure of a picture login was counted: a lock runs from it.
ALTER TABLE pictures ADD COLUMN last_failure INTEGER;
