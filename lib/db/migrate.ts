import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { log } from "../log";
import { projectRoot } from "../project-root";

const migrationsDir = path.join(projectRoot(import.meta.dirname), "prisma/migrations");

/** Keyfob's migration lock (a transaction-level advisory lock), distinct from Prisma's. */
const MIGRATION_LOCK_ID = 0x6b66_6d696772; // "kfmigr"

/** Prisma's migration table, as `prisma migrate deploy` creates it, so that `prisma migrate status` agrees. */
const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/**
 * Brings the database schema up to date with the migrations under prisma/migrations. A database
 * that already has every one costs two small queries (start-up and CLI calls stay fast). Otherwise they are
 * applied in ONE transaction that first takes Keyfob's transaction-level advisory lock, and recorded
 * as Prisma records them (checksum: the file's SHA-256):
 * - instances starting together migrate one at a time; the others wait for the lock, then find
 *   nothing left to do;
 * - it works through a transaction pooler (PgBouncer): a transaction keeps its server connection,
 *   and the lock ends with the transaction, where a session lock (Prisma's own) could be taken on
 *   one server connection and released on another, or never;
 * - a migration that fails, or a process killed halfway, rolls back whole (PostgreSQL's DDL is
 *   transactional): nothing is left half-applied to block the next start, which applies it again.
 */
export async function migrateDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const pending = await pendingMigrations(client);
    if (pending.length === 0) return;
    await client.query("BEGIN");
    try {
      const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS locked", [MIGRATION_LOCK_ID]);
      if (!rows[0].locked) {
        log.info("waiting for another instance to finish migrating the database");
        await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_ID]);
      }
      await client.query(MIGRATIONS_TABLE);
      for (const name of await pendingMigrations(client)) {
        const script = readFileSync(path.join(migrationsDir, name, "migration.sql"));
        await client.query(script.toString("utf8"));
        // A row of an attempt that failed under `prisma migrate deploy` would keep `prisma migrate status` unhappy.
        await client.query("DELETE FROM _prisma_migrations WHERE migration_name = $1 AND finished_at IS NULL", [name]);
        await client.query(
          `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, clock_timestamp(), clock_timestamp(), 1)`,
          [randomUUID(), createHash("sha256").update(script).digest("hex"), name],
        );
        log.info("migration applied", { migration: name });
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
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

/** The local migrations not recorded as applied (finished, not rolled back), in order. */
async function pendingMigrations(client: pg.Client): Promise<string[]> {
  const { rows: table } = await client.query<{ exists: boolean }>("SELECT to_regclass('_prisma_migrations') IS NOT NULL AS exists");
  if (!table[0].exists) return localMigrations();
  const { rows } = await client.query<{ migration_name: string }>(
    "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
  );
  const applied = new Set(rows.map((row) => row.migration_name));
  return localMigrations().filter((name) => !applied.has(name));
}
