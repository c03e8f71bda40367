/**
 * Flow A with contract accounts, against a real local chain (hardhat node) and the real route
 * handlers: ERC-1271 for deployed accounts, ERC-6492 for accounts not deployed yet, and the
 * chain being unreachable (503, the state kept for a retry). Nothing is mocked.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createLocalJWKSet, decodeJwt, jwtVerify } from "jose";
import { bytesToHex, concatHex, getAddress, serializeErc6492Signature, type Address, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountLoginUrl } from "@/lib/accounts/account-login";
import { resolveAccount } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { redeemCode } from "@/lib/actions/exchange-code";
import { adminRedirectUri, beginAdminLogin, ensureAdminClient, finishAdminLogin } from "@/lib/admin/session";
import { ADMIN_CLIENT_ID } from "@/lib/clients/client-id";
import { addRedirectUri, createClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { findSession } from "@/lib/sessions/login-session";
import { accountLinkNonce, loginWithWallet, verifyAccountLink } from "@/lib/siwe/login";
import { SIWE_PURPOSE } from "@/lib/siwe/purpose";
import { decodeSubject } from "@/lib/tokens/sub";
import { freePort } from "../scripts/free-port";
import { compileContracts, startLocalChain, type LocalChain } from "./chain/local-chain";
import { deployLicenseAccounts, randomSalt, type LicenseAccounts } from "./chain/license-accounts";
import { tables } from "./support/database";
import { signedInNow } from "./support/flow-b";
import { route } from "./support/routes";

const generateChallengeRoute = route("/auth/web3/generate_challenge");
const jwksRoute = route("/.well-known/jwks.json");
const submitChallengeRoute = route("/auth/web3/submit_challenge");

type Handler = (request: Request) => Promise<Response>;
type Reply = { status: number; headers: Headers; body: Record<string, unknown> };

const DOMAIN = "http://localhost:4000/callback";
const SCOPE = "openid email";

let chain: LocalChain;
let accounts: LicenseAccounts;
let app: Keyfob;

/** A developer license: its client_id is a deployed LicenseAccount owned by `licenseOwner`. */
const licenseOwner = privateKeyToAccount(generatePrivateKey());
let license: Address;
/** An ordinary client, and a user whose wallet is a deployed LicenseAccount owned by `userOwner`. */
let appClientId: string;
const userOwner = privateKeyToAccount(generatePrivateKey());
let userAccount: Address;
/** A user whose account is not deployed yet (ERC-6492); the factory would deploy it for (owner, salt). */
const pendingOwner = privateKeyToAccount(generatePrivateKey());
const pendingSalt = randomSalt();
let pendingAccount: Address;

const stranger = privateKeyToAccount(generatePrivateKey());
const httpServers: http.Server[] = [];

beforeAll(async () => {
  chain = await startLocalChain();
  // lib/runtime builds the route handlers' Keyfob from process.env on first use: set the chain first.
  process.env.RPC_URL = chain.rpcUrl;
  process.env.CHAIN_ID = String(chain.chainId);
  app = keyfob();
  expect(app.signatures.onChain).toBeDefined();

  accounts = await deployLicenseAccounts(chain, compileContracts());
  license = await accounts.deployAccount(licenseOwner.address);
  userAccount = await accounts.deployAccount(userOwner.address);
  pendingAccount = await accounts.predict(pendingOwner.address, pendingSalt);
  expect(await accounts.isDeployed(pendingAccount)).toBe(false);

  await createClient(app.store, { id: license, name: "License account" });
  await addRedirectUri(app.store, license, DOMAIN);
  appClientId = (await createClient(app.store, { name: "Contract wallet app" })).id;
  await addRedirectUri(app.store, appClientId, DOMAIN);
}, 120_000);

afterAll(async () => {
  for (const server of httpServers) {
    server.closeAllConnections();
    server.close();
  }
  await chain?.stop();
  if (app) await tables(app).$disconnect();
});

