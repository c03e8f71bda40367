/**
 * Vehicle tokens (RFC 8693 token exchange, and the platform's /v1/tokens/exchange) against a real
 * local chain: the platform's vehicle contract (ERC-721 with per-token privileges, versions bumped
 * on transfer) compiled with solc and deployed on a hardhat node, real Flow A developer tokens,
 * openid-client's genericGrantRequest (with and without DPoP) and the platform's published SDK
 * (@dimo-network/data-sdk) over HTTP. Two Keyfob instances share the database. The only stand-ins
 * are RPC providers that fail or lie (an HTTP server answering JSON-RPC), since a real provider
 * cannot be made to.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { DIMO } from "@dimo-network/data-sdk";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import * as client from "openid-client";
import { getAddress, toFunctionSelector, type Address } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ALL_SCOPES } from "@/lib/admin/access";
import { keySchedule, revokeSigningKey, rotateSigningKey } from "@/lib/admin/operations";
import { resolveAccount } from "@/lib/accounts/accounts";
import { blockAccount } from "@/lib/accounts/blocking";
import { addSigner, createClient, revokeSigner, rotateClientSecret, setClientEnabled, updateClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { VehicleEventWatcher } from "@/lib/vehicles/watcher";
import { protocolRoute, serveProtocol } from "../server/protocol";
import { startLocalChain, type LocalChain } from "./chain/local-chain";
import { deployVehicles, type LocalVehicles } from "./chain/vehicles";
import { tables } from "./support/database";
import { ISSUER, registerLicense, requestChallenge, submit, type License } from "./support/flow-a";
import { authorize, google, pkce, token } from "./support/flow-b";
import { formPost, routesOn } from "./support/routes";

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token";
/** Where the published SDK always says the vehicle contract is (its constants): the test chain has one there too. */
const SDK_VEHICLE_CONTRACT = "0xbA5738a18d83D41847dfFbDC6101d37C69c9B0cF" as Address;
const FAR_FUTURE = 2n ** 40n;

let chain: LocalChain;
let vehicles: LocalVehicles;
let sdkVehicles: LocalVehicles;
let app: Keyfob;
/** A second instance on the same database, with caches of its own. */
let other: Keyfob;
let license: License;
/** Another license, allowed token exchange too, that the owners grant nothing. */
let stranger: License;
let server: http.Server;
let serverUrl: string;
const extra: Keyfob[] = [];
const rpcServers: http.Server[] = [];

/** Hardhat's account 0 owns vehicles 1 to 9; account 1 is a buyer. */
const owner = 0;
let buyer: Address;

