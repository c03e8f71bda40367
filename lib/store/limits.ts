import type { Connection } from "./connection";
import type { RateLimitHitRow, RateLimitStore } from "./contract";

/** Rate-limit counters (rate_limits, UNLOGGED), counted by keyfob_rate_limit_hit (a migration). */
export function limitStatements({ pool }: Connection): RateLimitStore {
  return {
    /** A named prepared statement on every request that counts, calling a database function: the sharded counting is more than an ON CONFLICT can say. */
    async hit(key, max, windowSeconds, shards, nowSeconds, hits = 1) {
      const { rows } = await pool.query<RateLimitHitRow>({
        name: "keyfob_rate_limit_hit",
        text: `SELECT allowed, hits, previous_hits AS "previousHits" FROM keyfob_rate_limit_hit($1, $2, $3, $4, $5, $6)`,
        values: [key, max, windowSeconds, shards, nowSeconds, hits],
      });
      return rows[0];
    },

    /** The shards' keys as keyfob_rate_limit_hit names them. */
    async peek(key, windowSeconds, shards, nowSeconds) {
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

    async takeBack(key, windowSeconds, nowSeconds) {
      await pool.query({
        name: "keyfob_rate_limit_take_back",
        text: `UPDATE rate_limits SET hits = hits - 1 WHERE key = $1 AND "window" = floor($2::double precision / $3)::bigint AND hits > 0`,
        values: [key, nowSeconds, windowSeconds],
      });
    },
  };
}
