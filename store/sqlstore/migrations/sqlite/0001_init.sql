-- visid sqlstore schema, version 1 (SQLite). Instants are Unix nanoseconds (UTC) in INTEGER
-- columns, NULL for the zero time; booleans are 0/1; lists are JSON arrays in TEXT.

CREATE TABLE tenants (
	id           TEXT PRIMARY KEY,
	display_name TEXT NOT NULL,
	created      INTEGER
);

-- users: one row per user. doc is the store.User as encoding/json writes it, without Groups
-- (derived from members). seq is the creation order.
CREATE TABLE users (
	seq            INTEGER PRIMARY KEY,
	tenant         TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	id             TEXT NOT NULL,
	user_name      TEXT NOT NULL,
	user_name_fold TEXT NOT NULL, -- schema.Fold(user_name)
	external_id    TEXT NOT NULL, -- '' when absent
	doc            TEXT NOT NULL,
	UNIQUE (tenant, id),
	UNIQUE (tenant, user_name_fold)
);
CREATE INDEX users_order ON users (tenant, seq);
CREATE INDEX users_external_id ON users (tenant, external_id);

-- groups: one row per group; doc is the store.Group without Members (kept in members).
CREATE TABLE groups (
	seq               INTEGER PRIMARY KEY,
	tenant            TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	id                TEXT NOT NULL,
	display_name      TEXT NOT NULL,
	display_name_fold TEXT NOT NULL, -- schema.Fold(display_name)
	external_id       TEXT NOT NULL, -- '' when absent
	doc               TEXT NOT NULL,
	UNIQUE (tenant, id)
);
CREATE INDEX groups_order ON groups (tenant, seq);
CREATE INDEX groups_display_name ON groups (tenant, display_name_fold);

-- members: user user_id is a direct member of group group_id, at position pos of its list.
CREATE TABLE members (
	tenant   TEXT NOT NULL,
	group_id TEXT NOT NULL,
	user_id  TEXT NOT NULL,
	pos      INTEGER NOT NULL,
	PRIMARY KEY (tenant, group_id, user_id),
	FOREIGN KEY (tenant, group_id) REFERENCES groups (tenant, id) ON DELETE CASCADE,
	FOREIGN KEY (tenant, user_id) REFERENCES users (tenant, id) ON DELETE CASCADE
);
CREATE INDEX members_user ON members (tenant, user_id);

-- attrs: every attribute value of every user and group (see dialect.go), for filters.
CREATE TABLE attrs (
	tenant TEXT NOT NULL,
	kind   TEXT NOT NULL,
	rid    TEXT NOT NULL,
	attr   TEXT NOT NULL,
	sub    TEXT NOT NULL,
	idx    INTEGER NOT NULL,
	s      TEXT,
	sf     TEXT,
	n      REAL,
	b      INTEGER,
	t      INTEGER,
	PRIMARY KEY (tenant, kind, rid, attr, sub, idx)
) WITHOUT ROWID;
CREATE INDEX attrs_lookup ON attrs (tenant, kind, attr, sub, sf);
CREATE INDEX attrs_exact ON attrs (tenant, kind, attr, sub, s);

CREATE TABLE clients (
	seq            INTEGER PRIMARY KEY,
	tenant         TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
	id             TEXT NOT NULL,
	name           TEXT NOT NULL,
	description    TEXT NOT NULL,
	redirect_uris  TEXT NOT NULL,
	secret_hash    BLOB NOT NULL,
	created        INTEGER,
	secret_rotated INTEGER,
	UNIQUE (tenant, id)
);

CREATE TABLE api_keys (
	seq         INTEGER PRIMARY KEY,
	id          TEXT NOT NULL UNIQUE,
	name        TEXT NOT NULL,
	tenants     TEXT NOT NULL,
	scopes      TEXT NOT NULL,
	secret_hash BLOB NOT NULL UNIQUE,
	created     INTEGER,
	last_used   INTEGER,
	revoked     INTEGER NOT NULL DEFAULT 0,
	revoked_at  INTEGER
);

-- codes: a consumed code stays, used, until DeleteExpired removes it.
CREATE TABLE codes (
	hash         BLOB PRIMARY KEY,
	tenant       TEXT NOT NULL,
	client_id    TEXT NOT NULL,
	redirect_uri TEXT NOT NULL,
	challenge    TEXT NOT NULL,
	nonce        TEXT NOT NULL,
	subject      TEXT NOT NULL,
	auth_time    INTEGER,
	amr          TEXT NOT NULL,
	expires      INTEGER NOT NULL,
	used         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX codes_expires ON codes (expires);

CREATE TABLE interactions (
	id           TEXT PRIMARY KEY,
	purpose      TEXT NOT NULL,
	tenant       TEXT NOT NULL,
	client_id    TEXT NOT NULL,
	redirect_uri TEXT NOT NULL,
	state        TEXT NOT NULL,
	nonce        TEXT NOT NULL,
	challenge    TEXT NOT NULL,
	login_hint   TEXT NOT NULL,
	subject      TEXT NOT NULL,
	created      INTEGER,
	expires      INTEGER NOT NULL,
	auth_state   BLOB
);
CREATE INDEX interactions_expires ON interactions (expires);

-- pictures: a user's picture credential; it goes with the user.
CREATE TABLE pictures (
	tenant        TEXT NOT NULL,
	user_id       TEXT NOT NULL,
	scheme        INTEGER NOT NULL,
	image         TEXT NOT NULL,
	image_digest  BLOB,
	points        INTEGER NOT NULL,
	tolerance     INTEGER NOT NULL,
	offsets       TEXT NOT NULL,
	pepper_id     TEXT NOT NULL,
	salt          BLOB NOT NULL,
	hash          BLOB NOT NULL,
	argon_time    INTEGER NOT NULL,
	argon_memory  INTEGER NOT NULL,
	argon_threads INTEGER NOT NULL,
	failures      INTEGER NOT NULL DEFAULT 0,
	created       INTEGER,
	updated       INTEGER,
	PRIMARY KEY (tenant, user_id),
	FOREIGN KEY (tenant, user_id) REFERENCES users (tenant, id) ON DELETE CASCADE
);

-- signing_keys: private_key is sealed with AES-256-GCM under the key-encryption key.
CREATE TABLE signing_keys (
	id          TEXT PRIMARY KEY,
	algorithm   TEXT NOT NULL,
	private_key BLOB NOT NULL,
	created     INTEGER NOT NULL,
	retired     INTEGER
);
