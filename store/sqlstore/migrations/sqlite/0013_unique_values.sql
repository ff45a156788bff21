-- unique_values: the store.UniqueValue list of every user (kind 'u') and group (kind 'g'), one
-- row a value. The primary key is what makes a value held by at most one resource of a kind in
-- a tenant: a write that would give a second resource the value fails on it, so two concurrent
-- writes of one value cannot both succeed. Users and groups keep the list in their doc too.
CREATE TABLE unique_values (
	tenant TEXT NOT NULL,
	kind   TEXT NOT NULL,
	attr   TEXT NOT NULL,
	value  TEXT NOT NULL,
	rid    TEXT NOT NULL,
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
	1 + (SELECT count(*) FROM json_each(u.doc, '$.Extensions') o WHERE o.key < k.key)
	  + EXISTS (SELECT 1 FROM attrs a WHERE a.tenant = u.tenant AND a.kind = 'u' AND a.rid = u.id AND a.attr = 'schemas' AND a.idx = 1
		AND a.s = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'),
	k.key, lower(k.key)
FROM users u, json_each(u.doc, '$.Extensions') k
WHERE json_type(u.doc, '$.Extensions') = 'object' AND NOT k.key GLOB '*[^ -~]*'
ON CONFLICT (tenant, kind, rid, attr, sub, idx) DO NOTHING;

INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf)
SELECT g.tenant, 'g', g.id, 'schemas', '',
	1 + (SELECT count(*) FROM json_each(g.doc, '$.Extensions') o WHERE o.key < k.key),
	k.key, lower(k.key)
FROM groups g, json_each(g.doc, '$.Extensions') k
WHERE json_type(g.doc, '$.Extensions') = 'object' AND NOT k.key GLOB '*[^ -~]*'
ON CONFLICT (tenant, kind, rid, attr, sub, idx) DO NOTHING;
