/**
 * Keyfob's flows on a database of a test's own (another PostgreSQL version, a restored backup):
 * `issueOnEveryFlow` registers a license, a Flow B app and a resource server through one instance and
 * issues there (Flow A twice, one token revoked, a code exchanged for a refresh token), checking
 * each answer; `carryOn` then checks, on an instance over that database (the same one, or one over
 * a copy), that the issued tokens stand as they were, the key signs, the refresh token refreshes
 * once and the used code stays used. Shared by the backup test and the PostgreSQL versions test.
 */
import { decodeProtectedHeader } from "jose";
import pg from "pg";
import { expect } from "vitest";
import type { Keyfob } from "@/lib/keyfob";
import { challengeParams, expectError, registerLicense, submitParams, type License } from "./flow-a";
import { authorize, registerApp, tokenRequest, type App } from "./flow-b";
import { formPost, routesOn } from "./routes";

/** What one instance issued, to look for later (on it, or on a copy of its database). */
export type Issued = {
  license: License;
  app: App;
  /** Basic credentials of a resource server, which may introspect every client's tokens. */
  introspector: string;
  flowA: string;
  revoked: string;
  exchanged: { access_token: string; refresh_token: string };
  usedCode: string;
  kid: string;
};

/** Flow A for the license on `k`: its answer. */
export async function flowA(k: Keyfob, license: License): Promise<Response> {
  const { generateChallenge, submitChallenge } = routesOn(k);
  const generated = await generateChallenge(formPost("/auth/web3/generate_challenge", challengeParams(license)));
  expect(generated.status, await generated.clone().text()).toBe(200);
  const { state, challenge } = (await generated.json()) as { state: string; challenge: string };
  const signature = await license.owner.signMessage({ message: challenge });
  return submitChallenge(formPost("/auth/web3/submit_challenge", submitParams(license, state, signature)));
}

export async function accessToken(k: Keyfob, license: License): Promise<string> {
  const answer = await flowA(k, license);
  expect(answer.status, await answer.clone().text()).toBe(200);
  return ((await answer.json()) as { access_token: string }).access_token;
}

/** What `k` says of an access token: /userinfo's status and introspection's `active` (asked by `introspector`). */
export async function check(k: Keyfob, token: string, introspector: string) {
  const { userinfo, introspect } = routesOn(k);
  const info = await userinfo(new Request("http://localhost:3000/userinfo", { headers: { authorization: `Bearer ${token}` } }));
  const introspected = await introspect(formPost("/token/introspect", { token }, { authorization: introspector }));
  expect(introspected.status).toBe(200);
  return { userinfo: info.status, active: ((await introspected.json()) as { active: boolean }).active };
}
export const accepted = { userinfo: 200, active: true };
export const refused = { userinfo: 401, active: false };

/** Registers clients on `k` and issues through every flow there, checking each answer. */
export async function issueOnEveryFlow(k: Keyfob): Promise<Issued> {
  const license = await registerLicense({ on: k });
  const app = await registerApp({ settings: { refreshTokensAllowed: true }, on: k });
  const resourceServer = await registerApp({ confidential: true, settings: { resourceServer: true }, on: k });
  const introspector = `Basic ${Buffer.from(`${resourceServer.clientId}:${resourceServer.secret}`).toString("base64")}`;

  const flowAToken = await accessToken(k, license);
  const revoked = await accessToken(k, license);
  const revocation = await routesOn(k).revoke(formPost("/token/revoke", { client_id: license.clientId, token: revoked }));
  expect(revocation.status, await revocation.clone().text()).toBe(200);
  expect(await check(k, revoked, introspector)).toEqual(refused);

  const usedCode = (await authorize(app, undefined, { scope: "openid email offline_access" }, k)).searchParams.get("code")!;
  const exchange = await routesOn(k).token(tokenRequest(app, { code: usedCode }));
  expect(exchange.status, await exchange.clone().text()).toBe(200);
  const exchanged = (await exchange.json()) as { access_token: string; refresh_token: string };
  expect(exchanged.refresh_token).toEqual(expect.any(String));
  expect(await check(k, flowAToken, introspector)).toEqual(accepted);
  expect(await check(k, exchanged.access_token, introspector)).toEqual(accepted);
  const kid = String(decodeProtectedHeader(flowAToken).kid);
  expect(kid).toMatch(/^[0-9a-f]{40}$/);
  return { license, app, introspector, flowA: flowAToken, revoked, exchanged, usedCode, kid };
}

/**
 * On `k` (over the database `issued` was issued on, or a copy of it): the tokens are active or
 * revoked as they were; the key that signed them signs new ones (nothing rotated meanwhile); the
 * refresh token refreshes once; the used code stays used. Uses the refresh token and the code up.
 */
export async function carryOn(k: Keyfob, issued: Issued): Promise<void> {
  const checked = (token: string) => check(k, token, issued.introspector);
  expect(await checked(issued.flowA)).toEqual(accepted);
  expect(await checked(issued.exchanged.access_token)).toEqual(accepted);
  expect(await checked(issued.revoked)).toEqual(refused);

  expect((await k.keys.signingKey()).kid).toBe(issued.kid);
  const fresh = await accessToken(k, issued.license);
  expect(decodeProtectedHeader(fresh).kid).toBe(issued.kid);
  expect(await checked(fresh)).toEqual(accepted);

  const { token } = routesOn(k);
  const refreshGrant = { grant_type: "refresh_token", refresh_token: issued.exchanged.refresh_token };
  const refreshed = await token(tokenRequest(issued.app, refreshGrant));
  expect(refreshed.status, await refreshed.clone().text()).toBe(200);
  const { access_token } = (await refreshed.json()) as { access_token: string };
  expect(await checked(access_token)).toEqual(accepted);
  await expectError(await token(tokenRequest(issued.app, refreshGrant)), 400, "invalid_grant");

  // Last: presenting the used code again revokes what it was exchanged for.
  const replayed = await expectError(await token(tokenRequest(issued.app, { code: issued.usedCode })), 400, "invalid_grant");
  expect(replayed.error_description).toMatch(/already been used/);
}

/** The major version of the PostgreSQL at `url`. */
export async function majorVersion(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version_num: string }>("SHOW server_version_num");
    return Math.floor(Number(rows[0].server_version_num) / 10_000);
  } finally {
    await client.end();
  }
}
