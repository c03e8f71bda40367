/**
 * `npm run bench`: Keyfob against its yardsticks, in ONE run, with the same load generator:
 *   - Flow A handshakes/s (generate_challenge, sign, submit_challenge) against a bare node:http
 *     server doing only the cryptography (bench/reference-server.ts): with states in memory, once
 *     with viem's recovery and once with libsecp256k1's, and with libsecp256k1 and its states as
 *     PostgreSQL rows (the durable floor);
 *   - /token code exchanges/s (public client, PKCE S256) against the same bare server taking its
 *     codes from PostgreSQL (the durable floor), and against node-oidc-provider in a process of its
 *     own (bench/oidc-provider-peer.ts), once doing Keyfob's work (PostgreSQL adapter, JWT access
 *     token) and once in memory with an opaque access token; all on pre-minted codes;
 *   - vehicle token exchanges/s (RFC 8693: a developer license's Flow A developer token for a
 *     token for one vehicle, each read on a hardhat chain) on an instance of their own, against the
 *     bare server doing the same chain reads and one RS256 JWT, and beside Flow A's durable floor;
 *   - start-up of `npm run serve` to its first answer on an up-to-date database, resident memory
 *     under load, CPU per operation of each server, its database and the load generator;
 *   - the hosted login page's first-load JavaScript, gzipped (bench/page-weight.ts).
 * The bench starts everything itself: Keyfob (`npm run serve`, building first if the sources
 * changed) on a database of its own (.data/bench, or DATABASE_URL + KEYFOB_SECRET). Targets are
 * ratios measured in the same run, alternating the targets round by round. See bench/README.md.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readdirSync, statSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Address, Hex } from "viem";
import { systemClock } from "../lib/clock";
import { addRedirectUri, addSigner, createClient, deleteClient, updateClient } from "../lib/clients/registry";
import { createStore, rawConnection } from "../lib/store";
import { opaqueDigest, randomOpaque } from "../lib/oauth/opaque";
import { freePort } from "../scripts/free-port";
import { build, buildNeeded } from "../server/build";
import { createAgent, exchange, handshake, vehicleExchange, type FlowTarget, type TokenTarget, type VehicleTarget } from "./flow";
import { benchDatabase, ROOT, startKeyfob, type RunningKeyfob, type StartupTimes } from "./keyfob-instance";
import { combine, runPhase, type LoadOptions, type PhaseResult, type TargetPids, type Workload } from "./load";
import { loginPageWeight, type PageWeight } from "./page-weight";
import { findListener, rssBytes } from "./procstat";
import { measureCounters, type CounterFigure } from "./rate-limit-counter";
import { startVehicleChain, VEHICLE_PRIVILEGE } from "./vehicle-chain";

/** The issue's targets (ratios measured in one run). */
const TARGETS = {
  /** Flow A handshakes/s against the durable floor (libsecp256k1, states in PostgreSQL). */
  flowADurable: 0.75,
  /** Flow A handshakes/s against the in-memory native floor (what 0.75 of the durable floor comes to). */
  flowANative: 0.55,
  /** /token exchanges/s against the durable floor (codes taken from PostgreSQL). */
  tokenDurable: 0.75,
  /** /token exchanges/s against node-oidc-provider doing the same work (PostgreSQL, JWT access token). */
  tokenPeer: 1.4,
  /** Keyfob's p99 latency, at most this many times its durable floor's. */
  p99: 2,
  startupMs: 3_000,
  rssBytes: 300 * 1024 * 1024,
  /** The hosted login page's first-load JavaScript, gzipped. */
  loginPageGzipBytes: 200 * 1024,
};
const DOMAIN = "http://localhost:8080/callback";
/** The targets measured, by name (the report finds them so). */
const NAMES = {
  flowAViem: "bare server, viem",
  flowANative: "bare server, libsecp256k1",
  flowADurable: "bare server, libsecp256k1, PostgreSQL",
  keyfobFlowA: "keyfob flow-a",
  peerMemory: "node-oidc-provider, memory, opaque",
  peerPostgres: "node-oidc-provider, PostgreSQL, JWT",
  tokenDurable: "bare server, PostgreSQL",
  keyfobToken: "keyfob /token",
  vehicleFloor: "bare server, chain reads",
  keyfobVehicle: "keyfob vehicle token",
};
/** Developer tokens the vehicle exchanges take turns with: each is exchanged again and again. */
const DEVELOPER_TOKENS = 4;
/**
 * The limits stay on, so that every request pays for its count, but far above the load: the /token
 * exchanges (a public client) and Flow A count against the one address every virtual client has.
 */
const RATE_LIMITS = { RATE_LIMIT_PER_IP: "100000000/1m", RATE_LIMIT_PER_CLIENT: "100000000/1m" };

class BenchError extends Error {}

