import pg from "pg";
import { migrateDatabase } from "@/lib/db/migrate";
import { createStore, rawConnection, type Store } from "@/lib/store";

/** The Prisma client under a Keyfob's store, to arrange and inspect rows directly (lib/store's rule). */
export const tables = (k: { store: Store }) => rawConnection(k.store).db;
/** The pool under a Keyfob's store, for plain SQL and for watching its statements. */
export const connectionPool = (k: { store: Store }) => rawConnection(k.store).pool;

/**
 * A fresh, migrated database of its own in the test cluster, for a test file that must own whole
 * tables (such as signing_keys) without disturbing the files running beside it.
 */
export async function isolatedDatabase(name: string) {
  const url = await emptyDatabase(name);
  await migrateDatabase(url);
  return createStore(url, 4);
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
