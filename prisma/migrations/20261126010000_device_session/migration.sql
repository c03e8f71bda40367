-- The login session that approved a device authorization (its id_hash): the device client is then
-- one that got tokens in it (login_session_clients), told when it ends (back-channel logout), and
-- its ID token carries the session's sid.
ALTER TABLE "device_authorizations" ADD COLUMN "session_id" TEXT;
