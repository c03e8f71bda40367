import { Worker } from "node:worker_threads";
import { recoverMessageAddress, type Address, type Hex } from "viem";

/** Recovers the address that signed `message` (EIP-191), or undefined when the signature is not a valid one. */
export type Recover = (message: string, signature: Hex) => Promise<Address | undefined>;

/** Recovery on the calling thread. */
export const recoverInThread: Recover = (message, signature) => recoverMessageAddress({ message, signature }).catch(() => undefined);

/** Recovery that can release its resources (worker threads). */
export type Recovery = Recover & { close(): Promise<void> };

/**
 * Recovery on `threads` worker threads: viem's pure-JS secp256k1 takes a few ms a call, so the
 * event loop keeps serving requests meanwhile and the other cores share the work. The workers start
 * on the first call (a CLI never pays for them) and never keep the process alive. The worker is
 * plain CommonJS evaluated from a string, so it runs the same under Next's bundler, tsx and vitest.
 */
export function createRecovery(threads: number): Recovery {
  if (threads === 0) return Object.assign((message: string, signature: Hex) => recoverInThread(message, signature), { close: async () => {} });
  const pending = new Map<number, (address: Address | undefined) => void>();
  let workers: Worker[] | undefined;
  const start = () =>
    Array.from({ length: threads }, () => {
      const worker = new Worker(WORKER_SOURCE, { eval: true });
      worker.on("message", ({ id, address }: { id: number; address: Address | null }) => {
        pending.get(id)?.(address ?? undefined);
        pending.delete(id);
      });
      worker.unref(); // after on("message"), which would otherwise ref the worker again
      return worker;
    });
  let calls = 0;
  const recover: Recover = (message, signature) =>
    new Promise((resolve) => {
      const id = calls++;
      pending.set(id, resolve);
      workers ??= start();
      workers[id % workers.length].postMessage({ id, message, signature });
    });
  return Object.assign(recover, {
    async close() {
      const running = workers ?? [];
      workers = undefined;
      await Promise.all(running.map((worker) => worker.terminate()));
    },
  });
}

const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { recoverMessageAddress } = require("viem");
parentPort.on("message", ({ id, message, signature }) => {
  recoverMessageAddress({ message, signature }).then(
    (address) => parentPort.postMessage({ id, address }),
    () => parentPort.postMessage({ id, address: null }),
  );
});`;