async function call(handler: Handler, pathname: string, params: Record<string, string>): Promise<Reply> {
  const response = await handler(
    new Request(`${process.env.ISSUER_URL}${pathname}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(params),
    }),
  );
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

async function challengeFor(clientId: string, address: Address, nonce?: string) {
  const reply = await call(generateChallengeRoute, "/auth/web3/generate_challenge", {
    client_id: clientId,
    domain: DOMAIN,
    scope: SCOPE,
    response_type: "code",
    address,
    ...(nonce && { nonce }),
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  const { state, challenge } = reply.body as { state: string; challenge: string };
  expect(challenge).toContain(`\n${getAddress(address)}\n`);
  expect(challenge).toContain(`\nChain ID: ${chain.chainId}\n`);
  return { state, challenge };
}

function submit(clientId: string, state: string, signature: Hex, handler: Handler = submitChallengeRoute) {
  return call(handler, "/auth/web3/submit_challenge", {
    client_id: clientId,
    state,
    domain: DOMAIN,
    grant_type: "authorization_code",
    signature,
  });
}

/** submit_challenge exactly as the route serves it, but on another Keyfob (another RPC_URL). */
function submitOn(other: Keyfob): (request: Request) => Promise<Response> {
  return route("/auth/web3/submit_challenge", () => other);
}

/** A Keyfob on the same database as the routes, with its chain verifier on `rpcUrl`. */
function keyfobWithRpc(rpcUrl: string): Keyfob {
  return createKeyfob(loadConfig({ ...process.env, RPC_URL: rpcUrl, CHAIN_ID: String(chain.chainId) }), app.store);
}

function expectError(reply: Reply, status: number, error: string) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  expect(reply.body).toEqual({ error, error_description: expect.any(String), status, message: reply.body.error_description });
  expect(reply.headers.get("cache-control")).toBe("no-store");
}

/** Checks the tokens' signatures against the JWKS endpoint and returns the ID token's claims. */
async function expectTokens(reply: Reply, clientId: string, address: Address) {
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  expect(reply.body).toMatchObject({ token_type: "bearer", access_token: expect.any(String), id_token: expect.any(String) });
  const jwks = createLocalJWKSet(await (await jwksRoute(new Request("http://localhost/.well-known/jwks.json"))).json());
  const verify = { issuer: process.env.ISSUER_URL, audience: clientId };
  const { payload: idToken } = await jwtVerify(reply.body.id_token as string, jwks, verify);
  const { payload: accessToken } = await jwtVerify(reply.body.access_token as string, jwks, verify);
  for (const claims of [idToken, accessToken]) {
    expect(claims.ethereum_address).toBe(getAddress(address));
    expect(decodeSubject(claims.sub!)).toEqual({ userId: getAddress(address), connector: "web3" });
  }
  expect(accessToken.scope).toBe(SCOPE);
  return idToken;
}

/** An HTTP server on localhost answering every request with `status` and `body`, like a failing RPC provider. */
async function failingRpc(status: number, body: (id: unknown) => unknown): Promise<string> {
  const server = http.createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", () => {
      let id: unknown = null;
      try {
        id = (JSON.parse(text) as { id?: unknown }).id ?? null;
      } catch {}
      const payload = body(id);
      response.writeHead(status, { "content-type": typeof payload === "string" ? "text/html" : "application/json" });
      response.end(typeof payload === "string" ? payload : JSON.stringify(payload));
    });
  });
  httpServers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  return `http://localhost:${(server.address() as AddressInfo).port}`;
}

/**
 * An RPC that vouches for every signature: eth_call says "valid"; it records what it was asked.
 * With `claimsCode` it also says every address is a contract account (eth_getCode).
 */
async function lyingRpc({ claimsCode = false } = {}): Promise<{ url: string; methods: string[] }> {
  const methods: string[] = [];
  const url = await failingRpc(200, () => null);
  const server = httpServers.at(-1)!;
  server.removeAllListeners("request");
  server.on("request", (request, response) => {
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", () => {
      const { id, method } = JSON.parse(text) as { id: unknown; method: string };
      methods.push(method);
      const code = claimsCode ? "0x6080604052" : "0x";
      const result =
        method === "eth_chainId" ? `0x${chain.chainId.toString(16)}` : method === "eth_getCode" ? code : `0x${"00".repeat(31)}01`;
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id, result }));
    });
  });
  return { url, methods };
}

