import pg from "pg";
import { createDatabase } from "@/lib/db/client";
import { migrateDatabase } from "@/lib/db/migrate";

/**
 * A fresh, migrated database of its own in the test cluster, for a test file that must own whole
 * tables (such as signing_keys) without disturbing the files running beside it.
 */
export async function isolatedDatabase(name: string) {
  const url = await emptyDatabase(name);
  await migrateDatabase(url);
  return createDatabase(url, 4);
}

/** A new, empty database (no schema) in the test cluster; returns its URL. */
export async function emptyDatabase(name: string): Promise<string> {
  const url = new URL(process.env.DATABASE_URL!);
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  url.pathname = `/${name}`;
  return url.toString();
}
