-- Access tokens are found by their code, session or refresh family only where they have one: a
-- Flow A token has none of the three, a code exchange's no refresh family. Partial indexes leave
-- those NULLs out, so issuing a token writes fewer index entries (npm run bench: the statement
-- that records a Flow A token wrote six index entries, now three). Partial, so raw SQL.
DROP INDEX "issued_tokens_code_hash_idx";
DROP INDEX "issued_tokens_session_id_idx";
DROP INDEX "issued_tokens_refresh_family_idx";

CREATE INDEX "issued_tokens_code_hash_idx" ON "issued_tokens"("code_hash") WHERE "code_hash" IS NOT NULL;
CREATE INDEX "issued_tokens_session_id_idx" ON "issued_tokens"("session_id") WHERE "session_id" IS NOT NULL;
CREATE INDEX "issued_tokens_refresh_family_idx" ON "issued_tokens"("refresh_family") WHERE "refresh_family" IS NOT NULL;