const USAGE = `npm run bench -- [options]

  --duration <s>        measured seconds per target and round (env BENCH_DURATION, default 10)
  --warmup <s>          warm-up seconds before each measurement (env BENCH_WARMUP, default 3)
  --concurrency <n>     virtual clients (env BENCH_CONCURRENCY, default 16)
  --workers <n>         load worker threads sharing the clients (env BENCH_WORKERS, default 2)
  --rounds <n>          alternate the targets this many times (default 2)
  --only flow-a|token|vehicle|limits   measure one workload only
  --max-rate <n>        codes minted per second of a first round (default 3000; later rounds use the rate seen)
  --startups <n>        timed starts of Keyfob on the up-to-date database (default 3; 0 skips the start-up figures)
  --profile <dir>       record CPU profiles of Keyfob and the durable floor under load (node --cpu-prof), summarised side by side
  --json <file>         also write the figures as JSON
  --check               exit 1 if a target is missed or any request failed

Keyfob runs on a database of its own: an embedded PostgreSQL under .data/bench (kept between runs,
port BENCH_POSTGRES_PORT, default 54398), or DATABASE_URL with KEYFOB_SECRET; the durable floors and
node-oidc-provider on PostgreSQL use tables of their own in it (bench_floor_*, bench_oidc_payloads).
Vehicle tokens: a hardhat node (started by the bench) and a Keyfob instance of their own reading it.
The bench builds first when the sources changed since the last build (BENCH_SKIP_BUILD=1 serves the
last build as it is).

Yardsticks, in the same run: Flow A against bare node:http servers (libsecp256k1 with its states in
PostgreSQL: the durable floor; libsecp256k1 and viem with states in memory); /token against the bare
server taking its codes from PostgreSQL (the durable floor) and node-oidc-provider (PostgreSQL
adapter and JWT access token: Keyfob's work; in memory with an opaque one: a reference); vehicle
tokens against the bare server doing the same chain reads and one RS256 JWT, and beside Flow A's
durable floor (references, no target).`;

function options() {
  const { values } = parseArgs({
    options: {
      duration: { type: "string" },
      warmup: { type: "string" },
      concurrency: { type: "string" },
      workers: { type: "string" },
      rounds: { type: "string" },
      only: { type: "string" },
      "max-rate": { type: "string" },
      startups: { type: "string" },
      profile: { type: "string" },
      json: { type: "string" },
      check: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const number = (name: string, value: string | undefined, fallback: number, { integer = true, zero = false } = {}) => {
    if (value === undefined || value === "") return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n)) || (!zero && n === 0)) {
      throw new BenchError(`--${name} must be a ${integer ? "whole " : ""}number${zero ? "" : " above 0"}, got "${value}"`);
    }
    return n;
  };
  const only = values.only;
  if (only !== undefined && !["flow-a", "token", "vehicle", "limits"].includes(only))
    throw new BenchError(`--only must be flow-a, token, vehicle or limits, got "${only}"`);
  const env = process.env;
  return {
    load: {
      durationSeconds: number("duration", values.duration ?? env.BENCH_DURATION, 10, { integer: false }),
      warmupSeconds: number("warmup", values.warmup ?? env.BENCH_WARMUP, 3, { integer: false, zero: true }),
      concurrency: number("concurrency", values.concurrency ?? env.BENCH_CONCURRENCY, 16),
      workers: number("workers", values.workers ?? env.BENCH_WORKERS, 2),
    } satisfies LoadOptions,
    rounds: number("rounds", values.rounds, 2),
    workloads: {
      flowA: !only || only === "flow-a",
      token: !only || only === "token",
      vehicle: !only || only === "vehicle",
      limits: !only || only === "limits",
    },
    maxRate: number("max-rate", values["max-rate"], 3000),
    startups: number("startups", values.startups, 3, { zero: true }),
    profile: values.profile && path.resolve(values.profile),
    json: values.json,
    check: values.check ?? false,
  };
}
type Options = ReturnType<typeof options>;

// ---------------------------------------------------------------- peers

/** Starts a bench server script (node --import tsx) and resolves with its URL once it says it listens. */
async function startScript(
  script: string,
  env: Record<string, string>,
  ipc = false,
  nodeOptions: string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...nodeOptions, "--import", "tsx", path.join(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit", ...(ipc ? (["ipc"] as const) : [])],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.on("message", (message: { url?: string }) => message.url && resolve(message.url));
    child.once("exit", (code) => reject(new BenchError(`${script} exited (code ${code}) before listening`)));
    setTimeout(() => reject(new BenchError(`${script} did not start within 60 s`)), 60_000).unref();
  });
  return { url, child };
}

/** Asks the node-oidc-provider peer for something over IPC and waits for its answer. */
function ask<T>(child: ChildProcess, message: object, key: string): Promise<T> {
  return new Promise((resolve) => {
    const listener = (answer: Record<string, unknown>) => {
      if (!(key in answer)) return;
      child.off("message", listener);
      resolve(answer[key] as T);
    };
    child.on("message", listener);
    child.send(message);
  });
}

// ---------------------------------------------------------------- Keyfob's clients and codes

type Registration = {
  flowA: { clientId: string; signer: string; privateKey: Hex };
  token: { clientId: string; account: string };
  /** A license allowed token exchange, signing its Flow A challenges itself (its key `privateKey`). */
  vehicle?: { clientId: Address; privateKey: Hex };
  cleanup(): Promise<void>;
};

/**
 * A Flow A client (a license with a signer key) and a public Flow B client, registered through lib/;
 * with `vehicle`, a license allowed token exchange too.
 */
