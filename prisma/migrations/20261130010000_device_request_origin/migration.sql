-- When and from where a device asked for its device authorization (RFC 8628 3.1): /device shows
-- them with the code, so that a person sent someone else's code can tell it is not their device's.
-- Deleted with the row, once it expired.
ALTER TABLE "device_authorizations" ADD COLUMN "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
ALTER TABLE "device_authorizations" ADD COLUMN "request_ip" TEXT;
ALTER TABLE "device_authorizations" ADD COLUMN "request_user_agent" TEXT;
