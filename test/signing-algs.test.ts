/**
 * Signing algorithms per client (FAPI 2.0): a client registered with id_token_signed_response_alg
 * PS256 or ES256 gets its ID and access tokens signed with that alg, which openid-client checks
 * against the client metadata it was given; the tokens verify against the JWKS, which holds keys of
 * each alg in use, and Keyfob accepts them back (userinfo, refresh, the management API). A client
 * that sets nothing keeps RS256. An alg's first key is made when a client first needs it, and each
 * alg rotates on its own. An instance and database of their own: the test owns the key tables.
 */
import * as client from "openid-client";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { ALL_SCOPES, type Admin } from "@/lib/admin/access";
import { runAdminChange } from "@/lib/admin/changes";
import { ADMIN_SCOPE } from "@/lib/admin/scopes";
import { addRedirectUri, createClient, rotateClientSecret, updateClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import type { SigningAlg } from "@/lib/keys/keystore";
import { signLogoutToken } from "@/lib/tokens/logout-token";
import { cliOn } from "./support/cli";
import { emptyDatabase, tables } from "./support/database";
import { challengeParams, ISSUER, registerLicense, submitParams } from "./support/flow-a";
import { FORM } from "./support/flow-b";
import { formPost, routesOn, serveRequest } from "./support/routes";
import { migrateDatabase } from "@/lib/db/migrate";

const operator: Admin = { accountId: "cli", label: "cli:test", scopes: ALL_SCOPES };
let k: Keyfob;
let url: string;

beforeAll(async () => {
  url = await emptyDatabase("signing_algs_test");
  await migrateDatabase(url);
  k = createKeyfob({ ...loadConfig(process.env), databaseUrl: url, recoveryThreads: 0 });
  await k.keys.refresh(); // the first start: the RS256 key
});
afterAll(() => k?.close());

/** Sends the library's requests to the route table of this test's instance. */
const routeFetch = async (url: string, init: client.CustomFetchOptions) => serveRequest(new Request(url, init as RequestInit), k);
const get = async (path: string) => (await serveRequest(new Request(`${ISSUER}${path}`), k)).json();
const jwks = async () => (await get("/keys")) as { keys: JWK[] };

/** A public client with `alg` (none: the default), discovered by openid-client with that alg in its metadata. */
async function registered(alg?: SigningAlg) {
  const app = await createClient(k.store, { name: `${alg ?? "Default"} client` });
  const redirectUri = "https://rp.example.com/callback";
  await addRedirectUri(k.store, app.id, redirectUri);
  await updateClient(k.store, app.id, { refreshTokensAllowed: true, ...(alg && { idTokenSignedResponseAlg: alg }) });
  const metadata: Partial<client.ClientMetadata> = { client_id: app.id, ...(alg && { id_token_signed_response_alg: alg }) };
  const config = await client.discovery(new URL(ISSUER), app.id, metadata, client.None(), {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: routeFetch,
  });
  return { config, redirectUri };
}

/** The code flow through openid-client (the user's login done through lib/), with offline_access. */
async function codeFlow({ config, redirectUri }: Awaited<ReturnType<typeof registered>>) {
  const verifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: "openid email offline_access",
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  });
  const start = await startAuthorization(k, url.searchParams);
  if (start.kind !== "login") throw new Error("expected the login page");
  const identity = { provider: "google", subject: `google-${nonce}`, email: "fapi@example.com", emailVerified: true } as const;
  const callback = new URL((await completeAuthorization(k, start.interactionId, { identity })).location);
  return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedNonce: nonce });
}

/** Verifies `token` against the published JWKS, holding it to `alg`; the JWK that verified it. */
async function verifiedWith(token: string, alg: SigningAlg): Promise<JWK> {
  const { keys } = await jwks();
  await jwtVerify(token, createLocalJWKSet({ keys }), { issuer: ISSUER, algorithms: [alg] });
  return keys.find((key) => key.kid === decodeProtectedHeader(token).kid)!;
}

