/**
 * Drives one target with `concurrency` virtual clients spread over worker threads (so client-side
 * signing and HTTP parsing do not queue behind one event loop), for a warm-up then a measured
 * window, and accounts the CPU the server, its database and the load generator used meanwhile.
 */
import { Worker } from "node:worker_threads";
import type { Hex } from "viem";
import type { ErrorSample, Schedule, WorkerInput, WorkerResult } from "./client-worker";
import type { FlowTarget } from "./flow";
import { machineCpuMs, treeCpuMs } from "./procstat";

export type LoadOptions = {
  concurrency: number;
  workers: number;
  warmupSeconds: number;
  durationSeconds: number;
};

/** The workers' results merged, with the phase's length and CPU use. */
export type PhaseResult = WorkerResult & {
  handshakes: number;
  seconds: number;
  /** CPU milliseconds used during the measured window (undefined when /proc is not available). */
  cpu: { server?: number; database?: number; client: number; machineBusy?: number; machineTotal?: number };
};

const WORKER_ENTRY = new URL("./worker-entry.mjs", import.meta.url);

export async function runPhase(
  target: FlowTarget,
  privateKey: Hex,
  options: LoadOptions,
  pids: { server?: number; database?: number },
): Promise<PhaseResult> {
  const workerCount = Math.max(1, Math.min(options.workers, options.concurrency));
  const workers = Array.from({ length: workerCount }, (_, i) => {
    // Spread the clients as evenly as possible: 16 over 3 workers gives 6, 5, 5.
    const clients = Math.floor(options.concurrency / workerCount) + (i < options.concurrency % workerCount ? 1 : 0);
    const input: WorkerInput = { target, privateKey, clients };
    return new Worker(WORKER_ENTRY, { workerData: input });
  });
  const failed = new Promise<never>((_, reject) =>
    workers.forEach((w) => w.once("error", (error) => reject(new Error(`load worker failed: ${error.message}`)))),
  );
  try {
    await Promise.race([Promise.all(workers.map((w) => new Promise((resolve) => w.once("message", resolve)))), failed]);

    const from = Date.now() + 50 + options.warmupSeconds * 1000;
    const until = from + options.durationSeconds * 1000;
    const schedule: Schedule = { from, until };
    const results = workers.map((w) => new Promise<WorkerResult>((resolve) => w.once("message", resolve)));
    workers.forEach((w) => w.postMessage(schedule));

    const sample = () => ({ server: treeCpuMs(pids.server), database: treeCpuMs(pids.database), client: cpuMs(), machine: machineCpuMs() });
    await sleepUntil(from);
    const start = sample();
    await sleepUntil(until);
    const end = sample();
    const all = await Promise.race([Promise.all(results), failed]);

    const merged: PhaseResult = {
      handshakes: 0,
      seconds: options.durationSeconds,
      total: [],
      generate: [],
      sign: [],
      submit: [],
      errors: {},
      warmupErrors: {},
      warmupHandshakes: 0,
      cpu: {
        server: diff(start.server, end.server),
        database: diff(start.database, end.database),
        client: end.client - start.client,
        machineBusy: diff(start.machine?.busy, end.machine?.busy),
        machineTotal: diff(start.machine?.total, end.machine?.total),
      },
    };
    for (const r of all) {
      merged.total.push(...r.total);
      merged.generate.push(...r.generate);
      merged.sign.push(...r.sign);
      merged.submit.push(...r.submit);
      mergeErrors(merged.errors, r.errors);
      mergeErrors(merged.warmupErrors, r.warmupErrors);
      merged.warmupHandshakes += r.warmupHandshakes;
    }
    merged.handshakes = merged.total.length;
    return merged;
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Combines the results of several rounds against one target. */
export function combine(results: PhaseResult[]): PhaseResult {
  const [first, ...rest] = results;
  const out: PhaseResult = structuredClone(first);
  for (const r of rest) {
    out.handshakes += r.handshakes;
    out.seconds += r.seconds;
    out.total.push(...r.total);
    out.generate.push(...r.generate);
    out.sign.push(...r.sign);
    out.submit.push(...r.submit);
    mergeErrors(out.errors, r.errors);
    mergeErrors(out.warmupErrors, r.warmupErrors);
    out.warmupHandshakes += r.warmupHandshakes;
    for (const key of ["server", "database", "machineBusy", "machineTotal"] as const) {
      out.cpu[key] = out.cpu[key] === undefined || r.cpu[key] === undefined ? undefined : out.cpu[key]! + r.cpu[key]!;
    }
    out.cpu.client += r.cpu.client;
  }
  return out;
}

function mergeErrors(into: Record<string, ErrorSample>, from: Record<string, ErrorSample>) {
  for (const [kind, { count, sample }] of Object.entries(from)) {
    const entry = (into[kind] ??= { count: 0, sample });
    entry.count += count;
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
