-- signing_keys: a tenant's keys are read by the tenant (store.SigningKeys.List and Tenants),
-- through this index, never by reading every tenant's keys; activates is when a key starts
-- signing (NULL: at once), so that a rotation publishes the next key before it signs.
ALTER TABLE signing_keys ADD COLUMN activates BIGINT;
CREATE INDEX signing_keys_tenant ON signing_keys (tenant, created, id);
