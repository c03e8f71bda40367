import { utc, type Connection } from "./connection";
import type { DpopProofStore } from "./contract";

/**
 * Single-use JWTs seen, so that a replay is refused on every instance: DPoP proofs (dpop_proofs,
 * lib/oauth/dpop.ts) and client assertions (client_assertions, lib/oauth/client-assertion.ts).
 */
export function dpopProofStatements(connection: Connection): DpopProofStore {
  return seenOnce(connection, "keyfob_record_dpop_proof", "INSERT INTO dpop_proofs (proof_hash, expires_at) VALUES ($1, $2)");
}

export function clientAssertionStatements(connection: Connection): DpopProofStore {
  return seenOnce(connection, "keyfob_record_client_assertion", "INSERT INTO client_assertions (jti_hash, expires_at) VALUES ($1, $2)");
}

/** A named prepared statement; ON CONFLICT DO NOTHING on the digest's primary key: a replay inserts no row. */
function seenOnce({ pool }: Connection, name: string, insert: string): DpopProofStore {
  return {
    async record(hash, expiresAt) {
      const { rowCount } = await pool.query({ name, text: `${insert} ON CONFLICT DO NOTHING`, values: [hash, utc(expiresAt)] });
      return rowCount === 1;
    },
  };
}
