/**
 * ENS profile claims against a real local chain (hardhat node) with an ENS registry, a public
 * resolver and a Universal Resolver deployed on it: the hosted wallet login resolves the wallet's
 * primary name and avatar, the code exchange and /userinfo carry them with the profile scope. The
 * avatars point at a local listener that Keyfob must never connect to.
 */
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { decodeJwt } from "jose";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { createClient, updateClient } from "@/lib/clients/registry";
import { confirmUserCode } from "@/lib/device/verification";
import { findInteraction } from "@/lib/interactions/interactions";
import { loadConfig } from "@/lib/config";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { logInto } from "@/lib/log";
import { keyfob } from "@/lib/runtime";
import { loginWithWallet } from "@/lib/siwe/login";
import { SIWE_PURPOSE } from "@/lib/siwe/purpose";
import { freePort } from "../scripts/free-port";
import { deployEns, type LocalEns } from "./chain/ens";
import { startLocalChain, type LocalChain } from "./chain/local-chain";
import { tables } from "./support/database";
import { ISSUER } from "./support/flow-a";
import { authorizeQuery, registerApp, token, userinfo, type App } from "./support/flow-b";
import { route } from "./support/routes";

const deviceAuthorizationRoute = route("/device/authorization");
const discoveryRoute = route("/.well-known/openid-configuration");
const tokenRoute = route("/token");

let chain: LocalChain;
let ens: LocalEns;
let app: Keyfob;
let client: App;
let avatarOrigin: string;
let avatars: Awaited<ReturnType<typeof avatarTripwire>>;
const servers: (http.Server | net.Server)[] = [];

/**
 * Where the avatars point: a TCP listener that only counts connections. Keyfob passes an https avatar
 * on as written and must never connect to it (the record's owner chooses the URL).
 */
async function avatarTripwire(): Promise<{ origin: string; connections: () => number }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  return { origin: `https://localhost:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

/** A JSON-RPC proxy to the chain that counts the requests it passes on. */
async function countingRpc(): Promise<{ url: string; count: () => number }> {
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests++;
    request.pipe(
      http.request(chain.rpcUrl, { method: "POST", headers: { "content-type": "application/json" } }, (upstream) => {
        response.writeHead(upstream.statusCode ?? 502, { "content-type": "application/json" });
        upstream.pipe(response);
      }),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  return { url: `http://localhost:${(server.address() as AddressInfo).port}`, count: () => requests };
}

/** A provider that accepts connections and never answers. */
async function silentRpc(): Promise<string> {
  const server = http.createServer(() => {});
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  return `http://localhost:${(server.address() as AddressInfo).port}`;
}

/** A Keyfob on the routes' database with other chain settings. */
const keyfobWith = (env: Record<string, string>) =>
  createKeyfob(
    loadConfig({ ...process.env, CHAIN_ID: String(chain.chainId), ENS_UNIVERSAL_RESOLVER: ens.universalResolver, ...env }),
    app.store,
  );

/** A hosted wallet login on `on`, the code exchange and /userinfo on the routes: the ID token's and userinfo's claims. */
async function walletLogin(wallet: PrivateKeyAccount, scope: string, on: Keyfob = app, to: App = client) {
  const start = await startAuthorization(on, authorizeQuery(to, { scope }));
  if (start.kind !== "login") throw new Error(`expected the login page, got ${start.kind}`);
  const location = await signIn(wallet, start.interactionId, start.walletNonce, on);
  const response = await token(to, { code: new URL(location).searchParams.get("code")! });
  expect(response.status).toBe(200);
  const tokens = (await response.json()) as { id_token: string; access_token: string; refresh_token?: string };
  const info = (await (await userinfo(tokens.access_token)).json()) as Record<string, unknown>;
  return { idToken: decodeJwt(tokens.id_token), info, refreshToken: tokens.refresh_token };
}

/** The wallet's signed EIP-4361 login on the hosted page of an interaction; returns where the browser goes next. */
async function signIn(wallet: PrivateKeyAccount, interactionId: string, nonce: string, on: Keyfob = app) {
  const issuer = process.env.ISSUER_URL!;
  const message = createSiweMessage({
    domain: new URL(issuer).host,
    address: wallet.address,
    uri: issuer,
    version: "1",
    chainId: chain.chainId,
    nonce,
    issuedAt: new Date(),
    resources: [SIWE_PURPOSE.login],
  });
  return (await loginWithWallet(on, interactionId, message, await wallet.signMessage({ message }))).location;
}

