-- The JWS algorithm of a client's ID tokens ('' is EdDSA), and whether it gets an access token
-- for the UserInfo endpoint.
ALTER TABLE clients ADD COLUMN id_token_alg TEXT NOT NULL DEFAULT '';
ALTER TABLE clients ADD COLUMN access_token INTEGER NOT NULL DEFAULT 0;

-- access_tokens: tokens good only at the UserInfo endpoint, keyed by their SHA-256; a replay of
-- the code that issued them (code_hash) revokes them.
CREATE TABLE access_tokens (
	hash      BLOB PRIMARY KEY,
	tenant    TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	client_id TEXT NOT NULL,
	subject   TEXT NOT NULL,
	code_hash BLOB NOT NULL,
	created   INTEGER,
	expires   INTEGER NOT NULL
);
CREATE INDEX access_tokens_code_hash ON access_tokens (code_hash);
CREATE INDEX access_tokens_expires ON access_tokens (expires);

-- The tenant whose tokens a signing key signs; '' for the key every tenant shared before.
ALTER TABLE signing_keys ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
