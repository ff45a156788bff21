-- picture_familiar: the source networks a user passed the picture password from, each with the
-- time of its latest success (store.PictureCredentials.Succeeded, FamiliarNetworks): at most a
-- few per user, the most recently passed kept. They go with the credential.
CREATE TABLE picture_familiar (
	tenant  TEXT COLLATE "C" NOT NULL,
	user_id TEXT COLLATE "C" NOT NULL,
	network TEXT COLLATE "C" NOT NULL,
	passed  BIGINT NOT NULL,
	PRIMARY KEY (tenant, user_id, network),
	FOREIGN KEY (tenant, user_id) REFERENCES pictures (tenant, user_id) ON DELETE CASCADE
);
