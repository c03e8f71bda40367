import { utc, type Connection } from "./connection";

/** DPoP proofs seen (dpop_proofs), so that a replay is refused on every instance (lib/oauth/dpop.ts). */
export function dpopProofStatements({ pool }: Connection) {
  return {
    /**
     * Records a proof until `expiresAt`: false when it was recorded before (a replay). One
     * statement on every request with a proof, as a named prepared statement.
     */
    async record(proofHash: string, expiresAt: Date): Promise<boolean> {
      const { rowCount } = await pool.query({
        name: "keyfob_record_dpop_proof",
        text: "INSERT INTO dpop_proofs (proof_hash, expires_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        values: [proofHash, utc(expiresAt)],
      });
      return rowCount === 1;
    },
  };
}
