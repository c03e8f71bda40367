/**
 * Drives one target with `concurrency` virtual clients spread over worker threads (so client-side
 * signing and HTTP parsing do not queue behind one event loop), for a warm-up then a measured
 * window, and accounts the CPU the server, its database, its chain node and the load generator
 * used meanwhile, and the server's resident memory.
 */
import { Worker } from "node:worker_threads";
import type { Hex } from "viem";
import type { ErrorSample, Schedule, WorkerInput, WorkerResult } from "./client-worker";
import type { FlowTarget, TokenTarget, VehicleTarget } from "./flow";
import { machineCpuMs, rssBytes, treeCpuMs } from "./procstat";

export type LoadOptions = {
  concurrency: number;
  workers: number;
  warmupSeconds: number;
  durationSeconds: number;
};

/** What the virtual clients do: Flow A handshakes, code exchanges with pre-minted codes, or vehicle token exchanges. */
export type Workload =
  | { kind: "flow-a"; target: FlowTarget; privateKey: Hex }
  | { kind: "token"; target: TokenTarget; codes: [string, string][] }
  | { kind: "vehicle"; target: VehicleTarget; subjects: string[]; resources: string[] };

/** The processes whose CPU a target is charged: the server's tree, its PostgreSQL, the chain node it reads. */
export type TargetPids = { server?: number; database?: number; chain?: number };

/** The workers' results merged, with the phase's length, CPU use and the server's peak memory. */
export type PhaseResult = WorkerResult & {
  operations: number;
  seconds: number;
  /** CPU milliseconds used during the measured window (undefined when /proc is not available). */
  cpu: { server?: number; database?: number; chain?: number; client: number; machineBusy?: number; machineTotal?: number };
  /** Highest resident memory of the server process seen during the phase (warm-up included), in bytes. */
  peakRss?: number;
  /** The measured windows on the monotonic clock in µs (a CPU profile's clock), for bench/cpuprofile-summary.ts. */
  windows: [number, number][];
};

const WORKER_ENTRY = new URL("./worker-entry.mjs", import.meta.url);
const RSS_SAMPLE_MS = 250;

export async function runPhase(workload: Workload, options: LoadOptions, pids: TargetPids): Promise<PhaseResult> {
  const workerCount = Math.max(1, Math.min(options.workers, options.concurrency));
  let codeOffset = 0;
  const workers = Array.from({ length: workerCount }, (_, i) => {
    // Spread the clients as evenly as possible: 16 over 3 workers gives 6, 5, 5; codes in proportion.
    const clients = Math.floor(options.concurrency / workerCount) + (i < options.concurrency % workerCount ? 1 : 0);
    let input: WorkerInput;
    if (workload.kind === "flow-a") {
      input = { kind: "flow-a", target: workload.target, privateKey: workload.privateKey, clients };
    } else if (workload.kind === "vehicle") {
      input = { ...workload, clients }; // developer tokens are exchanged again and again: every worker gets them all
    } else {
      const share = Math.floor((workload.codes.length * clients) / options.concurrency);
      input = { kind: "token", target: workload.target, codes: workload.codes.slice(codeOffset, codeOffset + share), clients };
      codeOffset += share;
    }
    return new Worker(WORKER_ENTRY, { workerData: input });
  });
  const failed = new Promise<never>((_, reject) =>
    workers.forEach((w) => {
      w.once("error", (error) => reject(new Error(`load worker failed: ${error.message}`)));
    }),
  );
  let peakRss: number | undefined;
  const sampleRss = () => {
    const rss = rssBytes(pids.server);
    if (rss !== undefined) peakRss = Math.max(peakRss ?? 0, rss);
  };
  const rssTimer = setInterval(sampleRss, RSS_SAMPLE_MS);
  try {
    await Promise.race([Promise.all(workers.map((w) => new Promise((resolve) => w.once("message", resolve)))), failed]);

    const from = Date.now() + 50 + options.warmupSeconds * 1000;
    const until = from + options.durationSeconds * 1000;
    const monotonicOffsetUs = Number(process.hrtime.bigint() / 1000n) - Date.now() * 1000;
    const schedule: Schedule = { from, until };
    const results = workers.map((w) => new Promise<WorkerResult>((resolve) => w.once("message", resolve)));
    for (const w of workers) w.postMessage(schedule);

    const sample = () => ({
      server: treeCpuMs(pids.server),
      database: treeCpuMs(pids.database),
      chain: treeCpuMs(pids.chain),
      client: cpuMs(),
      machine: machineCpuMs(),
    });
    await sleepUntil(from);
    const start = sample();
    await sleepUntil(until);
    const end = sample();
    sampleRss();
    const all = await Promise.race([Promise.all(results), failed]);

    const merged: PhaseResult = {
      operations: 0,
      seconds: options.durationSeconds,
      total: [],
      steps: {},
      errors: {},
      warmupErrors: {},
      warmupOperations: 0,
      exhausted: false,
      cpu: {
        server: diff(start.server, end.server),
        database: diff(start.database, end.database),
        chain: diff(start.chain, end.chain),
        client: end.client - start.client,
        machineBusy: diff(start.machine?.busy, end.machine?.busy),
        machineTotal: diff(start.machine?.total, end.machine?.total),
      },
      peakRss,
      windows: [[from * 1000 + monotonicOffsetUs, until * 1000 + monotonicOffsetUs]],
    };
    for (const r of all) mergeInto(merged, r);
    merged.operations = merged.total.length;
    return merged;
  } finally {
    clearInterval(rssTimer);
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Combines the results of several rounds against one target. */
export function combine(results: PhaseResult[]): PhaseResult {
  const [first, ...rest] = results;
  const out: PhaseResult = structuredClone(first);
  for (const r of rest) {
    mergeInto(out, r);
    out.operations += r.operations;
    out.seconds += r.seconds;
    for (const key of ["server", "database", "chain", "machineBusy", "machineTotal"] as const) {
      out.cpu[key] = out.cpu[key] === undefined || r.cpu[key] === undefined ? undefined : out.cpu[key]! + r.cpu[key]!;
    }
    out.cpu.client += r.cpu.client;
    out.peakRss = r.peakRss === undefined ? out.peakRss : Math.max(out.peakRss ?? 0, r.peakRss);
    out.windows.push(...r.windows);
  }
  return out;
}

function mergeInto(into: WorkerResult, from: WorkerResult) {
  // Loops rather than push(...spread): a long run has more values than a call takes arguments.
  for (const ms of from.total) into.total.push(ms);
  for (const [step, values] of Object.entries(from.steps)) {
    into.steps[step] ??= [];
    const list = into.steps[step];
    for (const ms of values) list.push(ms);
  }
  mergeErrors(into.errors, from.errors);
  mergeErrors(into.warmupErrors, from.warmupErrors);
  into.warmupOperations += from.warmupOperations;
  into.exhausted ||= from.exhausted;
}

function mergeErrors(into: Record<string, ErrorSample>, from: Record<string, ErrorSample>) {
  for (const [kind, { count, sample }] of Object.entries(from)) {
    into[kind] ??= { count: 0, sample };
    into[kind].count += count;
  }
}

function cpuMs(): number {
  const { user, system } = process.cpuUsage(); // the whole process: main thread and workers
  return (user + system) / 1000;
}

function diff(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : b - a;
}

function sleepUntil(time: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, time - Date.now())));
}
