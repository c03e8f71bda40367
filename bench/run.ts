/**
 * `npm run bench`: Flow A handshakes per second (generate_challenge, sign, submit_challenge) against
 * a running Keyfob and, in the same run and the same way, against a bare node:http reference doing
 * only the same cryptography (bench/reference-server.ts). Prints both and their ratio.
 * See bench/README.md for the flags and what the figures mean.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Hex } from "viem";
import { prepareStorage } from "../lib/bootstrap";
import { addRedirectUri, addSigner, createClient, deleteClient } from "../lib/clients/registry";
import { ConfigError, loadConfig } from "../lib/config";
import { createDatabase, type Database } from "../lib/db/client";
import { createAgent, FlowError, handshake, type FlowTarget } from "./flow";
import { combine, runPhase, type LoadOptions, type PhaseResult } from "./load";
import { findListener } from "./procstat";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TARGET_RATIO = 0.5;
const DOMAIN = "http://localhost:8080/callback";

class BenchError extends Error {}

const USAGE = `npm run bench -- [options]      (Keyfob must be running: npm start)

  --url <url>           Keyfob's base URL (env KEYFOB_URL, default http://localhost:3000)
  --duration <s>        measured seconds per target and round (env BENCH_DURATION, default 15)
  --warmup <s>          warm-up seconds before each measurement (env BENCH_WARMUP, default 3)
  --concurrency <n>     virtual clients (env BENCH_CONCURRENCY, default 16)
  --workers <n>         load worker threads sharing the clients (env BENCH_WORKERS, default 2)
  --rounds <n>          alternate reference/keyfob this many times (default 1)
  --flow signer|wallet  signer: a signer key signs for the client's license address (default; one
                        signer lookup per handshake); wallet: a wallet signs for its own address
  --only keyfob|reference   measure one target only
  --json <file>         also write the figures as JSON
  --check               exit 1 if the ratio is below ${TARGET_RATIO} or any request failed

The bench registers its own client in Keyfob's database through lib/, with the same environment
the server uses (DATABASE_URL + KEYFOB_SECRET, or DATA_DIR + EMBEDDED_POSTGRES_PORT), and
deletes it afterwards.`;

function options() {
  const { values } = parseArgs({
    options: {
      url: { type: "string" },
      duration: { type: "string" },
      warmup: { type: "string" },
      concurrency: { type: "string" },
      workers: { type: "string" },
      rounds: { type: "string" },
      flow: { type: "string" },
      only: { type: "string" },
      json: { type: "string" },
      check: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const number = (name: string, value: string | undefined, fallback: number, integer = true) => {
    if (value === undefined || value === "") return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n)) || (name !== "warmup" && n === 0)) {
      throw new BenchError(`--${name} must be a ${integer ? "whole " : ""}number${name === "warmup" ? "" : " above 0"}, got "${value}"`);
    }
    return n;
  };
  const flow = values.flow ?? "signer";
  if (flow !== "signer" && flow !== "wallet") throw new BenchError(`--flow must be signer or wallet, got "${flow}"`);
  const only = values.only;
  if (only !== undefined && only !== "keyfob" && only !== "reference") throw new BenchError(`--only must be keyfob or reference, got "${only}"`);
  const env = process.env;
  return {
    url: (values.url ?? env.KEYFOB_URL ?? "http://localhost:3000").replace(/\/+$/, ""),
    load: {
      durationSeconds: number("duration", values.duration ?? env.BENCH_DURATION, 15, false),
      warmupSeconds: number("warmup", values.warmup ?? env.BENCH_WARMUP, 3, false),
      concurrency: number("concurrency", values.concurrency ?? env.BENCH_CONCURRENCY, 16),
      workers: number("workers", values.workers ?? env.BENCH_WORKERS, 2),
    } satisfies LoadOptions,
    rounds: number("rounds", values.rounds, 1),
    flow: flow as "signer" | "wallet",
    targets: (only ? [only] : ["reference", "keyfob"]) as ("reference" | "keyfob")[],
    json: values.json,
    check: values.check ?? false,
  };
}

/** Fails with the instruction to start Keyfob when nothing answers at `url`. */
async function checkReachable(url: string) {
  let status: number;
  try {
    const response = await fetch(`${url}/keys`, { signal: AbortSignal.timeout(10_000) });
    status = response.status;
    await response.body?.cancel();
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error instanceof Error ? error.name : String(error));
    throw new BenchError(
      `Keyfob is not reachable at ${url} (${cause}).\n` +
        "Start it first with `npm start` (or `npm run serve` for an existing build) in another terminal,\n" +
        "or point the bench at a running instance with KEYFOB_URL=http://host:port.",
    );
  }
  if (status !== 200) throw new BenchError(`${url}/keys answered ${status}: is Keyfob (and its database) running at ${url}?`);
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "localhost", port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

