/**
 * The device authorization grant (RFC 8628), driven by a standard client library (openid-client)
 * through the real route handlers: /device/authorization, then polls of /token while the user's
 * side (/device, then the hosted login) runs through lib/ (e2e/ walks it in Chromium). The polling
 * answers (authorization_pending, slow_down, access_denied, expired_token), one issuance for many
 * concurrent polls, the per-client opt-ins (the grant; offline_access on devices), user codes
 * (forgiving input, single use), what /device shows of the device's request and when it asks for the
 * code to be typed; the guessing limits are test/rate-limit.test.ts's and, across two running
 * servers, e2e/device.spec.ts's.
 */
process.env.DEVICE_POLL_INTERVAL = "1";

import * as client from "openid-client";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { createClient, rotateClientSecret, updateClient, type ClientSettings } from "@/lib/clients/registry";
import { confirmUserCode, declineUserCode, lookUpUserCode, openedFromAnotherSite } from "@/lib/device/verification";
import { CLIENT_IP_HEADER } from "@/lib/http/client-ip";
import { USER_CODE_ALPHABET } from "@/lib/device/user-code";
import { completeAuthorization, leaveInteraction } from "@/lib/interactions/interactions";
import { revokeConsent } from "@/lib/consent/grants";
import { keyfob } from "@/lib/runtime";
import { tables } from "./support/database";
import { ISSUER } from "./support/flow-a";
import { route } from "./support/routes";

const deviceAuthorizationRoute = route("/device/authorization");
const discoveryRoute = route("/.well-known/openid-configuration");
const keysRoute = route("/keys");
const tokenRoute = route("/token");
const userinfoRoute = route("/userinfo");

const routes: Record<string, (request: Request) => Promise<Response> | Response> = {
  "/.well-known/openid-configuration": () => discoveryRoute(new Request(`${ISSUER}/.well-known/openid-configuration`)),
  "/keys": () => keysRoute(new Request(`${ISSUER}/keys`)),
  "/device/authorization": deviceAuthorizationRoute,
  "/token": tokenRoute,
  "/userinfo": userinfoRoute,
};
const routeFetch = async (url: string, init?: client.CustomFetchOptions) => {
  const request = new Request(url, init as RequestInit);
  const handler = routes[new URL(request.url).pathname];
  if (!handler) throw new Error(`no route for ${url}`);
  return handler(request);
};

async function deviceClient(options: { allowed?: boolean; secret?: boolean; settings?: Partial<ClientSettings> } = {}) {
  const { store } = keyfob();
  const app = await createClient(store, { name: "Car display", logoUrl: "https://car.example.com/logo.png" });
  if (options.allowed !== false) await updateClient(store, app.id, { deviceFlow: true, ...options.settings });
  const secret = options.secret ? await rotateClientSecret(keyfob(), app.id) : undefined;
  const config = await client.discovery(new URL(ISSUER), app.id, undefined, secret ? client.ClientSecretBasic(secret) : client.None(), {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: routeFetch,
  });
  return { id: app.id, config, secret };
}

