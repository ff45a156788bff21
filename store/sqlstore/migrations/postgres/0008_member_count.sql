-- Group membership whose cost does not grow with the group. A group's row counts its members
-- (member_count), so a limit on a group's size is checked without counting them, and
-- members_pos finds the last member's position, after which a new member goes, in O(log n).
ALTER TABLE groups ADD COLUMN member_count BIGINT NOT NULL DEFAULT 0;
UPDATE groups SET member_count = (SELECT COUNT(*) FROM members m WHERE m.tenant = groups.tenant AND m.group_id = groups.id);
CREATE INDEX members_pos ON members (tenant, group_id, pos);
