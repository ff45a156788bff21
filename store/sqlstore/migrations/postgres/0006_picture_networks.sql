-- picture_failures: the failed attempts at a user's picture password per source network, so that
-- failures from one network lock only that network (store.PictureCredentials.AddFailure). epoch
-- is the credential's failure_epoch at the network's latest failure: a network whose epoch is
-- older has not failed since the user's count was last reset, and counts again towards
-- failure_networks at its next failure. Credentials counted before this migration keep their
-- failures with failure_networks 0: their user-wide lock needs new failures from many networks.
ALTER TABLE pictures ADD COLUMN failure_networks BIGINT NOT NULL DEFAULT 0;
ALTER TABLE pictures ADD COLUMN failure_epoch BIGINT NOT NULL DEFAULT 0;

CREATE TABLE picture_failures (
	tenant       TEXT COLLATE "C" NOT NULL,
	user_id      TEXT COLLATE "C" NOT NULL,
	network      TEXT COLLATE "C" NOT NULL,
	failures     BIGINT NOT NULL,
	last_failure BIGINT,
	epoch        BIGINT NOT NULL,
	PRIMARY KEY (tenant, user_id, network),
	FOREIGN KEY (tenant, user_id) REFERENCES pictures (tenant, user_id) ON DELETE CASCADE
);
