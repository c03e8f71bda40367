import { normalizeClientId } from "../clients/client-id";
import type { Keyfob } from "../keyfob";
import { checkDPoPProof, requireProofFor } from "../oauth/dpop";
import { invalidClient, invalidGrant, OAuthError } from "../oauth/errors";
import { opaqueDigest } from "../oauth/opaque";
import { required } from "../oauth/params";
import type { Scope } from "../oauth/scope";
import { countAccepted, recoverClaimant, verifySignature } from "../siwe/signature";
import type { SigningAlg, TokenRecord } from "../store/contract";
import { issueTokens, newAccessTokenId, tokenLifetimes, type Issued } from "../tokens/issue";
import type { Address } from "viem";
import type { ProtocolRequest } from "../http/request";

/**
 * Flow A, step 2 (`/auth/web3/submit_challenge`): checks the signed challenge, then consumes its
 * state and records the token with its audit event (for `caller`) in one statement, so that of
 * concurrent submissions exactly one gets tokens, and none without its audit record. On the
 * instance that issued the challenge, the message comes from memory (lib/siwe/issued-challenges.ts)
 * and that statement is the only one; a submission it refuses is then checked again against the
 * stored challenge, whose checks say what failed, in the order they always have.
 *
 * With a DPoP proof (RFC 9449) the access token is bound to its key (`cnf.jkt`, token_type DPoP):
 * a stolen token is then worthless without the key. Without one the answer is what Flow A's
 * clients have always had, unless an admin requires DPoP of the client.
 */
export async function submitChallenge(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys" | "macKeys" | "challenges" | "signatures">,
  { http, params, caller }: ProtocolRequest,
): Promise<Issued> {
  const { config, store } = keyfob;
  const grantType = required(params, "grant_type");
  if (grantType !== "authorization_code") {
    throw new OAuthError("unsupported_grant_type", "grant_type must be authorization_code");
  }
  const clientId = normalizeClientId(required(params, "client_id"));
  const state = required(params, "state");
  const domain = required(params, "domain");
  const signature = required(params, "signature");
  const proof = await checkDPoPProof(keyfob, http, `${config.issuerUrl}/auth/web3/submit_challenge`);

  const stateHash = opaqueDigest(state);
  const now = keyfob.clock.now();
  const issued = keyfob.challenges.take(stateHash, now);
  if (issued && issued.clientId === clientId && issued.domain === domain) {
    // Issued here: the message is known, and the statement checks what store.challenges.find's row would show.
    const claimant = await recoverClaimant(issued.message, issued.address as Address, signature, clientId, keyfob.signatures.recover);
    if (claimant) {
      const client = { id: clientId, signingAlg: issued.signingAlg };
      const tokens = await issue(keyfob, client, issued.address as Address, issued, proof?.jkt);
      const holds = { signer: claimant.kind === "signer" ? claimant.key : undefined, proven: proof !== undefined };
      if (await store.challenges.consume(stateHash, tokens.record, caller, holds, now)) {
        countAccepted(claimant.kind);
        return tokens.issued;
      }
    }
    // A check failed: the stored challenge says which.
  }

  const challenge = await store.challenges.find(stateHash, now);
  if (!challenge) throw invalidGrant("unknown state");
  if (challenge.clientId !== clientId) throw invalidGrant("the state was issued to another client");
  if (challenge.domain !== domain) throw invalidGrant("the state was issued for another domain");
  if (!challenge.clientEnabled) throw invalidClient("unknown or disabled client");
  requireProofFor(challenge, proof);
  if (challenge.accountBlocked) throw invalidGrant("this account is blocked");
  if (challenge.usedAt) throw invalidGrant("the state has already been used");
  if (challenge.expiresAt <= now) throw invalidGrant("the state has expired");

  const address = challenge.address as Address;
  await verifySignature(
    {
      message: challenge.message,
      address,
      signature,
      client: { id: clientId, isSigner: async (signer) => challenge.signers.includes(signer) },
    },
    keyfob.signatures,
  );

  // Signed before the state is consumed; released only if this request is the one that consumes it.
  const tokens = await issue(
    keyfob,
    { id: clientId, signingAlg: challenge.idTokenSignedResponseAlg },
    address,
    { scope: challenge.scope, nonce: challenge.nonce ?? undefined },
    proof?.jkt,
  );
  const consumed = await store.challenges.consume(stateHash, tokens.record, caller, { proven: proof !== undefined }, now);
  if (!consumed) throw invalidGrant("the state has already been used");
  return tokens.issued;
}

/** Flow A's tokens for `address`, and their record for the statement that consumes the state. */
async function issue(
  { keys, config, clock }: Pick<Keyfob, "config" | "clock" | "keys">,
  client: { id: string; signingAlg: SigningAlg },
  address: Address,
  challenge: { scope: string; nonce?: string },
  jkt: string | undefined,
): Promise<{ issued: Issued; record: TokenRecord }> {
  const lifetimes = tokenLifetimes(config);
  const { response, jti, expiresAt } = await issueTokens(
    keys,
    config.issuerUrl,
    lifetimes,
    {
      clientId: client.id,
      signingAlg: client.signingAlg,
      userId: address,
      connector: "web3",
      scope: challenge.scope.split(" ") as Scope[],
      ethereumAddress: address,
      nonce: challenge.nonce,
      emailVerified: false,
      jkt,
    },
    newAccessTokenId(lifetimes, clock.now().getTime()),
  );
  return {
    issued: { response, flow: "wallet_signature", connector: "web3" },
    record: { jti, userId: address, connector: "web3", scope: challenge.scope, expiresAt },
  };
}
