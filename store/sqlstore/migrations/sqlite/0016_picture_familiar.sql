-- picture_familiar: the source networks a user passed the picture password from, each with the
-- time of its latest success (store.PictureCredentials.Succeeded, FamiliarNetworks): at most a
-- few per user, the most recently passed kept. They go with the credential.
CREATE TABLE picture_familiar (
	tenant  TEXT NOT NULL,
	user_id TEXT NOT NULL,
	network TEXT NOT NULL,
	passed  INTEGER NOT NULL,
	PRIMARY KEY (tenant, user_id, network),
	FOREIGN KEY (tenant, user_id) REFERENCES pictures (tenant, user_id) ON DELETE CASCADE
);
