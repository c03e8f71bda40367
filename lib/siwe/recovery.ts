import { Worker } from "node:worker_threads";
import { recoverMessageAddress, type Address, type Hex } from "viem";

/** Recovers the address that signed `message` (EIP-191), or undefined when the signature is not a valid one. */
export type Recover = (message: string, signature: Hex) => Promise<Address | undefined>;

/** Recovery on the calling thread. */
export const recoverInThread: Recover = (message, signature) => recoverMessageAddress({ message, signature }).catch(() => undefined);

/**
 * Recovery on `threads` worker threads: viem's pure-JS secp256k1 takes a few ms a call, so the
 * event loop keeps serving requests meanwhile and the other cores share the work. The worker is
 * plain CommonJS evaluated from a string, so it runs the same under Next's bundler, tsx and vitest.
 */
export function createRecovery(threads: number): Recover {
  if (threads === 0) return recoverInThread;
  const pending = new Map<number, (address: Address | undefined) => void>();
  const workers = Array.from({ length: threads }, () => {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.unref();
    worker.on("message", ({ id, address }: { id: number; address: Address | null }) => {
      pending.get(id)?.(address ?? undefined);
      pending.delete(id);
    });
    return worker;
  });
  let calls = 0;
  return (message, signature) =>
    new Promise((resolve) => {
      const id = calls++;
      pending.set(id, resolve);
      workers[id % workers.length].postMessage({ id, message, signature });
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
