-- schemas became a filterable attribute: every user and group has the attrs rows of its schemas
-- (see attrs.go), the core schema's URN at idx 0 and, for a user with a value in the enterprise
-- extension, that extension's URN at idx 1. sf is schema.Fold of s: the URNs are ASCII, so their
-- lower case. Users and groups written before this version get theirs here.
INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf)
SELECT tenant, 'u', id, 'schemas', '', 0, 'urn:ietf:params:scim:schemas:core:2.0:User', 'urn:ietf:params:scim:schemas:core:2.0:user'
FROM users WHERE true -- SQLite needs a WHERE before an upsert's ON CONFLICT
ON CONFLICT (tenant, kind, rid, attr, sub, idx) DO NOTHING;

INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf)
SELECT u.tenant, 'u', u.id, 'schemas', '', 1, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User', 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:user'
FROM users u
WHERE EXISTS (SELECT 1 FROM attrs a WHERE a.tenant = u.tenant AND a.kind = 'u' AND a.rid = u.id
	AND a.attr LIKE 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:%')
ON CONFLICT (tenant, kind, rid, attr, sub, idx) DO NOTHING;

INSERT INTO attrs (tenant, kind, rid, attr, sub, idx, s, sf)
SELECT tenant, 'g', id, 'schemas', '', 0, 'urn:ietf:params:scim:schemas:core:2.0:Group', 'urn:ietf:params:scim:schemas:core:2.0:group'
FROM groups WHERE true
ON CONFLICT (tenant, kind, rid, attr, sub, idx) DO NOTHING;
