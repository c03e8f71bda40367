/**
 * The rate-limit counter under one busy key (a client's backend, or many callers behind one
 * address): hits/s of keyfob_rate_limit_hit counting single hits (what a small budget costs each request; a large one leases them), from
 * `concurrency` connections at once, on one row (a budget in one shard), on the shards Keyfob
 * splits a large budget into, and on a key per connection (the floor: nothing shared).
 */
import pg from "pg";
import { shardsFor } from "../lib/rate-limit";

export type CounterFigure = { name: string; hitsPerSecond: number; p99Ms: number };

const LIMIT = { max: 100_000_000, windowSeconds: 60 };

export async function measureCounters(databaseUrl: string, options: { seconds: number; concurrency: number }): Promise<CounterFigure[]> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.concurrency });
  try {
    const run = async (name: string, keyOf: (connection: number) => string, shards: number): Promise<CounterFigure> => {
      const latencies: number[] = [];
      const until = performance.now() + options.seconds * 1000;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: options.concurrency }, async (_, connection) => {
          const key = keyOf(connection);
          while (performance.now() < until) {
            const sent = performance.now();
            await pool.query({
              name: "bench_rate_limit_hit",
              text: "SELECT allowed FROM keyfob_rate_limit_hit($1, $2, $3, $4, $5, 1)",
              values: [key, LIMIT.max, LIMIT.windowSeconds, shards, Date.now() / 1000],
            });
            latencies.push(performance.now() - sent);
          }
        }),
      );
      latencies.sort((a, b) => a - b);
      return {
        name,
        hitsPerSecond: latencies.length / ((performance.now() - started) / 1000),
        p99Ms: latencies[Math.floor(latencies.length * 0.99)],
      };
    };
    const run_ = `bench-${Date.now()}`;
    const figures = [
      await run("one row", () => `${run_}:one`, 1),
      await run(`${shardsFor(LIMIT)} shards (Keyfob)`, () => `${run_}:sharded`, shardsFor(LIMIT)),
      await run("a key per connection (floor)", (c) => `${run_}:own-${c}`, 1),
    ];
    await pool.query("DELETE FROM rate_limits WHERE key LIKE $1", [`${run_}:%`]);
    return figures;
  } finally {
    await pool.end();
  }
}
