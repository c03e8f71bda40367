import type { Connection } from "./connection";

/** One hit as keyfob_rate_limit_hit counted it: whether it is within the limit, and the window's and the previous window's hits. */
export type RateLimitHitRow = { allowed: boolean; hits: number; previousHits: number };

/** Rate-limit counters (rate_limits, UNLOGGED), counted by keyfob_rate_limit_hit (a migration). */
export function limitStatements({ pool }: Connection) {
  return {
    /**
     * Counts one hit (or a lease of `hits`, all or none) on `key` at `nowSeconds` against `max` per
     * `windowSeconds`, over `shards` rows: one statement on every request that counts, as a named prepared statement (a database
     * function, since the sharded counting is more than an ON CONFLICT can say).
     */
    async hit(key: string, max: number, windowSeconds: number, shards: number, nowSeconds: number, hits = 1): Promise<RateLimitHitRow> {
      const { rows } = await pool.query<RateLimitHitRow>({
        name: "keyfob_rate_limit_hit",
        text: `SELECT allowed, hits, previous_hits AS "previousHits" FROM keyfob_rate_limit_hit($1, $2, $3, $4, $5, $6)`,
        values: [key, max, windowSeconds, shards, nowSeconds, hits],
      });
      return rows[0];
    },
  };
}