/** A poll of /token as a device sends it, answered by the route handler. */
async function poll(clientId: string, deviceCode: string) {
  const response = await tokenRoute(
    new Request(`${ISSUER}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "urn:ietf:params:oauth:grant-type:device_code",
        device_code: deviceCode,
        client_id: clientId,
      }),
    }),
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const identity = { provider: "apple", subject: "apple-device-001", email: "driver@example.com", emailVerified: true } as const;

/** The user's side: the code on /device, "Yes", then a login on the hosted page; where the login ends. */
async function approve(userCode: string, ip = "203.0.113.7") {
  const interactionId = await confirmUserCode(keyfob(), userCode, { ip });
  return (await completeAuthorization(keyfob(), interactionId, { identity })).location;
}

describe("device authorization grant", () => {
  it("discovery lists the endpoint and the grant", async () => {
    const metadata = (await (await routeFetch(`${ISSUER}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(metadata.device_authorization_endpoint).toBe(`${ISSUER}/device/authorization`);
    expect(metadata.grant_types_supported).toContain("urn:ietf:params:oauth:grant-type:device_code");
  });

  it("openid-client signs a user in: device code, user code on /device, login, tokens", async () => {
    const { config } = await deviceClient();
    const started = await client.initiateDeviceAuthorization(config, { scope: "openid email" });
    expect(started.user_code).toMatch(new RegExp(`^[${USER_CODE_ALPHABET}]{4}-[${USER_CODE_ALPHABET}]{4}$`));
    expect(started.verification_uri).toBe(`${ISSUER}/device`);
    expect(started.verification_uri_complete).toBe(`${ISSUER}/device?user_code=${started.user_code}`);
    expect([started.expires_in, started.interval]).toEqual([600, 1]);

    // The page shows the client; typed in lower case without the dash, the code still works.
    const typed = started.user_code.replace("-", "").toLowerCase();
    expect(await lookUpUserCode(keyfob(), typed, "203.0.113.7")).toMatchObject({
      userCode: started.user_code,
      clientName: "Car display",
      clientLogoUrl: "https://car.example.com/logo.png",
    });
    const polling = client.pollDeviceAuthorizationGrant(config, started);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // at least one authorization_pending first
    expect(await approve(typed)).toBe("/device?result=approved");
    const tokens = await polling;
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: ISSUER, aud: config.clientMetadata().client_id, email: "driver@example.com" });
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(userinfo.email).toBe("driver@example.com");

    // Issued once, with its audit record; the approval audited with the client and the account, never the user code.
    const clientId = config.clientMetadata().client_id;
    const issued = await tables(keyfob()).issuedToken.findMany({ where: { clientId } });
    expect(issued).toHaveLength(1);
    await keyfob().audit.flush();
    const approvals = await tables(keyfob()).auditEvent.findMany({ where: { clientId, action: "device.approved" } });
    expect(approvals).toMatchObject([{ outcome: "success", accountId: issued[0].userId, detail: "apple" }]);
    expect(JSON.stringify(approvals.map(({ id, ...event }) => event))).not.toMatch(new RegExp(started.user_code.replace("-", "-?"), "i"));
  });

  it("records a third-party client's approval as the account's consent grant (its page showed the scopes)", async () => {
    const { id, config } = await deviceClient({ settings: { requireConsent: true } });
    const started = await client.initiateDeviceAuthorization(config, { scope: "openid email" });
    expect(await approve(started.user_code)).toBe("/device?result=approved");
    expect((await poll(id, started.device_code)).status).toBe(200);
    expect(await tables(keyfob()).consentGrant.findMany({ where: { clientId: id } })).toMatchObject([{ scope: "email openid" }]);

    // Approved again, then the consent revoked before the device polls: the device gets access_denied.
    const again = await client.initiateDeviceAuthorization(config, { scope: "openid email" });
    expect(await approve(again.user_code, "203.0.113.13")).toBe("/device?result=approved");
    const { accountId } = await tables(keyfob()).consentGrant.findFirstOrThrow({ where: { clientId: id } });
    expect(await revokeConsent(keyfob(), accountId, id)).toBeDefined();
    expect((await poll(id, again.device_code)).body.error).toBe("access_denied");
  });

  it("answers each poll as RFC 8628 3.5 says: pending, slow_down (+5 s), denied, expired", async () => {
    const { id, config } = await deviceClient();
    const first = await client.initiateDeviceAuthorization(config, { scope: "openid" });
    expect((await poll(id, first.device_code)).body.error).toBe("authorization_pending");
    const tooSoon = await poll(id, first.device_code);
    expect(tooSoon.status).toBe(400);
    expect(tooSoon.body.error).toBe("slow_down");
    const row = await tables(keyfob()).deviceAuthorization.findFirst({ where: { clientId: id } });
    expect(row?.pollInterval).toBe(6);
    // Told to wait is no failed token request: the dashboard's overview counts only real ones.
    await keyfob().audit.flush();
    expect(await tables(keyfob()).auditEvent.count({ where: { clientId: id, action: "token.failed" } })).toBe(0);

    // "No, it is not on my screen": access_denied, and the code is used up.
    await declineUserCode(keyfob(), first.user_code, { ip: "203.0.113.8", accountId: "0xphone-session-account" });
    await new Promise((resolve) => setTimeout(resolve, 10));
    await tables(keyfob()).deviceAuthorization.updateMany({ where: { clientId: id }, data: { lastPolledAt: null } });
    expect((await poll(id, first.device_code)).body.error).toBe("access_denied");
    await expect(lookUpUserCode(keyfob(), first.user_code, "203.0.113.8")).rejects.toMatchObject({ why: { code: "user_code_unknown" } });

    // Cancel on the hosted login: access_denied too.
    const second = await client.initiateDeviceAuthorization(config, { scope: "openid" });
    const interactionId = await confirmUserCode(keyfob(), second.user_code, { ip: "203.0.113.8" });
    expect(await leaveInteraction(keyfob(), interactionId)).toBe("/device?result=denied");
    expect((await poll(id, second.device_code)).body.error).toBe("access_denied");
    await keyfob().audit.flush();
    const denials = await tables(keyfob()).auditEvent.findMany({
      where: { clientId: id, action: "device.denied" },
      orderBy: { id: "asc" },
    });
    expect(denials).toMatchObject([
      { outcome: "access_denied", accountId: "0xphone-session-account", ip: "203.0.113.8", detail: "declined at /device" },
      { outcome: "access_denied", accountId: null, detail: "login cancelled" },
    ]);
    for (const code of [first, second])
      expect(JSON.stringify(denials.map(({ id, ...event }) => event))).not.toMatch(new RegExp(code.user_code.replace("-", "-?"), "i"));

    // Past its end: expired_token.
    const third = await client.initiateDeviceAuthorization(config, { scope: "openid" });
    await tables(keyfob()).deviceAuthorization.updateMany({
      where: { clientId: id, status: "pending" },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await poll(id, third.device_code)).body.error).toBe("expired_token");
    await keyfob().audit.flush();
    const failed = await tables(keyfob()).auditEvent.findMany({ where: { clientId: id, action: "token.failed" }, orderBy: { id: "asc" } });
    expect(failed.map((event) => event.outcome)).toEqual(["access_denied", "access_denied", "expired_token"]);
    await expect(confirmUserCode(keyfob(), third.user_code, { ip: "203.0.113.8" })).rejects.toMatchObject({
      why: { code: "user_code_unknown" },
    });
  });

  it("gives 50 concurrent polls after approval one token response", async () => {
    const { id, config } = await deviceClient();
    const started = await client.initiateDeviceAuthorization(config, { scope: "openid" });
    await approve(started.user_code, "203.0.113.9");
    const answers = await Promise.all(Array.from({ length: 50 }, () => poll(id, started.device_code)));
    const issued = answers.filter((a) => a.status === 200);
    expect(issued).toHaveLength(1);
    expect(issued[0].body.access_token).toEqual(expect.any(String));
    for (const a of answers.filter((a) => a.status !== 200)) expect(a.body.error).toBe("invalid_grant");
    expect(await tables(keyfob()).issuedToken.count({ where: { clientId: id } })).toBe(1);
    expect(await tables(keyfob()).auditEvent.count({ where: { clientId: id, action: "token.issued" } })).toBe(1);
    expect((await poll(id, started.device_code)).body.error).toBe("invalid_grant");
  });

  it("a user code works once", async () => {
    const { config } = await deviceClient();
    const started = await client.initiateDeviceAuthorization(config, { scope: "openid" });
    await confirmUserCode(keyfob(), started.user_code, { ip: "203.0.113.10" });
    await expect(confirmUserCode(keyfob(), started.user_code, { ip: "203.0.113.10" })).rejects.toMatchObject({
      why: { code: "user_code_unknown" },
    });
  });

  it("confidential clients authenticate as at /token; clients not allowed the grant are refused", async () => {
    const confidential = await deviceClient({ secret: true });
    const started = await client.initiateDeviceAuthorization(confidential.config, { scope: "openid" });
    const polling = client.pollDeviceAuthorizationGrant(confidential.config, started);
    await approve(started.user_code, "203.0.113.11");
    expect((await polling).access_token).toEqual(expect.any(String));
    // Without its secret, the poll is refused.
    expect((await poll(confidential.id, started.device_code)).status).toBe(401);

    const refused = await deviceClient({ allowed: false });
    await expect(client.initiateDeviceAuthorization(refused.config, { scope: "openid" })).rejects.toMatchObject({
      error: "unauthorized_client",
    });
  });

  it("grants a device offline_access only when the client is allowed it on devices, besides refresh tokens", async () => {
    /** A device's sign-in asking for offline_access, approved on the phone: the token response. */
    const signIn = async (settings: Partial<ClientSettings>) => {
      const { id, config } = await deviceClient({ settings });
      const started = await client.initiateDeviceAuthorization(config, { scope: "openid offline_access" });
      await approve(started.user_code, "203.0.113.12");
      const answer = await poll(id, started.device_code);
      expect(answer.status).toBe(200);
      const families = await tables(keyfob()).refreshToken.count({ where: { clientId: id } });
      return { ...answer.body, families } as Record<string, unknown>;
    };
    // Allowed refresh tokens, but not on devices: the access token alone, and the response says so.
    const withoutDevices = await signIn({ refreshTokensAllowed: true });
    expect(withoutDevices).toMatchObject({ scope: "openid", families: 0 });
    expect(withoutDevices.refresh_token).toBeUndefined();
    // Allowed on devices, but not refresh tokens at all: none either.
    expect((await signIn({ deviceFlowOfflineAccess: true })).refresh_token).toBeUndefined();
    // Both: a refresh token, with offline_access granted as asked.
    const both = await signIn({ refreshTokensAllowed: true, deviceFlowOfflineAccess: true });
    expect(both).toMatchObject({ refresh_token: expect.any(String), families: 1 });
    expect(both.scope).toBeUndefined();
  });

  it("issues the device's access token for the resource it asked for (RFC 8707), and refuses one not registered", async () => {
    const api = "https://api.car.example.com";
    const { id, config } = await deviceClient({ settings: { resources: [api] } });
    const started = await client.initiateDeviceAuthorization(config, { scope: "openid", resource: api });
    await approve(started.user_code, "203.0.113.13");
    const answer = await poll(id, started.device_code);
    expect(answer.status).toBe(200);
    expect(decodeJwt(answer.body.access_token as string).aud).toBe(api);
    expect(decodeJwt(answer.body.id_token as string).aud).toBe(id);
    await expect(
      client.initiateDeviceAuthorization(config, { scope: "openid", resource: "https://evil.example.com" }),
    ).rejects.toMatchObject({
      error: "invalid_target",
    });
  });

  it("shows at /device when, from which address and from what kind of device the code was asked for", async () => {
    const { id } = await deviceClient();
    const asked = Date.now();
    const response = await deviceAuthorizationRoute(
      new Request(`${ISSUER}/device/authorization`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          [CLIENT_IP_HEADER]: "198.51.100.23",
          "user-agent": "Mozilla/5.0 (Linux; Android 14; BRAVIA 4K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
        },
        body: new URLSearchParams({ client_id: id, scope: "openid" }),
      }),
    );
    const { user_code: userCode } = (await response.json()) as { user_code: string };
    const shown = await lookUpUserCode(keyfob(), userCode, "203.0.113.13");
    expect(shown).toMatchObject({ requestedFrom: "198.51.100.23", requestedBy: { browser: "Chrome 120", os: "Android" } });
    expect(shown.requestedAt.getTime()).toBeGreaterThanOrEqual(asked - 1000);
    expect(shown.requestedAt.getTime()).toBeLessThanOrEqual(Date.now());
  });

  it("asks for the code to be typed when /device was opened from another site", () => {
    const opened = (headers: Record<string, string>) => openedFromAnotherSite(new Headers(headers), ISSUER);
    // A link on another site's page, in a browser that sends Sec-Fetch-Site, whatever its Referer says,
    expect(opened({ "sec-fetch-site": "cross-site" })).toBe(true);
    expect(opened({ "sec-fetch-site": "same-site", referer: `${ISSUER}/device` })).toBe(true);
    // and in one that does not: a Referer of another origin, or one that cannot be read.
    expect(opened({ referer: "https://attacker.example/phish" })).toBe(true);
    expect(opened({ referer: `${ISSUER.replace("localhost", "127.0.0.1")}/` })).toBe(true);
    expect(opened({ referer: "not a url" })).toBe(true);
    // Opened directly (a scanned QR code, a typed address), from Keyfob's own form, or without either header: shown to confirm.
    expect(opened({ "sec-fetch-site": "none" })).toBe(false);
    expect(opened({ "sec-fetch-site": "same-origin" })).toBe(false);
    expect(opened({ referer: `${ISSUER}/device` })).toBe(false);
    expect(opened({})).toBe(false);
  });
});
