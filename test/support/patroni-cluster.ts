/**
 * A highly available PostgreSQL 15 of a test's own, as docs/deployment.md describes it: one etcd,
 * three Patroni nodes (synchronous replication: a commit is acknowledged once a standby has it) and
 * HAProxy in front, routing every connection to whichever node is the leader now (Patroni's REST
 * API answers `OPTIONS /primary` with 200 on the leader only). Everything listens on free localhost
 * ports and lives in a fresh folder under the system's temporary directory, run as the `postgres`
 * user when the tests run as root (asClusterUser). The settings are docs/deployment.md's: a short DCS
 * ttl and loop, and `primary_start_timeout: 0` so that a killed leader's postmaster fails over
 * rather than restarting in place.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chown, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import type { HaStack } from "../../scripts/patroni";
import { freePort } from "../../scripts/free-port";
import { asClusterUser } from "./postgres-cluster";

const SCOPE = "keyfob";
const NODES = ["node0", "node1", "node2"];

type Member = { name: string; role: string; state: string; lag?: number | string };

export type PatroniCluster = {
  /** A connection URL for `database` (default `keyfob`) through HAProxy: the leader, whichever it is. */
  url(database?: string): string;
  /** A connection URL for `database` on one node directly. */
  nodeUrl(name: string, database?: string): string;
  /** The members as Patroni's REST API lists them (role: leader, sync_standby, replica). */
  members(): Promise<Member[]>;
  /** The leader's name, once there is one (waits up to `ms`). */
  leader(ms?: number): Promise<string>;
  /** Waits until a leader and a synchronous standby are both running (the guarantee holds again). */
  syncStandby(ms?: number): Promise<string>;
  /** SIGKILL of the leader's postmaster (its pid from postmaster.pid); the leader's name. */
  killLeaderPostmaster(): Promise<string>;
  /** A planned switchover (Patroni's POST /switchover) from the leader to its synchronous standby; the old leader's name. */
  switchover(): Promise<string>;
  /** How many statements the nodes refused as writes in a read-only transaction (25006) so far. */
  readOnlyRefusals(): Promise<number>;
  /** The last lines of every process's log (to explain a failure). */
  logs(): Promise<string>;
  /** SIGTERM to Patroni (which stops its PostgreSQL) and wait; then etcd and HAProxy; removes the folder. */
  destroy(): Promise<void>;
};

type Node = { name: string; pgPort: number; restPort: number; dataDir: string; config: string };

