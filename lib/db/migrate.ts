import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import pg from "pg";
import { log } from "../log";

const require = createRequire(import.meta.url);
const projectRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const migrationsDir = path.join(projectRoot, "prisma/migrations");

/** Keyfob's own lock around migrating, distinct from Prisma's, which gives up after 10 s (P1002). */
const MIGRATION_LOCK_ID = 0x6b66_6d696772; // "kfmigr"

/**
 * Beside Prisma's migrations, triggers that NOTIFY every instance of a change to a client, its
 * redirect URIs or its allowed origins (lib/clients/cache.ts keeps clients in memory on that
 * condition), whoever changes them. Versioned by name: a new version gets a new name.
 */
const CLIENT_TRIGGER = "keyfob_client_change_v1";
const CLIENT_TRIGGER_TABLES = ["clients", "redirect_uris", "allowed_origins"];
const CLIENT_TRIGGER_SQL = `
CREATE OR REPLACE FUNCTION ${CLIENT_TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  -- The column naming the client: the trigger's argument (id on clients, client_id elsewhere).
  old_id text := to_jsonb(OLD) ->> TG_ARGV[0];
  new_id text := to_jsonb(NEW) ->> TG_ARGV[0];
BEGIN
  IF old_id IS NOT NULL THEN PERFORM pg_notify('keyfob_clients', old_id); END IF;
  IF new_id IS NOT NULL AND new_id IS DISTINCT FROM old_id THEN PERFORM pg_notify('keyfob_clients', new_id); END IF;
  RETURN NULL;
END $$;
${CLIENT_TRIGGER_TABLES.map((table) => `CREATE OR REPLACE TRIGGER ${CLIENT_TRIGGER} AFTER INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${CLIENT_TRIGGER}('${table === "clients" ? "id" : "client_id"}');`).join("\n")}`;

/**
 * Brings the database schema up to date. A database that already has every migration of this
 * checkout costs three small queries (start-up and CLI calls stay fast). Otherwise the caller waits, as long
 * as it takes, for Keyfob's migration lock, so instances starting together on an empty database
 * migrate one at a time instead of timing out on Prisma's own lock; the one holding the lock runs
 * `prisma migrate deploy`, the others find the schema up to date once they get it. Keyfob's
 * triggers are installed, under the same lock, after the migrations.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    if (await isUpToDate(client)) return;
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [MIGRATION_LOCK_ID]);
    if (!rows[0].locked) {
      log.info("waiting for another instance to finish migrating the database");
      await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_ID]);
    }
    try {
      if (!(await migrationsApplied(client))) await prismaMigrateDeploy(url);
      if (!(await triggersInstalled(client))) await client.query(CLIENT_TRIGGER_SQL);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_ID]);
    }
  } finally {
    await client.end();
  }
}

/** The migrations this checkout ships, by folder name (Prisma's migration_name). */
export function localMigrations(): string[] {
  return readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** Whether every local migration is applied and Keyfob's triggers are installed. */
async function isUpToDate(client: pg.Client): Promise<boolean> {
  return (await triggersInstalled(client)) && (await migrationsApplied(client));
}

async function triggersInstalled(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ count: number }>("SELECT count(*)::int AS count FROM pg_trigger WHERE tgname = $1", [CLIENT_TRIGGER]);
  return rows[0].count === CLIENT_TRIGGER_TABLES.length;
}

/** Whether every local migration is recorded as applied (finished, not rolled back). */
async function migrationsApplied(client: pg.Client): Promise<boolean> {
  const { rows: table } = await client.query<{ exists: boolean }>("SELECT to_regclass('_prisma_migrations') IS NOT NULL AS exists");
  if (!table[0].exists) return false;
  const { rows } = await client.query<{ migration_name: string }>(
    "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
  );
  const applied = new Set(rows.map((row) => row.migration_name));
  return localMigrations().every((name) => applied.has(name));
}

function prismaMigrateDeploy(url: string): Promise<void> {
  const cli = require.resolve("prisma/build/index.js");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, "migrate", "deploy"], {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: url, PRISMA_HIDE_UPDATE_MESSAGE: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`prisma migrate deploy failed (exit ${code}):\n${output.replaceAll(url, "<DATABASE_URL>")}`)),
    );
  });
}
