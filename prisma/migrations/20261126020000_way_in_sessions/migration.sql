-- What a login session was established through, and what was issued in it: unlinking a wallet,
-- Google or Apple identity, or removing a passkey, ends the sessions logged in with it and revokes
-- the tokens and refresh families issued in them.
ALTER TABLE "login_sessions" ADD COLUMN "passkey_id" TEXT;

ALTER TABLE "issued_tokens" ADD COLUMN "session_id" TEXT;

-- refresh_tokens.session_id: added by 20261126010001_refresh_session.

CREATE INDEX "issued_tokens_session_id_idx" ON "issued_tokens"("session_id");

CREATE INDEX "refresh_tokens_session_id_idx" ON "refresh_tokens"("session_id");
