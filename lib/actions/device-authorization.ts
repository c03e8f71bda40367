import { formatUserCode, newUserCode, normalizeUserCode, userCodeDigest } from "../device/user-code";
import type { Keyfob } from "../keyfob";
import type { AuthenticatedClient } from "../oauth/client-auth";
import { OAuthError } from "../oauth/errors";
import { opaqueDigest, randomOpaque } from "../oauth/opaque";
import { requestedResource } from "../oauth/resource";
import { parseScope } from "../oauth/scope";
import { Duplicate } from "../store";
import type { ProtocolRequest } from "../http/request";

/** The device authorization response (RFC 8628 3.2). */
export type DeviceAuthorizationResponse = {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
};

/**
 * `POST /device/authorization` (RFC 8628 3.1): a device code for the device to poll /token with,
 * and a user code for the user to enter at /device on another screen (or to scan, in
 * verification_uri_complete). Public clients send their client_id, confidential ones authenticate
 * as at /token; either must be allowed the grant by an admin. Without `scope`, `openid`. A `resource`
 * the client registered (RFC 8707) is the audience of the device's access tokens. When and
 * from where the device asked (its address, its User-Agent) are kept for /device to show.
 */
export async function deviceAuthorization(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  request: ProtocolRequest,
): Promise<DeviceAuthorizationResponse> {
  const { store, config } = keyfob;
  const { params, caller, http } = request;
  const client = await request.client();
  await requireDeviceFlow(keyfob, client);
  const scope = parseScope(params.get("scope") ?? "openid").join(" ");
  const resource = requestedResource(client.resources, params.get("resource")) ?? null;
  const deviceCode = randomOpaque();
  const createdAt = keyfob.clock.now();
  const expiresAt = new Date(createdAt.getTime() + config.deviceCodeTtl * 1000);
  // A user code already in use (one in 2.6·10^10 per live code) is drawn again.
  for (;;) {
    const userCode = newUserCode();
    try {
      await store.deviceAuthorizations.create({
        deviceCodeHash: opaqueDigest(deviceCode),
        userCodeHash: userCodeDigest(normalizeUserCode(userCode)!),
        clientId: client.id,
        scope,
        pollInterval: config.devicePollInterval,
        createdAt,
        expiresAt,
        requestIp: caller.ip ?? null,
        requestUserAgent: http.headers.get("user-agent")?.slice(0, 300) ?? null,
        resource,
      });
      const verificationUri = `${config.issuerUrl}/device`;
      return {
        device_code: deviceCode,
        user_code: userCode,
        verification_uri: verificationUri,
        verification_uri_complete: `${verificationUri}?user_code=${formatUserCode(normalizeUserCode(userCode)!)}`,
        expires_in: config.deviceCodeTtl,
        interval: config.devicePollInterval,
      };
    } catch (error) {
      if (!(error instanceof Duplicate)) throw error;
    }
  }
}

/** Refuses a client an admin has not allowed the device authorization grant (unauthorized_client, RFC 6749 5.2). */
export async function requireDeviceFlow({ store }: Pick<Keyfob, "store">, client: AuthenticatedClient): Promise<void> {
  if (!(await store.clients.find(client.id))?.deviceFlow)
    throw new OAuthError("unauthorized_client", "this client is not allowed the device authorization grant");
}