const garbage = (bytes: number): Hex => bytesToHex(crypto.getRandomValues(new Uint8Array(bytes)));

describe("Flow A with a deployed ERC-1271 account", () => {
  it("signs a developer license in with its owner's key: tokens for the contract's address", async () => {
    const { state, challenge } = await challengeFor(license, license, "n-0S6_WzA2Mj");
    const signature = await licenseOwner.signMessage({ message: challenge });
    const claims = await expectTokens(await submit(license, state, signature), license, license);
    expect(claims.nonce).toBe("n-0S6_WzA2Mj");
    expect(claims.aud).toBe(license);
  });

  it("signs a user's contract account in to an ordinary client", async () => {
    const { state, challenge } = await challengeFor(appClientId, userAccount);
    const signature = await userOwner.signMessage({ message: challenge });
    const claims = await expectTokens(await submit(appClientId, state, signature), appClientId, userAccount);
    expect(claims.aud).toBe(appClientId);
  });

  it("refuses a signature by a key that does not own the account (400 invalid_grant)", async () => {
    const { state, challenge } = await challengeFor(license, license);
    expectError(await submit(license, state, await stranger.signMessage({ message: challenge })), 400, "invalid_grant");
    // Another account's owner is not this account's owner either.
    expectError(await submit(license, state, await userOwner.signMessage({ message: challenge })), 400, "invalid_grant");
  });

  it("refuses the owner's signature of another challenge", async () => {
    const { state } = await challengeFor(appClientId, userAccount);
    const other = await challengeFor(appClientId, userAccount);
    expectError(await submit(appClientId, state, await userOwner.signMessage({ message: other.challenge })), 400, "invalid_grant");
  });

  it("uses a state once", async () => {
    const { state, challenge } = await challengeFor(appClientId, userAccount);
    const signature = await userOwner.signMessage({ message: challenge });
    await expectTokens(await submit(appClientId, state, signature), appClientId, userAccount);
    expectError(await submit(appClientId, state, signature), 400, "invalid_grant");
  });
});

describe("Flow A with an account not deployed yet (ERC-6492)", () => {
  it("accepts the owner's 6492-wrapped signature, without deploying the account", async () => {
    const { state, challenge } = await challengeFor(appClientId, pendingAccount);
    const signature = accounts.wrapErc6492(pendingOwner.address, pendingSalt, await pendingOwner.signMessage({ message: challenge }));
    expect(signature.endsWith("6492".repeat(16))).toBe(true);
    await expectTokens(await submit(appClientId, state, signature), appClientId, pendingAccount);
    // Verification simulates the deployment in eth_call; the chain is unchanged.
    expect(await accounts.isDeployed(pendingAccount)).toBe(false);
  });

  it("refuses a 6492-wrapped signature by another key (400 invalid_grant)", async () => {
    const { state, challenge } = await challengeFor(appClientId, pendingAccount);
    const signature = accounts.wrapErc6492(pendingOwner.address, pendingSalt, await stranger.signMessage({ message: challenge }));
    expectError(await submit(appClientId, state, signature), 400, "invalid_grant");
  });

  it("refuses a wrapper that deploys a different account than the one signing in", async () => {
    // The stranger's own counterfactual account, with the stranger's signature: valid for that
    // account, but the challenge is for pendingAccount.
    const { state, challenge } = await challengeFor(appClientId, pendingAccount);
    const signature = accounts.wrapErc6492(stranger.address, pendingSalt, await stranger.signMessage({ message: challenge }));
    expectError(await submit(appClientId, state, signature), 400, "invalid_grant");
  });

  it("refuses a wrapper whose factory call reverts (400, not 500)", async () => {
    const { state, challenge } = await challengeFor(appClientId, pendingAccount);
    const signature = serializeErc6492Signature({
      address: accounts.factory,
      data: "0xdeadbeef", // no such function: the factory reverts
      signature: await pendingOwner.signMessage({ message: challenge }),
    });
    expectError(await submit(appClientId, state, signature), 400, "invalid_grant");
  });

  it("accepts a wrapped signature once the account is deployed (the wrapper is then ignored)", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const salt = randomSalt();
    const account = await accounts.deployAccount(owner.address, salt);
    const { state, challenge } = await challengeFor(appClientId, account);
    const signature = accounts.wrapErc6492(owner.address, salt, await owner.signMessage({ message: challenge }));
    await expectTokens(await submit(appClientId, state, signature), appClientId, account);
  });

  it("refuses the owner's unwrapped signature while the account has no code", async () => {
    const { state, challenge } = await challengeFor(appClientId, pendingAccount);
    expectError(await submit(appClientId, state, await pendingOwner.signMessage({ message: challenge })), 400, "invalid_grant");
  });
});

