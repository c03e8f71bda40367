-- Security review, second round: management API scopes narrower than keyfob:admin. The scopes an
-- admin allows a client, which default to keyfob:admin, what every client allowed the API had.

-- AlterTable
ALTER TABLE "clients" ADD COLUMN "management_scopes" TEXT[] DEFAULT ARRAY['keyfob:admin']::TEXT[];