type Registration = { clientId: string; signer: string; privateKey: Hex; address: string; databasePort?: number; cleanup(): Promise<void> };

/** A fresh client with a fresh key, registered in the database the server uses (as scripts/demo.ts does). */
async function register(flow: "signer" | "wallet", withKeyfob: boolean): Promise<Registration> {
  const clientId = privateKeyToAccount(generatePrivateKey()).address; // a developer license address
  const privateKey = generatePrivateKey();
  const signer = privateKeyToAccount(privateKey).address;
  const address = flow === "signer" ? clientId : signer;
  if (!withKeyfob) return { clientId, signer, privateKey, address, cleanup: async () => {} };

  const config = loadConfig();
  const startsItsOwnDatabase = !config.databaseUrl && !(await isListening(config.embeddedPostgresPort));
  const { config: prepared, stop } = await prepareStorage(config);
  const db: Database = createDatabase(prepared.databaseUrl, 2);
  try {
    await createClient(db, { id: clientId, name: "Keyfob bench" });
    await addRedirectUri(db, clientId, DOMAIN);
    if (flow === "signer") await addSigner(db, clientId, signer);
  } catch (error) {
    await db.$disconnect();
    await stop();
    throw error;
  }
  if (startsItsOwnDatabase) {
    console.warn(
      `warning: no PostgreSQL was listening on port ${config.embeddedPostgresPort} (DATA_DIR ${config.dataDir}); the bench started one,\n` +
        "so the server probably uses another database. Run the bench with the server's environment.",
    );
  }
  const dbUrl = new URL(prepared.databaseUrl);
  const local = ["localhost", "127.0.0.1", "[::1]"].includes(dbUrl.hostname);
  return {
    clientId,
    signer,
    privateKey,
    address,
    databasePort: local ? Number(dbUrl.port || 5432) : undefined,
    cleanup: async () => {
      // Deleting the client cascades to its redirect URIs, signers and the bench's challenges.
      await deleteClient(db, clientId).catch((error) => console.warn(`could not delete the bench client ${clientId}: ${String(error)}`));
      await db.$disconnect();
      await stop();
    },
  };
}

async function startReference(registration: Registration): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "bench/reference-server.ts")], {
    cwd: ROOT,
    env: { ...process.env, REF_PORT: "0", REF_CLIENT_ID: registration.clientId, REF_DOMAIN: DOMAIN, REF_SIGNERS: registration.signer },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once("exit", (code) => reject(new BenchError(`the reference server exited (code ${code}) before listening`)));
    setTimeout(() => reject(new BenchError("the reference server did not start within 30 s")), 30_000).unref();
  });
  return { url, child };
}