describe("Flow A with malformed contract signatures", () => {
  const cases: [string, (challenge: string) => Hex | Promise<Hex>][] = [
    ["200 random bytes", () => garbage(200)],
    [
      "66 bytes: a valid owner signature with a byte appended",
      async (challenge) => concatHex([await licenseOwner.signMessage({ message: challenge }), "0x00"]),
    ],
    ["random bytes ending in the ERC-6492 magic suffix", () => concatHex([garbage(150), `0x${"6492".repeat(16)}`])],
    ["65 zero bytes", () => `0x${"00".repeat(65)}` as Hex],
  ];

  for (const [name, make] of cases) {
    it(`answers 400 invalid_grant, not 500, for ${name}`, async () => {
      const { state, challenge } = await challengeFor(license, license);
      expectError(await submit(license, state, await make(challenge)), 400, "invalid_grant");
      // The failure did not spend the state: the owner's signature still signs in.
      await expectTokens(await submit(license, state, await licenseOwner.signMessage({ message: challenge })), license, license);
    });
  }

  it("answers 400, not 500, for garbage longer than 65 bytes for a plain wallet address", async () => {
    const wallet: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey());
    const { state } = await challengeFor(appClientId, wallet.address);
    expectError(await submit(appClientId, state, garbage(97)), 400, "invalid_grant");
  });
});

