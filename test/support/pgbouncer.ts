/**
 * A real PgBouncer in transaction mode (the pooling production runs) in front of a PostgreSQL, for
 * the pooled-database tests: a small server pool, so that consecutive transactions of one client
 * connection land on different server connections, as they do under load.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chownSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { freePort } from "../../scripts/free-port";
import { findPgbouncer } from "../../scripts/pgbouncer";

export type Pooler = {
  /** `url` (a postgresql:// URL of the PostgreSQL behind it) as reached through the pooler. */
  through(url: string): string;
  stop(): Promise<void>;
};

export async function startPgbouncer(target: string, options: { poolSize?: number } = {}): Promise<Pooler> {
  const binary = findPgbouncer();
  if (!binary) throw new Error("PgBouncer is needed for this test and could not be found or installed");
  const server = new URL(target);
  const port = await freePort();
  const dir = path.resolve(".data", `pgbouncer-${port}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const user = decodeURIComponent(server.username);
  writeFileSync(path.join(dir, "userlist.txt"), `"${user}" "${decodeURIComponent(server.password)}"\n`);
  writeFileSync(
    path.join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port}`,
      "[pgbouncer]",
      "listen_addr = localhost",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = plain",
      `auth_file = ${path.join(dir, "userlist.txt")}`,
      "pool_mode = transaction",
      `default_pool_size = ${options.poolSize ?? 4}`,
      "max_client_conn = 1000",
      // node-postgres sends these at start-up; PgBouncer refuses unknown ones otherwise.
      "ignore_startup_parameters = extra_float_digits,options",
      `logfile = ${path.join(dir, "pgbouncer.log")}`,
      "",
    ].join("\n"),
  );
  // PgBouncer refuses to run as root: as root, it runs as the postgres user (who owns its folder).
  let owner: { uid: number; gid: number } | undefined;
  if (process.getuid?.() === 0) {
    const id = (flag: string) => Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
    owner = { uid: id("-u"), gid: id("-g") };
    for (const file of ["", "userlist.txt", "pgbouncer.ini"]) chownSync(path.join(dir, file), owner.uid, owner.gid);
  }
  const child: ChildProcess = spawn(binary, [path.join(dir, "pgbouncer.ini")], { stdio: "ignore", ...owner });
  await listening(port, child);
  return {
    through(url) {
      const pooled = new URL(url);
      pooled.port = String(port);
      return pooled.toString();
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGINT");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function listening(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited with ${child.exitCode} before listening`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "localhost", () => resolve(socket.end() && true));
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`pgbouncer did not listen on ${port} within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