/** One handshake before the load, so that a misconfiguration is explained rather than counted 16 000 times. */
async function preflight(name: string, target: FlowTarget, privateKey: Hex) {
  const agent = createAgent(1);
  try {
    await handshake(target, privateKeyToAccount(privateKey), agent);
  } catch (error) {
    let hint = "";
    if (error instanceof FlowError && /invalid_client|invalid_request/.test(error.kind)) {
      hint =
        "\nThe bench registered its client in the database of this environment, but the server does not know it:\n" +
        "run the bench with the server's environment (DATABASE_URL and KEYFOB_SECRET, or DATA_DIR and EMBEDDED_POSTGRES_PORT).";
    }
    throw new BenchError(`${name}: a first handshake failed: ${error instanceof Error ? error.message : String(error)}${hint}`);
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
  handshakesPerSecond: number;
  handshakes: number;
  seconds: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  steps: { generate: number; sign: number; submit: number };
  cpuMsPerHandshake: { server?: number; database?: number; client?: number };
  machineBusy?: number;
  /** Share of the machine's CPU used by processes other than the server, its database and the bench. */
  otherLoad?: number;
  errorKinds: PhaseResult["errors"];
  warmupErrors: PhaseResult["errors"];
};

function summarize(target: string, r: PhaseResult): Summary {
  const per = (ms: number | undefined) => (ms === undefined || r.handshakes === 0 ? undefined : ms / r.handshakes);
  return {
    target,
    handshakesPerSecond: r.handshakes / r.seconds,
    handshakes: r.handshakes,
    seconds: r.seconds,
    p50: percentile(r.total, 50),
    p99: percentile(r.total, 99),
    max: r.total.length ? Math.max(...r.total) : NaN,
    errors: Object.values(r.errors).reduce((n, e) => n + e.count, 0),
    steps: { generate: percentile(r.generate, 50), sign: percentile(r.sign, 50), submit: percentile(r.submit, 50) },
    cpuMsPerHandshake: { server: per(r.cpu.server), database: per(r.cpu.database), client: per(r.cpu.client) },
    machineBusy: r.cpu.machineBusy !== undefined && r.cpu.machineTotal ? r.cpu.machineBusy / r.cpu.machineTotal : undefined,
    otherLoad:
      r.cpu.machineBusy !== undefined && r.cpu.machineTotal && r.cpu.server !== undefined
        ? Math.max(0, r.cpu.machineBusy - r.cpu.server - (r.cpu.database ?? 0) - r.cpu.client) / r.cpu.machineTotal
        : undefined,
    errorKinds: r.errors,
    warmupErrors: r.warmupErrors,
  };
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows.map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ")).join("\n");
}

const fmt = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? "-" : n.toFixed(digits));

function report(summaries: Summary[], opts: ReturnType<typeof options>) {
  const { load } = opts;
  console.log(
    `\nFlow A (${opts.flow} flow): ${load.concurrency} concurrent clients on ${Math.min(load.workers, load.concurrency)} worker threads, ` +
      `${load.durationSeconds} s measured after ${load.warmupSeconds} s warm-up, ${opts.rounds} round(s)\n`,
  );
  console.log(
    table([
      ["target", "handshakes/s", "p50 ms", "p99 ms", "errors", "gen p50", "sign p50", "submit p50", "CPU ms/hs: server", "db", "bench", "machine busy", "others"],
      ...summaries.map((s) => [
        s.target,
        fmt(s.handshakesPerSecond),
        fmt(s.p50),
        fmt(s.p99),
        String(s.errors),
        fmt(s.steps.generate),
        fmt(s.steps.sign),
        fmt(s.steps.submit),
        fmt(s.cpuMsPerHandshake.server, 2),
        fmt(s.cpuMsPerHandshake.database, 2),
        fmt(s.cpuMsPerHandshake.client, 2),
        s.machineBusy === undefined ? "-" : `${Math.round(s.machineBusy * 100)}%`,
        s.otherLoad === undefined ? "-" : `${Math.round(s.otherLoad * 100)}%`,
      ]),
    ]),
  );
  for (const s of summaries) {
    for (const [label, kinds] of [
      ["errors", s.errorKinds],
      ["warm-up errors", s.warmupErrors],
    ] as const) {
      for (const [kind, { count, sample }] of Object.entries(kinds)) console.log(`  ${s.target} ${label}: ${count} × ${kind} — e.g. ${sample}`);
    }
  }
  const disturbed = summaries.filter((s) => (s.otherLoad ?? 0) > 0.1);
  if (disturbed.length > 0) {
    console.log(
      `\nwarning: other processes used ${disturbed.map((s) => `${Math.round(s.otherLoad! * 100)}% of the machine during ${s.target}`).join(", ")};` +
        `\nthe figures are disturbed: rerun on a quiet machine${opts.rounds === 1 ? ", or with --rounds 3 to interleave the targets" : ""}` +
        " (the CPU ms per handshake are the steadier figures).",
    );
  }
  const ref = summaries.find((s) => s.target === "reference");
  const kf = summaries.find((s) => s.target === "keyfob");
  if (!ref || !kf) return undefined;
  const ratio = kf.handshakesPerSecond / ref.handshakesPerSecond;
  const met = ratio >= TARGET_RATIO && kf.errors === 0;
  console.log(
    `\nKeyfob / reference: ${ratio.toFixed(2)} of the handshakes/s` +
      (kf.cpuMsPerHandshake.server !== undefined && ref.cpuMsPerHandshake.server
        ? `; ${((kf.cpuMsPerHandshake.server + (kf.cpuMsPerHandshake.database ?? 0)) / ref.cpuMsPerHandshake.server).toFixed(1)}× the server+db CPU per handshake`
        : "") +
      `\nTarget: ≥ ${TARGET_RATIO.toFixed(2)} with no errors at ${load.concurrency} clients: ${met ? "MET" : "NOT MET"}`,
  );
  return { ratio, met };
}