describe("Flow A when the chain cannot be reached", () => {
  let closedRpcUrl: string;
  beforeAll(async () => {
    closedRpcUrl = `http://localhost:${await freePort()}`;
  });

  it("answers 503 temporarily_unavailable for a contract signature, and keeps the state for a retry", async () => {
    const offline = submitOn(keyfobWithRpc(closedRpcUrl));
    const { state, challenge } = await challengeFor(license, license);
    const signature = await licenseOwner.signMessage({ message: challenge });

    const refused = await submit(license, state, signature, offline);
    expectError(refused, 503, "temporarily_unavailable");
    expect(refused.headers.get("retry-after")).toBe("5");

    // The same state and signature, once the chain answers again.
    await expectTokens(await submit(license, state, signature), license, license);
    expectError(await submit(license, state, signature), 400, "invalid_grant");
  });

  it("answers 503 for an ERC-6492 signature too", async () => {
    const offline = submitOn(keyfobWithRpc(closedRpcUrl));
    const { state, challenge } = await challengeFor(appClientId, pendingAccount);
    const signature = accounts.wrapErc6492(pendingOwner.address, pendingSalt, await pendingOwner.signMessage({ message: challenge }));
    expectError(await submit(appClientId, state, signature, offline), 503, "temporarily_unavailable");
    await expectTokens(await submit(appClientId, state, signature), appClientId, pendingAccount);
  });

  it("never calls a signature bad when it could not ask the chain", async () => {
    const offline = submitOn(keyfobWithRpc(closedRpcUrl));
    const { state, challenge } = await challengeFor(license, license);
    expectError(await submit(license, state, await stranger.signMessage({ message: challenge }), offline), 503, "temporarily_unavailable");
    expectError(await submit(license, state, garbage(120), offline), 503, "temporarily_unavailable");
  });

  it("still signs plain wallets in without the chain", async () => {
    const offline = submitOn(keyfobWithRpc(closedRpcUrl));
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { state, challenge } = await challengeFor(appClientId, wallet.address);
    await expectTokens(
      await submit(appClientId, state, await wallet.signMessage({ message: challenge }), offline),
      appClientId,
      wallet.address,
    );
  });

  it("answers 503 when the RPC endpoint answers with an HTTP error (a gateway whose upstream is down)", async () => {
    const offline = submitOn(keyfobWithRpc(await failingRpc(502, () => "<html>502 Bad Gateway</html>")));
    const { state, challenge } = await challengeFor(license, license);
    const signature = await licenseOwner.signMessage({ message: challenge });
    expectError(await submit(license, state, signature, offline), 503, "temporarily_unavailable");
    await expectTokens(await submit(license, state, signature), license, license);
  });

  // A provider answering with a JSON-RPC error body (rate limits: HTTP 429 with -32005, or HTTP 200
  // with -32005/-32603) could not check the signature: 503, not invalid_grant.
  for (const [name, status, code] of [
    ["HTTP 429 with a JSON-RPC rate-limit error", 429, -32005],
    ["HTTP 200 with a JSON-RPC limit-exceeded error", 200, -32005],
    ["HTTP 200 with a JSON-RPC internal error", 200, -32603],
  ] as const) {
    it(`answers 503, not invalid_grant, when the RPC provider answers ${name}`, async () => {
      const rpcUrl = await failingRpc(status, (id) => ({
        jsonrpc: "2.0",
        id,
        error: { code, message: code === -32603 ? "internal error" : "request limit exceeded" },
      }));
      const offline = submitOn(keyfobWithRpc(rpcUrl));
      const { state, challenge } = await challengeFor(license, license);
      const signature = await licenseOwner.signMessage({ message: challenge });
      expectError(await submit(license, state, signature, offline), 503, "temporarily_unavailable");
    });
  }
});

