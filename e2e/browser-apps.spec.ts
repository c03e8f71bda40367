/**
 * Browser applications on other origins, in real Chromium: a single-page app on a registered
 * origin runs Flow A and a PKCE code exchange with fetch and calls /userinfo (CORS, with the
 * preflight its Authorization header needs), and with oauth4webapi and a non-extractable DPoP key
 * (RFC 9449); a page on an unregistered origin is refused by the
 * browser; discovery and JWKS are readable from anywhere; the hosted pages cannot be framed and
 * carry their security headers.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type Page } from "@playwright/test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { addRedirectUri, createClient } from "../lib/clients/registry";
import { createStore, rawConnection } from "../lib/store";
import { baseURL } from "../playwright.config";
import { installWallet } from "./support/wallet";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);
const CHAIN_ID = 1;

/** A tiny web server standing for an application's origin: it serves whatever page a test sets, and oauth4webapi as a module. */
type Site = { origin: string; pages: Map<string, string>; close(): Promise<void> };

const OAUTH4WEBAPI = readFileSync(new URL("../node_modules/oauth4webapi/build/index.js", import.meta.url), "utf8");

async function site(): Promise<Site> {
  const pages = new Map<string, string>([["/oauth4webapi.js", OAUTH4WEBAPI]]);
  const server = http.createServer((req, res) => {
    const path = new URL(req.url!, "http://localhost").pathname;
    const page = pages.get(path);
    const type = path.endsWith(".js") ? "text/javascript" : "text/html; charset=utf-8";
    res.writeHead(page ? 200 : 404, { "content-type": type }).end(page ?? "not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  return {
    origin: `http://localhost:${(server.address() as AddressInfo).port}`,
    pages,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

let app: Site;
let elsewhere: Site;
test.beforeAll(async () => {
  [app, elsewhere] = await Promise.all([site(), site()]);
});
test.afterAll(async () => {
  await Promise.all([app.close(), elsewhere.close()]);
  await store.close();
});

/** A public client (a license address) whose redirect URI is on the application's origin. */
async function registerSpa() {
  const owner = privateKeyToAccount(generatePrivateKey());
  const redirectUri = `${app.origin}/callback`;
  await createClient(store, { id: owner.address, name: "Browser app" });
  await addRedirectUri(store, owner.address, redirectUri);
  return { owner, clientId: owner.address, redirectUri };
}
type Spa = Awaited<ReturnType<typeof registerSpa>>;

/** A page whose script runs `body` (an async function body with `keyfob` in scope) and shows its result. */
function scriptPage(body: string) {
  return `<!doctype html><title>app</title><pre id="result">running</pre><script type="module">
const keyfob = ${JSON.stringify(baseURL)};
const show = (value) => { document.getElementById("result").textContent = JSON.stringify(value); };
try { show(await (async () => { ${body} })()); } catch (error) { show({ thrown: String(error) }); }
</script>`;
}

async function result(page: Page): Promise<Record<string, unknown>> {
  await expect(page.locator("#result")).not.toHaveText("running", { timeout: 20_000 });
  return JSON.parse((await page.locator("#result").textContent())!);
}

/**
 * A PKCE login to `spa` with a new browser wallet; the app's callback page runs `callback`, given the
 * code verifier. Resolves with the wallet once the browser is back on the app.
 */
async function walletLogin(page: Page, spa: Spa, state: string, callback: (verifier: string) => string) {
  const verifier = randomBytes(32).toString("base64url");
  app.pages.set("/callback", scriptPage(callback(verifier)));
  const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
  const query = new URLSearchParams({
    client_id: spa.clientId,
    redirect_uri: spa.redirectUri,
    response_type: "code",
    scope: "openid email",
    state,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  });
  await page.goto(`/auth?${query}`);
  await page.getByRole("button", { name: "Continue with a wallet" }).click();
  await page.waitForURL((url) => url.origin === app.origin);
  return wallet;
}

test("a single-page app on a registered origin completes a PKCE login and calls /userinfo", async ({ page }) => {
  const spa = await registerSpa();
  const wallet = await walletLogin(
    page,
    spa,
    "spa-state",
    (verifier) => `
      const code = new URLSearchParams(location.search).get("code");
      const form = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: ${JSON.stringify(spa.redirectUri)},
        client_id: ${JSON.stringify(spa.clientId)}, code_verifier: ${JSON.stringify(verifier)} });
      const token = await fetch(keyfob + "/token", { method: "POST", body: form });
      const tokens = await token.json();
      // The Authorization header makes this a preflighted request.
      const userinfo = await fetch(keyfob + "/userinfo", { headers: { Authorization: "Bearer " + tokens.access_token } });
      return { tokenStatus: token.status, tokenType: tokens.token_type, userinfoStatus: userinfo.status, userinfo: await userinfo.json() };`,
  );
  expect(await result(page)).toMatchObject({
    tokenStatus: 200,
    tokenType: "bearer",
    userinfoStatus: 200,
    userinfo: { sub: expect.any(String), ethereum_address: wallet.address },
  });
});

test("a single-page app logs in with oauth4webapi and a non-extractable DPoP key; its token is useless as Bearer", async ({ page }) => {
  const spa = await registerSpa();
  await walletLogin(
    page,
    spa,
    "spa-dpop",
    (verifier) => `
      const oauth = await import("/oauth4webapi.js");
      const insecure = { [oauth.allowInsecureRequests]: true };
      const issuer = new URL(keyfob);
      const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
      const client = { client_id: ${JSON.stringify(spa.clientId)} };
      const keyPair = await oauth.generateKeyPair("ES256"); // non-extractable unless asked otherwise
      const DPoP = oauth.DPoP(client, keyPair);
      const params = oauth.validateAuthResponse(as, client, new URL(location.href), "spa-dpop");
      const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, ${JSON.stringify(spa.redirectUri)},
        ${JSON.stringify(verifier)}, { DPoP, ...insecure });
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
      const claims = JSON.parse(atob(tokens.access_token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
      const info = await oauth.processUserInfoResponse(as, client, claims.sub,
        await oauth.userInfoRequest(as, client, tokens.access_token, { DPoP, ...insecure }));
      const bearer = await fetch(keyfob + "/userinfo", { headers: { Authorization: "Bearer " + tokens.access_token } });
      return { extractable: keyPair.privateKey.extractable, algs: as.dpop_signing_alg_values_supported.includes("ES256"),
        tokenType: tokens.token_type, bound: typeof claims.cnf?.jkt, sub: info.sub === claims.sub,
        bearerStatus: bearer.status, bearerChallenge: bearer.headers.get("WWW-Authenticate").split(" ")[0] };`,
  );
  expect(await result(page)).toEqual({
    extractable: false,
    algs: true,
    tokenType: "dpop",
    bound: "string",
    sub: true,
    bearerStatus: 401,
    bearerChallenge: "DPoP",
  });
});

test("a single-page app runs Flow A with fetch", async ({ page }) => {
  const spa = await registerSpa();
  await page.exposeFunction("signChallenge", (message: string) => spa.owner.signMessage({ message }));
  app.pages.set(
    "/flow-a",
    scriptPage(`
      const params = { client_id: ${JSON.stringify(spa.clientId)}, domain: ${JSON.stringify(spa.redirectUri)}, scope: "openid", response_type: "code", address: ${JSON.stringify(spa.clientId)} };
      const generated = await (await fetch(keyfob + "/auth/web3/generate_challenge", { method: "POST", body: new URLSearchParams(params) })).json();
      const signature = await window.signChallenge(generated.challenge);
      const submitted = await fetch(keyfob + "/auth/web3/submit_challenge", { method: "POST", body: new URLSearchParams({
        client_id: params.client_id, state: generated.state, grant_type: "authorization_code", domain: params.domain, signature }) });
      return { status: submitted.status, keys: Object.keys(await submitted.json()) };`),
  );
  await page.goto(`${app.origin}/flow-a`);
  expect(await result(page)).toEqual({ status: 200, keys: ["access_token", "token_type", "expires_in", "id_token"] });
});

test("a page on an unregistered origin is refused by the browser, and Keyfob does nothing for it", async ({ page, request }) => {
  const spa = await registerSpa();
  elsewhere.pages.set(
    "/steal",
    scriptPage(`
      const attempts = {};
      for (const [name, call] of Object.entries({
        token: () => fetch(keyfob + "/token", { method: "POST", body: new URLSearchParams({ grant_type: "authorization_code", code: "x", client_id: ${JSON.stringify(spa.clientId)} }) }),
        challenge: () => fetch(keyfob + "/auth/web3/generate_challenge", { method: "POST", body: new URLSearchParams({ client_id: ${JSON.stringify(spa.clientId)},
          domain: ${JSON.stringify(spa.redirectUri)}, scope: "openid", response_type: "code", address: ${JSON.stringify(spa.clientId)} }) }),
        userinfo: () => fetch(keyfob + "/userinfo", { headers: { Authorization: "Bearer x" } }),
      })) {
        attempts[name] = await call().then((r) => "read " + r.status, (e) => e.name);
      }
      // Public metadata is readable from anywhere.
      attempts.discovery = (await (await fetch(keyfob + "/.well-known/openid-configuration")).json()).issuer;
      attempts.keys = (await (await fetch(keyfob + "/keys")).json()).keys.length > 0;
      return attempts;`),
  );
  const before = await db.challenge.count({ where: { clientId: spa.clientId } });
  await page.goto(`${elsewhere.origin}/steal`);
  expect(await result(page)).toEqual({ token: "TypeError", challenge: "TypeError", userinfo: "TypeError", discovery: baseURL, keys: true });
  // The form POST went out without a preflight, but Keyfob refused it before doing anything.
  expect(await db.challenge.count({ where: { clientId: spa.clientId } })).toBe(before);

  // What the browser saw: no Access-Control-Allow-Origin for that origin; a preflight is answered
  // (any origin may ask), and the actual request is then judged against the client.
  const refused = await request.post("/token", {
    headers: { Origin: elsewhere.origin },
    form: { grant_type: "authorization_code", code: "x", client_id: spa.clientId },
  });
  expect(refused.status()).toBe(400);
  expect(refused.headers()["access-control-allow-origin"]).toBeUndefined();
  const allowed = await request.post("/token", {
    headers: { Origin: app.origin },
    form: { grant_type: "authorization_code", code: "x", client_id: spa.clientId },
  });
  expect(allowed.headers()["access-control-allow-origin"]).toBe(app.origin);
  expect(allowed.headers()["access-control-allow-credentials"]).toBeUndefined();
  const preflight = await request.fetch("/userinfo", {
    method: "OPTIONS",
    headers: { Origin: app.origin, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization" },
  });
  expect(preflight.status()).toBe(204);
  expect(preflight.headers()).toMatchObject({
    "access-control-allow-origin": app.origin,
    "access-control-allow-headers": "Authorization, Content-Type, DPoP",
  });
  expect(preflight.headers()["access-control-allow-methods"]).toContain("GET");
  const introspection = await request.post("/token/introspect", { headers: { Origin: app.origin }, form: { token: "x" } });
  expect(introspection.headers()["access-control-allow-origin"]).toBeUndefined(); // server-to-server only
});

test("the hosted pages cannot be framed, and carry their security headers", async ({ page, request }) => {
  const spa = await registerSpa();
  const authorize = `/auth?${new URLSearchParams({ client_id: spa.clientId, redirect_uri: spa.redirectUri, response_type: "code", scope: "openid", code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256" })}`;
  const login = await request.get(authorize, { maxRedirects: 0 });
  expect(login.status()).toBe(303);
  const interaction = login.headers().location;
  expect(interaction).toMatch(/^\/auth\/interaction\/[\w-]{43}$/);

  // Auth.js's own pages (its sign-out page, the upstream callbacks) too.
  for (const path of [
    authorize,
    interaction,
    "/auth/error?reason=expired",
    "/account",
    "/admin/login",
    "/admin/signed-out",
    "/api/auth/signout",
    "/api/auth/callback/google?code=x&state=y",
  ]) {
    const response = await request.get(path, { maxRedirects: 0 });
    const headers = response.headers();
    expect(headers["content-security-policy"], path).toMatch(/frame-ancestors 'none'/);
    expect(headers["content-security-policy"], path).toMatch(/script-src 'self' 'nonce-[\w+/=]+' 'strict-dynamic'/);
    expect(headers["x-frame-options"], path).toBe("DENY");
    expect(headers["x-content-type-options"], path).toBe("nosniff");
    expect(headers["referrer-policy"], path).toBe(
      path.startsWith("/auth") || path.startsWith("/api/auth/callback") ? "no-referrer" : "same-origin",
    );
    expect(headers["strict-transport-security"], path).toBeUndefined(); // the e2e issuer is http
  }

  // A page on another site frames the login and, for contrast, the JWKS (which may be framed):
  // Chromium renders the JWKS and replaces the login with its error page.
  elsewhere.pages.set(
    "/frame",
    `<!doctype html><title>frame</title><iframe src="${baseURL}/keys"></iframe><iframe src="${baseURL}${interaction}"></iframe>`,
  );
  await page.goto(`${elsewhere.origin}/frame`);
  await expect
    .poll(() =>
      page
        .frames()
        .map((frame) => frame.url())
        .sort(),
    )
    .toEqual([`${baseURL}/keys`, "chrome-error://chromewebdata/", `${elsewhere.origin}/frame`].sort());
});
