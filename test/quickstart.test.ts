/**
 * The Flow B quickstart (docs/quickstart.md) and examples/nextjs-authjs hold the dashboard's
 * Integration snippets as lib/admin/integration.ts renders them, and that code signs a user in
 * against a real Keyfob: an instance in a process of its own (HTTP, its issuer its own URL), the
 * user's login on the hosted page done through lib/ (a wallet's EIP-4361 signature, or a Google
 * identity) as the other Flow B tests do. openid-client runs the snippet as written; Auth.js runs
 * the example's auth.ts (next-auth's route handlers, outside a Next server: no second build).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { NextRequest } from "next/server";
import { createSiweMessage } from "viem/siwe";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { AUTHJS_APP, AUTHJS_EXAMPLE_FILE, embedSnippets, OPENID_CLIENT_APP, quickstartSnippets } from "@/lib/admin/quickstart";
import { addRedirectUri, createClient } from "@/lib/clients/registry";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { loginWithWallet } from "@/lib/siwe/login";
import { SIWE_PURPOSE } from "@/lib/siwe/purpose";
import { type ProtocolProcess, startProtocolProcess } from "./support/protocol-process";
import { runOpenidClientQuickstart } from "./support/quickstart";

let instance: ProtocolProcess;
/** This process's view of the instance (its issuer), for the hosted login's steps. */
let k: Keyfob;

beforeAll(async () => {
  instance = await startProtocolProcess((url) => ({ ISSUER_URL: url }));
  k = createKeyfob({ ...keyfob().config, issuerUrl: instance.url }, keyfob().store);
  for (const app of [OPENID_CLIENT_APP, AUTHJS_APP]) {
    await createClient(k.store, { id: app.id, name: "Quickstart" });
    await addRedirectUri(k.store, app.id, app.redirectUris[0]);
  }
});
afterAll(async () => {
  await instance?.stop();
  await k?.close();
});

/** The hosted login of an authorization URL, with a wallet's EIP-4361 signature: the redirect back to the application. */
async function walletLogin(authorizationUrl: URL, wallet = privateKeyToAccount(generatePrivateKey())): Promise<URL> {
  const start = await startAuthorization(k, authorizationUrl.searchParams);
  if (start.kind !== "login") throw new Error(`expected the login page, got ${JSON.stringify(start)}`);
  const message = createSiweMessage({
    domain: new URL(instance.url).host,
    address: wallet.address,
    uri: instance.url,
    version: "1",
    chainId: k.config.chainId,
    nonce: start.walletNonce,
    issuedAt: new Date(),
    resources: [SIWE_PURPOSE.login],
  });
  const { location } = await loginWithWallet(k, start.interactionId, message, await wallet.signMessage({ message }));
  return new URL(location);
}

it("the quickstart and the Next.js example hold the Integration panel's snippets (npm run docs:quickstart writes them)", () => {
  const page = readFileSync("docs/quickstart.md", "utf8");
  expect(page).toContain("<!-- snippet:openid-client -->");
  expect(page).toContain("<!-- snippet:authjs -->");
  expect(page).toBe(embedSnippets(page));
  expect(readFileSync(AUTHJS_EXAMPLE_FILE, "utf8")).toBe(`${quickstartSnippets().authjs}\n`);
});

it("the openid-client quickstart signs a wallet in through the hosted login, as written", async () => {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const tokens = await runOpenidClientQuickstart(instance.url, (url) => walletLogin(url, wallet));
  expect(tokens.claims()).toMatchObject({
    iss: instance.url,
    aud: OPENID_CLIENT_APP.id,
    provider_id: "web3",
    ethereum_address: wallet.address,
  });
});

it("the Next.js example's Auth.js configuration signs a user in: sign-in, Keyfob's login, callback, session", async () => {
  // The example's auth.ts for this instance (only the issuer's host and port differ), where next-auth resolves.
  const dir = path.resolve("test-results/quickstart");
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "auth.ts"), quickstartSnippets(instance.url).authjs);
  process.env.AUTH_SECRET = "quickstart-test-secret-0123456789abcdef";
  process.env.AUTH_TRUST_HOST = "true";
  const { handlers } = await import(path.join(dir, "auth.ts"));

  const app = new URL(AUTHJS_APP.redirectUris[0]).origin;
  const cookies = new Map<string, string>();
  const request = (url: string, init: { method?: string; body?: URLSearchParams } = {}) =>
    new NextRequest(url, {
      ...init,
      headers: {
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; "),
        ...(init.body ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
    });
  const browse = async (url: string, init: { method?: string; body?: URLSearchParams } = {}) => {
    const response: Response = await (init.method === "POST" ? handlers.POST : handlers.GET)(request(url, init));
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
      if (value) cookies.set(name, value);
      else cookies.delete(name);
    }
    return response;
  };

  const { csrfToken } = await (await browse(`${app}/api/auth/csrf`)).json();
  const signIn = await browse(`${app}/api/auth/signin/keyfob`, {
    method: "POST",
    body: new URLSearchParams({ csrfToken, callbackUrl: app }),
  });
  expect(signIn.status).toBe(302);
  const authorization = new URL(signIn.headers.get("location")!);
  expect(`${authorization.origin}${authorization.pathname}`).toBe(`${instance.url}/auth`);
  expect(authorization.searchParams.get("code_challenge_method")).toBe("S256");

  const start = await startAuthorization(k, authorization.searchParams);
  if (start.kind !== "login") throw new Error(`expected the login page, got ${JSON.stringify(start)}`);
  const identity = { provider: "google", subject: "quickstart-authjs", email: "nextjs@example.com", emailVerified: true } as const;
  const { location } = await completeAuthorization(k, start.interactionId, { identity });
  expect(location).toMatch(new RegExp(`^${AUTHJS_APP.redirectUris[0]}\\?`));

  const callback = await browse(location);
  expect(callback.status, await callback.clone().text()).toBe(302);
  expect(callback.headers.get("location")).toBe(app);
  const session = await (await browse(`${app}/api/auth/session`)).json();
  expect(session.user).toMatchObject({ email: "nextjs@example.com" });
});