describe("id_token_signed_response_alg", () => {
  it("creates no PS256 or ES256 key before a client needs one", async () => {
    expect((await jwks()).keys.map((key) => key.alg)).toEqual(["RS256"]);
  });

  it("is advertised for RS256, PS256 and ES256 in discovery", async () => {
    expect((await get("/.well-known/openid-configuration")).id_token_signing_alg_values_supported).toEqual(["RS256", "PS256", "ES256"]);
  });

  it.each([
    ["PS256", { kty: "RSA" }, ["alg", "e", "kid", "kty", "n", "use"]],
    ["ES256", { kty: "EC", crv: "P-256" }, ["alg", "crv", "kid", "kty", "use", "x", "y"]],
  ] as const)(
    "signs a %s client's ID and access tokens with keys of that alg, accepted back at userinfo and refresh",
    async (alg, shape, members) => {
      const app = await registered(alg);
      // openid-client refuses an ID token whose alg is not the one in the client metadata.
      const tokens = await codeFlow(app);
      expect(tokens.claims()).toMatchObject({ iss: ISSUER, email: "fapi@example.com" });
      expect(decodeProtectedHeader(tokens.id_token!)).toMatchObject({ alg });
      expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg, typ: "at+jwt" });
      const key = await verifiedWith(tokens.id_token!, alg);
      expect(key).toMatchObject({ ...shape, alg, use: "sig" });
      expect(await verifiedWith(tokens.access_token, alg)).toEqual(key);
      expect(Object.keys(key).sort()).toEqual(members); // the public half only

      const info = await client.fetchUserInfo(app.config, tokens.access_token, tokens.claims()!.sub);
      expect(info.email).toBe("fapi@example.com");

      const refreshed = await client.refreshTokenGrant(app.config, tokens.refresh_token!);
      expect(decodeProtectedHeader(refreshed.id_token!)).toMatchObject({ alg, kid: key.kid });
      expect(decodeProtectedHeader(refreshed.access_token)).toMatchObject({ alg, kid: key.kid });
    },
  );

  it("keeps RS256 for a client that sets nothing", async () => {
    const app = await registered();
    const tokens = await codeFlow(app);
    const key = await verifiedWith(tokens.id_token!, "RS256");
    expect(key).toMatchObject({ kty: "RSA", alg: "RS256" });
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg: "RS256", kid: key.kid });
    // RS256 keys come first in the JWKS, as they always were.
    expect((await jwks()).keys.map((k) => k.alg)).toEqual(["RS256", "PS256", "ES256"]);
  });

  it("signs a management client's client_credentials token with its alg, which the management API accepts", async () => {
    const automation = await createClient(k.store, { name: "FAPI automation" });
    const secret = await rotateClientSecret(k, automation.id);
    await updateClient(k.store, automation.id, { managementApi: true, managementScopes: [ADMIN_SCOPE], idTokenSignedResponseAlg: "ES256" });
    const grant = await serveRequest(
      new Request(`${ISSUER}/token`, {
        method: "POST",
        headers: { ...FORM, authorization: `Basic ${Buffer.from(`${automation.id}:${secret}`).toString("base64")}` },
        body: new URLSearchParams({ grant_type: "client_credentials", scope: ADMIN_SCOPE }),
      }),
      k,
    );
    const token = ((await grant.json()) as { access_token: string }).access_token;
    expect(decodeProtectedHeader(token).alg).toBe("ES256");
    const keys = await serveRequest(new Request(`${ISSUER}/api/admin/v1/keys`, { headers: { authorization: `Bearer ${token}` } }), k);
    expect(keys.status).toBe(200);
    const { items } = (await keys.json()) as { items: { alg: string; status: string; purpose: string }[] };
    const current = items.filter((key) => key.status === "current" && key.purpose === "access");
    expect(current.map((key) => key.alg)).toEqual(["RS256", "PS256", "ES256"]);
  });

  it("signs Flow A's tokens with a license's alg, whether the instance that issued the challenge redeems it or another", async () => {
    const license = await registerLicense({ on: k });
    await updateClient(k.store, license.clientId, { idTokenSignedResponseAlg: "ES256" });
    const other = createKeyfob(k.config, k.store);
    try {
      for (const redeemer of [k, other]) {
        const challenge = await routesOn(k).generateChallenge(formPost("/auth/web3/generate_challenge", challengeParams(license)));
        const { state, challenge: message } = (await challenge.json()) as { state: string; challenge: string };
        const signature = await license.owner.signMessage({ message });
        const answer = await routesOn(redeemer).submitChallenge(
          formPost("/auth/web3/submit_challenge", submitParams(license, state, signature)),
        );
        const tokens = (await answer.json()) as { access_token: string; id_token: string };
        await verifiedWith(tokens.access_token, "ES256");
        await verifiedWith(tokens.id_token, "ES256");
      }
    } finally {
      await other.close();
    }
  });

  it("signs a logout token with the alg it is given (the client's, as the outbox reads it)", async () => {
    const logout = {
      clientId: "fapi-rp",
      subject: { userId: "0x0000000000000000000000000000000000000001", connector: "google" },
      sid: "s1",
    };
    const token = await signLogoutToken(k.keys, ISSUER, { ...logout, signingAlg: "PS256" }, new Date());
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: "PS256", typ: "logout+jwt" });
    expect(await verifiedWith(token, "PS256")).toMatchObject({ alg: "PS256" });
  });

  it("refuses an alg it does not sign with, in the management API's shape", async () => {
    const app = await createClient(k.store, { name: "HS256 hopeful" });
    const result = await runAdminChange(k, operator, "client.update", { clientId: app.id, idTokenSignedResponseAlg: "HS256" });
    expect(result).toMatchObject({ ok: false, fieldErrors: { idTokenSignedResponseAlg: "must be one of RS256, PS256, ES256" } });
  });
});

