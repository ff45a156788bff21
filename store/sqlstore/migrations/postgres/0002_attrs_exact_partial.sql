-- attrs_exact serves the comparisons of the strings of caseExact attributes, whose rows have s
-- and no sf (filtersql.go says so in its SQL: "s IS NOT NULL AND sf IS NULL"). It keeps those
-- rows only: the others are in attrs_lookup, which serves every scan of an attribute's rows, so
-- a write adds one entry to attrs_exact per caseExact string instead of one per attrs row.
DROP INDEX attrs_exact;
CREATE INDEX attrs_exact ON attrs (tenant, kind, attr, sub, s) WHERE s IS NOT NULL AND sf IS NULL;
