/**
 * Client assertions (RFC 7523, OIDC Core 9) with a real client library, openid-client, against the
 * real route handlers: private_key_jwt with the client's JWK Set inline or from its jwks_uri (a
 * local server; a new kid makes Keyfob fetch it again), client_secret_jwt, and a license's assertion
 * signed by one of its enabled Flow A signers (ES256K, viem signs), refused at once when the signer
 * is revoked, or by a smart-account license's owner (EIP191, ERC-1271 on a local hardhat chain); with
 * such an assertion, client_credentials gives the license's backend Flow A's access token. An
 * assertion's jti is single use across two instances; a wrong aud, an exp too late or past, or a
 * method the client is not registered for are refused with invalid_client.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import * as client from "openid-client";
import {
  base64url,
  calculateJwkThumbprint,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
} from "jose";
import { hexToBytes } from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { toAdminClient } from "@/lib/admin/operations/reads";
import {
  addRedirectUri,
  createClient,
  revokeSigner,
  rotateClientSecret,
  setClientAuthentication,
  updateClient,
} from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { CLIENT_ASSERTION_TYPE } from "@/lib/oauth/client-assertion";
import { keyfob } from "@/lib/runtime";
import { decodeSubject } from "@/lib/tokens/sub";
import { deployLicenseAccounts } from "./chain/license-accounts";
import { compileContracts, type LocalChain, startLocalChain } from "./chain/local-chain";
import { cli } from "./support/cli";
import { tables } from "./support/database";
import { enableSigner, ISSUER, registerLicense, requestChallenge, submit } from "./support/flow-a";
import { formPost, route, routesOn } from "./support/routes";

const routes = routesOn(keyfob());

/** openid-client's fetch, answered by the routes of `on` it calls. */
function routeFetch(on: Keyfob) {
  const onRoutes = routesOn(on);
  const discoveryRoute = route("/.well-known/openid-configuration", () => on);
  const handlers: Record<string, (request: Request) => Promise<Response>> = {
    "/.well-known/openid-configuration": () => discoveryRoute(new Request(`${ISSUER}/.well-known/openid-configuration`)),
    "/token": onRoutes.token,
    "/token/revoke": onRoutes.revoke,
    "/token/introspect": onRoutes.introspect,
    "/userinfo": onRoutes.userinfo,
  };
  return (url: string, init: client.CustomFetchOptions) => {
    const request = new Request(url, init as RequestInit);
    return handlers[new URL(request.url).pathname](request);
  };
}

/** openid-client configured for client `id` with `auth`, on `on`. */
const discover = (id: string, auth: client.ClientAuth, on = keyfob()) =>
  client.discovery(new URL(ISSUER), id, undefined, auth, { execute: [client.allowInsecureRequests], [client.customFetch]: routeFetch(on) });

/** A registered client for the code flow, its redirect URI, and openid-client configured for it with `auth`, on `on`. */
async function codeFlowClient(id: string, auth: client.ClientAuth, on = keyfob()) {
  const redirectUri = `https://rp.example.com/cb-${randomUUID()}`;
  await addRedirectUri(on.store, id, redirectUri);
  return { config: await discover(id, auth, on), redirectUri, on };
}

/** The code flow with openid-client, the user's login done through lib/: the token response. */
async function codeFlow({ config, redirectUri, on }: Awaited<ReturnType<typeof codeFlowClient>>) {
  const verifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: "openid email",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  });
  const start = await startAuthorization(on, url.searchParams);
  if (start.kind !== "login") throw new Error("expected the login page");
  const identity = { provider: "google", subject: `google-${randomUUID()}`, email: "pkjwt@example.com", emailVerified: true } as const;
  const callback = new URL((await completeAuthorization(on, start.interactionId, { identity })).location);
  return client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier });
}

