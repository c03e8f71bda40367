import type { Keyfob } from "./keyfob";

export type Readiness = { ready: boolean; checks: { database: "ok" | "failed"; signing_keys: "ok" | "failed"; shutting_down: boolean } };

/** How long a readiness probe waits for the database before calling it unreachable. */
const DATABASE_CHECK_MS = 2_000;

/**
 * Readiness for load balancers and Kubernetes: the database answers, a signing key is loaded (and
 * so tokens can be issued), and the process is not shutting down.
 */
export async function readiness(keyfob: Pick<Keyfob, "store" | "keys">, shuttingDown: boolean): Promise<Readiness> {
  const [database, signingKeys] = await Promise.all([
    withTimeout(keyfob.store.ping(), DATABASE_CHECK_MS).then(ok, failed),
    withTimeout(keyfob.keys.signingKey(), DATABASE_CHECK_MS).then(ok, failed),
  ]);
  return {
    ready: database === "ok" && signingKeys === "ok" && !shuttingDown,
    checks: { database, signing_keys: signingKeys, shutting_down: shuttingDown },
  };
}

const ok = () => "ok" as const;
const failed = () => "failed" as const;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("timed out")), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
