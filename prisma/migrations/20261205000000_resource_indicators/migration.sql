-- Resource indicators (RFC 8707): a client's registered resources, and the resource an
-- authorization request (or a device authorization) named, kept by its interaction, its code and
-- its refresh family. Columns with defaults or nullable only, so the previous release runs on this
-- schema unchanged.
ALTER TABLE "clients" ADD COLUMN "resources" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "interactions" ADD COLUMN "resource" TEXT;
ALTER TABLE "authorization_codes" ADD COLUMN "resource" TEXT;
ALTER TABLE "refresh_tokens" ADD COLUMN "resource" TEXT;
ALTER TABLE "device_authorizations" ADD COLUMN "resource" TEXT;
