-- Production topology: changes every instance must hear of (a client, its redirect URIs or
-- allowed origins, the signing keys) are announced by one function. It NOTIFYs the channel, for
-- instances that LISTEN on a direct connection, and counts a version per channel, which instances
-- behind a transaction pooler without a direct connection poll instead (lib/db/notifications.ts).
-- The client trigger, installed by start-up code until now, lives here, under the same name.

-- CreateTable
CREATE TABLE "keyfob_changes" (
    "channel" TEXT NOT NULL,
    "version" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "keyfob_changes_pkey" PRIMARY KEY ("channel")
);

CREATE OR REPLACE FUNCTION keyfob_changed(channel text, payload text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify(channel, payload);
  INSERT INTO keyfob_changes AS c (channel, version) VALUES (channel, 1)
    ON CONFLICT ON CONSTRAINT keyfob_changes_pkey DO UPDATE SET version = c.version + 1;
END $$;

-- The column naming the client is the trigger's argument: id on clients, client_id elsewhere.
CREATE OR REPLACE FUNCTION keyfob_client_change_v1() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  old_id text := to_jsonb(OLD) ->> TG_ARGV[0];
  new_id text := to_jsonb(NEW) ->> TG_ARGV[0];
BEGIN
  IF old_id IS NOT NULL THEN PERFORM keyfob_changed('keyfob_clients', old_id); END IF;
  IF new_id IS NOT NULL AND new_id IS DISTINCT FROM old_id THEN PERFORM keyfob_changed('keyfob_clients', new_id); END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER keyfob_client_change_v1 AFTER INSERT OR UPDATE OR DELETE ON clients FOR EACH ROW EXECUTE FUNCTION keyfob_client_change_v1('id');
CREATE OR REPLACE TRIGGER keyfob_client_change_v1 AFTER INSERT OR UPDATE OR DELETE ON redirect_uris FOR EACH ROW EXECUTE FUNCTION keyfob_client_change_v1('client_id');
CREATE OR REPLACE TRIGGER keyfob_client_change_v1 AFTER INSERT OR UPDATE OR DELETE ON allowed_origins FOR EACH ROW EXECUTE FUNCTION keyfob_client_change_v1('client_id');