export async function startPatroniCluster(tools: HaStack, bin: string): Promise<PatroniCluster> {
  const user = asClusterUser();
  const dir = await mkdtemp(path.join(os.tmpdir(), "keyfob-ha-"));
  const own = (file: string) => (user.uid === undefined ? undefined : chown(file, user.uid, user.gid!));
  await own(dir);
  const children: { name: string; child: ChildProcess; log: string }[] = [];
  const start = async (name: string, file: string, args: string[]) => {
    const log = path.join(dir, `${name}.log`);
    const handle = await open(log, "a");
    const child = spawn(file, args, {
      ...user,
      cwd: dir,
      env: { ...process.env, HOME: dir, LC_ALL: "C.UTF-8" },
      stdio: ["ignore", handle.fd, handle.fd],
    });
    await handle.close();
    children.push({ name, child, log });
    return child;
  };

  const [etcdPort, etcdPeerPort, proxyPort] = [await freePort(), await freePort(), await freePort()];
  const nodes: Node[] = [];
  for (const name of NODES)
    nodes.push({
      name,
      pgPort: await freePort(),
      restPort: await freePort(),
      dataDir: path.join(dir, name),
      config: path.join(dir, `${name}.yml`),
    });
  const rest = (node: Node, pathname: string, init?: RequestInit, ms = 3_000) =>
    fetch(`http://127.0.0.1:${node.restPort}${pathname}`, { ...init, signal: AbortSignal.timeout(ms) });

  const cluster: PatroniCluster = {
    url: (database = "keyfob") => `postgresql://postgres@127.0.0.1:${proxyPort}/${database}`,
    nodeUrl: (name, database = "keyfob") => `postgresql://postgres@127.0.0.1:${byName(name).pgPort}/${database}`,
    async members() {
      for (const node of nodes) {
        const answer = await rest(node, "/cluster").catch(() => undefined);
        if (answer?.ok) return ((await answer.json()) as { members: Member[] }).members;
      }
      return [];
    },
    async leader(ms = 60_000) {
      return poll(ms, "a leader", async () => (await cluster.members()).find((m) => m.role === "leader" && m.state === "running")?.name);
    },
    async syncStandby(ms = 60_000) {
      return poll(ms, "a leader and a synchronous standby", async () => {
        const members = await cluster.members();
        const leader = members.find((m) => m.role === "leader" && m.state === "running");
        return leader && members.find((m) => m.role === "sync_standby" && ["running", "streaming"].includes(m.state))?.name;
      });
    },
    async killLeaderPostmaster() {
      const leader = await cluster.leader();
      const pid = Number((await readFile(path.join(byName(leader).dataDir, "postmaster.pid"), "utf8")).split("\n")[0]);
      process.kill(pid, "SIGKILL");
      return leader;
    },
    async switchover() {
      const leader = await cluster.leader();
      for (let attempt = 1; ; attempt++) {
        const answer = await rest(
          byName(leader),
          "/switchover",
          { method: "POST", body: JSON.stringify({ leader }) },
          // Patroni answers once the switchover is done: seconds under load.
          60_000,
        );
        if (answer.ok) return leader;
        const reason = await answer.text();
        // etcd slow to answer on a busy machine: nothing was started, so asked again, as an operator would.
        if (!(answer.status === 503 && reason.includes("failed to write switchover key into DCS") && attempt < 3))
          throw new Error(`switchover refused (${answer.status}): ${reason}`);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    },
    async readOnlyRefusals() {
      const logs = await Promise.all(nodes.map((node) => readFile(path.join(dir, `${node.name}.log`), "utf8").catch(() => "")));
      return logs.join("\n").match(/ERROR: {2}cannot execute .* in a read-only transaction/g)?.length ?? 0;
    },
    async logs() {
      const tails = await Promise.all(
        children.map(async ({ name, log }) => `--- ${name}\n${(await readFile(log, "utf8").catch(() => "")).slice(-3_000)}`),
      );
      return tails.join("\n");
    },
    async destroy() {
      const stop = async (list: typeof children) => {
        await Promise.all(
          list.map(async ({ child }) => {
            if (child.exitCode !== null || child.signalCode !== null) return;
            const exited = new Promise((resolve) => child.once("exit", resolve));
            child.kill("SIGTERM");
            // Patroni stops its PostgreSQL first (a few seconds); SIGKILL only if it hangs.
            const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
            await exited;
            clearTimeout(timer);
          }),
        );
      };
      await stop(children.filter(({ name }) => NODES.includes(name)));
      await stop(children.filter(({ name }) => !NODES.includes(name)));
      await rm(dir, { recursive: true, force: true });
    },
  };
  const byName = (name: string) => nodes.find((node) => node.name === name)!;

  try {
    const etcdPeer = `http://127.0.0.1:${etcdPeerPort}`;
    const etcdClient = `http://127.0.0.1:${etcdPort}`;
    await start("etcd", tools.etcd, [
      "--name=etcd",
      `--data-dir=${path.join(dir, "etcd")}`,
      `--listen-client-urls=${etcdClient}`,
      `--advertise-client-urls=${etcdClient}`,
      `--listen-peer-urls=${etcdPeer}`,
      `--initial-advertise-peer-urls=${etcdPeer}`,
      `--initial-cluster=etcd=${etcdPeer}`,
    ]);
    for (const node of nodes) {
      // JSON is YAML: Patroni reads it as it is.
      const config = {
        scope: SCOPE,
        name: node.name,
        restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
        etcd3: { hosts: `127.0.0.1:${etcdPort}` },
        bootstrap: {
          dcs: {
            ttl: 10,
            loop_wait: 2,
            retry_timeout: 5,
            synchronous_mode: true,
            primary_start_timeout: 0,
            postgresql: {
              use_pg_rewind: true,
              remove_data_directory_on_rewind_failure: true,
              remove_data_directory_on_diverged_timelines: true,
              // fsync off: a test's cluster never outlives a crash of the machine (a killed postmaster keeps the page cache).
              parameters: { max_connections: 200, fsync: "off", wal_log_hints: "on" },
            },
          },
          initdb: [{ encoding: "UTF8" }, { locale: "C" }],
        },
        postgresql: {
          listen: `127.0.0.1:${node.pgPort}`,
          connect_address: `127.0.0.1:${node.pgPort}`,
          data_dir: node.dataDir,
          bin_dir: bin,
          pgpass: path.join(dir, `${node.name}.pgpass`),
          authentication: { superuser: { username: "postgres" }, replication: { username: "postgres" }, rewind: { username: "postgres" } },
          parameters: { unix_socket_directories: dir },
          pg_hba: ["local all all trust", "host all all 127.0.0.1/32 trust", "host replication all 127.0.0.1/32 trust"],
        },
      };
      await writeFile(node.config, JSON.stringify(config, null, 2));
      await own(node.config);
      await start(node.name, tools.patroni, [node.config]);
    }
    const servers = nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.pgPort} check port ${node.restPort}`);
    const haproxyConfig = path.join(dir, "haproxy.cfg");
    await writeFile(
      haproxyConfig,
      [
        "global",
        "  maxconn 2000",
        "defaults",
        "  mode tcp",
        "  timeout connect 2s",
        // Long: the instances' listening connections sit idle between notifications.
        "  timeout client 1h",
        "  timeout server 1h",
        "  timeout check 1s",
        "listen primary",
        `  bind 127.0.0.1:${proxyPort}`,
        // OPTIONS, not GET: Patroni logs a traceback for every GET /primary a replica answers 503.
        "  option httpchk OPTIONS /primary",
        "  http-check expect status 200",
        "  default-server inter 1s fastinter 250ms downinter 250ms fall 2 rise 1 on-marked-down shutdown-sessions",
        ...servers,
        "",
      ].join("\n"),
    );
    await own(haproxyConfig);
    await start("haproxy", tools.haproxy, ["-f", haproxyConfig, "-db"]);

    // The leader is up and reachable through HAProxy; then the database the tests use.
    await cluster.leader(120_000);
    await poll(60_000, "PostgreSQL through HAProxy", async () => {
      const client = new pg.Client({ connectionString: cluster.url("postgres") });
      client.on("error", () => undefined);
      try {
        await client.connect();
        const { rows } = await client.query<{ standby: boolean }>("SELECT pg_is_in_recovery() AS standby");
        if (rows[0].standby) return undefined;
        await client.query("CREATE DATABASE keyfob");
        return true;
      } catch (error) {
        // Created by an earlier attempt whose answer was lost.
        return (error as { code?: string }).code === "42P04" ? true : undefined;
      } finally {
        await client.end().catch(() => undefined);
      }
    });
  } catch (error) {
    const logs = await cluster.logs();
    await cluster.destroy();
    throw new Error(`${(error as Error).message}\n${logs}`);
  }
  return cluster;
}

/** Polls `found` every 200 ms until it gives a value, for at most `ms`. */
async function poll<T>(ms: number, what: string, found: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await found();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
