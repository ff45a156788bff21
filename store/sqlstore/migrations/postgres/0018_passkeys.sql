-- passkeys: a user's WebAuthn credentials (store.Passkeys); they go with the user. id is the
-- credential ID, unique in its tenant. seq orders a user's passkeys by creation: each gets one
-- more than the highest the user holds when it is created. transports is a JSON array of text;
-- sign_count is the authenticator's counter (0 to 2^32-1).
CREATE TABLE passkeys (
	tenant           TEXT COLLATE "C" NOT NULL,
	user_id          TEXT COLLATE "C" NOT NULL,
	id               BYTEA NOT NULL,
	seq              BIGINT NOT NULL,
	name             TEXT COLLATE "C" NOT NULL,
	public_key       BYTEA NOT NULL,
	attestation_type TEXT COLLATE "C" NOT NULL,
	aaguid           BYTEA NOT NULL,
	transports       TEXT COLLATE "C" NOT NULL,
	sign_count       BIGINT NOT NULL,
	backup_eligible  BOOLEAN NOT NULL,
	backup_state     BOOLEAN NOT NULL,
	created          BIGINT,
	last_used        BIGINT,
	PRIMARY KEY (tenant, id),
	FOREIGN KEY (tenant, user_id) REFERENCES users (tenant, id) ON DELETE CASCADE
);
CREATE INDEX passkeys_user ON passkeys (tenant, user_id, seq);
