import { utc, type Connection } from "./connection";
import type { DpopProofStore } from "./contract";

/** DPoP proofs seen (dpop_proofs), so that a replay is refused on every instance (lib/oauth/dpop.ts). */
export function dpopProofStatements({ pool }: Connection): DpopProofStore {
  return {
    /** A named prepared statement on every request with a proof; ON CONFLICT DO NOTHING: a replay inserts no row. */
    async record(proofHash, expiresAt) {
      const { rowCount } = await pool.query({
        name: "keyfob_record_dpop_proof",
        text: "INSERT INTO dpop_proofs (proof_hash, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        values: [proofHash, utc(expiresAt)],
      });
      return rowCount === 1;
    },
  };
}
