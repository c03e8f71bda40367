/**
 * Migrations on a real PostgreSQL: instances that start together on an empty database all get a
 * migrated schema (each migration applied once), and a database that is up to date is left alone.
 */
import pg from "pg";
import { expect, it } from "vitest";
import { localMigrations, migrateDatabase } from "@/lib/db/migrate";
import { emptyDatabase } from "./support/database";

async function appliedMigrations(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ migration_name: string; finished_at: Date }>(
      "SELECT migration_name, finished_at FROM _prisma_migrations ORDER BY started_at",
    );
    return rows;
  } finally {
    await client.end();
  }
}

it("migrates an empty database once when three instances start together", { timeout: 120_000 }, async () => {
  const url = await emptyDatabase("migrate_race_test");
  await Promise.all([migrateDatabase(url), migrateDatabase(url), migrateDatabase(url)]);
  const applied = await appliedMigrations(url);
  expect(applied.map((m) => m.migration_name)).toEqual(localMigrations());
  expect(applied.every((m) => m.finished_at !== null)).toBe(true);
});

it("leaves an up-to-date database alone, even while another session holds Prisma's migration lock", { timeout: 60_000 }, async () => {
  const url = await emptyDatabase("migrate_uptodate_test");
  await migrateDatabase(url);
  const before = await appliedMigrations(url);
  // Prisma's own advisory lock (72707369): `prisma migrate deploy` would wait for it and fail with P1002.
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  try {
    await holder.query("SELECT pg_advisory_lock(72707369)");
    await migrateDatabase(url);
  } finally {
    await holder.end();
  }
  expect(await appliedMigrations(url)).toEqual(before);
});

it("rolls a failed migration back whole, so the next start applies it again (no half-applied state)", { timeout: 60_000 }, async () => {
  const url = await emptyDatabase("migrate_failure_test");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Something in the way of the last migration's CREATE TABLE.
    await client.query('CREATE TABLE "keyfob_changes" (in_the_way int)');
    await expect(migrateDatabase(url)).rejects.toThrow(/keyfob_changes/);
    const { rows } = await client.query(
      "SELECT to_regclass('clients') IS NULL AS no_clients, to_regclass('_prisma_migrations') IS NULL AS no_record",
    );
    expect(rows[0]).toEqual({ no_clients: true, no_record: true });
    await client.query('DROP TABLE "keyfob_changes"');
  } finally {
    await client.end();
  }
  await migrateDatabase(url);
  expect((await appliedMigrations(url)).map((m) => m.migration_name)).toEqual(localMigrations());
});
