-- Clients an admin allows the management API: a client_credentials token with the keyfob:admin scope.
ALTER TABLE "clients" ADD COLUMN "management_api" BOOLEAN NOT NULL DEFAULT false;
