-- Sorted lists by name.familyName, emails.value, meta.created and meta.lastModified read an
-- index in order from their keyset position, as those by userName and displayName do (0009):
-- each key is a column of the resource's row, holding what store.SortValue gives for it (a
-- string folded by schema.Fold, as the attributes are not caseExact; a dateTime as Unix
-- nanoseconds, as attrs.t holds it; NULL for none), with an index of (tenant, key, seq). Every
-- write of a user or a group sets them (sortcols.go). The rows written before this version get
-- theirs from their attrs rows, by the rules of store.SortValue: a multi-valued attribute's
-- value is that of its first primary element with a value, else of its first element with one.
ALTER TABLE users
	ADD COLUMN family_name_fold TEXT COLLATE "C",
	ADD COLUMN email_fold TEXT COLLATE "C",
	ADD COLUMN created BIGINT,
	ADD COLUMN last_modified BIGINT;
ALTER TABLE groups
	ADD COLUMN created BIGINT,
	ADD COLUMN last_modified BIGINT;

UPDATE users SET
	family_name_fold = (SELECT a.sf FROM attrs a WHERE a.tenant = users.tenant AND a.kind = 'u' AND a.rid = users.id
		AND a.attr = 'name' AND a.sub = 'familyName' AND a.idx = 0),
	email_fold = (SELECT k.sf FROM attrs k WHERE k.tenant = users.tenant AND k.kind = 'u' AND k.rid = users.id
		AND k.attr = 'emails' AND k.sub = 'value' AND k.sf IS NOT NULL
		ORDER BY CASE WHEN EXISTS (SELECT 1 FROM attrs p WHERE p.tenant = k.tenant AND p.kind = k.kind AND p.rid = k.rid
			AND p.attr = k.attr AND p.sub = 'primary' AND p.idx = k.idx AND p.b) THEN 0 ELSE 1 END, k.idx
		LIMIT 1),
	created = (SELECT a.t FROM attrs a WHERE a.tenant = users.tenant AND a.kind = 'u' AND a.rid = users.id
		AND a.attr = 'meta' AND a.sub = 'created' AND a.idx = 0),
	last_modified = (SELECT a.t FROM attrs a WHERE a.tenant = users.tenant AND a.kind = 'u' AND a.rid = users.id
		AND a.attr = 'meta' AND a.sub = 'lastModified' AND a.idx = 0);
UPDATE groups SET
	created = (SELECT a.t FROM attrs a WHERE a.tenant = groups.tenant AND a.kind = 'g' AND a.rid = groups.id
		AND a.attr = 'meta' AND a.sub = 'created' AND a.idx = 0),
	last_modified = (SELECT a.t FROM attrs a WHERE a.tenant = groups.tenant AND a.kind = 'g' AND a.rid = groups.id
		AND a.attr = 'meta' AND a.sub = 'lastModified' AND a.idx = 0);

-- NULLs go last in each index, and among them by seq: the rows without a key are read in order
-- by "key IS NULL" from the same index.
CREATE INDEX users_family_name_order ON users (tenant, family_name_fold, seq);
CREATE INDEX users_email_order ON users (tenant, email_fold, seq);
CREATE INDEX users_created_order ON users (tenant, created, seq);
CREATE INDEX users_last_modified_order ON users (tenant, last_modified, seq);
CREATE INDEX groups_created_order ON groups (tenant, created, seq);
CREATE INDEX groups_last_modified_order ON groups (tenant, last_modified, seq);