/** A private_key_jwt client with an ES256 key pair, registered with its public key inline. */
async function keyClient() {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const kid = randomUUID();
  const { id } = await createClient(keyfob().store, { name: "private_key_jwt client" });
  await setClientAuthentication(keyfob().store, id, {
    tokenEndpointAuthMethod: "private_key_jwt",
    jwks: { keys: [{ ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" }] },
  });
  return { id, privateKey, kid };
}

/** A client assertion as RFC 7523 3 has it, with `claims` changed. */
function assertion(id: string, key: CryptoKey, kid: string, claims: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: id, sub: id, aud: ISSUER, jti: randomUUID(), iat: now, exp: now + 60, ...claims })
    .setProtectedHeader({ alg: "ES256", kid })
    .sign(key);
}

/** Revokes a token nobody has, authenticating with `clientAssertion`: 200, or the refusal. */
const revokeWith = (clientAssertion: string, on = routes) =>
  on.revoke(
    formPost("/token/revoke", { token: "nothing", client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: clientAssertion }),
  );

it("lists private_key_jwt, client_secret_jwt and the assertions' algorithms in discovery", async () => {
  const metadata = await (await routeFetch(keyfob())(`${ISSUER}/.well-known/openid-configuration`, {} as client.CustomFetchOptions)).json();
  for (const endpoint of ["token", "revocation", "introspection"]) {
    expect(metadata[`${endpoint}_endpoint_auth_methods_supported`]).toEqual(
      expect.arrayContaining(["private_key_jwt", "client_secret_jwt"]),
    );
    expect(metadata[`${endpoint}_endpoint_auth_signing_alg_values_supported`]).toEqual([
      "RS256",
      "PS256",
      "ES256",
      "EdDSA",
      "ES256K",
      "EIP191",
      "HS256",
    ]);
  }
});

it("gives openid-client tokens for the code with private_key_jwt, the key inline", async () => {
  const { id, privateKey, kid } = await keyClient();
  const tokens = await codeFlow(await codeFlowClient(id, client.PrivateKeyJwt({ key: privateKey, kid })));
  expect(tokens.access_token).toBeTruthy();
  expect(tokens.claims()?.aud).toBe(id);
});

it("gives openid-client tokens with client_secret_jwt once the secret is made for it; the secret alone is refused", async () => {
  const { id } = await createClient(keyfob().store, { name: "client_secret_jwt client" });
  const before = await rotateClientSecret(keyfob(), id);
  await setClientAuthentication(keyfob().store, id, { tokenEndpointAuthMethod: "client_secret_jwt" });
  // Only a secret generated for the method is kept (encrypted): the one from before cannot MAC.
  await expect(codeFlow(await codeFlowClient(id, client.ClientSecretJwt(before)))).rejects.toMatchObject({
    error: "invalid_client",
    error_description: expect.stringMatching(/rotate it/),
  });

  const secret = await rotateClientSecret(keyfob(), id);
  // The sealed secret is never shown to admins (dashboard, management API), as its hash is not.
  const detail = await keyfob().store.clients.detail(id);
  expect(detail?.secretSealed).toMatch(/^ey/);
  expect(toAdminClient(detail!, new Date())).not.toHaveProperty("secretSealed");
  const tokens = await codeFlow(await codeFlowClient(id, client.ClientSecretJwt(secret)));
  expect(tokens.claims()?.aud).toBe(id);
  await expect(codeFlow(await codeFlowClient(id, client.ClientSecretJwt("not-the-secret")))).rejects.toMatchObject({
    error: "invalid_client",
  });
  const basic = await routes.revoke(
    formPost("/token/revoke", { token: "nothing" }, { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}` }),
  );
  expect(basic.status).toBe(401);
  expect((await basic.json()).error_description).toMatch(/registered for client_secret_jwt/);
});

it("authenticates a private_key_jwt client at /par, introspection and device authorization too", async () => {
  const { id, privateKey, kid } = await keyClient();
  await updateClient(keyfob().store, id, { deviceFlow: true });
  await addRedirectUri(keyfob().store, id, "https://rp.example.com/par");
  const withAssertion = async (fields: Record<string, string>) => ({
    ...fields,
    client_assertion_type: CLIENT_ASSERTION_TYPE,
    client_assertion: await assertion(id, privateKey, kid),
  });
  const deviceRoute = route("/device/authorization");

  const pushed = await routes.par(
    formPost(
      "/par",
      await withAssertion({
        response_type: "code",
        redirect_uri: "https://rp.example.com/par",
        scope: "openid",
        // Without a secret the client is held to PKCE (lib/actions/authorize.ts), assertion or not.
        code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
        code_challenge_method: "S256",
      }),
    ),
  );
  expect(pushed.status).toBe(201);
  const introspected = await routes.introspect(formPost("/token/introspect", await withAssertion({ token: "nothing" })));
  expect(await introspected.json()).toEqual({ active: false });
  const device = await deviceRoute(formPost("/device/authorization", await withAssertion({ scope: "openid" })));
  expect(device.status).toBe(200);
  expect(await device.json()).toHaveProperty("device_code");
});

it("is set up from the command line: a JWK Set file, then back to the secret", { timeout: 60_000 }, async () => {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const { id } = await createClient(keyfob().store, { name: "CLI private_key_jwt client" });
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "keyfob-jwks-")), "keys.json");
  writeFileSync(file, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "cli" }] }));
  expect(await cli("clients", "auth", id, "--method", "private_key_jwt", "--jwks-file", file)).toMatchObject({ code: 0 });
  expect((await revokeWith(await assertion(id, privateKey, "cli"))).status).toBe(200);

  expect(await cli("clients", "auth", id, "--method", "secret")).toMatchObject({ code: 0 });
  expect((await revokeWith(await assertion(id, privateKey, "cli"))).status).toBe(401);
});

describe("refusals, invalid_client", () => {
  let k: { id: string; privateKey: CryptoKey; kid: string };
  beforeAll(async () => {
    k = await keyClient();
  });

  it.each([
    ["aud another server", { aud: "https://other.example.com" }, /aud must be the issuer/],
    ["expired", { exp: Math.floor(Date.now() / 1000) - 120 }, /expired/],
    ["exp too far ahead", { exp: Math.floor(Date.now() / 1000) + 3600 }, /at most 300 seconds ahead/],
    ["without jti", { jti: undefined }, /jti is required/],
    ["sub another client", { sub: "someone-else" }, /iss and sub/],
  ])("refuses an assertion with %s", async (_, claims, reason) => {
    const response = await revokeWith(await assertion(k.id, k.privateKey, k.kid, claims));
    expect(response.status).toBe(401);
    const body = await response.json();
    expect(body.error).toBe("invalid_client");
    expect(body.error_description).toMatch(reason);
  });

  it("refuses an assertion naming no possible client, without looking it up", async () => {
    const response = await revokeWith(await assertion("bad\u0000id", k.privateKey, k.kid, { sub: k.id }));
    expect(response.status).toBe(401);
    expect((await response.json()).error_description).toMatch(/names no client/);
  });

  it("refuses an assertion signed by another key", async () => {
    const { privateKey } = await generateKeyPair("ES256");
    const response = await revokeWith(await assertion(k.id, privateKey, k.kid));
    expect(response.status).toBe(401);
    expect((await response.json()).error_description).toMatch(/signature does not verify/);
  });

  it("refuses client_id alone, or a secret, for a private_key_jwt client; and an assertion from a client with a secret", async () => {
    const alone = await routes.revoke(formPost("/token/revoke", { token: "nothing", client_id: k.id }));
    expect(alone.status).toBe(401);
    expect((await alone.json()).error_description).toMatch(/registered for private_key_jwt: send a client_assertion/);

    const { id } = await createClient(keyfob().store, { name: "secret client" });
    await rotateClientSecret(keyfob(), id);
    const { privateKey } = await generateKeyPair("ES256");
    const response = await revokeWith(await assertion(id, privateKey, "x"));
    expect(response.status).toBe(401);
    expect((await response.json()).error_description).toMatch(/not registered for private_key_jwt or client_secret_jwt/);
  });
});

it("refuses private keys and unknown key types at registration", async () => {
  const { id } = await createClient(keyfob().store, { name: "bad keys" });
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const register = (jwks: unknown) => setClientAuthentication(keyfob().store, id, { tokenEndpointAuthMethod: "private_key_jwt", jwks });
  await expect(register({ keys: [await exportJWK(privateKey)] })).rejects.toThrow(/public keys only/);
  await expect(register({ keys: [{ kty: "oct", k: "c2VjcmV0" }] })).rejects.toThrow(/RSA, EC or OKP/);
  await expect(register({ keys: [{ kty: "EC", crv: "P-256" }] })).rejects.toThrow(/without crv, x, y/);
});

it("sweeps an assertion's jti once it has expired", async () => {
  const { store } = keyfob();
  const jtiHash = randomUUID();
  expect(await store.clientAssertions.record(jtiHash, new Date(Date.now() - 1000))).toBe(true);
  expect(await store.clientAssertions.record(jtiHash, new Date(Date.now() + 60_000))).toBe(false);
  const nothingElse = new Date(0);
  await store.sweep({ now: new Date(), cutoff: nothingElse, idleSince: nothingElse, auditBefore: nothingElse, challengesTotal: 1_000_000 });
  expect(await store.clientAssertions.record(jtiHash, new Date(Date.now() + 60_000))).toBe(true);
});

describe("an assertion's jti on two instances", () => {
  let a: Keyfob;
  let b: Keyfob;
  beforeAll(() => {
    a = createKeyfob({ ...loadConfig(), recoveryThreads: 0 });
    b = createKeyfob({ ...loadConfig(), recoveryThreads: 0 });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it("is accepted once: the other instance refuses the replay", async () => {
    const { id, privateKey, kid } = await keyClient();
    const signed = await assertion(id, privateKey, kid);
    expect((await revokeWith(signed, routesOn(a))).status).toBe(200);
    const replay = await revokeWith(signed, routesOn(b));
    expect(replay.status).toBe(401);
    expect((await replay.json()).error_description).toMatch(/jti was used before/);
  });
});

/**
 * openid-client's client authentication for a license: a JWS with `alg` whose signature `sign`
 * makes of the signing input (openid-client awaits the client authentication it is given).
 */
const licenseAssertion = (alg: "ES256K" | "EIP191", sign: (signingInput: string) => Promise<Uint8Array>): client.ClientAuth =>
  (async (as: client.ServerMetadata, metadata: client.ClientMetadata, body: URLSearchParams) => {
    const now = Math.floor(Date.now() / 1000);
    const encode = (value: object) => base64url.encode(JSON.stringify(value));
    const claims = { iss: metadata.client_id, sub: metadata.client_id, aud: as.issuer, jti: randomUUID(), iat: now, exp: now + 60 };
    const signingInput = `${encode({ alg, typ: "JWT" })}.${encode(claims)}`;
    body.set("client_id", metadata.client_id);
    body.set("client_assertion_type", CLIENT_ASSERTION_TYPE);
    body.set("client_assertion", `${signingInput}.${base64url.encode(await sign(signingInput))}`);
  }) as unknown as client.ClientAuth;

/** ES256K (RFC 8812): ECDSA over the signing input's SHA-256, r || s, as viem signs it (without its recovery byte). */
const es256k = (signer: PrivateKeyAccount) =>
  licenseAssertion("ES256K", async (signingInput) => {
    const hash = `0x${createHash("sha256").update(signingInput).digest("hex")}` as const;
    return hexToBytes(await signer.sign({ hash })).slice(0, 64);
  });

describe("a license's assertion signed by its signer (ES256K)", () => {
  it("gives openid-client tokens, and is refused at once when the signer is revoked", async () => {
    const license = await registerLicense();
    const signer = await enableSigner(license);
    await setClientAuthentication(keyfob().store, license.clientId, { tokenEndpointAuthMethod: "private_key_jwt" });
    const flow = await codeFlowClient(license.clientId, es256k(signer));
    const tokens = await codeFlow(flow);
    expect(tokens.claims()?.aud).toBe(license.clientId);

    await revokeSigner(keyfob(), license.clientId, signer.address);
    await expect(codeFlow(flow)).rejects.toMatchObject({ error: "invalid_client" });
  });

  it("refuses a key that is not the license's signer", async () => {
    const license = await registerLicense();
    await setClientAuthentication(keyfob().store, license.clientId, { tokenEndpointAuthMethod: "private_key_jwt" });
    await expect(codeFlow(await codeFlowClient(license.clientId, es256k(license.owner)))).rejects.toMatchObject({
      error: "invalid_client",
    });
  });
});

describe("a license's backend: client_credentials with its signer's assertion", () => {
  /** A license for private_key_jwt with an enabled signer, and the access token Flow A gives that signer. */
  async function licenseWithFlowAToken() {
    const license = await registerLicense();
    const signer = await enableSigner(license);
    const { state, challenge } = await requestChallenge(license);
    const flowA = (await (await submit(license, state, await signer.signMessage({ message: challenge }))).json()) as {
      access_token: string;
    };
    await setClientAuthentication(keyfob().store, license.clientId, { tokenEndpointAuthMethod: "private_key_jwt" });
    return { license, signer, flowA: flowA.access_token };
  }

  it("gives Flow A's access token for the signer, recorded with it; userinfo and introspection accept it; a revoked signer is refused", async () => {
    const { license, signer, flowA } = await licenseWithFlowAToken();
    const config = await discover(license.clientId, es256k(signer));
    const tokens = await client.clientCredentialsGrant(config);
    expect(tokens).not.toHaveProperty("id_token");
    expect(tokens).not.toHaveProperty("refresh_token");
    expect(tokens).toMatchObject({ token_type: "bearer", scope: "openid email" });

    const claims = decodeJwt(tokens.access_token);
    const expected = decodeJwt(flowA);
    for (const name of ["iss", "sub", "aud", "client_id", "ethereum_address", "provider_id", "email_verified", "scope"])
      expect([name, claims[name]]).toEqual([name, expected[name]]);
    expect(decodeSubject(claims.sub as string)).toEqual({ userId: license.clientId, connector: "web3" });
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ typ: "at+jwt", alg: decodeProtectedHeader(flowA).alg });
    const record = await tables(keyfob()).issuedToken.findUniqueOrThrow({ where: { jti: claims.jti as string } });
    expect(record).toMatchObject({ clientId: license.clientId, userId: license.clientId, connector: "web3", signer: signer.address });

    const userinfo = await client.fetchUserInfo(config, tokens.access_token, expected.sub as string);
    expect(userinfo).toMatchObject({ sub: expected.sub, ethereum_address: license.clientId });
    expect(await client.tokenIntrospection(config, tokens.access_token)).toMatchObject({
      active: true,
      sub: expected.sub,
      client_id: license.clientId,
    });

    await revokeSigner(keyfob(), license.clientId, signer.address);
    await expect(client.clientCredentialsGrant(config)).rejects.toMatchObject({ error: "invalid_client" });
  });

  it("takes Flow A's scopes, and refuses any other with invalid_scope", async () => {
    const { license, signer } = await licenseWithFlowAToken();
    const config = await discover(license.clientId, es256k(signer));
    const tokens = await client.clientCredentialsGrant(config, { scope: "openid" });
    expect(tokens.scope).toBe("openid");
    expect(decodeJwt(tokens.access_token)).not.toHaveProperty("ethereum_address");
    await expect(client.clientCredentialsGrant(config, { scope: "openid keyfob:admin" })).rejects.toMatchObject({ error: "invalid_scope" });
  });

  it("binds the token to a DPoP key, and requires a proof of a client that must send one", async () => {
    const { license, signer } = await licenseWithFlowAToken();
    await updateClient(keyfob().store, license.clientId, { dpopBoundAccessTokens: true });
    const config = await discover(license.clientId, es256k(signer));
    await expect(client.clientCredentialsGrant(config)).rejects.toMatchObject({ error: "invalid_dpop_proof" });

    const keyPair = await client.randomDPoPKeyPair("ES256");
    const DPoP = client.getDPoPHandle(config, keyPair);
    const tokens = await client.clientCredentialsGrant(config, undefined, { DPoP });
    expect(tokens.token_type).toBe("dpop");
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: await calculateJwkThumbprint(await exportJWK(keyPair.publicKey)) });
    expect(await client.fetchUserInfo(config, tokens.access_token, client.skipSubjectCheck, { DPoP })).toMatchObject({
      ethereum_address: license.clientId,
    });
  });

  it("keeps a license's client_credentials without a signer's assertion as it was: for clients with a secret", async () => {
    const { id, privateKey, kid } = await keyClient();
    const refused = client.clientCredentialsGrant(await discover(id, client.PrivateKeyJwt({ key: privateKey, kid })));
    await expect(refused).rejects.toMatchObject({ error: "unauthorized_client" });
  });
});

describe("a jwks_uri", () => {
  let server: http.Server;
  let served: { keys: JWK[] } = { keys: [] };
  let fetches = 0;
  let k: Keyfob;
  beforeAll(async () => {
    server = http.createServer((_, response) => {
      fetches += 1;
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(served));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    // Keyfob may reach this machine only when the operator allows it (the back-channel logout's rules).
    k = createKeyfob(loadConfig({ ...process.env, BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS: "127.0.0.0/8" }), keyfob().store);
  });
  afterAll(async () => {
    server.close();
    await k.close();
  });
  afterEach(() => vi.useRealTimers());

  it("is fetched, kept, and fetched again for an unknown kid", async () => {
    const first = await generateKeyPair("ES256");
    const second = await generateKeyPair("ES256");
    served = { keys: [{ ...(await exportJWK(first.publicKey)), kid: "first", alg: "ES256" }] };
    const { id } = await createClient(k.store, { name: "jwks_uri client" });
    const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks-${id}`;
    await setClientAuthentication(k.store, id, { tokenEndpointAuthMethod: "private_key_jwt", jwksUri: uri }, k.config);
    const on = routesOn(k);

    expect((await revokeWith(await assertion(id, first.privateKey, "first"), on)).status).toBe(200);
    expect((await revokeWith(await assertion(id, first.privateKey, "first"), on)).status).toBe(200);
    expect(fetches).toBe(1);

    // The client rotates its key; past the refetch cooldown, the new kid makes Keyfob fetch the set again.
    served = { keys: [{ ...(await exportJWK(second.publicKey)), kid: "second", alg: "ES256" }] };
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 31_000 });
    expect((await revokeWith(await assertion(id, second.privateKey, "second"), on)).status).toBe(200);
    expect(fetches).toBe(2);
  });

  it("is refused at registration on a host Keyfob may not reach", async () => {
    const { id } = await createClient(keyfob().store, { name: "jwks_uri stranger" });
    await expect(
      setClientAuthentication(keyfob().store, id, { tokenEndpointAuthMethod: "private_key_jwt", jwksUri: "https://169.254.169.254/keys" }),
    ).rejects.toThrow(/public host/);
  });
});

