-- The login session a refresh family was granted in (its id_hash): ID tokens from its refreshes
-- carry the session's sid as the first one did (Back-Channel Logout 1.0 2.4).
ALTER TABLE "refresh_tokens" ADD COLUMN "session_id" TEXT;
