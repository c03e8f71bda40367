import pg from "pg";
import { statementBatchSize } from "../metrics";

/**
 * Group commit for the hot single-use statements (a code's redemption, a Flow A challenge's
 * storage and consumption): calls that arrive while earlier ones are with the database wait, and
 * go together as ONE execution of the statement over arrays of their values, one transaction and
 * one WAL flush for all of them. Each row is still checked and used on its own in that statement:
 * of two calls for the same code, or of calls on two instances, exactly one gets it, as before.
 * A statement's fixed cost (a socket write, a backend's wake-up, an executor start, a commit) is
 * paid once per batch. Group commit: see docs/decisions/2026-11-27-group-commit.md
 *
 * A call waits only while `inFlight` batches are already running, so a lone request goes at once.
 * A batch still running after `stalledMs` (waiting on a row lock, or on a connection that stopped
 * answering) no longer counts against `inFlight`: the calls behind it go on another connection,
 * as they did when each call had its own. When a batch of several fails with an error of the
 * statement itself (a deadlock between two batches, one row's bad value), nothing of it was
 * committed and each call runs again on its own, so that only its own error reaches it; a lost
 * connection fails them all (503).
 */
export type Batched<I, O> = (input: I) => Promise<O>;

type Waiting<I, O> = { input: I; resolve: (output: O) => void; reject: (error: unknown) => void };

export function batched<I, O>(
  statement: string,
  execute: (inputs: I[]) => Promise<O[]>,
  options: { inFlight: number; maxSize: number; stalledMs: number },
): Batched<I, O> {
  const queue: Waiting<I, O>[] = [];
  let running = 0;
  const size = statementBatchSize.labels({ statement });
  const run = (inputs: I[]) => {
    size.observe(inputs.length);
    return execute(inputs);
  };

  const flush = () => {
    while (running < options.inFlight && queue.length > 0) {
      const batch = queue.splice(0, options.maxSize);
      running++;
      let counted = true;
      const release = () => {
        if (!counted) return;
        counted = false;
        running--;
        flush();
      };
      const stalled = setTimeout(release, options.stalledMs).unref();
      settle(batch).finally(() => {
        clearTimeout(stalled);
        release();
      });
    }
  };

  const settle = async (batch: Waiting<I, O>[]) => {
    try {
      const outputs = await run(batch.map((w) => w.input));
      for (const [i, w] of batch.entries()) w.resolve(outputs[i]);
    } catch (error) {
      if (batch.length === 1 || !isStatementError(error)) for (const w of batch) w.reject(error);
      else await Promise.all(batch.map((w) => run([w.input]).then(([output]) => w.resolve(output), w.reject)));
    }
  };

  return (input) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ input, resolve, reject });
      flush();
    });
}

/**
 * An error PostgreSQL raised for the statement (a SQLSTATE), other than the connection's or the
 * server's state (classes 08, 53, 57, 58): running the rows one by one may succeed for all but one.
 */
function isStatementError(error: unknown): boolean {
  return error instanceof pg.DatabaseError && !/^(08|53|57|58)/.test(error.code ?? "");
}

/** A column of a batched statement's `req` rows: its name, its SQL type, and its value in a request. */
export type RequestColumn<R> = readonly [name: string, type: string, value: (request: R) => unknown];

/**
 * How long a batch of several waits for a row lock (`lock_timeout`) before it gives up (55P03) and
 * its calls run again one by one, each then waiting for its own rows only: one row locked by a
 * revocation under way held a whole batch for as long as the lock (3 s seen in the security
 * review), and delays only its own request so. A batch takes a few milliseconds under load.
 */
export const BATCH_LOCK_TIMEOUT = "50ms";

/**
 * Batches of a single-use statement: one at a time per statement and instance, so that the calls
 * arriving meanwhile make the next one larger; at most 64 requests in one. One at a time, not two:
 * see docs/decisions/2026-11-27-group-commit.md. A batch waits only on the rows of its own
 * requests (a code's login session under revocation, a state consumed elsewhere), as they did; one
 * that takes over 100 ms (ten times a batch's time under that load) lets the next go beside it.
 */
export const SINGLE_USE_BATCHES = { inFlight: 1, maxSize: 64, stalledMs: 100 };

/**
 * The CTE `req` of a statement over many requests: one row each (unnest of one array parameter per
 * column, $1 on), numbered from 1 in `i` in the order they came; and the parameters of a batch.
 * For a batch of several, the statement's transaction (its own, implicit) gets BATCH_LOCK_TIMEOUT:
 * `req` is read before any row lock is asked for, as every locked row is found through it. A call
 * alone keeps the session's lock_timeout (the last parameter is then null).
 */
export function requestRows<R>(columns: readonly RequestColumn<R>[]) {
  const types = columns.map(([, type], n) => `$${n + 1}::${type}[]`).join(", ");
  const lockTimeout = `$${columns.length + 1}::text`;
  return {
    cte: `req AS (SELECT r.* FROM (SELECT set_config('lock_timeout', coalesce(${lockTimeout}, current_setting('lock_timeout')), true)) AS waits,
                  unnest(${types}) WITH ORDINALITY AS r(${columns.map(([name]) => name).join(", ")}, i))`,
    values: (requests: R[]) => [...columns.map(([, , value]) => requests.map(value)), requests.length > 1 ? BATCH_LOCK_TIMEOUT : null],
  };
}

/** The rows a statement returned for its requests (each with its request's `i`), one per request in order: `none` where it returned none. */
export function byRequest<T, N>(count: number, rows: (T & { i: number | string })[], none: N): (Omit<T, "i"> | N)[] {
  const answers: (Omit<T, "i"> | N)[] = Array.from({ length: count }, () => none);
  for (const { i, ...row } of rows) answers[Number(i) - 1] = row;
  return answers;
}
