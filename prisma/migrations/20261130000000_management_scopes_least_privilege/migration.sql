-- Security review, third round: a client's management API scopes default to none (least privilege).
-- With keyfob:admin as the default, turning the API on for any confidential client made it an admin.
-- Clients not allowed the API lose the scopes they never used; those allowed it keep theirs.
ALTER TABLE "clients" ALTER COLUMN "management_scopes" SET DEFAULT ARRAY[]::TEXT[];
UPDATE "clients" SET "management_scopes" = ARRAY[]::TEXT[] WHERE NOT "management_api";