async function register(databaseUrl: string, { vehicle = false } = {}): Promise<Registration> {
  const store = createStore(databaseUrl, 2);
  const { db } = rawConnection(store);
  const license = privateKeyToAccount(generatePrivateKey()).address;
  const privateKey = generatePrivateKey();
  const signer = privateKeyToAccount(privateKey).address;
  await createClient(store, { id: license, name: "Keyfob bench (Flow A)" });
  await addRedirectUri(store, license, DOMAIN);
  await addSigner({ store, clock: systemClock }, license, signer);
  const flowB = await createClient(store, { name: "Keyfob bench (code exchange)" });
  await addRedirectUri(store, flowB.id, DOMAIN);
  const account = privateKeyToAccount(generatePrivateKey()).address;
  await db.account.create({ data: { id: account } });
  let vehicleLicense: Registration["vehicle"];
  if (vehicle) {
    const key = generatePrivateKey();
    vehicleLicense = { clientId: privateKeyToAccount(key).address, privateKey: key };
    await createClient(store, { id: vehicleLicense.clientId, name: "Keyfob bench (vehicle tokens)" });
    await addRedirectUri(store, vehicleLicense.clientId, DOMAIN);
    await updateClient(store, vehicleLicense.clientId, { tokenExchange: true });
  }
  return {
    flowA: { clientId: license, signer, privateKey },
    token: { clientId: flowB.id, account },
    vehicle: vehicleLicense,
    async cleanup() {
      // Deleting a client deletes its redirect URIs, signers, challenges, codes and tokens; the
      // account, its login sessions. Their audit events go too: a run leaves tens of thousands, and
      // a database that kept them would vacuum and index more in every later run than in the first.
      const clients = [license, flowB.id, ...(vehicleLicense ? [vehicleLicense.clientId] : [])];
      for (const id of clients)
        await deleteClient(store, id).catch((error) => console.warn(`could not delete the bench client ${id}: ${String(error)}`));
      await db.auditEvent.deleteMany({ where: { clientId: { in: clients } } }).catch(() => undefined);
      await db.account.delete({ where: { id: account } }).catch(() => undefined);
      await store.close();
    },
  };
}

/**
 * n [code, verifier] pairs, written in bulk by `insert`: $1 the codes' digests, $2 their S256
 * challenges, then `params`.
 */
async function mintCodes(pool: pg.Pool, n: number, insert: string, params: unknown[]): Promise<[string, string][]> {
  const pairs: [string, string][] = [];
  const hashes: string[] = [];
  const challenges: string[] = [];
  for (let i = 0; i < n; i++) {
    const code = randomOpaque();
    const verifier = randomBytes(32).toString("base64url");
    pairs.push([code, verifier]);
    hashes.push(opaqueDigest(code));
    challenges.push(createHash("sha256").update(verifier).digest("base64url"));
  }
  for (let i = 0; i < n; i += 10_000) await pool.query(insert, [hashes.slice(i, i + 10_000), challenges.slice(i, i + 10_000), ...params]);
  return pairs;
}

/** The login the codes stand for: $3 client, $4 redirect URI, $5 account, $6 email, $7 auth_time, $8 expiry (30 minutes). */
function codeParams(registration: Registration): unknown[] {
  const now = new Date();
  return [
    registration.token.clientId,
    DOMAIN,
    registration.token.account,
    "bench@example.com",
    now.toISOString(),
    new Date(now.getTime() + 30 * 60_000).toISOString(),
  ];
}

/**
 * Codes for Keyfob's /token, as the hosted login would leave them after a Google login: with auth_time
 * and amr, and each in a login session of its own (which the exchange records the client in, for
 * back-channel logout).
 */
const mintKeyfobCodes = (pool: pg.Pool, registration: Registration, n: number) =>
  mintCodes(
    pool,
    n,
    `WITH sessions AS (
       INSERT INTO login_sessions (id_hash, account_id, connector, subject, email, email_verified, amr, auth_time, last_seen_at, expires_at)
       SELECT 'bench-' || h, $5, 'google', 'bench-subject', $6, true, 'google', $7, $7, $8 FROM unnest($1::text[]) AS t(h)
     )
     INSERT INTO authorization_codes (code_hash, client_id, redirect_uri, account_id, connector, scope, nonce, code_challenge, email, email_verified, auth_time, amr, session_id, expires_at)
     SELECT h, $3, $4, $5, 'google', 'openid email', 'bench-nonce', c, $6, true, $7, 'google', 'bench-' || h, $8 FROM unnest($1::text[], $2::text[]) AS t(h, c)`,
    codeParams(registration),
  );

/** The same login's codes for the durable floor, in its own table (bench/reference-server.ts). */
const mintFloorCodes = (pool: pg.Pool, registration: Registration, n: number) =>
  mintCodes(
    pool,
    n,
    `INSERT INTO bench_floor_codes (code_hash, client_id, redirect_uri, account_id, connector, scope, nonce, code_challenge, email, auth_time, expires_at)
     SELECT h, $3, $4, $5, 'google', 'openid email', 'bench-nonce', c, $6, $7, $8 FROM unnest($1::text[], $2::text[]) AS t(h, c)`,
    codeParams(registration),
  );

