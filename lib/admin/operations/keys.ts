import * as registry from "../../clients/registry";
import type { Keyfob } from "../../keyfob";
import { SIGNING_ALG, type KeyRevocation, type KeyRotation, type KeyStore, type SigningAlg } from "../../keys/keystore";
import type { Admin } from "../access";
import { differences, failed } from "./audited";

/** Admin operations on the signing keys: rotating now, and revoking one in an emergency. */
/**
 * Starts a rotation (KeyStore.rotateNow) of the access set's `alg` keys; without `alg`, of every
 * alg's the access set signs with (RS256, and PS256 and ES256 once a client has used them), then of
 * the vehicle tokens' keys. Each is audited as `key.rotated` in its own transaction. Returns the
 * first's (the access set's RS256, unless `alg`).
 */
export async function rotateSigningKey(
  k: Pick<Keyfob, "keys" | "vehicleKeys" | "audit">,
  admin: Admin,
  alg?: SigningAlg,
): Promise<KeyRotation> {
  const entry = { actor: admin.label, action: "key.rotated" };
  const rotate = (keys: KeyStore, set: string) =>
    keys.rotateNow((tx, { before, after }) =>
      k.audit.writeWithin(tx, {
        ...entry,
        outcome: "success",
        detail: `${set}${
          before
            ? `a rotation was already under way (upcoming ${before}); nothing changed`
            : differences({ upcoming: before }, { upcoming: after })
        }`,
      }),
    );
  const label = (keys: KeyStore) => (keys.alg === SIGNING_ALG ? "" : `${keys.alg} keys: `);
  try {
    const chosen = alg && k.keys.sets().find((keys) => keys.alg === alg);
    if (chosen) return await rotate(chosen, label(chosen));
    const [first, ...others] = await k.keys.used();
    const rotation = await rotate(first, "");
    for (const keys of others) await rotate(keys, label(keys));
    await rotate(k.vehicleKeys, "vehicle token keys: ");
    return rotation;
  } catch (error) {
    await failed(k, entry, undefined, error);
    throw error;
  }
}

/**
 * Emergency revocation of a signing key (KeyStore.revoke): it leaves the JWKS and never signs
 * again, every token it signed is refused from the next request on every instance, and if it was
 * the current key a new one signs at once. An unknown kid is refused (field `kid`); an already
 * revoked key is left as it is and said so. Audited as `key.revoked` with the kid, in the
 * revocation's transaction.
 */
export async function revokeSigningKey(
  k: Pick<Keyfob, "keys" | "vehicleKeys" | "audit">,
  admin: Admin,
  kid: string,
): Promise<SigningKeyRevocation> {
  kid = kid.trim();
  const entry = { actor: admin.label, action: "key.revoked" };
  let result: KeyRevocation = { outcome: "unknown" };
  try {
    // The key is in one set and alg; each store revokes only its own.
    for (const keys of [...k.keys.sets(), k.vehicleKeys]) {
      result = await keys.revoke(kid, admin.label, (tx, revocation) =>
        k.audit.writeWithin(tx, {
          ...entry,
          outcome: "success",
          detail:
            revocation.outcome === "already-revoked"
              ? `${kid} (already revoked); no change`
              : `${kid}; status: ${JSON.stringify(revocation.was)} -> "revoked"${revocation.successor ? `; current: ${JSON.stringify(kid)} -> ${JSON.stringify(revocation.successor)}` : ""}`,
        }),
      );
      if (result.outcome !== "unknown") break;
    }
  } catch (error) {
    await failed(k, entry, kid, error);
    throw error;
  }
  if (result.outcome === "unknown" || result.outcome === "unpublished") {
    const refusal = new registry.RegistryError(
      "kid",
      result.outcome === "unknown"
        ? `no signing key has the kid ${kid}`
        : `signing key ${kid} retired and left the JWKS on ${result.unpublishedAt.toISOString()} (every token it signed had expired); nothing to revoke`,
      result.outcome === "unknown" ? "not_found" : "conflict",
    );
    await failed(k, entry, kid, refusal);
    throw refusal;
  }
  if (result.outcome === "already-revoked") {
    const message = `signing key ${kid} was already revoked on ${result.revokedAt.toISOString()}${result.revokedBy ? ` by ${result.revokedBy}` : ""}; nothing changed`;
    return { kid, revoked: false, message };
  }
  const message = result.successor
    ? `signing key ${kid} revoked; new key ${result.successor} signs from now`
    : `signing key ${kid} (${result.was}) revoked; the current key keeps signing`;
  return { kid, revoked: true, was: result.was, successor: result.successor, message };
}

export type SigningKeyRevocation = {
  kid: string;
  revoked: boolean;
  was?: "current" | "upcoming" | "retired";
  successor?: string;
  message: string;
};
