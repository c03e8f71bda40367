import type { Caller } from "../audit";
import { normalizeClientId } from "../clients/client-id";
import type { Keyfob } from "../keyfob";
import { checkDPoPProof, requireProofFor } from "../oauth/dpop";
import { invalidClient, invalidGrant, OAuthError } from "../oauth/errors";
import { opaqueDigest } from "../oauth/opaque";
import { required, type Params } from "../oauth/params";
import type { Scope } from "../oauth/scope";
import { verifySignature } from "../siwe/signature";
import { issueTokens, tokenLifetimes, type Issued } from "../tokens/issue";
import type { Address } from "viem";

/**
 * Flow A, step 2 (`/auth/web3/submit_challenge`): checks the signed challenge, then consumes its
 * state and records the token with its audit event (for `caller`) in one statement, so that of
 * concurrent submissions exactly one gets tokens, and none without its audit record.
 *
 * With a DPoP proof (RFC 9449) the access token is bound to its key (`cnf.jkt`, token_type DPoP):
 * a stolen token is then worthless without the key. Without one the answer is what Flow A's
 * clients have always had, unless an admin requires DPoP of the client.
 */
export async function submitChallenge(keyfob: Keyfob, request: Request, params: Params, caller: Caller): Promise<Issued> {
  const { config, store } = keyfob;
  const grantType = required(params, "grant_type");
  if (grantType !== "authorization_code") {
    throw new OAuthError("unsupported_grant_type", "grant_type must be authorization_code");
  }
  const clientId = normalizeClientId(required(params, "client_id"));
  const state = required(params, "state");
  const domain = required(params, "domain");
  const signature = required(params, "signature");
  const proof = await checkDPoPProof(keyfob, request, `${config.issuerUrl}/auth/web3/submit_challenge`);

  const stateHash = opaqueDigest(state);
  const now = new Date();
  const challenge = await store.codes.findChallenge(stateHash, now);
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
  const scope = challenge.scope.split(" ") as Scope[];
  const { response, jti, expiresAt } = await issueTokens(keyfob.keys, config.issuerUrl, tokenLifetimes(config), {
    clientId,
    userId: address,
    connector: "web3",
    scope,
    ethereumAddress: address,
    nonce: challenge.nonce ?? undefined,
    emailVerified: false,
    jkt: proof?.jkt,
  });
  const consumed = await store.codes.consumeChallenge(
    stateHash,
    { jti, userId: address, connector: "web3", scope: challenge.scope, expiresAt },
    caller,
  );
  if (!consumed) throw invalidGrant("the state has already been used");
  return { response, flow: "wallet_signature", connector: "web3" };
}