describe("a compromised RPC provider", () => {
  it("is never asked about a signature that recovers to the address it claims", async () => {
    const rpc = await lyingRpc();
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { state, challenge } = await challengeFor(appClientId, wallet.address);
    await expectTokens(
      await submit(appClientId, state, await wallet.signMessage({ message: challenge }), submitOn(keyfobWithRpc(rpc.url))),
      appClientId,
      wallet.address,
    );
    expect(rpc.methods).toEqual([]);
  });

  it("cannot vouch for junk with the ERC-6492 suffix: a wrapper that does not decode is refused unasked", async () => {
    const rpc = await lyingRpc();
    const victim = privateKeyToAccount(generatePrivateKey());
    const { state } = await challengeFor(appClientId, victim.address);
    expectError(
      await submit(appClientId, state, concatHex([garbage(150), `0x${"6492".repeat(16)}`]), submitOn(keyfobWithRpc(rpc.url))),
      400,
      "invalid_grant",
    );
    expect(rpc.methods).toEqual([]);
  });

  it("is outvoted by an honest provider: with two providers a forged wrapper for a plain wallet is refused", async () => {
    const rpc = await lyingRpc();
    const victim = privateKeyToAccount(generatePrivateKey());
    const { state, challenge } = await challengeFor(appClientId, victim.address);
    // A well-formed wrapper (the stranger's own counterfactual account) claiming the victim's address.
    const forged = accounts.wrapErc6492(stranger.address, randomSalt(), await stranger.signMessage({ message: challenge }));
    const quorum = createKeyfob(
      loadConfig({ ...process.env, RPC_URL: `${rpc.url},${chain.rpcUrl}`, CHAIN_ID: String(chain.chainId) }),
      app.store,
    );
    expectError(await submit(appClientId, state, forged, submitOn(quorum)), 400, "invalid_grant");
    expect(rpc.methods).toContain("eth_call");
    // The genuine owner of a contract account still gets in when both honest providers agree.
    const both = createKeyfob(
      loadConfig({ ...process.env, RPC_URL: `${chain.rpcUrl}, ${chain.rpcUrl}/`, CHAIN_ID: String(chain.chainId) }),
      app.store,
    );
    const owned = await challengeFor(license, license);
    await expectTokens(
      await submit(license, owned.state, await licenseOwner.signMessage({ message: owned.challenge }), submitOn(both)),
      license,
      license,
    );
  });

  it("needs RPC_QUORUM answers: one provider down is 503 with the default quorum, and enough with RPC_QUORUM=1", async () => {
    const down = `http://localhost:${await freePort()}`;
    const strict = createKeyfob(
      loadConfig({ ...process.env, RPC_URL: `${chain.rpcUrl},${down}`, CHAIN_ID: String(chain.chainId) }),
      app.store,
    );
    const tolerant = createKeyfob(
      loadConfig({ ...process.env, RPC_URL: `${chain.rpcUrl},${down}`, RPC_QUORUM: "1", CHAIN_ID: String(chain.chainId) }),
      app.store,
    );
    const { state, challenge } = await challengeFor(license, license);
    const signature = await licenseOwner.signMessage({ message: challenge });
    expectError(await submit(license, state, signature, submitOn(strict)), 503, "temporarily_unavailable");
    await expectTokens(await submit(license, state, signature, submitOn(tolerant)), license, license);
    expect(() => loadConfig({ ...process.env, RPC_URL: chain.rpcUrl, RPC_QUORUM: "2" })).toThrow(
      /RPC_QUORUM: 2 is more than the 1 providers/,
    );
  });

  it("cannot log a plain wallet's address in: the chain is asked only for accounts with code", async () => {
    const rpc = await lyingRpc();
    const lied = submitOn(keyfobWithRpc(rpc.url));
    const victim = privateKeyToAccount(generatePrivateKey());
    const { state, challenge } = await challengeFor(appClientId, victim.address);
    expectError(await submit(appClientId, state, await stranger.signMessage({ message: challenge }), lied), 400, "invalid_grant");
    expectError(await submit(appClientId, state, garbage(120), lied), 400, "invalid_grant");
    expect(rpc.methods).toContain("eth_getCode");
    expect(rpc.methods).not.toContain("eth_call");
  });
});

