-- Sorted lists page by keyset: (key, seq) after the last row read. A sort by userName or by a
-- group's displayName reads an index in order from the position, so the page after a million
-- rows costs what the first does. On SQLite seq is the rowid, which every index ends with: the
-- unique index of (tenant, user_name_fold) is ordered by (tenant, user_name_fold, seq) already,
-- and groups_display_name by (tenant, display_name_fold, seq), so this version changes nothing
-- (PostgreSQL's adds the indexes); it keeps the versions of the two dialects alike.
SELECT 1;
