-- webhooks_due: what Webhooks.Due reads, in two indexes, so that a pass with nothing due reads
-- nothing of the tenants and endpoints that have nothing to deliver.
--
-- webhooks.due_at is NULL when the endpoint is caught up or failing, else the Unix nanoseconds
-- from which it is due. event_heads.hooks counts the tenant's endpoints; a write that records
-- an event of a tenant that has some sets event_heads.woken_at (when it is not set already),
-- and the next Due makes the endpoints that the event follows due and clears it.
ALTER TABLE webhooks ADD COLUMN due_at INTEGER;
ALTER TABLE event_heads ADD COLUMN hooks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE event_heads ADD COLUMN woken_at INTEGER;

-- Every tenant with endpoints has its row, which counts them.
INSERT INTO event_heads (tenant, last) SELECT DISTINCT tenant, 0 FROM webhooks WHERE true ON CONFLICT (tenant) DO NOTHING;
UPDATE event_heads SET hooks = (SELECT count(*) FROM webhooks w WHERE w.tenant = event_heads.tenant);

-- The endpoints that events follow are due: at their next attempt, or at once.
UPDATE webhooks SET due_at = coalesce(next_attempt, 0)
WHERE NOT failing AND cursor < (SELECT printf('%016x', e.seq) FROM events e WHERE e.tenant = webhooks.tenant ORDER BY e.seq DESC LIMIT 1);

CREATE INDEX webhooks_due ON webhooks (due_at, n) WHERE due_at IS NOT NULL;
CREATE INDEX event_heads_woken ON event_heads (woken_at) WHERE woken_at IS NOT NULL;
