-- The tenant's look on its sign-in pages: a logo (its bytes, media type and SHA-256, NULL bytes
-- for none), an accent colour ('#rrggbb', '' for visid's own) and a default language (a BCP 47
-- tag, '' for none). store.CheckTenant checks them before they are written.
ALTER TABLE tenants ADD COLUMN logo BLOB;
ALTER TABLE tenants ADD COLUMN logo_type TEXT NOT NULL DEFAULT '';
ALTER TABLE tenants ADD COLUMN logo_hash BLOB;
ALTER TABLE tenants ADD COLUMN accent_color TEXT NOT NULL DEFAULT '';
ALTER TABLE tenants ADD COLUMN default_language TEXT NOT NULL DEFAULT '';
