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

    /**
     * The hits on `key` (summed over its `shards`, named as keyfob_rate_limit_hit names them) in the
     * window of `nowSeconds` and the one before, without counting one: for a rule that looks at a
     * count another action keeps.
     */
    async peek(key: string, windowSeconds: number, shards: number, nowSeconds: number): Promise<Omit<RateLimitHitRow, "allowed">> {
      const keys = shards === 1 ? [key] : Array.from({ length: shards }, (_, i) => `${key}#${i}`);
      const { rows } = await pool.query<Omit<RateLimitHitRow, "allowed">>({
        name: "keyfob_rate_limit_peek",
        text: `WITH w AS (SELECT floor($2::double precision / $3)::bigint AS w)
               SELECT coalesce(sum(CASE WHEN t."window" = w.w THEN t.hits ELSE 0 END), 0)::integer AS hits,
                      coalesce(sum(CASE WHEN t."window" = w.w THEN t.previous_hits WHEN t."window" = w.w - 1 THEN t.hits ELSE 0 END), 0)::integer
                        AS "previousHits"
               FROM w LEFT JOIN rate_limits t ON t.key = ANY ($1)`,
        values: [keys, nowSeconds, windowSeconds],
      });
      return rows[0];
    },

    /** Takes back a hit counted on a one-row `key` in the window of `nowSeconds` (one that proved not to count). */
    async takeBack(key: string, windowSeconds: number, nowSeconds: number): Promise<void> {
      await pool.query({
        name: "keyfob_rate_limit_take_back",
        text: `UPDATE rate_limits SET hits = hits - 1 WHERE key = $1 AND "window" = floor($2::double precision / $3)::bigint AND hits > 0`,
        values: [key, nowSeconds, windowSeconds],
      });
    },
  };
}