beforeAll(async () => {
  chain = await startLocalChain();
  vehicles = await deployVehicles(chain);
  sdkVehicles = await deployVehicles(chain, SDK_VEHICLE_CONTRACT);
  Object.assign(process.env, {
    RPC_URL: chain.rpcUrl,
    CHAIN_ID: String(chain.chainId),
    VEHICLE_CONTRACTS: `${vehicles.address},${SDK_VEHICLE_CONTRACT}`,
  });
  app = keyfob();
  // The process-wide instance starts its watcher, as the server does: the tests run their own.
  await app.vehicleEvents?.close();
  other = instance();
  license = await registerLicense();
  stranger = await registerLicense();
  for (const l of [license, stranger]) await updateClient(app.store, l.clientId, { tokenExchange: true });
  buyer = chain.wallet(1).account.address;
  for (const id of [1n, 2n, 3n, 4n, 5n, 6n, 7n]) await vehicles.mint(id, owner);
  await sdkVehicles.mint(7n, owner);

  server = http.createServer((request, response) => {
    const found = protocolRoute(request);
    if (!found) return void response.writeHead(404).end();
    void serveProtocol(app, found, ISSUER, request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  serverUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  for (const s of rpcServers) {
    s.closeAllConnections();
    s.close();
  }
  for (const k of [other, ...extra]) await k?.close();
  await chain?.stop();
  if (app) await tables(app).$disconnect();
});

/** Another Keyfob instance on the same database; `env` changes its configuration. */
function instance(env: Record<string, string> = {}): Keyfob {
  const k = createKeyfob(loadConfig({ ...process.env, ...env }), app.store);
  extra.push(k);
  return k;
}

/** A Flow A developer token of `l`, signed by its owner or by `signer`. */
async function developerToken(l: License, signer: PrivateKeyAccount = l.owner): Promise<string> {
  const { state, challenge } = await requestChallenge(l);
  const response = await submit(l, state, await signer.signMessage({ message: challenge }));
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

const did = (tokenId: bigint, contract: Address = vehicles.address) => `did:erc721:${chain.chainId}:${contract.toLowerCase()}:${tokenId}`;
const grantee = (l: License) => getAddress(l.clientId);

/** The RFC 8693 request as form fields. */
function exchangeFields(l: License, subject: string, resource: string, scope: string, extraFields: Record<string, string> = {}) {
  return {
    grant_type: TOKEN_EXCHANGE,
    client_id: l.clientId,
    subject_token: subject,
    subject_token_type: ACCESS_TOKEN,
    resource,
    scope,
    ...extraFields,
  };
}

async function exchange(
  l: License,
  subject: string,
  resource: string,
  scope: string,
  on: Keyfob = app,
  extraFields: Record<string, string> = {},
) {
  const response = await routesOn(on).token(formPost("/token", exchangeFields(l, subject, resource, scope, extraFields)));
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

async function introspect(token: string, on: Keyfob = app) {
  const response = await routesOn(on).introspect(
    formPost(
      "/token/introspect",
      { token },
      { authorization: `Basic ${Buffer.from(`${resourceServer.id}:${resourceServer.secret}`).toString("base64")}` },
    ),
  );
  return (await response.json()) as Record<string, unknown>;
}

/** A resource server that may introspect every client's tokens. */
const resourceServer = { id: "", secret: "" };
beforeAll(async () => {
  const created = await createClient(app.store, { name: "Vehicle API" });
  resourceServer.id = created.id;
  resourceServer.secret = await rotateClientSecret(app, created.id);
  await updateClient(app.store, created.id, { resourceServer: true });
});

/** How many vehicle tokens are recorded for a client. */
async function vehicleTokenCount(l: License): Promise<number> {
  return tables(app).issuedToken.count({ where: { clientId: l.clientId, vehicle: { not: null } } });
}

describe("exchanging a developer token for a vehicle token (RFC 8693)", () => {
  it("openid-client gets one for what the owner granted; it is signed by the vehicle key set and carries the platform's claims", async () => {
    await vehicles.setPrivilege(1n, 1, grantee(license), FAR_FUTURE);
    await vehicles.setPrivilege(1n, 4, grantee(license), FAR_FUTURE);
    const subject = await developerToken(license);

    const config = await client.discovery(new URL(ISSUER), license.clientId, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
      [client.customFetch]: (url, init) => fetch(`${serverUrl}${new URL(url).pathname}`, init as RequestInit),
    });
    const metadata = config.serverMetadata();
    expect(metadata.grant_types_supported).toContain(TOKEN_EXCHANGE);
    expect(metadata.vehicle_token_jwks_uri).toBe(`${ISSUER}/keys/vehicle`);

    const tokens = await client.genericGrantRequest(config, TOKEN_EXCHANGE, {
      subject_token: subject,
      subject_token_type: ACCESS_TOKEN,
      resource: did(1n),
      scope: "privilege:GetLocationHistory privilege:GetNonLocationHistory",
    });
    expect(tokens).toMatchObject({
      issued_token_type: ACCESS_TOKEN,
      token_type: "bearer",
      expires_in: 600,
      scope: "privilege:GetNonLocationHistory privilege:GetLocationHistory",
    });

    const vehicleKeys = await (await fetch(`${serverUrl}/keys/vehicle`)).json();
    const accessKeys = await (await fetch(`${serverUrl}/keys`)).json();
    const { payload } = await jwtVerify(tokens.access_token, createLocalJWKSet(vehicleKeys), { issuer: ISSUER, audience: "dimo.zone" });
    await expect(jwtVerify(tokens.access_token, createLocalJWKSet(accessKeys))).rejects.toThrow();
    await expect(jwtVerify(subject, createLocalJWKSet(vehicleKeys))).rejects.toThrow();
    expect(payload).toMatchObject({
      sub: grantee(license),
      aud: ["dimo.zone"],
      asset: did(1n),
      permissions: ["privilege:GetNonLocationHistory", "privilege:GetLocationHistory"],
      contract_address: vehicles.address.toLowerCase(),
      token_id: "1",
      privilege_ids: [1, 4],
      act: { sub: grantee(license) },
      client_id: license.clientId,
    });
    expect(payload.exp! - payload.iat!).toBe(600);

    // Recorded like every token: introspection says what it is (without the access keys reloading
    // for a kid they cannot know); it is no access token for /userinfo.
    const reload = vi.spyOn(app.keys, "reloadForUnknownKey");
    expect(await introspect(tokens.access_token)).toMatchObject({
      active: true,
      client_id: license.clientId,
      asset: did(1n),
      scope: "privilege:GetNonLocationHistory privilege:GetLocationHistory",
    });
    expect(reload).not.toHaveBeenCalled();
    reload.mockRestore();
    const userinfo = await routesOn(app).userinfo(
      new Request(`${ISSUER}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } }),
    );
    expect(userinfo.status).toBe(401);
    const [event] = await tables(app).auditEvent.findMany({
      where: { action: "token.exchanged", clientId: license.clientId },
      orderBy: { at: "desc" },
      take: 1,
    });
    expect(event.detail).toContain(did(1n));
    expect(event.detail).toContain("privilege:GetLocationHistory");

    // The client revokes it (RFC 7009) like its other tokens.
    const revoked = await routesOn(app).revoke(formPost("/token/revoke", { client_id: license.clientId, token: tokens.access_token }));
    expect(revoked.status).toBe(200);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
  });

  it("binds the vehicle token to the DPoP key of the request, and a DPoP-bound developer token needs a proof of its key", async () => {
    await vehicles.setPrivilege(2n, 1, grantee(license), FAR_FUTURE);
    const config = await client.discovery(new URL(ISSUER), license.clientId, undefined, client.None(), {
      execute: [client.allowInsecureRequests],
      [client.customFetch]: (url, init) => fetch(`${serverUrl}${new URL(url).pathname}`, init as RequestInit),
    });
    const keyPair = await client.randomDPoPKeyPair("ES256");
    const DPoP = client.getDPoPHandle(config, keyPair);
    const subject = await developerToken(license);
    const params = {
      subject_token: subject,
      subject_token_type: ACCESS_TOKEN,
      resource: did(2n),
      scope: "privilege:GetNonLocationHistory",
    };
    const tokens = await client.genericGrantRequest(config, TOKEN_EXCHANGE, params, { DPoP });
    expect(tokens.token_type).toBe("dpop");
    const jkt = (decodeJwt(tokens.access_token).cnf as { jkt: string }).jkt;
    expect(jkt).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, token_type: "DPoP", cnf: { jkt } });

    // A vehicle token exchanged for a developer token bound to another key: refused, nothing recorded.
    const before = await vehicleTokenCount(license);
    const thief = client.getDPoPHandle(config, await client.randomDPoPKeyPair("ES256"));
    const boundSubject = tokens.access_token;
    await expect(
      client.genericGrantRequest(config, TOKEN_EXCHANGE, { ...params, subject_token: boundSubject }, { DPoP: thief }),
    ).rejects.toMatchObject({
      error: "invalid_grant",
    });
    expect(await vehicleTokenCount(license)).toBe(before);
  });

  it("the platform's published SDK, pointed at Keyfob, gets a vehicle token with its developer token", async () => {
    await sdkVehicles.setPrivilege(7n, 1, grantee(license), FAR_FUTURE);
    await sdkVehicles.setPrivilege(7n, 3, grantee(license), FAR_FUTURE);
    const dimo = new DIMO("Production");
    (dimo.tokenexchange as unknown as { api: string }).api = serverUrl;
    const developerJwt = { headers: { Authorization: `Bearer ${await developerToken(license)}` } };
    const answer = (await dimo.tokenexchange.exchange({ ...developerJwt, privileges: [1, 3], tokenId: 7 })) as {
      headers: { Authorization: string };
    };
    const vehicleJwt = answer.headers.Authorization.replace(/^Bearer /, "");
    expect(decodeJwt(vehicleJwt)).toMatchObject({
      asset: did(7n, SDK_VEHICLE_CONTRACT),
      contract_address: SDK_VEHICLE_CONTRACT.toLowerCase(),
      token_id: "7",
      privilege_ids: [1, 3],
      permissions: ["privilege:GetNonLocationHistory", "privilege:GetCurrentLocation"],
      sub: grantee(license),
    });

    // The asset shape, with an audience; and the platform's error shape for what was not granted.
    const post = (body: unknown) =>
      fetch(`${serverUrl}/v1/tokens/exchange`, {
        method: "POST",
        headers: { "content-type": "application/json", ...developerJwt.headers },
        body: JSON.stringify(body),
      });
    const byAsset = await post({
      asset: did(7n, SDK_VEHICLE_CONTRACT),
      permissions: ["privilege:GetNonLocationHistory"],
      audience: ["my-api"],
      note: "ignored, as the platform's service ignores fields it does not know",
    });
    expect(byAsset.status).toBe(200);
    expect(decodeJwt(((await byAsset.json()) as { token: string }).token)).toMatchObject({ aud: ["my-api"], privilege_ids: [1] });
    const refused = await post({ asset: did(7n, SDK_VEHICLE_CONTRACT), permissions: ["privilege:ExecuteCommands"] });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      code: 400,
      message: expect.stringContaining("privilege:ExecuteCommands"),
      error: "invalid_scope",
    });
    // The SDK surfaces the platform's error as it would the platform's own.
    await expect(dimo.tokenexchange.exchange({ ...developerJwt, privileges: [2], tokenId: 7 })).rejects.toMatchObject({ statusCode: 400 });
    for (const [body, error] of [
      [{ tokenId: 7 }, "invalid_request"],
      [{ nftContractAddress: SDK_VEHICLE_CONTRACT, tokenId: 7, privileges: ["one"] }, "invalid_scope"],
      [{ nftContractAddress: SDK_VEHICLE_CONTRACT, tokenId: 7, privileges: [99] }, "invalid_scope"],
      [{ asset: did(7n, SDK_VEHICLE_CONTRACT), permissions: "privilege:GetNonLocationHistory" }, "invalid_request"],
      [{ nftContractAddress: "0x12", tokenId: 7, privileges: [1] }, "invalid_target"],
    ] as const) {
      const malformed = await post(body);
      expect(malformed.status, JSON.stringify(body)).toBe(400);
      expect(await malformed.json()).toMatchObject({ code: 400, error });
    }
    const noToken = await fetch(`${serverUrl}/v1/tokens/exchange`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ nftContractAddress: SDK_VEHICLE_CONTRACT, tokenId: 7, privileges: [1] }),
    });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toMatchObject({ code: 401 });
  });
});

describe("refusals: never a token, nothing recorded", () => {
  const refusedWith = async (reply: { status: number; body: Record<string, unknown> }, status: number, error: string) => {
    expect(reply.status, JSON.stringify(reply.body)).toBe(status);
    expect(reply.body.error).toBe(error);
  };

  it("what the owner did not grant, or no longer grants, or granted to another license", async () => {
    await vehicles.setPrivilege(3n, 1, grantee(license), FAR_FUTURE);
    await vehicles.setPrivilege(3n, 4, grantee(license), 1n); // expired long ago
    await vehicles.setPrivilege(3n, 6, grantee(stranger), FAR_FUTURE);
    const subject = await developerToken(license);
    const before = await vehicleTokenCount(license);
    await refusedWith(await exchange(license, subject, did(3n), "privilege:ExecuteCommands"), 400, "invalid_scope");
    await refusedWith(await exchange(license, subject, did(3n), "privilege:GetLocationHistory"), 400, "invalid_scope");
    await refusedWith(await exchange(license, subject, did(3n), "privilege:GetLiveData"), 400, "invalid_scope");
    // One of two not granted: none issued.
    await refusedWith(
      await exchange(license, subject, did(3n), "privilege:GetNonLocationHistory privilege:GetLiveData"),
      400,
      "invalid_scope",
    );
    expect(await vehicleTokenCount(license)).toBe(before);
    // After a transfer, what the seller granted has lapsed.
    expect((await exchange(license, subject, did(3n), "privilege:GetNonLocationHistory")).status).toBe(200);
    await vehicles.transfer(3n, owner, buyer);
    await refusedWith(await exchange(license, subject, did(3n), "privilege:GetNonLocationHistory"), 400, "invalid_scope");
    expect(await vehicleTokenCount(license)).toBe(before + 1);
  });

  it("unknown or malformed vehicles and privileges", async () => {
    const subject = await developerToken(license);
    const before = await vehicleTokenCount(license);
    await refusedWith(await exchange(license, subject, did(999n), "privilege:GetNonLocationHistory"), 400, "invalid_target");
    const unknownContract = `did:erc721:${chain.chainId}:0x${"12".repeat(20)}:1`;
    await refusedWith(await exchange(license, subject, unknownContract, "privilege:GetNonLocationHistory"), 400, "invalid_target");
    const otherChain = `did:erc721:1:${vehicles.address.toLowerCase()}:1`;
    await refusedWith(await exchange(license, subject, otherChain, "privilege:GetNonLocationHistory"), 400, "invalid_target");
    for (const resource of [
      "did:erc721:31337:0x12:1",
      "https://vehicles.example.com/1",
      `${did(1n)}x`,
      `did:erc721:${chain.chainId}:${vehicles.address}:-1`,
    ])
      await refusedWith(await exchange(license, subject, resource, "privilege:GetNonLocationHistory"), 400, "invalid_target");
    await refusedWith(await exchange(license, subject, did(1n), "privilege:FlyTheCar"), 400, "invalid_scope");
    await refusedWith(await exchange(license, subject, did(1n), "openid"), 400, "invalid_scope");
    expect(await vehicleTokenCount(license)).toBe(before);
  });

  it("subject tokens that are not the client's live access token, or a client not allowed", async () => {
    await vehicles.setPrivilege(4n, 1, grantee(license), FAR_FUTURE);
    await vehicles.setPrivilege(4n, 1, grantee(stranger), FAR_FUTURE);
    const scope = "privilege:GetNonLocationHistory";
    const subject = await developerToken(license);
    const before = await vehicleTokenCount(license);
    // Another client's token.
    await refusedWith(await exchange(stranger, subject, did(4n), scope), 400, "invalid_grant");
    // A vehicle token is no subject token.
    const issued = await exchange(license, subject, did(4n), scope);
    expect(issued.status).toBe(200);
    await refusedWith(await exchange(license, issued.body.access_token as string, did(4n), scope), 400, "invalid_grant");
    await refusedWith(await exchange(license, "not-a-token", did(4n), scope), 400, "invalid_grant");
    // Another token type.
    await refusedWith(
      await exchange(license, subject, did(4n), scope, app, { subject_token_type: "urn:ietf:params:oauth:token-type:id_token" }),
      400,
      "invalid_request",
    );
    // Revoked on one instance: refused on the other at once.
    const revocable = await developerToken(license);
    await routesOn(app).revoke(formPost("/token/revoke", { client_id: license.clientId, token: revocable }));
    await refusedWith(await exchange(license, revocable, did(4n), scope, other), 400, "invalid_grant");
    // A developer token signed through a signer the license then removed.
    const signerKey = privateKeyToAccount(generatePrivateKey());
    await addSigner(app, license.clientId, signerKey.address);
    const throughSigner = await developerToken(license, signerKey);
    expect((await exchange(license, throughSigner, did(4n), scope)).status).toBe(200);
    await revokeSigner(app, license.clientId, signerKey.address);
    await refusedWith(await exchange(license, throughSigner, did(4n), scope, other), 400, "invalid_grant");
    expect(await vehicleTokenCount(license)).toBe(before + 2);
    // A client not allowed token exchange.
    const notAllowed = await registerLicense();
    await vehicles.setPrivilege(4n, 1, grantee(notAllowed), FAR_FUTURE);
    await refusedWith(await exchange(notAllowed, await developerToken(notAllowed), did(4n), scope), 400, "unauthorized_client");
    expect(await vehicleTokenCount(notAllowed)).toBe(0);
  });

  it("an end user's token from Flow B works for the license; blocking the user, or disabling the client, ends it on every instance", async () => {
    await vehicles.setPrivilege(5n, 7, grantee(license), FAR_FUTURE);
    const scope = "privilege:GetRawData";
    const fleet = { clientId: license.clientId, redirectUri: license.domain, pkce: pkce() };
    const identity = google();
    const code = (await authorize(fleet, identity)).searchParams.get("code")!;
    const userToken = ((await (await token(fleet, { code })).json()) as { access_token: string }).access_token;
    const issued = await exchange(license, userToken, did(5n), scope, other);
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(decodeJwt(issued.body.access_token as string)).toMatchObject({ sub: grantee(license), privilege_ids: [7] });

    await blockAccount(app, await resolveAccount(app, identity));
    expect(await introspect(issued.body.access_token as string, other)).toEqual({ active: false });
    await refusedWith(await exchange(license, userToken, did(5n), scope, other), 400, "invalid_grant");

    const developer = await developerToken(license);
    await setClientEnabled(app.store, license.clientId, false);
    try {
      for (const k of [app, other]) await refusedWith(await exchange(license, developer, did(5n), scope, k), 401, "invalid_client");
    } finally {
      await setClientEnabled(app.store, license.clientId, true);
    }
    for (const k of [app, other]) await k.audit.flush();
    const [failure] = await tables(app).auditEvent.findMany({
      where: { action: "token.failed", clientId: license.clientId },
      orderBy: { id: "desc" },
      take: 1,
    });
    expect(failure).toMatchObject({ outcome: "invalid_client", detail: expect.stringContaining("unknown or disabled client") });
  });

  it("an RPC that cannot answer, or providers that disagree: 503 with Retry-After", async () => {
    const subject = await developerToken(license);
    await vehicles.setPrivilege(5n, 1, grantee(license), FAR_FUTURE);
    const before = await vehicleTokenCount(license);
    const down = instance({ RPC_URL: `http://localhost:${await closedPort()}` });
    const unavailable = await exchange(license, subject, did(5n), "privilege:GetNonLocationHistory", down);
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get("retry-after")).toMatch(/^\d+$/);
    // One provider says the privilege is not held: the real chain says it is.
    const liar = await lyingRpc();
    const split = instance({ RPC_URL: `${chain.rpcUrl},${liar}` });
    const disagreed = await exchange(license, subject, did(5n), "privilege:GetNonLocationHistory", split);
    expect(disagreed.status).toBe(503);
    expect(await vehicleTokenCount(license)).toBe(before);
  });
});

describe("a car sold, a privilege ended: its vehicle tokens end on every instance", () => {
  it("a transfer seen by one instance's watcher revokes the tokens issued before it on both; the new owner's grants stand", async () => {
    const watcher = new VehicleEventWatcher({
      config: other.config,
      store: other.store,
      clock: other.clock,
      audit: other.audit,
      access: other.vehicleAccess!,
    });
    await watcher.pass(); // the cursor starts at the head
    await vehicles.setPrivilege(6n, 1, grantee(license), FAR_FUTURE);
    const subject = await developerToken(license);
    const sold = await exchange(license, subject, did(6n), "privilege:GetNonLocationHistory", app);
    const alsoSold = await exchange(license, subject, did(6n), "privilege:GetNonLocationHistory", other);
    expect([sold.status, alsoSold.status]).toEqual([200, 200]);

    await vehicles.transfer(6n, owner, buyer);
    await vehicles.setPrivilege(6n, 1, grantee(license), FAR_FUTURE, 1); // the buyer grants it anew
    const afterSale = await exchange(license, subject, did(6n), "privilege:GetNonLocationHistory", app);
    expect(afterSale.status).toBe(200);
    expect(await watcher.pass()).toBe(true);
    for (const k of [app, other]) {
      expect(await introspect(sold.body.access_token as string, k)).toEqual({ active: false });
      expect(await introspect(alsoSold.body.access_token as string, k)).toEqual({ active: false });
      expect(await introspect(afterSale.body.access_token as string, k)).toMatchObject({ active: true });
    }
    await watcher.close();
  });

  it("a privilege set to expire ends that license's tokens of it only; a watcher started later catches up from the cursor", async () => {
    await vehicles.setPrivilege(7n, 1, grantee(license), FAR_FUTURE);
    await vehicles.setPrivilege(7n, 4, grantee(license), FAR_FUTURE);
    await vehicles.setPrivilege(7n, 1, grantee(stranger), FAR_FUTURE);
    const history = await exchange(license, await developerToken(license), did(7n), "privilege:GetNonLocationHistory");
    const location = await exchange(license, await developerToken(license), did(7n), "privilege:GetLocationHistory");
    const strangers = await exchange(stranger, await developerToken(stranger), did(7n), "privilege:GetNonLocationHistory");
    const first = new VehicleEventWatcher({
      config: app.config,
      store: app.store,
      clock: app.clock,
      audit: app.audit,
      access: app.vehicleAccess!,
    });
    await first.pass();
    await first.close(); // the instance stops; the owner ends the location privilege meanwhile
    await vehicles.setPrivilege(7n, 4, grantee(license), 0n);
    const second = new VehicleEventWatcher({
      config: other.config,
      store: other.store,
      clock: other.clock,
      audit: other.audit,
      access: other.vehicleAccess!,
    });
    expect(await second.pass()).toBe(true);
    await second.close();
    expect(await introspect(location.body.access_token as string)).toEqual({ active: false });
    expect(await introspect(history.body.access_token as string)).toMatchObject({ active: true });
    expect(await introspect(strangers.body.access_token as string)).toMatchObject({ active: true });
  });

  it("the running watchers end a sold car's tokens within seconds, one instance holding the lease at a time", async () => {
    await vehicles.setPrivilege(2n, 4, grantee(license), FAR_FUTURE);
    const token = await exchange(license, await developerToken(license), did(2n), "privilege:GetLocationHistory");
    expect(token.status).toBe(200);
    const fast = { VEHICLE_EVENTS_INTERVAL: "1" };
    const [a, b] = [instance(fast), instance(fast)];
    a.vehicleEvents!.start();
    b.vehicleEvents!.start();
    await vehicles.transfer(2n, owner, buyer);
    const deadline = Date.now() + 20_000;
    while ((await introspect(token.body.access_token as string)).active && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(await introspect(token.body.access_token as string)).toEqual({ active: false });
    // Whichever holds the lease renews it; the other reads nothing.
    const passes = await Promise.all([a.vehicleEvents!.pass(), b.vehicleEvents!.pass()]);
    expect(passes.sort()).toEqual([false, true]);
  });
});

describe("the vehicle token keys", () => {
  const operator = { accountId: "cli", label: "cli:test", scopes: ALL_SCOPES };

  it("are listed apart, rotate with the access keys, and an admin revokes one: its tokens are refused on both instances, the access keys untouched", async () => {
    const schedule = await keySchedule(app, operator);
    const vehicleKid = schedule.find((key) => key.purpose === "vehicle" && key.status === "current")!.kid;
    // RS256's: the shared database may hold PS256/ES256 access keys too, once a test's client asked for one.
    const accessKid = schedule.find((key) => key.purpose === "access" && key.alg === "RS256" && key.status === "current")!.kid;
    await vehicles.setPrivilege(5n, 6, grantee(license), FAR_FUTURE);
    const subject = await developerToken(license);
    const issued = await exchange(license, subject, did(5n), "privilege:GetLiveData", other);
    expect(decodeProtectedHeader(issued.body.access_token as string).kid).toBe(vehicleKid);

    await rotateSigningKey(app, operator);
    const rotated = await keySchedule(app, operator);
    expect(
      rotated
        .filter((key) => key.status === "upcoming" && key.alg === "RS256")
        .map((key) => key.purpose)
        .sort(),
    ).toEqual(["access", "vehicle"]);

    const revocation = await revokeSigningKey(app, operator, vehicleKid);
    expect(revocation).toMatchObject({ revoked: true, was: "current" });
    for (const k of [app, other]) expect(await introspect(issued.body.access_token as string, k)).toEqual({ active: false });
    // The developer token, signed by the access keys, still works; the vehicle set signs with its successor.
    expect(await introspect(subject)).toMatchObject({ active: true });
    const next = await exchange(license, subject, did(5n), "privilege:GetLiveData", other);
    expect(next.status).toBe(200);
    expect(decodeProtectedHeader(next.body.access_token as string).kid).toBe(revocation.successor);
    expect((await keySchedule(app, operator)).find((key) => key.kid === accessKid)?.status).toBe("current");
  });
});

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "localhost", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** An RPC provider that forwards to the chain but says no privilege is held (eth_call answers false for hasPrivilege). */
async function lyingRpc(): Promise<string> {
  const hasPrivilege = toFunctionSelector("hasPrivilege(uint256,uint256,address)");
  const liar = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", async () => {
      const call = JSON.parse(text) as { id: unknown; method: string; params?: [{ data?: string }] };
      const forwarded = await fetch(chain.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: text });
      const answer = (await forwarded.json()) as { result?: string };
      if (call.method === "eth_call" && call.params?.[0]?.data?.startsWith(hasPrivilege)) answer.result = `0x${"00".repeat(32)}`;
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  });
  rpcServers.push(liar);
  await new Promise<void>((resolve) => liar.listen(0, "localhost", resolve));
  return `http://localhost:${(liar.address() as AddressInfo).port}`;
}
