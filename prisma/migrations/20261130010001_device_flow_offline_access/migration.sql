-- offline_access on device grants only for a client an admin allowed it (besides refresh tokens):
-- a device that got a victim's approval by phishing should not also keep it for good.
ALTER TABLE "clients" ADD COLUMN "device_flow_offline_access" BOOLEAN NOT NULL DEFAULT false;
