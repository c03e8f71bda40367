import type { Keyfob } from "../keyfob";
import { checkDPoPProof, invalidProof } from "../oauth/dpop";
import { OAuthError } from "../oauth/errors";
import { opaqueDigest, randomOpaque } from "../oauth/opaque";
import { checkAuthorizationRequest, REQUEST_URI_PREFIX } from "./authorize";
import type { ProtocolRequest } from "../http/request";

/** How long a pushed request waits for its authorization request: long enough to send the browser, short as RFC 9126 7.3 asks. */
export const PUSHED_REQUEST_LIFETIME_SECONDS = 90;

/** Client authentication's parameters: they authenticate the push and are never part of the request kept. */
const AUTHENTICATION_PARAMETERS = new Set(["client_secret"]);

/**
 * `POST /par` (RFC 9126 2): the client, authenticated as at the token endpoint, pushes an
 * authorization request; it is validated as /auth validates one (checkAuthorizationRequest), every
 * failure answered here as JSON (2.3), and kept for a short while under a single-use request_uri
 * that only this client may use at /auth. With a DPoP proof (RFC 9449 10.1) the request is bound
 * to its key as a `dpop_jkt` parameter would bind it, so the code is redeemed only with that key;
 * a `dpop_jkt` naming another key is refused.
 */
export async function pushAuthorizationRequest(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys" | "macKeys">,
  request: ProtocolRequest,
): Promise<{ request_uri: string; expires_in: number }> {
  const { params } = request;
  const client = await request.client();
  const query = new URLSearchParams();
  for (const [name, value] of params.entries()) {
    if (value !== "" && !AUTHENTICATION_PARAMETERS.has(name)) query.set(name, value);
  }
  // With Basic authentication the client_id may be left out of the body: it is the authenticated one.
  query.set("client_id", client.id);
  const proof = await checkDPoPProof(keyfob, request.http, `${keyfob.config.issuerUrl}/par`);
  if (proof) {
    const named = query.get("dpop_jkt");
    if (named !== null && named !== proof.jkt) throw invalidProof("dpop_jkt is not the thumbprint of the DPoP proof's key (RFC 9449 10.1)");
    query.set("dpop_jkt", proof.jkt);
  }
  const checked = await checkAuthorizationRequest(keyfob, query, true);
  if (checked.kind === "untrusted") throw new OAuthError("invalid_request", { code: checked.reason.code });
  if (checked.kind === "refused") throw checked.error;
  const random = randomOpaque();
  await keyfob.store.pushedRequests.create({
    requestHash: opaqueDigest(random),
    clientId: client.id,
    parameters: query.toString(),
    expiresAt: new Date(keyfob.clock.now().getTime() + PUSHED_REQUEST_LIFETIME_SECONDS * 1000),
  });
  return { request_uri: `${REQUEST_URI_PREFIX}${random}`, expires_in: PUSHED_REQUEST_LIFETIME_SECONDS };
}
