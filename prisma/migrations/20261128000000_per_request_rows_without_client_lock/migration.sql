-- A foreign key's check locks the parent row (FOR KEY SHARE): every token issued and every Flow A
-- challenge locked its client's one row, so concurrent requests of one client queued on that row
-- and turned each lock into a MultiXact. Measured with 16 concurrent Flow A handshakes of one
-- client: PostgreSQL's CPU per handshake fell from 0.99-1.21 ms to 0.88-0.99 ms without these three
-- (three alternating runs each). The rows stay tied to their client by what reads them: deleting
-- a client deletes its rows in the same statement (lib/store/clients.ts), a challenge is consumed
-- and a token checked only while its client exists, and the sweep deletes what expired.
ALTER TABLE "issued_tokens" DROP CONSTRAINT "issued_tokens_client_id_fkey";
ALTER TABLE "login_session_clients" DROP CONSTRAINT "login_session_clients_client_id_fkey";
ALTER TABLE "challenges" DROP CONSTRAINT "challenges_client_id_fkey";
