-- webhooks_due: what Webhooks.Due reads, in two indexes, so that a pass with nothing due reads
-- nothing of the tenants and endpoints that have nothing to deliver.
--
-- webhooks.due_at is NULL when the endpoint is caught up or failing, else the Unix nanoseconds
-- from which it is due. event_heads.hooks counts the tenant's endpoints; a write that records
-- an event of a tenant that has some sets event_heads.woken_at (when it is not set already)
-- in the statement that numbers the event, and the next Due makes the endpoints that the event
-- follows due and clears it. The wake-up is on event_heads because every write of an event
-- locks and updates that row whatever its snapshot, so none is lost (Webhooks.Due).
ALTER TABLE webhooks ADD COLUMN due_at BIGINT;
ALTER TABLE event_heads ADD COLUMN hooks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE event_heads ADD COLUMN woken_at BIGINT;

-- Every tenant with endpoints has its row, which counts them.
INSERT INTO event_heads (tenant, last) SELECT DISTINCT tenant, 0 FROM webhooks ON CONFLICT (tenant) DO NOTHING;
UPDATE event_heads h SET hooks = c.n FROM (SELECT tenant, count(*) AS n FROM webhooks GROUP BY tenant) c WHERE c.tenant = h.tenant;

-- The endpoints that events follow are due: at their next attempt, or at once.
UPDATE webhooks w SET due_at = coalesce(w.next_attempt, 0)
WHERE NOT w.failing AND w.cursor < (SELECT lpad(to_hex(e.seq), 16, '0') FROM events e WHERE e.tenant = w.tenant ORDER BY e.seq DESC LIMIT 1);

CREATE INDEX webhooks_due ON webhooks (due_at, n) WHERE due_at IS NOT NULL;
CREATE INDEX event_heads_woken ON event_heads (woken_at) WHERE woken_at IS NOT NULL;
