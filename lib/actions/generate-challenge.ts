import { getAddress, type Address } from "viem";
import { normalizeClientId } from "../clients/client-id";
import { addressBucket } from "../http/client-ip";
import type { Keyfob } from "../keyfob";
import { invalidClient, invalidRequest, OAuthError } from "../oauth/errors";
import { opaqueDigest, randomOpaque } from "../oauth/opaque";
import { required } from "../oauth/params";
import type { ProtocolRequest } from "../http/request";
import { parseScope } from "../oauth/scope";
import { rateLimited } from "../metrics";
import { tooManyRequests } from "../rate-limit";
import { createChallengeMessage, generateNonce } from "../siwe/challenge";

export type ChallengeResponse = { state: string; challenge: string };

/**
 * Flow A, step 1 (`/auth/web3/generate_challenge`): an EIP-4361 challenge for `address` to sign,
 * and the single-use state that redeems it. The client is checked in the statement that stores
 * the challenge (one round trip), and refused before the pending cap is. Unused challenges are
 * capped per caller (`caller.ip`, the address the request came from), which refuses only that
 * caller; none is ever pushed out to make room, since anyone may name a client or an address.
 */
export async function generateChallenge(
  { config, store, challenges, clock }: Pick<Keyfob, "config" | "clock" | "store" | "challenges">,
  { params, caller }: Pick<ProtocolRequest, "params" | "caller">,
): Promise<ChallengeResponse> {
  const clientId = normalizeClientId(required(params, "client_id"));
  const domain = required(params, "domain");
  const scope = parseScope(required(params, "scope"));
  const responseType = required(params, "response_type");
  if (responseType !== "code") {
    throw new OAuthError("unsupported_response_type", "response_type must be code");
  }
  const address = parseWalletAddress(required(params, "address"));
  const nonce = params.get("nonce");

  const state = randomOpaque();
  const now = clock.now();
  // A domain that is no URL is no registered redirect URI: the statement below stores nothing and says why.
  const challenge = URL.canParse(domain)
    ? createChallengeMessage({
        issuerUrl: config.issuerUrl,
        domain,
        address,
        chainId: config.chainId,
        nonce: generateNonce(),
        issuedAt: now,
      })
    : "";
  const stateHash = opaqueDigest(state);
  const issued = {
    clientId,
    domain,
    address,
    scope: scope.join(" "),
    nonce,
    message: challenge,
    expiresAt: new Date(now.getTime() + config.challengeTtl * 1000),
  };
  const stored = await store.challenges.insert(
    { ...issued, stateHash, ip: caller.ip ? addressBucket(caller.ip) : undefined },
    config.pendingCaps.challengesPerIp,
    now,
  );
  if (!stored.enabled) throw invalidClient("unknown or disabled client");
  if (!stored.domainRegistered) throw invalidRequest("domain is not a redirect URI registered for this client");
  if (!stored.stored) {
    rateLimited.inc({ endpoint: "generate_challenge", limit: "pending_challenges" });
    throw tooManyRequests(60, "too many unused challenges from this address; use or let them expire");
  }
  challenges.remember(stateHash, { ...issued, signingAlg: stored.signingAlg });
  return { state, challenge };
}

function parseWalletAddress(value: string): Address {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw invalidRequest("address must be a 0x-prefixed 20-byte hex address");
  return getAddress(value);
}