const newWallet = () => privateKeyToAccount(generatePrivateKey());
const label = () => `u${generatePrivateKey().slice(2, 12)}`;

beforeAll(async () => {
  chain = await startLocalChain();
  ens = await deployEns(chain);
  avatars = await avatarTripwire();
  avatarOrigin = avatars.origin;
  process.env.RPC_URL = chain.rpcUrl;
  process.env.CHAIN_ID = String(chain.chainId);
  process.env.ENS_UNIVERSAL_RESOLVER = ens.universalResolver;
  // A loaded machine's hardhat node may take seconds to answer: the bound is tested on its own below.
  process.env.ENS_TIMEOUT = "30s";
  app = keyfob();
  client = await registerApp();
}, 120_000);

afterAll(async () => {
  for (const server of servers) {
    if (server instanceof http.Server) server.closeAllConnections();
    server.close();
  }
  await chain?.stop();
  if (app) await tables(app).$disconnect();
});

describe("ENS profile claims", () => {
  it("gives the primary name and avatar as preferred_username and picture with the profile scope", async () => {
    const wallet = newWallet();
    const name = `${label()}.eth`;
    const avatar = `${avatarOrigin}/${name}.png`;
    await ens.setPrimary(wallet.address, name, avatar);
    const { idToken, info } = await walletLogin(wallet, "openid profile");
    expect(idToken).toMatchObject({ preferred_username: name, picture: avatar });
    expect(info).toMatchObject({ preferred_username: name, picture: avatar });
    expect(avatars.connections()).toBe(0);
  });

  it("gives none without the profile scope", async () => {
    const wallet = newWallet();
    const name = `${label()}.eth`;
    await ens.setPrimary(wallet.address, name, `${avatarOrigin}/a.png`);
    const { idToken, info } = await walletLogin(wallet, "openid email");
    for (const claims of [idToken, info]) {
      expect(claims.ethereum_address).toBe(wallet.address);
      expect(claims).not.toHaveProperty("preferred_username");
      expect(claims).not.toHaveProperty("picture");
    }
    // The login kept them all the same: the same wallet with the scope gets them.
    expect((await walletLogin(wallet, "openid profile")).idToken.preferred_username).toBe(name);
  });

  it("gives none for a reverse record whose name resolves to another address", async () => {
    const wallet = newWallet();
    const name = `${label()}.eth`;
    await ens.register(name);
    await ens.setAddress(name, newWallet().address);
    await ens.setText(name, "avatar", `${avatarOrigin}/b.png`);
    await ens.setReverse(wallet.address, name);
    const { idToken, info } = await walletLogin(wallet, "openid profile");
    for (const claims of [idToken, info]) {
      expect(claims).not.toHaveProperty("preferred_username");
      expect(claims).not.toHaveProperty("picture");
    }
  });

  it("gives the name without picture when the avatar is not an https URL", async () => {
    for (const avatar of [
      "data:image/svg+xml;base64,PHN2Zy8+",
      "ipfs://QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG",
      `eip155:1/erc721:${avatarOrigin}`,
    ]) {
      const wallet = newWallet();
      const name = `${label()}.eth`;
      await ens.setPrimary(wallet.address, name, avatar);
      const { idToken } = await walletLogin(wallet, "openid profile");
      expect(idToken.preferred_username).toBe(name);
      expect(idToken).not.toHaveProperty("picture");
    }
    expect(avatars.connections()).toBe(0);
  });

  it("logs in without the claims, and quickly, when the RPC cannot be reached or does not answer", async () => {
    const wallet = newWallet();
    await ens.setPrimary(wallet.address, `${label()}.eth`);
    for (const rpc of [`http://localhost:${await freePort()}`, await silentRpc()]) {
      const started = Date.now();
      const { idToken, info } = await walletLogin(wallet, "openid profile", keyfobWith({ RPC_URL: rpc, ENS_TIMEOUT: "1s" }));
      expect(Date.now() - started).toBeLessThan(1_000 + 2_000);
      expect(idToken).not.toHaveProperty("preferred_username");
      expect(info).not.toHaveProperty("preferred_username");
    }
    // Nothing was kept for it: a login with the chain reachable resolves it.
    expect((await walletLogin(wallet, "openid profile")).idToken.preferred_username).toMatch(/\.eth$/);
  });

  it("logs a failed resolution at info with the error's name only, never the RPC URL (it may hold an API key)", async () => {
    const lines: string[] = [];
    const restore = logInto((line) => lines.push(line));
    try {
      await walletLogin(newWallet(), "openid profile", keyfobWith({ RPC_URL: `http://localhost:${await freePort()}/v3/secret-api-key` }));
    } finally {
      restore();
    }
    const logged = lines.filter((line) => line.includes("ENS profile not resolved"));
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0])).toMatchObject({ level: "info", reason: expect.any(String) });
    expect(lines.join("")).not.toContain("secret-api-key");
  });

  it("keeps a resolved profile for ENS_CACHE_TTL: later logins ask no RPC and see the kept value", async () => {
    const rpc = await countingRpc();
    const caching = keyfobWith({ RPC_URL: rpc.url, ENS_CACHE_TTL: "3s" });
    const wallet = newWallet();
    const name = `${label()}.eth`;
    await ens.setPrimary(wallet.address, name, `${avatarOrigin}/old.png`);
    expect((await walletLogin(wallet, "openid profile", caching)).idToken.picture).toBe(`${avatarOrigin}/old.png`);
    const asked = rpc.count();
    expect(asked).toBeGreaterThan(0);
    await ens.setText(name, "avatar", `${avatarOrigin}/new.png`);
    // Another instance (the routes' Keyfob, on the chain directly) reads the same kept profile.
    expect((await walletLogin(wallet, "openid profile")).idToken.picture).toBe(`${avatarOrigin}/old.png`);
    expect((await walletLogin(wallet, "openid profile", caching)).idToken.picture).toBe(`${avatarOrigin}/old.png`);
    expect(rpc.count()).toBe(asked);
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    expect((await walletLogin(wallet, "openid profile", caching)).idToken.picture).toBe(`${avatarOrigin}/new.png`);
    expect(rpc.count()).toBeGreaterThan(asked);
  });

  it("carries the kept claims in refreshed tokens, as the refresh's scope allows", async () => {
    const refreshing = await registerApp({ settings: { refreshTokensAllowed: true } });
    const wallet = newWallet();
    const name = `${label()}.eth`;
    await ens.setPrimary(wallet.address, name);
    const { refreshToken } = await walletLogin(wallet, "openid profile offline_access", app, refreshing);
    const refresh = async (form: Record<string, string>) => {
      const response = await token(refreshing, { grant_type: "refresh_token", ...form });
      expect(response.status).toBe(200);
      return (await response.json()) as { id_token: string; refresh_token: string };
    };
    const refreshed = await refresh({ refresh_token: refreshToken! });
    expect(decodeJwt(refreshed.id_token).preferred_username).toBe(name);
    const narrowed = await refresh({ refresh_token: refreshed.refresh_token, scope: "openid" });
    expect(decodeJwt(narrowed.id_token)).not.toHaveProperty("preferred_username");
  });

  it("carries them in the device grant's tokens after a wallet login on the phone", async () => {
    const device = await createClient(app.store, { name: "Car display" });
    await updateClient(app.store, device.id, { deviceFlow: true });
    const wallet = newWallet();
    const name = `${label()}.eth`;
    await ens.setPrimary(wallet.address, name);
    const form = (params: Record<string, string>) => ({
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: device.id, ...params }),
    });
    const started = (await (
      await deviceAuthorizationRoute(new Request(`${ISSUER}/device/authorization`, form({ scope: "openid profile" })))
    ).json()) as {
      device_code: string;
      user_code: string;
    };
    const interactionId = await confirmUserCode(app, started.user_code, {});
    const interaction = await findInteraction(app, interactionId);
    expect(await signIn(wallet, interactionId, interaction!.walletNonce!)).toBe("/device?result=approved");
    const polled = await tokenRoute(
      new Request(
        `${ISSUER}/token`,
        form({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: started.device_code }),
      ),
    );
    expect(polled.status).toBe(200);
    expect(decodeJwt(((await polled.json()) as { id_token: string }).id_token).preferred_username).toBe(name);
  });

  it("lists the claims in discovery", async () => {
    const metadata = (await (await discoveryRoute(new Request("http://localhost:3000/.well-known/openid-configuration"))).json()) as {
      claims_supported: string[];
    };
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(["preferred_username", "picture"]));
  });
});