describe("rotation per alg", () => {
  const upcoming = async () => (await k.keys.schedule()).filter((key) => key.status === "upcoming").map((key) => key.alg);

  it("rotates one alg's keys when asked for it, and every alg in use otherwise", async () => {
    expect(await upcoming()).toEqual([]);
    expect(await runAdminChange(k, operator, "key.rotate", { alg: "ES256" })).toMatchObject({ ok: true });
    expect(await upcoming()).toEqual(["ES256"]);
    expect(await runAdminChange(k, operator, "key.rotate", {})).toMatchObject({ ok: true });
    expect(await upcoming()).toEqual(["RS256", "PS256", "ES256"]);
    // The upcoming keys are published ahead of signing, each with its alg.
    const published = (await jwks()).keys;
    expect(published.map((key) => key.alg)).toEqual(["RS256", "RS256", "PS256", "PS256", "ES256", "ES256"]);
  });
});

describe("the admin CLI", () => {
  it("sets a client's alg and shows it, and the alg of each key", async () => {
    const app = await createClient(k.store, { name: "CLI FAPI client" });
    const keyfob = cliOn(url, { KEYFOB_SECRET: k.config.secret! });
    expect(await keyfob("clients", "set", app.id, "--alg", "PS256")).toMatchObject({ code: 0 });
    const listed = JSON.parse((await keyfob("clients", "list", "--json")).stdout) as { id: string; idTokenSignedResponseAlg: string }[];
    expect(listed.find((c) => c.id === app.id)?.idTokenSignedResponseAlg).toBe("PS256");

    const keys = JSON.parse((await keyfob("keys", "list", "--json")).stdout) as { purpose: string; alg: string; status: string }[];
    const current = keys.filter((key) => key.purpose === "access" && key.status === "current").map((key) => key.alg);
    expect(current.sort()).toEqual(["ES256", "PS256", "RS256"]);
  });
});

describe("two instances on one database", () => {
  let a: Keyfob;
  let b: Keyfob;
  beforeAll(async () => {
    const shared = await emptyDatabase("signing_algs_two_test");
    await migrateDatabase(shared);
    const instance = () => createKeyfob({ ...loadConfig(process.env), databaseUrl: shared, recoveryThreads: 0 });
    a = instance();
    b = instance();
    await a.keys.refresh();
    await b.keys.refresh();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  it("agree on an alg's first key when both need it at once, and each learns the other's by its kid", async () => {
    const [fromA, fromB] = await Promise.all([a.keys.signingKey("ES256"), b.keys.signingKey("ES256")]);
    expect(fromB.kid).toBe(fromA.kid);
    expect(await tables(a).algSigningKey.count({ where: { alg: "ES256" } })).toBe(1);

    // A's first PS256 key, after B loaded the set empty: a token naming it makes B reload.
    expect((await b.keys.publicKeys()).map((key) => key.alg)).toEqual(["RS256", "ES256"]);
    const { kid } = await a.keys.signingKey("PS256");
    expect((await b.keys.publicKeys()).map((key) => key.kid)).not.toContain(kid);
    expect(await b.keys.reloadForUnknownKey(kid)).toBe(true);
    expect((await b.keys.publicKeys()).map((key) => key.alg)).toEqual(["RS256", "PS256", "ES256"]);
  });
});