// ---------------------------------------------------------------- main

async function main() {
  const opts = options();
  const withKeyfob = opts.targets.includes("keyfob");
  if (withKeyfob) await checkReachable(opts.url);

  const registration = await register(opts.flow, withKeyfob);
  let reference: { url: string; child: ChildProcess } | undefined;
  try {
    const flowTarget = (url: string): FlowTarget => ({
      url,
      clientId: registration.clientId,
      domain: DOMAIN,
      address: registration.address,
      scope: "openid email",
    });
    const targets: { name: "reference" | "keyfob"; target: FlowTarget; pids: { server?: number; database?: number } }[] = [];
    if (opts.targets.includes("reference")) {
      reference = await startReference(registration);
      targets.push({ name: "reference", target: flowTarget(reference.url), pids: { server: reference.child.pid } });
    }
    if (withKeyfob) {
      const url = new URL(opts.url);
      const local = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
      const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
      if (url.protocol !== "http:") throw new BenchError("the bench speaks plain http: point KEYFOB_URL at the server's http port");
      targets.push({
        name: "keyfob",
        target: flowTarget(opts.url),
        pids: { server: local ? findListener(port) : undefined, database: registration.databasePort ? findListener(registration.databasePort) : undefined },
      });
    }
    for (const t of targets) await preflight(t.name, t.target, registration.privateKey);

    const results = new Map<string, PhaseResult[]>();
    for (let round = 1; round <= opts.rounds; round++) {
      for (const t of targets) {
        process.stdout.write(`round ${round}/${opts.rounds}: ${t.name} (${t.target.url}) … `);
        const result = await runPhase(t.target, registration.privateKey, opts.load, t.pids);
        console.log(`${(result.handshakes / result.seconds).toFixed(1)} handshakes/s`);
        results.set(t.name, [...(results.get(t.name) ?? []), result]);
      }
    }
    const summaries = targets.map((t) => summarize(t.name, combine(results.get(t.name)!)));
    const outcome = report(summaries, opts);
    if (opts.json) {
      await writeFile(
        opts.json,
        JSON.stringify({ date: new Date().toISOString(), options: opts, ratio: outcome?.ratio, targets: summaries }, null, 2) + "\n",
      );
      console.log(`figures written to ${opts.json}`);
    }
    if (opts.check && (summaries.some((s) => s.errors > 0) || (outcome && !outcome.met))) process.exitCode = 1;
  } finally {
    reference?.child.kill("SIGTERM");
    await registration.cleanup();
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error) => {
    if (error instanceof BenchError || error instanceof ConfigError) console.error(error.message);
    else console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
