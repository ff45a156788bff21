-- passkeys: a user's WebAuthn credentials (store.Passkeys); they go with the user. id is the
-- credential ID, unique in its tenant. seq orders a user's passkeys by creation: each gets one
-- more than the highest the user holds when it is created. transports is a JSON array of text;
-- sign_count is the authenticator's counter (0 to 2^32-1).
CREATE TABLE passkeys (
	tenant           TEXT NOT NULL,
	user_id          TEXT NOT NULL,
	id               BLOB NOT NULL,
	seq              INTEGER NOT NULL,
	name             TEXT NOT NULL,
	public_key       BLOB NOT NULL,
	attestation_type TEXT NOT NULL,
	aaguid           BLOB NOT NULL,
	transports       TEXT NOT NULL,
	sign_count       INTEGER NOT NULL,
	backup_eligible  INTEGER NOT NULL,
	backup_state     INTEGER NOT NULL,
	created          INTEGER,
	last_used        INTEGER,
	PRIMARY KEY (tenant, id),
	FOREIGN KEY (tenant, user_id) REFERENCES users (tenant, id) ON DELETE CASCADE
);
CREATE INDEX passkeys_user ON passkeys (tenant, user_id, seq);
