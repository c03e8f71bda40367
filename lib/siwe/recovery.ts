import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { getAddress, hashMessage, keccak256, recoverMessageAddress, type Address, type Hex } from "viem";

/** Recovers the address that signed `message` (EIP-191), or undefined when the signature is not a valid one. */
export type Recover = (message: string, signature: Hex) => Promise<Address | undefined>;

/** Recovery with viem's pure-JS secp256k1 on the calling thread (milliseconds a call). */
export const recoverWithViem: Recover = (message, signature) => recoverMessageAddress({ message, signature }).catch(() => undefined);

/** The part of the `secp256k1` package used here: libsecp256k1's public-key recovery. */
type Libsecp256k1 = { ecdsaRecover(signature: Uint8Array, recovery: number, hash: Uint8Array, compressed: boolean): Uint8Array };

/**
 * Recovery with libsecp256k1 (the `secp256k1` package's prebuilt addon): fast enough to run on the
 * event loop (see docs/decisions/2026-11-23-libsecp256k1-recovery.md). Undefined where the addon
 * does not load (another platform without a compiler): `secp256k1/bindings` is the addon alone,
 * where the package's main entry would fall back silently to a pure-JS curve slower than viem.
 * Accepts what viem accepts: 65 bytes, v as 27/28 or 0/1; anything else recovers nothing.
 */
export const recoverWithLibsecp256k1: Recover | undefined = (() => {
  let secp256k1: Libsecp256k1;
  try {
    secp256k1 = createRequire(import.meta.url)("secp256k1/bindings") as Libsecp256k1;
  } catch {
    return undefined;
  }
  return async (message, signature) => {
    if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return undefined;
    const bytes = Buffer.from(signature.slice(2), "hex");
    const v = bytes[64];
    const recovery = v === 0 || v === 1 ? v : v === 27 || v === 28 ? v - 27 : undefined;
    if (recovery === undefined) return undefined;
    let publicKey: Uint8Array;
    try {
      publicKey = secp256k1.ecdsaRecover(bytes.subarray(0, 64), recovery, Buffer.from(hashMessage(message).slice(2), "hex"), false);
    } catch {
      return undefined; // r or s out of range, or no point recovers
    }
    // The address: the last 20 bytes of the Keccak-256 of the uncompressed key without its 0x04 prefix.
    return getAddress(`0x${keccak256(publicKey.subarray(1)).slice(-40)}`);
  };
})();

/** The fastest recovery this process can run on the calling thread. */
export const recoverInThread: Recover = recoverWithLibsecp256k1 ?? recoverWithViem;

/** Recovery that can release its resources (worker threads). */
export type Recovery = Recover & { engine: "libsecp256k1" | "viem"; threads: number; close(): Promise<void> };

/**
 * The server's recovery. With libsecp256k1, on the event loop: a call costs less than handing it to
 * a worker thread and back, so `threads` is not used. Without it (or with `engine: "viem"`), viem
 * on `threads` worker threads: a few ms a call, so the event loop keeps serving meanwhile and the
 * other cores share the work; 0 runs viem on the event loop. The workers start on the first call (a
 * CLI never pays for them) and never keep the process alive. The worker is plain CommonJS evaluated
 * from a string, so it runs the same under Next's bundler, tsx and vitest.
 */
export function createRecovery(
  threads: number,
  engine: "libsecp256k1" | "viem" = recoverWithLibsecp256k1 ? "libsecp256k1" : "viem",
): Recovery {
  if (engine === "libsecp256k1") {
    if (!recoverWithLibsecp256k1) throw new Error("libsecp256k1 (the secp256k1 addon) could not be loaded");
    return Object.assign((message: string, signature: Hex) => recoverWithLibsecp256k1(message, signature), {
      engine,
      threads: 0,
      close: async () => {},
    });
  }
  if (threads === 0)
    return Object.assign((message: string, signature: Hex) => recoverWithViem(message, signature), {
      engine,
      threads,
      close: async () => {},
    });
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
    engine,
    threads,
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
