/**
 * Keyfob as the bench runs it: a database of its own (an embedded PostgreSQL under .data/bench, or
 * DATABASE_URL), and `npm run serve` started as a newcomer would, timed from the spawn to its first
 * answers. Used by bench/run.ts.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { readOrCreate, startEmbeddedPostgres } from "../lib/db/embedded";
import { migrateDatabase } from "../lib/db/migrate";
import { freePort } from "../scripts/free-port";
import { findListener } from "./procstat";

export const ROOT = path.resolve(import.meta.dirname, "..");

export type BenchDatabase = { url: string; secret: string; port?: number; stop(): Promise<void> };

/**
 * The database Keyfob runs on during the bench: DATABASE_URL (with KEYFOB_SECRET) when set, else an
 * embedded PostgreSQL kept under .data/bench between runs (a first run initialises it). Migrated.
 */
export async function benchDatabase(): Promise<BenchDatabase> {
  const env = process.env;
  if (env.DATABASE_URL) {
    if (!env.KEYFOB_SECRET) throw new Error("KEYFOB_SECRET must be set with DATABASE_URL (the bench's Keyfob needs it)");
    await migrateDatabase(env.DATABASE_URL);
    const url = new URL(env.DATABASE_URL);
    const local = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
    return { url: env.DATABASE_URL, secret: env.KEYFOB_SECRET, port: local ? Number(url.port || 5432) : undefined, stop: async () => {} };
  }
  const dir = path.join(ROOT, ".data", "bench");
  // A fixed port: a database left running by an interrupted run is found and used again.
  const port = Number(env.BENCH_POSTGRES_PORT ?? 54398);
  const embedded = await startEmbeddedPostgres(path.join(dir, "database"), port);
  await migrateDatabase(embedded.url);
  const secret = await readOrCreate(path.join(dir, "secret"), () => randomBytes(32).toString("base64url"));
  return { url: embedded.url, secret, port, stop: embedded.stop };
}

/** Times from the spawn of `npm run serve`, in ms. */
export type StartupTimes = {
  /** The first answer of any protocol endpoint (the discovery document, 200). */
  firstAnswer: number;
  /** /healthz/ready answers 200: database reachable, a signing key loaded. */
  ready: number;
  /** A hosted page (/auth/error, rendered by Next.js) answers 200. */
  firstPage: number;
};

export type RunningKeyfob = { url: string; port: number; pid?: number; startup: StartupTimes; stop(): Promise<void> };

/**
 * Starts `npm run serve` (its own process group) on a free port with `env` added to ours, and waits
 * until it serves discovery, readiness and a page.
 */
export async function startKeyfob(
  env: Record<string, string>,
  options: { cpuProfileDir?: string; timeoutMs?: number } = {},
): Promise<RunningKeyfob> {
  const port = await freePort();
  const url = `http://localhost:${port}`;
  const started = performance.now();
  // What `npm run serve` runs, with its flags, when profiling (node refuses --cpu-prof in NODE_OPTIONS).
  const [command, args] = options.cpuProfileDir
    ? [process.execPath, ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`, ...serveScript().slice(1)]]
    : [process.platform === "win32" ? "npm.cmd" : "npm", ["run", "--silent", "serve"]];
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
    env: {
      ...process.env,
      PORT: String(port),
      ISSUER_URL: url,
      KEYFOB_LOG: process.env.KEYFOB_LOG ?? "warn",
      NEXT_TELEMETRY_DISABLED: "1",
      ...env,
    },
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const stop = () => stopGroup(child, exited);
  try {
    const deadline = started + (options.timeoutMs ?? 120_000);
    const at = async (pathname: string) => {
      for (;;) {
        if ((await status(`${url}${pathname}`)) === 200) return performance.now() - started;
        if (child.exitCode !== null) throw new Error(`Keyfob exited (code ${child.exitCode}) before answering:\n${stderr.trim()}`);
        if (performance.now() > deadline)
          throw new Error(`Keyfob did not answer ${pathname} within ${options.timeoutMs ?? 120_000} ms:\n${stderr.trim()}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    const firstAnswer = await at("/.well-known/openid-configuration");
    const ready = await at("/healthz/ready");
    const firstPage = await at("/auth/error");
    return { url, port, pid: findListener(port), startup: { firstAnswer, ready, firstPage }, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** SIGTERM to the process group (npm, and the server under it), then SIGKILL after 15 s. */
async function stopGroup(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }, 15_000);
  await exited;
  // npm may exit before the server it started: wait until nothing of the group is left.
  for (let i = 0; i < 1500 && groupAlive(child.pid); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  clearTimeout(timer);
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The status of a GET, or 0 when nothing answers. */
function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, timeout: 2_000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("timeout", () => request.destroy());
    request.on("error", () => resolve(0));
  });
}

/** package.json's `serve` script as words: `node`, its flags, the launcher. */
function serveScript(): string[] {
  const { scripts } = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: { serve: string } };
  return scripts.serve.split(/\s+/);
}
