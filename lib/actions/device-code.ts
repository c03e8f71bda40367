import type { Keyfob } from "../keyfob";
import { refuseChangedClient } from "../oauth/client-auth";
import { requireProofFor } from "../oauth/dpop";
import { invalidGrant, OAuthError } from "../oauth/errors";
import { isOpaque, opaqueDigest } from "../oauth/opaque";
import type { Issued } from "../tokens/issue";
import { requireDeviceFlow } from "./device-authorization";
import { grantRedemption, issueGrant } from "./exchange-code";
import { grant, type GrantParams, type GrantRequest } from "./grant";

/** The grant type of the device flow's polls (RFC 8628 3.4). */
export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/**
 * `POST /token`, grant_type=urn:ietf:params:oauth:grant-type:device_code (RFC 8628 3.4, 3.5): the
 * device's poll. Each poll is recorded on the device authorization in PostgreSQL (so the interval is
 * kept across instances): authorization_pending until the user approves, slow_down (and 5 more
 * seconds of interval) for a poll sooner than the interval, access_denied when the user declined,
 * expired_token once the code expired. An approved code is used, its tokens recorded with their
 * audit event, in one statement before they are signed: of concurrent polls exactly one gets tokens, the others
 * invalid_grant, as any later poll. Blocking or deleting the account, or ending the login session
 * that approved it, withdraws an approval the device has not redeemed (access_denied).
 */
export const deviceCode = grant({ required: ["device_code"], handle: pollDeviceCode });

async function pollDeviceCode(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys">,
  { client, params, caller, proof }: GrantRequest<GrantParams<"device_code", never>>,
): Promise<Issued> {
  const { store } = keyfob;
  const code = params.device_code;
  await requireDeviceFlow(keyfob, client);
  requireProofFor(client, proof);
  const deviceCodeHash = opaqueDigest(code);
  const now = keyfob.clock.now();
  const polled = isOpaque(code) ? await store.deviceAuthorizations.poll(deviceCodeHash, now) : undefined;
  if (!polled || polled.clientId !== client.id) throw invalidGrant("unknown device code");
  if (polled.usedAt) throw invalidGrant("the device code has already been used");
  if (polled.expiresAt <= now) throw new OAuthError("expired_token", "the device code has expired; start again");
  // A token endpoint error is 400 (RFC 6749 5.2, RFC 8628 3.5), not the authorization endpoint's 403.
  if (polled.status === "denied") throw new OAuthError("access_denied", "the authorization was declined or withdrawn", 400);
  if (polled.status === "pending") {
    if (polled.tooSoon) throw new OAuthError("slow_down", `polling too often; wait ${polled.interval} seconds between polls`);
    throw new OAuthError("authorization_pending", "the user has not approved the authorization yet");
  }
  const redemption = grantRedemption(keyfob, client, proof);
  const grant = await store.deviceAuthorizations.redeem(deviceCodeHash, redemption, caller, redemption.now);
  if (!grant) {
    await refuseChangedClient(store, client);
    // Used meanwhile by a concurrent poll, or withdrawn: its account blocked or deleted, its session ended.
    throw invalidGrant("the device code has already been used or its authorization was withdrawn");
  }
  const response = await issueGrant(keyfob, client, redemption, grant);
  return { response, flow: "device_code", connector: grant.connector };
}
