/**
 * A load worker (worker thread): runs `clients` virtual clients, each looping Flow A handshakes
 * back to back, and reports the handshakes completed inside the measurement window (by completion time).
 * Protocol: posts "ready" once loaded; receives a Schedule; posts a WorkerResult at the end.
 */
import { parentPort, workerData } from "node:worker_threads";
import { privateKeyToAccount } from "viem/accounts";
import type { Hex } from "viem";
import { createAgent, FlowError, handshake, type FlowTarget } from "./flow";

export type WorkerInput = { target: FlowTarget; privateKey: Hex; clients: number };
/** Absolute times (ms since the epoch): warm-up until `from`, measure until `until`. */
export type Schedule = { from: number; until: number };
export type ErrorSample = { count: number; sample: string };
export type WorkerResult = {
  /** Per completed handshake in the window, in ms. */
  total: number[];
  generate: number[];
  sign: number[];
  submit: number[];
  /** Failures by kind ("submit 400 invalid_grant", "generate network ECONNRESET"), in the window and during warm-up. */
  errors: Record<string, ErrorSample>;
  warmupErrors: Record<string, ErrorSample>;
  warmupHandshakes: number;
};

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const input = workerData as WorkerInput;
const account = privateKeyToAccount(input.privateKey);
const agent = createAgent(input.clients);
const result: WorkerResult = { total: [], generate: [], sign: [], submit: [], errors: {}, warmupErrors: {}, warmupHandshakes: 0 };

function recordError(into: Record<string, ErrorSample>, error: unknown) {
  const kind = error instanceof FlowError ? error.message.split(" (")[0] : `unexpected ${error instanceof Error ? error.name : "error"}`;
  const entry = (into[kind] ??= { count: 0, sample: error instanceof Error ? error.message : String(error) });
  entry.count++;
}

async function virtualClient({ from, until }: Schedule) {
  while (now() < until) {
    try {
      const timing = await handshake(input.target, account, agent);
      const done = now();
      if (done > until) break;
      if (done < from) {
        result.warmupHandshakes++;
        continue;
      }
      result.total.push(timing.total);
      result.generate.push(timing.generate);
      result.sign.push(timing.sign);
      result.submit.push(timing.submit);
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
