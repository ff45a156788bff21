-- unique_values: the store.UniqueValue list of every user (kind 'u') and group (kind 'g'), one
-- row a value. The primary key is what makes a value held by at most one resource of a kind in
-- a tenant: a write that would give a second resource the value fails on it, so two concurrent
-- writes of one value cannot both succeed. Users and groups keep the list in their doc too.
CREATE TABLE unique_values (
	tenant TEXT COLLATE "C" NOT NULL,
	kind   TEXT COLLATE "C" NOT NULL,
	attr   TEXT COLLATE "C" NOT NULL,
	value  TEXT COLLATE "C" NOT NULL,
	rid    TEXT COLLATE "C" NOT NULL,
	PRIMARY KEY (tenant, kind, attr, value)
);
CREATE INDEX unique_values_rid ON unique_values (tenant, kind, rid);

-- schemas lists, after the core URN and the enterprise extension's, the URN of each host-defined
-- extension a resource has values of, in the order of their bytes (see attrs.go). Users and
-- groups written before this version get those rows here, from the keys of their doc's
-- Extensions. sf is schema.Fold of s, which for an ASCII URN is its lower case; a URN with other
-- characters gets its row when the resource is next written.
INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf)
SELECT u.tenant, 'u', u.id, 'schemas', '',
	k.n + CASE WHEN EXISTS (SELECT 1 FROM attrs a WHERE a.tenant = u.tenant AND a.kind = 'u' AND a.rid = u.id
		AND a.attr = 'schemas' AND a.idx = 1 AND a.s = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User') THEN 1 ELSE 0 END,
	k.urn, lower(k.urn)
FROM users u, LATERAL (
	SELECT x.urn, row_number() OVER (ORDER BY x.urn COLLATE "C") AS n
	FROM jsonb_object_keys(u.doc::jsonb -> 'Extensions') AS x (urn)
) k
WHERE jsonb_typeof(u.doc::jsonb -> 'Extensions') = 'object' AND k.urn ~ '^[ -~]*$'
ON CONFLICT (tenant, kind, rid, attr, sub, idx) DO NOTHING;

INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf)
SELECT g.tenant, 'g', g.id, 'schemas', '', k.n, k.urn, lower(k.urn)
FROM groups g, LATERAL (
	SELECT x.urn, row_number() OVER (ORDER BY x.urn COLLATE "C") AS n
	FROM jsonb_object_keys(g.doc::jsonb -> 'Extensions') AS x (urn)
) k
WHERE jsonb_typeof(g.doc::jsonb -> 'Extensions') = 'object' AND k.urn ~ '^[ -~]*$'
ON CONFLICT (tenant, kind, rid, attr, sub, idx) DO NOTHING;
