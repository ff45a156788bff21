package sqlstore

// dialect is the SQL dialect of a database: SQLite (modernc.org/sqlite) or PostgreSQL
// (github.com/jackc/pgx/v5 through database/sql). SQL that differs between the two is written
// out for each; queries are written with '?' placeholders, which rebind numbers for PostgreSQL.
type dialect int

const (
	sqliteDialect dialect = iota + 1
	postgresDialect
)

// resourceKind says whether a row of the attrs table belongs to a user or a group.
type resourceKind string

const (
	kindUser  resourceKind = "u"
	kindGroup resourceKind = "g"
)

// The attrs table holds every attribute value of every user and group, one row per value, so
// that SCIM filters run in the database (filtersql.go) with the semantics of filter.Match:
//
//	attrs(
//	  tenant TEXT NOT NULL,      -- the resource's tenant
//	  kind   TEXT NOT NULL,      -- resourceKind
//	  rid    TEXT NOT NULL,      -- the resource's id
//	  attr   TEXT NOT NULL,      -- the top-level attribute's canonical name (schema.Attribute.Name; enterprise
//	                             --   attributes by their URN-qualified name, as filter.Parse resolves them)
//	  sub    TEXT NOT NULL,      -- the sub-attribute's name, or '' for the attribute itself
//	  idx    INTEGER NOT NULL,   -- the value's index among a multi-valued attribute's values, 0 otherwise
//	  s      TEXT,               -- a string value as stored
//	  sf     TEXT,               -- schema.Fold(s), for attributes whose caseExact is false
//	  n      DOUBLE/REAL,        -- a number
//	  b      BOOLEAN/INTEGER,    -- a boolean
//	  t      BIGINT/INTEGER,     -- a dateTime as Unix nanoseconds, UTC
//	  PRIMARY KEY (tenant, kind, rid, attr, sub, idx)
//	)
//	INDEX attrs_lookup ON attrs(tenant, kind, attr, sub, sf)   -- userName, emails.value, members.value …
//	INDEX attrs_exact  ON attrs(tenant, kind, attr, sub, s)    -- externalId, id …
//	  WHERE s IS NOT NULL AND sf IS NULL                      --   caseExact strings only
//
// A complex multi-valued attribute's element i has one row per present sub-attribute with
// idx = i, and also one row with sub = '' (all value columns NULL) marking that the element
// exists. Absent values (filter.Absent) have no row.