describe("hosted login with a smart account", () => {
  /** RFC 7636's example verifier and its S256 challenge. */
  const VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
  const authorizationQuery = (clientId: string, redirectUri: string, extra: Record<string, string> = {}) =>
    new URLSearchParams({
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: "code",
      scope: "openid",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      ...extra,
    });

  const signedMessage = async (owner: PrivateKeyAccount, address: Address, nonce: string, purpose: string = SIWE_PURPOSE.login) => {
    const message = createSiweMessage({
      domain: new URL(process.env.ISSUER_URL!).host,
      address,
      uri: process.env.ISSUER_URL!,
      version: "1",
      chainId: chain.chainId,
      nonce,
      issuedAt: new Date(),
      resources: [purpose],
    });
    return { message, signature: await owner.signMessage({ message }) };
  };

  async function hostedLoginCompletion(k: Keyfob, clientId: string, redirectUri: string) {
    const start = await startAuthorization(k, authorizationQuery(clientId, redirectUri));
    if (start.kind !== "login") throw new Error(`expected a login page, got ${start.kind}`);
    const { message, signature } = await signedMessage(userOwner, userAccount, start.walletNonce);
    return loginWithWallet(k, start.interactionId, message, signature);
  }
  const hostedLogin = async (k: Keyfob, clientId: string, redirectUri: string) =>
    (await hostedLoginCompletion(k, clientId, redirectUri)).location;

  it("records the contract in the session and the tokens: amr is wallet and contract", async () => {
    const { location, newSession } = await hostedLoginCompletion(app, appClientId, DOMAIN);
    expect((await findSession(app, newSession!.token))?.amr).toEqual(["wallet", "contract"]);
    const { response: tokens } = await redeemCode(app, {
      client: { id: appClientId, confidential: false },
      params: { code: new URL(location).searchParams.get("code")!, redirect_uri: DOMAIN, code_verifier: VERIFIER },
      caller: { endpoint: "token" },
    });
    expect(decodeJwt(tokens.id_token).amr).toEqual(["wallet", "contract"]);
    // A plain wallet's login stays ["wallet"].
    const wallet = privateKeyToAccount(generatePrivateKey());
    const start = await startAuthorization(app, authorizationQuery(appClientId, DOMAIN));
    if (start.kind !== "login") throw new Error("no login page");
    const { message, signature } = await signedMessage(wallet, wallet.address, start.walletNonce);
    expect((await findSession(app, (await loginWithWallet(app, start.interactionId, message, signature)).newSession!.token))?.amr).toEqual([
      "wallet",
    ]);
  });

  it("cannot reach the dashboard through a contract-verified session (prompt=none, Continue as) or its code", async () => {
    const { newSession } = await hostedLoginCompletion(app, appClientId, DOMAIN);
    const session = (await findSession(app, newSession!.token))!;
    await ensureAdminClient(app);
    // prompt=none without max_age, as a crafted request would send it: a new login is required.
    const silent = await startAuthorization(app, authorizationQuery(ADMIN_CLIENT_ID, adminRedirectUri(app), { prompt: "none" }), {
      session,
    });
    expect(silent.kind === "redirect" && new URL(silent.location).searchParams.get("error")).toBe("login_required");
    const page = await startAuthorization(app, authorizationQuery(ADMIN_CLIENT_ID, adminRedirectUri(app)));
    if (page.kind !== "login") throw new Error("no login page");
    await expect(completeAuthorization(app, page.interactionId, { session })).rejects.toMatchObject({
      message: expect.stringMatching(/needs a new login/),
    });
    // The switch on: the session may complete it, and the dashboard takes its code.
    const allowing = createKeyfob(loadConfig({ ...process.env, ADMIN_CONTRACT_SIGNATURES: "true" }), app.store);
    const { location, cookie } = await beginAdminLogin(allowing);
    const crafted = new URL(location).searchParams;
    crafted.delete("max_age");
    crafted.set("prompt", "none");
    const answered = await startAuthorization(allowing, crafted, { session });
    if (answered.kind !== "redirect") throw new Error("expected a redirect");
    expect(await finishAdminLogin(allowing, cookie, new URL(answered.location).searchParams)).toEqual(expect.any(String));
    // The same code path with the switch off refuses the contract's code at the callback too.
    const refusing = await beginAdminLogin(app);
    const again = new URL(refusing.location).searchParams;
    again.delete("max_age");
    const code = await startAuthorization(allowing, new URLSearchParams({ ...Object.fromEntries(again), prompt: "none" }), { session });
    if (code.kind !== "redirect") throw new Error("expected a redirect");
    await expect(finishAdminLogin(app, refusing.cookie, new URL(code.location).searchParams)).rejects.toMatchObject({
      message: expect.stringMatching(/smart-account/),
    });
  });

  it("never links a wallet to an account on a contract's word", async () => {
    const holder = privateKeyToAccount(generatePrivateKey()).address;
    await tables(app).account.create({ data: { id: holder } });
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await accounts.deployAccount(owner.address);
    const { message, signature } = await signedMessage(owner, account, accountLinkNonce(app, holder), SIWE_PURPOSE.linkWallet);
    await expect(verifyAccountLink(app, holder, message, signature, signedInNow())).rejects.toMatchObject({
      code: "invalid_grant",
      message: expect.stringMatching(/cannot link a wallet/),
    });
    expect(await tables(app).identity.count({ where: { subject: account } })).toBe(0);
  });

  it("a login a lying RPC vouched for cannot link the attacker's own wallet to the account it claims (an admin's)", async () => {
    const rpc = await lyingRpc({ claimsCode: true });
    const liar = keyfobWithRpc(rpc.url);
    const admin = privateKeyToAccount(generatePrivateKey()).address;
    await tables(app).account.create({ data: { id: admin } });
    await tables(app).adminRole.create({ data: { accountId: admin, grantedBy: "test" } });
    // The attacker signs in at /account as the admin's address; the RPC calls the signature the account's.
    const start = await startAuthorization(liar, new URL(await accountLoginUrl(liar, "en")).searchParams);
    if (start.kind !== "login") throw new Error("expected the login page");
    const login = await signedMessage(stranger, admin, start.walletNonce);
    const { newSession } = await loginWithWallet(liar, start.interactionId, login.message, login.signature);
    const session = (await findSession(liar, newSession!.token))!;
    expect([session.accountId, session.amr]).toEqual([admin, ["wallet", "contract"]]);
    expect(rpc.methods).toContain("eth_call");

    // Then links a plain wallet of its own, which would sign in to the dashboard as the admin.
    const attacker = privateKeyToAccount(generatePrivateKey());
    const link = await signedMessage(attacker, attacker.address, accountLinkNonce(liar, admin), SIWE_PURPOSE.linkWallet);
    await expect(verifyAccountLink(liar, admin, link.message, link.signature, { login: session })).rejects.toMatchObject({
      code: "invalid_request",
      why: { code: "contract_session" },
    });
    expect(await tables(app).identity.count({ where: { subject: attacker.address } })).toBe(0);
    // The attacker's wallet logs in to an account of its own, not the admin's.
    expect(await resolveAccount(app, { provider: "web3", subject: attacker.address, emailVerified: false })).toBe(attacker.address);
  });

  it("logs a contract account in to an application, but not to the dashboard unless ADMIN_CONTRACT_SIGNATURES", async () => {
    expect(new URL(await hostedLogin(app, appClientId, DOMAIN)).searchParams.get("code")).toBeTruthy();
    await ensureAdminClient(app);
    await expect(hostedLogin(app, ADMIN_CLIENT_ID, adminRedirectUri(app))).rejects.toMatchObject({
      code: "invalid_grant",
      message: expect.stringMatching(/smart-account signatures are not accepted for admin sign-in/),
    });
    const allowing = createKeyfob(loadConfig({ ...process.env, ADMIN_CONTRACT_SIGNATURES: "true" }), app.store);
    expect(new URL(await hostedLogin(allowing, ADMIN_CLIENT_ID, adminRedirectUri(app))).searchParams.get("code")).toBeTruthy();
  });
});

describe("the decoded ID token", () => {
  it("carries ethereum_address only with the email scope", async () => {
    const reply = await call(generateChallengeRoute, "/auth/web3/generate_challenge", {
      client_id: appClientId,
      domain: DOMAIN,
      scope: "openid",
      response_type: "code",
      address: userAccount,
    });
    const { state, challenge } = reply.body as { state: string; challenge: string };
    const tokens = await submit(appClientId, state, await userOwner.signMessage({ message: challenge }));
    expect(tokens.status).toBe(200);
    expect(decodeJwt(tokens.body.id_token as string).ethereum_address).toBeUndefined();
  });
});
