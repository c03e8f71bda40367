/**
 * A load worker (worker thread): runs `clients` virtual clients, each looping operations back to
 * back — Flow A handshakes, code exchanges at /token with the pre-minted codes it was given, or
 * vehicle token exchanges of the developer tokens it was given, round the vehicles —
 * and reports the operations completed inside the measurement window (by completion time).
 * Protocol: posts "ready" once loaded; receives a Schedule; posts a WorkerResult at the end.
 */
import { parentPort, workerData } from "node:worker_threads";
import { privateKeyToAccount } from "viem/accounts";
import type { Hex } from "viem";
import {
  createAgent,
  exchange,
  FlowError,
  handshake,
  vehicleExchange,
  type FlowTarget,
  type TokenTarget,
  type VehicleTarget,
} from "./flow";

export type WorkerInput =
  | { kind: "flow-a"; target: FlowTarget; privateKey: Hex; clients: number }
  /** `codes`: [code, PKCE verifier] pairs, each used once. */
  | { kind: "token"; target: TokenTarget; codes: [string, string][]; clients: number }
  /** `subjects`: developer tokens, each exchanged many times; `resources`: the vehicles' DIDs. */
  | { kind: "vehicle"; target: VehicleTarget; subjects: string[]; resources: string[]; clients: number };
/** Absolute times (ms since the epoch): warm-up until `from`, measure until `until`. */
export type Schedule = { from: number; until: number };
export type ErrorSample = { count: number; sample: string };
export type WorkerResult = {
  /** Per completed operation in the window, in ms. */
  total: number[];
  /** Flow A only: per step (generate, sign, submit), in ms. */
  steps: Record<string, number[]>;
  /** Failures by kind ("submit 400 invalid_grant", "token network ECONNRESET"), in the window and during warm-up. */
  errors: Record<string, ErrorSample>;
  warmupErrors: Record<string, ErrorSample>;
  warmupOperations: number;
  /** The pre-minted codes ran out before the window ended (the figures would be too low). */
  exhausted: boolean;
};

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const input = workerData as WorkerInput;
const agent = createAgent(input.clients);
const result: WorkerResult = { total: [], steps: {}, errors: {}, warmupErrors: {}, warmupOperations: 0, exhausted: false };

/** One operation; resolves with its total and per-step times, or undefined when there is nothing left to do. */
const operation: () => Promise<{ total: number; steps?: Record<string, number> } | undefined> = (() => {
  if (input.kind === "flow-a") {
    const account = privateKeyToAccount(input.privateKey);
    return async () => {
      const {
        timing: { total, ...steps },
      } = await handshake(input.target, account, agent);
      return { total, steps };
    };
  }
  let next = 0;
  if (input.kind === "vehicle") {
    const { target, subjects, resources } = input;
    return async () => {
      const i = next++;
      return { total: await vehicleExchange(target, subjects[i % subjects.length], resources[i % resources.length], agent) };
    };
  }
  return async () => {
    const pair = input.codes[next++];
    if (!pair) return undefined;
    return { total: await exchange(input.target, pair[0], pair[1], agent) };
  };
})();

function recordError(into: Record<string, ErrorSample>, error: unknown) {
  const kind = error instanceof FlowError ? error.message.split(" (")[0] : `unexpected ${error instanceof Error ? error.name : "error"}`;
  into[kind] ??= { count: 0, sample: error instanceof Error ? error.message : String(error) };
  into[kind].count++;
}

async function virtualClient({ from, until }: Schedule) {
  while (now() < until) {
    try {
      const done = await operation();
      if (!done) {
        result.exhausted = true;
        break;
      }
      const at = now();
      if (at > until) break;
      if (at < from) {
        result.warmupOperations++;
        continue;
      }
      result.total.push(done.total);
      for (const [step, ms] of Object.entries(done.steps ?? {})) {
        result.steps[step] ??= [];
        result.steps[step].push(ms);
      }
    } catch (error) {
      const at = now();
      if (at > until) break;
      recordError(at < from ? result.warmupErrors : result.errors, error);
      // A refused connection fails at once: do not spin.
      if (error instanceof FlowError && error.kind.startsWith("network")) await sleep(20);
    }
  }
}

parentPort!.once("message", async (schedule: Schedule) => {
  await Promise.all(Array.from({ length: input.clients }, () => virtualClient(schedule)));
  agent.destroy();
  parentPort!.postMessage(result);
});
parentPort!.postMessage("ready");
