-- The code exchange's statement already holds its login session FOR SHARE; the foreign key of the
-- client it records in that session (login_session_clients.session_id) checked and locked the same
-- row again, and its trigger ran on every exchange. Measured with 16 concurrent redemptions (4,000
-- each, alternated three times): PostgreSQL's CPU per redemption 0.36-0.45 ms with the key and a
-- full authorization_codes table, 0.26-0.39 ms without the key and with room for the update.
-- The links stay tied to their session by what deletes sessions: the sweep and an account's deletion
-- delete a session's links in the transaction that deletes it (lib/store/sweep.ts, accounts.ts).
ALTER TABLE "login_session_clients" DROP CONSTRAINT "login_session_clients_session_id_fkey";

-- A code is updated once, when it is redeemed (used_at). With pages filled to the brim the new
-- version went to another page and into both of the table's indexes; with half of each page left
-- free it stays on its page (a HOT update) and no index is written.
ALTER TABLE "authorization_codes" SET (fillfactor = 50);
