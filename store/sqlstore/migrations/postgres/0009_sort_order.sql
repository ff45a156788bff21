-- Sorted lists page by keyset: (key, seq) after the last row read. A sort by userName or by a
-- group's displayName reads these indexes in order from the position, so the page after a
-- million rows costs what the first does. The unique (tenant, user_name_fold) and
-- groups_display_name lack seq, the tie-break of equal keys.
CREATE INDEX users_user_name_order ON users (tenant, user_name_fold, seq);
CREATE INDEX groups_display_name_order ON groups (tenant, display_name_fold, seq);
DROP INDEX groups_display_name;
