import { utc, type Connection } from "./connection";
import type { ChainCursorStore } from "./contract";

/** Where watchers of chain events have got to (chain_cursors), each held by one instance at a time (a lease). */
export function chainCursorStatements({ pool }: Connection): ChainCursorStore {
  return {
    async lease(name, holder, startAt, until, now) {
      const { rows } = await pool.query<{ block: string }>({
        name: "keyfob_lease_chain_cursor",
        text: `INSERT INTO chain_cursors (name, block, leased_by, lease_until) VALUES ($1, $2, $3, $4)
               ON CONFLICT (name) DO UPDATE SET leased_by = $3, lease_until = $4
               WHERE chain_cursors.leased_by = $3 OR chain_cursors.lease_until IS NULL OR chain_cursors.lease_until < $5
               RETURNING block`,
        values: [name, startAt.toString(), holder, utc(until), utc(now)],
      });
      return rows[0] === undefined ? undefined : BigInt(rows[0].block);
    },

    async advance(name, holder, block) {
      const { rowCount } = await pool.query({
        name: "keyfob_advance_chain_cursor",
        text: "UPDATE chain_cursors SET block = $3 WHERE name = $1 AND leased_by = $2 AND block < $3",
        values: [name, holder, block.toString()],
      });
      return rowCount === 1;
    },

    async release(name, holder) {
      await pool.query({
        name: "keyfob_release_chain_cursor",
        text: "UPDATE chain_cursors SET lease_until = NULL WHERE name = $1 AND leased_by = $2",
        values: [name, holder],
      });
    },
  };
}