/** One operation before the load, so that a misconfiguration is explained rather than counted thousands of times. */
async function preflight(name: string, workload: Workload) {
  const agent = createAgent(1);
  try {
    if (workload.kind === "flow-a") await handshake(workload.target, privateKeyToAccount(workload.privateKey), agent);
    else if (workload.kind === "vehicle") await vehicleExchange(workload.target, workload.subjects[0], workload.resources[0], agent);
    else await exchange(workload.target, ...workload.codes.shift()!, agent);
  } catch (error) {
    throw new BenchError(
      `${name}: a first ${workload.kind === "flow-a" ? "handshake" : "exchange"} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    agent.destroy();
  }
}

// ---------------------------------------------------------------- report

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

type Summary = {
  target: string;
  workload: Workload["kind"];
  perSecond: number;
  operations: number;
  seconds: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  steps: Record<string, number>;
  cpuMsPerOperation: { server?: number; database?: number; chain?: number; client?: number };
  peakRssBytes?: number;
  machineBusy?: number;
  /** Share of the machine's CPU used by processes other than the server, its database, its chain node and the bench. */
  otherLoad?: number;
  exhausted: boolean;
  errorKinds: PhaseResult["errors"];
  warmupErrors: PhaseResult["errors"];
};

function summarize(target: string, workload: Workload["kind"], r: PhaseResult): Summary {
  const per = (ms: number | undefined) => (ms === undefined || r.operations === 0 ? undefined : ms / r.operations);
  return {
    target,
    workload,
    perSecond: r.operations / r.seconds,
    operations: r.operations,
    seconds: r.seconds,
    p50: percentile(r.total, 50),
    p99: percentile(r.total, 99),
    max: r.total.length === 0 ? NaN : r.total.reduce((a, b) => Math.max(a, b), 0),
    errors: Object.values(r.errors).reduce((n, e) => n + e.count, 0),
    steps: Object.fromEntries(Object.entries(r.steps).map(([step, values]) => [step, percentile(values, 50)])),
    cpuMsPerOperation: { server: per(r.cpu.server), database: per(r.cpu.database), chain: per(r.cpu.chain), client: per(r.cpu.client) },
    peakRssBytes: r.peakRss,
    machineBusy: r.cpu.machineBusy !== undefined && r.cpu.machineTotal ? r.cpu.machineBusy / r.cpu.machineTotal : undefined,
    otherLoad:
      r.cpu.machineBusy !== undefined && r.cpu.machineTotal && r.cpu.server !== undefined
        ? Math.max(0, r.cpu.machineBusy - r.cpu.server - (r.cpu.database ?? 0) - (r.cpu.chain ?? 0) - r.cpu.client) / r.cpu.machineTotal
        : undefined,
    exhausted: r.exhausted,
    errorKinds: r.errors,
    warmupErrors: r.warmupErrors,
  };
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ")).join("\n");
}

const fmt = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? "-" : n.toFixed(digits));
const mb = (bytes: number | undefined) => (bytes === undefined ? "-" : `${Math.round(bytes / 1024 / 1024)} MB`);

function printWorkload(title: string, unit: string, summaries: Summary[], stepNames: string[]) {
  if (summaries.length === 0) return;
  /** The chain node's CPU, for the targets that read one. */
  const chain = summaries.some((s) => s.cpuMsPerOperation.chain !== undefined);
  console.log(`\n${title}\n`);
  console.log(
    table([
      [
        "target",
        `${unit}/s`,
        "p50 ms",
        "p99 ms",
        "max ms",
        "errors",
        ...stepNames.map((s) => `${s} p50`),
        "CPU ms/op: server",
        "db",
        ...(chain ? ["chain"] : []),
        "bench",
        "peak RSS",
        "machine busy",
        "others",
      ],
      ...summaries.map((s) => [
        s.target,
        fmt(s.perSecond),
        fmt(s.p50),
        fmt(s.p99),
        fmt(s.max, 0),
        String(s.errors),
        ...stepNames.map((step) => fmt(s.steps[step])),
        fmt(s.cpuMsPerOperation.server, 2),
        fmt(s.cpuMsPerOperation.database, 2),
        ...(chain ? [fmt(s.cpuMsPerOperation.chain, 2)] : []),
        fmt(s.cpuMsPerOperation.client, 2),
        mb(s.peakRssBytes),
        s.machineBusy === undefined ? "-" : `${Math.round(s.machineBusy * 100)}%`,
        s.otherLoad === undefined ? "-" : `${Math.round(s.otherLoad * 100)}%`,
      ]),
    ]),
  );
  for (const s of summaries) {
    if (s.exhausted) console.log(`  ${s.target}: the pre-minted codes ran out before the window ended; rerun with a higher --max-rate`);
    for (const [label, kinds] of [
      ["errors", s.errorKinds],
      ["warm-up errors", s.warmupErrors],
    ] as const) {
      for (const [kind, { count, sample }] of Object.entries(kinds))
        console.log(`  ${s.target} ${label}: ${count} × ${kind} — e.g. ${sample}`);
    }
  }
}

/** `met` undefined: a reference figure, with no target. */
type Verdict = { name: string; value: string; target: string; met?: boolean };

function report(
  summaries: Summary[],
  startup: { serve: StartupTimes[]; embedded?: StartupTimes; idleRssBytes?: number },
  opts: Options,
  loginPage: PageWeight,
): Verdict[] {
  const { load } = opts;
  console.log(
    `\n${load.concurrency} concurrent clients on ${Math.min(load.workers, load.concurrency)} worker threads, ` +
      `${load.durationSeconds} s measured after ${load.warmupSeconds} s warm-up per target, ${opts.rounds} alternating round(s), ` +
      `every target on Node.js ${process.version}`,
  );
  const flowA = summaries.filter((s) => s.workload === "flow-a");
  const token = summaries.filter((s) => s.workload === "token");
  printWorkload("Flow A (a signer key signs for its license; generate, sign, submit):", "handshakes", flowA, [
    "generate",
    "sign",
    "submit",
  ]);
  printWorkload("/token (authorization code + PKCE S256, public client):", "exchanges", token, []);
  printWorkload(
    "Vehicle tokens (RFC 8693 at /token: a developer token for one vehicle; eth_blockNumber, ownerOf, hasPrivilege on hardhat, one RS256 JWT):",
    "exchanges",
    summaries.filter((s) => s.workload === "vehicle"),
    [],
  );

  const verdicts: Verdict[] = [];
  const find = (target: string) => summaries.find((s) => s.target === target);
  /** Keyfob's throughput over a yardstick's; `min` undefined: a reference, with no target. */
  const ratio = (name: string, keyfob: Summary | undefined, yardstick: Summary | undefined, min?: number) => {
    if (!keyfob || !yardstick) return;
    const r = keyfob.perSecond / yardstick.perSecond;
    verdicts.push({
      name,
      value: r.toFixed(2),
      target: min === undefined ? "(reference)" : `≥ ${min}, no errors`,
      met: min === undefined ? undefined : r >= min && keyfob.errors === 0,
    });
  };
  /** Keyfob's p99 over a floor's; `max` undefined: a reference, with no target. */
  const p99 = (name: string, keyfob: Summary | undefined, floor: Summary | undefined, max?: number) => {
    if (!keyfob || !floor) return;
    const r = keyfob.p99 / floor.p99;
    verdicts.push({
      name,
      value: `${r.toFixed(2)}× (${fmt(keyfob.p99)} vs ${fmt(floor.p99)} ms)`,
      target: max === undefined ? "(reference)" : `≤ ${max}×`,
      met: max === undefined ? undefined : r <= max,
    });
  };
  const keyfobA = find(NAMES.keyfobFlowA);
  ratio("Flow A / durable floor (libsecp256k1, PostgreSQL)", keyfobA, find(NAMES.flowADurable), TARGETS.flowADurable);
  ratio("Flow A / in-memory native floor (libsecp256k1)", keyfobA, find(NAMES.flowANative), TARGETS.flowANative);
  ratio("Flow A / in-memory viem floor", keyfobA, find(NAMES.flowAViem));
  p99("Flow A p99 / durable floor's", keyfobA, find(NAMES.flowADurable), TARGETS.p99);
  const keyfobT = find(NAMES.keyfobToken);
  ratio("/token / durable floor (PostgreSQL)", keyfobT, find(NAMES.tokenDurable), TARGETS.tokenDurable);
  ratio("/token / node-oidc-provider (PostgreSQL, JWT access token)", keyfobT, find(NAMES.peerPostgres), TARGETS.tokenPeer);
  ratio("/token / node-oidc-provider (memory, opaque access token)", keyfobT, find(NAMES.peerMemory));
  p99("/token p99 / durable floor's", keyfobT, find(NAMES.tokenDurable), TARGETS.p99);
  // No target for vehicle tokens: the issue sets none, and hardhat's answers bound both sides.
  const keyfobV = find(NAMES.keyfobVehicle);
  ratio("vehicle tokens / their floor (the same chain reads, one RS256 JWT)", keyfobV, find(NAMES.vehicleFloor));
  ratio("vehicle tokens / Flow A's durable floor (handshakes)", keyfobV, find(NAMES.flowADurable));
  p99("vehicle tokens p99 / their floor's", keyfobV, find(NAMES.vehicleFloor));
  const failed = summaries.filter((s) => s.errors > 0);
  verdicts.push({
    name: "failed requests, every target",
    value: failed.length === 0 ? "0" : failed.map((s) => `${s.errors} (${s.target})`).join(", "),
    target: "0",
    met: failed.length === 0,
  });
  if (startup.serve.length > 0) {
    const first = percentile(
      startup.serve.map((s) => s.firstAnswer),
      50,
    );
    verdicts.push({
      name: "start-up to first answer (npm run serve, PostgreSQL running)",
      value: `${(first / 1000).toFixed(2)} s (median of ${startup.serve.map((s) => (s.firstAnswer / 1000).toFixed(2)).join(", ")})`,
      target: `≤ ${TARGETS.startupMs / 1000} s`,
      met: first <= TARGETS.startupMs,
    });
  }
  if (startup.embedded) {
    verdicts.push({
      name: "start-up to first answer (npm run serve, embedded PostgreSQL started too)",
      value: `${(startup.embedded.firstAnswer / 1000).toFixed(2)} s`,
      target: `≤ ${TARGETS.startupMs / 1000} s`,
      met: startup.embedded.firstAnswer <= TARGETS.startupMs,
    });
  }
  const rss = Math.max(
    ...summaries.filter((s) => s.target === NAMES.keyfobFlowA || s.target === NAMES.keyfobToken).map((s) => s.peakRssBytes ?? 0),
  );
  if (rss > 0)
    verdicts.push({
      name: "Keyfob peak RSS under load",
      value: mb(rss),
      target: `≤ ${mb(TARGETS.rssBytes)}`,
      met: rss <= TARGETS.rssBytes,
    });
  // The vehicle instance's apart, without a target: the 300 MB were set for Flow A's and /token's load.
  if (keyfobV?.peakRssBytes)
    verdicts.push({
      name: "Keyfob peak RSS under vehicle exchanges (an instance of its own)",
      value: mb(keyfobV.peakRssBytes),
      target: "(reference)",
    });
  verdicts.push({
    name: `login page first-load JavaScript (${loginPage.files} files, gzipped)`,
    value: `${(loginPage.gzipBytes / 1024).toFixed(0)} KB`,
    target: `≤ ${TARGETS.loginPageGzipBytes / 1024} KB`,
    met: loginPage.gzipBytes <= TARGETS.loginPageGzipBytes,
  });

  if (startup.serve.length > 0) {
    const s = startup.serve;
    console.log(
      `\nStart-up of npm run serve on an up-to-date database (ms from spawn; PostgreSQL already running):\n` +
        table([
          ["start", "first answer", "ready", "first page"],
          ...s.map((t, i) => [String(i + 1), fmt(t.firstAnswer, 0), fmt(t.ready, 0), fmt(t.firstPage, 0)]),
          ...(startup.embedded
            ? [["embedded PG", fmt(startup.embedded.firstAnswer, 0), fmt(startup.embedded.ready, 0), fmt(startup.embedded.firstPage, 0)]]
            : []),
        ]) +
        (startup.idleRssBytes ? `\nKeyfob RSS once started, idle: ${mb(startup.idleRssBytes)}` : ""),
    );
  }
  const disturbed = summaries.filter((s) => (s.otherLoad ?? 0) > 0.1);
  if (disturbed.length > 0) {
    console.log(
      `\nwarning: other processes used ${disturbed.map((s) => `${Math.round(s.otherLoad! * 100)}% of the machine during ${s.target}`).join(", ")};` +
        "\nthe figures are disturbed: rerun on a quiet machine (the CPU ms per operation are the steadier figures).",
    );
  }
  console.log(
    `\n${table([["ratio / figure", "measured", "target", ""], ...verdicts.map((v) => [v.name, v.value, v.target, v.met === undefined ? "" : v.met ? "MET" : "NOT MET"])])}`,
  );
  return verdicts;
}

// ---------------------------------------------------------------- main

async function main() {
  const opts = options();
  const reason = process.env.BENCH_SKIP_BUILD ? undefined : buildNeeded();
  if (reason) {
    console.log(`Building Keyfob (${reason})…`);
    if ((await build(process.env)) !== 0) throw new BenchError("the build failed");
  }

  const database = await benchDatabase();
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  pool.on("error", () => undefined); // a dropped idle connection (the database stopping last) must not end the bench
  const keyfobEnv = { DATABASE_URL: database.url, KEYFOB_SECRET: database.secret, ...RATE_LIMITS };
  const cleanups: (() => Promise<unknown>)[] = [() => database.stop(), async () => pool.end()];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch((error) => console.warn(`cleanup: ${String(error)}`));
  };
  try {
    // ------------------------------------------------------------ start-up
    const startup: { serve: StartupTimes[]; embedded?: StartupTimes; idleRssBytes?: number } = { serve: [] };
    if (opts.startups > 0) {
      process.stdout.write("start-up of npm run serve, PostgreSQL running … ");
      for (let i = 0; i < opts.startups; i++) {
        const instance = await startKeyfob(keyfobEnv);
        startup.serve.push(instance.startup);
        await new Promise((resolve) => setTimeout(resolve, 500));
        startup.idleRssBytes = rssBytes(instance.pid);
        await instance.stop();
      }
      console.log(startup.serve.map((s) => `${Math.round(s.firstAnswer)} ms`).join(", "));
      process.stdout.write("start-up of npm run serve with its embedded PostgreSQL … ");
      const embeddedEnv = {
        DATABASE_URL: "",
        KEYFOB_SECRET: "",
        DATA_DIR: path.join(ROOT, ".data", "bench", "embedded"),
        EMBEDDED_POSTGRES_PORT: String(await freePort()),
      };
      await (await startKeyfob(embeddedEnv)).stop(); // initialises and migrates on the first run ever: not timed
      const embedded = await startKeyfob(embeddedEnv);
      startup.embedded = embedded.startup;
      await embedded.stop();
      console.log(`${Math.round(startup.embedded.firstAnswer)} ms`);
    }

    // ------------------------------------------------------------ targets
    if (opts.profile) {
      await rm(opts.profile, { recursive: true, force: true });
      await mkdir(opts.profile, { recursive: true });
    }
    const keyfob: RunningKeyfob = await startKeyfob(keyfobEnv, { cpuProfileDir: opts.profile });
    cleanups.push(() => keyfob.stop());
    const registration = await register(database.url, { vehicle: opts.workloads.vehicle });
    cleanups.push(() => registration.cleanup());
    const loginPage = await loginPageWeight(keyfob.url, registration.token.clientId, DOMAIN);
    const databasePid = database.port ? findListener(database.port) : undefined;
    const databasePids = (server?: number) => ({ server, database: databasePid });
    const keyfobPids = databasePids(keyfob.pid);

    /** `work(codes)`: what the virtual clients do, with that many codes minted for a token workload. */
    type Target = {
      name: string;
      workload: Workload["kind"];
      pids: TargetPids;
      work: (codes: number) => Promise<Workload>;
      rate?: number;
    };
    const targets: Target[] = [];
    // The durable floor: Flow A with its states in PostgreSQL, and /token on codes taken from it.
    const floor = await startScript(
      "bench/reference-server.ts",
      {
        REF_PORT: "0",
        REF_CLIENT_ID: registration.flowA.clientId,
        REF_PUBLIC_CLIENT_ID: registration.token.clientId,
        REF_DOMAIN: DOMAIN,
        REF_SIGNERS: registration.flowA.signer,
        REF_RECOVERY: "libsecp256k1",
        REF_STATE: "postgres",
        REF_DATABASE_URL: database.url,
      },
      false,
      opts.profile ? ["--cpu-prof", "--cpu-prof-dir", path.join(opts.profile, "floor")] : [],
    );
    const floorExited = new Promise((resolve) => floor.child.once("exit", resolve));
    const stopFloor = async () => {
      floor.child.kill("SIGTERM");
      await floorExited;
    };
    cleanups.push(stopFloor);
    if (opts.workloads.flowA) {
      const flowTarget = (url: string): FlowTarget => ({
        url,
        clientId: registration.flowA.clientId,
        domain: DOMAIN,
        address: registration.flowA.clientId,
        scope: "openid email",
      });
      const { privateKey } = registration.flowA;
      const flowA = (name: string, url: string, pids: Target["pids"]): Target => ({
        name,
        workload: "flow-a",
        pids,
        work: async () => ({ kind: "flow-a", target: flowTarget(url), privateKey }),
      });
      for (const [name, recovery] of [
        [NAMES.flowAViem, "viem"],
        [NAMES.flowANative, "libsecp256k1"],
      ] as const) {
        const reference = await startScript("bench/reference-server.ts", {
          REF_PORT: "0",
          REF_CLIENT_ID: registration.flowA.clientId,
          REF_DOMAIN: DOMAIN,
          REF_SIGNERS: registration.flowA.signer,
          REF_RECOVERY: recovery,
        });
        cleanups.push(async () => reference.child.kill("SIGTERM"));
        targets.push(flowA(name, reference.url, { server: reference.child.pid }));
      }
      targets.push(flowA(NAMES.flowADurable, floor.url, databasePids(floor.child.pid)), flowA(NAMES.keyfobFlowA, keyfob.url, keyfobPids));
    }
    if (opts.workloads.token) {
      const { PEER_CLIENT_ID, PEER_REDIRECT_URI } = await import("./oidc-provider-peer");
      /** node-oidc-provider mints its own codes (over IPC), through its models. */
      const peerTarget = async (name: string, env: Record<string, string>, database?: number): Promise<Target> => {
        const peer = await startScript("bench/oidc-provider-peer.ts", env, true);
        cleanups.push(async () => peer.child.kill("SIGTERM"));
        return {
          name,
          workload: "token",
          pids: { server: peer.child.pid, database },
          work: async (n) => {
            await ask(peer.child, { reset: true }, "reset");
            const codes = await ask<[string, string][]>(peer.child, { mint: n }, "codes");
            return {
              kind: "token",
              target: { url: peer.url, clientId: PEER_CLIENT_ID, redirectUri: PEER_REDIRECT_URI } satisfies TokenTarget,
              codes,
            };
          },
        };
      };
      /** Keyfob and the durable floor: codes written by the bench into their tables. */
      const sqlTarget = (
        name: string,
        url: string,
        pids: Target["pids"],
        tables: string,
        clear: () => Promise<unknown>,
        mint: typeof mintKeyfobCodes,
      ): Target => ({
        name,
        workload: "token",
        pids,
        work: async (n) => {
          await clear();
          const codes = await mint(pool, registration, n);
          // Now rather than by autovacuum in whichever target's measured window comes next: the rows
          // a DELETE left (Keyfob's codes and sessions; the floor's are truncated) and the statistics.
          await pool.query(`VACUUM (ANALYZE) ${tables}`);
          return {
            kind: "token",
            target: { url, clientId: registration.token.clientId, redirectUri: DOMAIN } satisfies TokenTarget,
            codes,
          };
        },
      });
      targets.push(
        await peerTarget(NAMES.peerMemory, {}),
        await peerTarget(NAMES.peerPostgres, { PEER_STORE: "postgres", PEER_DATABASE_URL: database.url }, databasePid),
        sqlTarget(
          NAMES.tokenDurable,
          floor.url,
          databasePids(floor.child.pid),
          "bench_floor_codes",
          () => pool.query("TRUNCATE bench_floor_codes"),
          mintFloorCodes,
        ),
        sqlTarget(
          NAMES.keyfobToken,
          keyfob.url,
          keyfobPids,
          "authorization_codes, login_sessions, login_session_clients",
          async () => {
            await pool.query("DELETE FROM authorization_codes WHERE client_id = $1", [registration.token.clientId]);
            await pool.query("DELETE FROM login_sessions WHERE account_id = $1", [registration.token.account]);
          },
          mintKeyfobCodes,
        ),
      );
    }
    if (registration.vehicle) {
      // A Keyfob instance of its own reads the chain: the Flow A and /token instance keeps the
      // configuration of earlier runs (no RPC_URL, no event watcher), and so its figures.
      const license = registration.vehicle;
      const chain = await startVehicleChain(license.clientId);
      cleanups.push(() => chain.stop());
      const vehicleKeyfob = await startKeyfob({
        ...keyfobEnv,
        RPC_URL: chain.rpcUrl,
        CHAIN_ID: String(chain.chainId),
        VEHICLE_CONTRACTS: chain.contract,
      });
      cleanups.push(() => vehicleKeyfob.stop());
      const vehicleFloor = await startScript("bench/reference-server.ts", {
        REF_PORT: "0",
        REF_CLIENT_ID: license.clientId,
        REF_DOMAIN: DOMAIN,
        REF_CHAIN_ID: String(chain.chainId),
        REF_RPC_URL: chain.rpcUrl,
        REF_VEHICLE_CONTRACTS: chain.contract,
      });
      cleanups.push(async () => vehicleFloor.child.kill("SIGTERM"));
      // Developer tokens, pre-minted as a developer gets them: Flow A, the license signing for itself.
      const developer: FlowTarget = {
        url: vehicleKeyfob.url,
        clientId: license.clientId,
        domain: DOMAIN,
        address: license.clientId,
        scope: "openid email",
      };
      const account = privateKeyToAccount(license.privateKey);
      const agent = createAgent(1);
      const subjects: string[] = [];
      try {
        for (let i = 0; i < DEVELOPER_TOKENS; i++) subjects.push((await handshake(developer, account, agent)).accessToken);
      } finally {
        agent.destroy();
      }
      const vehicleTarget = (name: string, url: string, pids: TargetPids): Target => ({
        name,
        workload: "vehicle",
        pids: { ...pids, chain: chain.pid },
        work: async () => ({
          kind: "vehicle",
          target: { url, clientId: license.clientId, scope: VEHICLE_PRIVILEGE.scope } satisfies VehicleTarget,
          subjects,
          resources: chain.resources,
        }),
      });
      targets.push(
        vehicleTarget(NAMES.vehicleFloor, vehicleFloor.url, { server: vehicleFloor.child.pid }),
        vehicleTarget(NAMES.keyfobVehicle, vehicleKeyfob.url, databasePids(vehicleKeyfob.pid)),
      );
    }
    for (const t of targets) await preflight(t.name, await t.work(1));

    // Enough codes for the phase at 1.5 times the rate seen in the last round (--max-rate at first).
    const phaseCodes = (t: Target) =>
      Math.ceil((t.rate ?? opts.maxRate) * 1.5 * (opts.load.warmupSeconds + opts.load.durationSeconds)) + 1_000;
    const results = new Map<string, PhaseResult[]>();
    for (let round = 1; round <= opts.rounds; round++) {
      for (const t of targets) {
        const workload = await t.work(phaseCodes(t));
        process.stdout.write(`round ${round}/${opts.rounds}: ${t.name} … `);
        const result = await runPhase(workload, opts.load, t.pids);
        t.rate = (result.operations + result.warmupOperations) / (opts.load.durationSeconds + opts.load.warmupSeconds);
        console.log(`${(result.operations / result.seconds).toFixed(1)} ${t.workload === "flow-a" ? "handshakes" : "exchanges"}/s`);
        results.set(t.name, [...(results.get(t.name) ?? []), result]);
      }
    }
    const combined = new Map(targets.map((t) => [t.name, combine(results.get(t.name)!)]));
    const summaries = targets.map((t) => summarize(t.name, t.workload, combined.get(t.name)!));
    const verdicts = report(summaries, startup, opts, loginPage);
    let counters: CounterFigure[] | undefined;
    if (opts.workloads.limits) {
      counters = await measureCounters(database.url, { seconds: opts.load.durationSeconds, concurrency: opts.load.concurrency });
      console.log(`\nRate-limit counter, one busy key, ${opts.load.concurrency} connections (keyfob_rate_limit_hit):`);
      console.log(
        table([
          ["counted on", "hits/s", "p99", "/ floor"],
          ...counters.map((c) => [
            c.name,
            c.hitsPerSecond.toFixed(0),
            `${c.p99Ms.toFixed(1)} ms`,
            (c.hitsPerSecond / counters!.at(-1)!.hitsPerSecond).toFixed(2),
          ]),
        ]),
      );
    }

    if (opts.profile) {
      // The profiles are written when the processes exit.
      await keyfob.stop();
      await stopFloor();
      const largest = (dir: string) =>
        readdirSync(dir)
          .filter((f) => f.endsWith(".cpuprofile"))
          .map((f) => path.join(dir, f))
          .sort((a, b) => statSync(b).size - statSync(a).size)[0];
      const keyfobProfile = largest(opts.profile);
      const floorProfile = largest(path.join(opts.profile, "floor"));
      for (const [name, profile] of [
        [NAMES.keyfobFlowA, keyfobProfile],
        [NAMES.flowADurable, floorProfile],
        [NAMES.keyfobToken, keyfobProfile],
        [NAMES.tokenDurable, floorProfile],
      ] as const) {
        const phase = combined.get(name);
        if (!profile || !phase) continue;
        const args = [
          ...phase.windows.flatMap(([from, until]) => ["--window", `${Math.round(from)}-${Math.round(until)}`]),
          "--operations",
          String(phase.operations),
        ];
        console.log(`\nCPU profile of ${name}, measured windows only:\n  npx tsx bench/cpuprofile-summary.ts ${profile} ${args.join(" ")}`);
        await new Promise((resolve) =>
          spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "bench/cpuprofile-summary.ts"), profile, ...args], {
            stdio: "inherit",
          }).on("exit", resolve),
        );
      }
    }
    if (opts.json) {
      await writeFile(
        opts.json,
        `${JSON.stringify({ date: new Date().toISOString(), options: opts, goals: TARGETS, verdicts, startup, targets: summaries, counters }, null, 2)}\n`,
      );
      console.log(`figures written to ${opts.json}`);
    }
    if (opts.check && (summaries.some((s) => s.errors > 0 || s.exhausted) || verdicts.some((v) => v.met === false))) process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error) => {
    if (error instanceof BenchError) console.error(error.message);
    else console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