describe("a smart-account license's assertion (EIP191, ERC-1271 on a local chain)", () => {
  let chain: LocalChain;
  let k: Keyfob;
  const owner = privateKeyToAccount(generatePrivateKey());
  let license: string;
  beforeAll(async () => {
    chain = await startLocalChain();
    k = createKeyfob(loadConfig({ ...process.env, RPC_URL: chain.rpcUrl, CHAIN_ID: String(chain.chainId) }), keyfob().store);
    license = await (await deployLicenseAccounts(chain, compileContracts())).deployAccount(owner.address);
    await createClient(k.store, { id: license, name: "Smart-account license" });
    await setClientAuthentication(k.store, license, { tokenEndpointAuthMethod: "private_key_jwt" });
  }, 120_000);
  afterAll(async () => {
    await k?.close();
    await chain?.stop();
  });

  /** The account's owner signs the signing input with personal_sign (EIP-191); the account vouches for it (ERC-1271). */
  const eip191 = (signer: PrivateKeyAccount) =>
    licenseAssertion("EIP191", async (signingInput) => hexToBytes(await signer.signMessage({ message: signingInput })));

  it("gives openid-client tokens when the account's owner signed it", async () => {
    const tokens = await codeFlow(await codeFlowClient(license, eip191(owner), k));
    expect(tokens.claims()?.aud).toBe(license);
  });

  it("gives the account's backend Flow A's access token for the account with client_credentials", async () => {
    const tokens = await client.clientCredentialsGrant(await discover(license, eip191(owner), k));
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({ aud: license, client_id: license, ethereum_address: license, provider_id: "web3" });
    expect(decodeSubject(claims.sub as string)).toEqual({ userId: license, connector: "web3" });
    const record = await tables(k).issuedToken.findUniqueOrThrow({ where: { jti: claims.jti as string } });
    expect(record).toMatchObject({ userId: license, connector: "web3", signer: null });
  });

  it("refuses a key the account does not accept", async () => {
    const stranger = privateKeyToAccount(generatePrivateKey());
    await expect(codeFlow(await codeFlowClient(license, eip191(stranger), k))).rejects.toMatchObject({ error: "invalid_client" });
  });
});
