-- second_factor: the tenant's second-factor policy (store.Tenant.SecondFactor): '' for the
-- picture password only, 'picture-or-passkey' when its users may pass with a passkey as well.
-- store.CheckTenant checks it before it is written.
ALTER TABLE tenants ADD COLUMN second_factor TEXT NOT NULL DEFAULT '';
