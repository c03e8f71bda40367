/**
 * Flow B's hosted login page (GET /auth) in real Chromium against the built server: a browser
 * wallet (fake EIP-1193 provider whose key stays in Node), Google and Apple (local OpenID providers
 * standing in for them, see e2e/support/), the error page, error redirects, cancel, and wallet
 * linking on /account. Codes are exchanged at /token (every request uses PKCE, which public clients
 * must) and the ID tokens checked against the published JWKS.
 */
import { createHash, randomBytes } from "node:crypto";
import { systemClock } from "@/lib/clock";
import { mkdir } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { addPostLogoutRedirectUri, addRedirectUri, createClient, rotateClientSecret } from "../lib/clients/registry";
import { createStore, rawConnection } from "../lib/store";
import { baseURL } from "../playwright.config";
import { expectNoAxeViolations } from "./support/axe";
import { emailOf } from "./support/idp";
import { upstreams } from "./support/upstream";
import { installWallet } from "./support/wallet";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);
const jwks = createRemoteJWKSet(new URL(`${baseURL}/keys`));
const CHAIN_ID = 1; // Keyfob's default CHAIN_ID

/** The application's redirect URI: a real local server that records what reached it. */
let app: { url: string; hits: URL[]; close: () => Promise<void> };

test.beforeAll(async () => {
  const hits: URL[] = [];
  const server = http.createServer((req, res) => {
    hits.push(new URL(req.url!, "http://localhost"));
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>Application</title><h1>Back at the application</h1>");
  });
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  const port = (server.address() as AddressInfo).port;
  app = {
    url: `http://localhost:${port}/callback`,
    hits,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
});
test.afterAll(async () => {
  await app.close();
  await store.close();
});

/** A registered application: public (PKCE) or confidential (client secret). */
async function registerClient(name: string, confidential = false) {
  const id = privateKeyToAccount(generatePrivateKey()).address;
  await createClient(store, { id, name });
  await addRedirectUri(store, id, app.url);
  const secret = confidential ? await rotateClientSecret({ store, clock: systemClock }, id) : undefined;
  return { id, secret };
}

function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** The PKCE pair of requests that bring none of their own: a public client must use PKCE. */
const defaultPkce = pkce();

function authorizeUrl(params: Record<string, string | undefined>) {
  const query = new URLSearchParams({
    response_type: "code",
    scope: "openid email",
    redirect_uri: app.url,
    code_challenge: defaultPkce.challenge,
    code_challenge_method: "S256",
  });
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, value);
  return `/auth?${query}`;
}

/** Waits until the browser is back at the application, and returns the response parameters. */
async function backAtApplication(page: Page) {
  await page.waitForURL((url) => url.href.startsWith(`${app.url}?`), { timeout: 30_000 });
  return new URL(page.url()).searchParams;
}

async function exchange(client: { id: string; secret?: string }, code: string, verifier = defaultPkce.verifier) {
  const form = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: app.url });
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (client.secret)
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString("base64")}`;
  else form.set("client_id", client.id);
  form.set("code_verifier", verifier);
  const response = await fetch(`${baseURL}/token`, { method: "POST", headers, body: form });
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(200);
  const { payload } = await jwtVerify(body.id_token, jwks, { issuer: baseURL, audience: client.id });
  await jwtVerify(body.access_token, jwks, { issuer: baseURL, audience: client.id });
  // The ID token's claims, and the token itself (`raw`, an id_token_hint for logout).
  return { ...payload, raw: body.id_token as string } as JWTPayload & Record<string, unknown> & { raw: string };
}

async function loginAtStandIn(page: Page, upstream: "google" | "apple", login: string) {
  await page.waitForURL((url) => url.href.startsWith(upstreams[upstream].issuer));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
}

test.describe("wallet", () => {
  test("signs in with a browser wallet; the code, with PKCE, gives tokens for the wallet", async ({ page }) => {
    const client = await registerClient("Acme Fleet");
    const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    const { verifier, challenge } = pkce();
    await page.goto(
      authorizeUrl({
        client_id: client.id,
        state: "st-wallet",
        nonce: "n-wallet",
        code_challenge: challenge,
        code_challenge_method: "S256",
      }),
    );

    await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
    await expect(page.getByText("to continue to Acme Fleet")).toBeVisible();
    await expect(page.getByRole("button", { name: "Continue with Google" })).toBeVisible();
    await expect(page.getByRole("button", { name: "Continue with Apple" })).toBeVisible();
    await page.getByRole("button", { name: "Continue with a wallet" }).click();

    const response = await backAtApplication(page);
    expect(response.get("state")).toBe("st-wallet");
    expect(response.get("iss")).toBe(baseURL);
    expect(wallet.requests).toEqual(expect.arrayContaining(["eth_requestAccounts", "personal_sign"]));

    const claims = await exchange(client, response.get("code")!, verifier);
    expect(claims).toMatchObject({ provider_id: "web3", ethereum_address: wallet.address, nonce: "n-wallet", email_verified: false });
  });

  test("a declined signature is explained, and signing again works", async ({ page }) => {
    const client = await registerClient("Acme Fleet");
    const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    wallet.rejectSignatures(true);
    await page.goto(authorizeUrl({ client_id: client.id, state: "st-retry" }));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();

    const alert = page.getByRole("main").getByRole("alert");
    await expect(alert).toContainText("Signature declined");
    await expect(alert).toContainText("Nothing was signed or sent");
    expect(app.hits.some((hit) => hit.searchParams.get("state") === "st-retry")).toBe(false);

    wallet.rejectSignatures(false);
    await page.getByRole("button", { name: /^Sign in with 0x/ }).click();
    expect((await backAtApplication(page)).get("state")).toBe("st-retry");
  });

  test("a wallet on another chain is told so, and can switch or sign anyway", async ({ page, context }) => {
    const client = await registerClient("Acme Fleet");
    const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: 137 });
    await page.goto(authorizeUrl({ client_id: client.id, state: "st-switch" }));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Your wallet is on Polygon" })).toBeVisible();
    await page.getByRole("button", { name: "Switch to Ethereum and sign" }).click();
    expect((await backAtApplication(page)).get("state")).toBe("st-switch");
    expect(wallet.requests).toContain("wallet_switchEthereumChain");

    const other = await context.newPage();
    const second = await installWallet(other, { privateKey: generatePrivateKey(), chainId: 137 });
    await other.goto(authorizeUrl({ client_id: client.id, state: "st-anyway" }));
    await other.getByRole("button", { name: "Continue with a wallet" }).click();
    await other.getByRole("button", { name: "Sign anyway" }).click();
    expect((await backAtApplication(other)).get("state")).toBe("st-anyway");
    expect(second.requests).not.toContain("wallet_switchEthereumChain");
  });

  test("without a browser wallet the page says how to get one", async ({ page }) => {
    const client = await registerClient("Acme Fleet");
    await page.goto(authorizeUrl({ client_id: client.id }));
    await expect(page.getByText("No browser wallet detected in this browser.")).toBeVisible();
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    await expect(page.getByRole("status").filter({ hasText: "No wallet found in this browser" })).toContainText("MetaMask");
  });
});

test.describe("login sessions and logout", () => {
  test("a wallet login starts a session: prompt=none answers at once, Continue as is offered, and logout ends it", async ({ page }) => {
    const client = await registerClient("Acme Fleet");
    const signedOut = `${app.url}?signed-out=1`;
    await addPostLogoutRedirectUri(store, client.id, signedOut);
    const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    await page.goto(authorizeUrl({ client_id: client.id, state: "st-first" }));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    const first = await exchange(client, (await backAtApplication(page)).get("code")!);
    expect(first.amr).toEqual(["wallet"]);
    const cookie = (await page.context().cookies()).find((c) => c.name === "keyfob_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });

    // prompt=none: straight back with a code for the same account, no page shown, no signature asked.
    const signatures = wallet.requests.filter((r) => r === "personal_sign").length;
    await page.goto(`${baseURL}${authorizeUrl({ client_id: client.id, state: "st-silent", prompt: "none" })}`);
    const silent = await exchange(client, (await backAtApplication(page)).get("code")!);
    expect(silent.sub).toBe(first.sub);
    expect(silent.auth_time).toBe(first.auth_time);
    expect(wallet.requests.filter((r) => r === "personal_sign")).toHaveLength(signatures);

    // An ordinary request offers to continue with the session; prompt=login does not.
    await page.goto(authorizeUrl({ client_id: client.id, state: "st-continue" }));
    await expect(page.getByRole("button", { name: /^Continue as 0x/ })).toBeVisible();
    await expectNoAxeViolations(page, "the login page offering Continue as");
    await page.getByRole("button", { name: /^Continue as 0x/ }).click();
    expect((await backAtApplication(page)).get("state")).toBe("st-continue");
    await page.goto(authorizeUrl({ client_id: client.id, prompt: "login" }));
    await expect(page.getByRole("button", { name: "Continue with a wallet" })).toBeVisible();
    await expect(page.getByRole("button", { name: /^Continue as/ })).toHaveCount(0);

    // RP-initiated logout with the ID token: back at the application's registered URI with the state.
    await page.goto(`/session/end?${new URLSearchParams({ id_token_hint: first.raw, post_logout_redirect_uri: signedOut, state: "bye" })}`);
    await page.waitForURL((url) => url.href.startsWith(signedOut));
    expect(new URL(page.url()).searchParams.get("state")).toBe("bye");
    await page.goto(`${baseURL}${authorizeUrl({ client_id: client.id, state: "st-after", prompt: "none" })}`);
    expect((await backAtApplication(page)).get("error")).toBe("login_required");
  });

  test("Continue as names the whole account, Not you? signs out to the same login's choices, and the last way in is marked", async ({
    page,
  }) => {
    const client = await registerClient("Acme Fleet");
    await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    await page.goto(authorizeUrl({ client_id: client.id }));
    await expect(page.getByRole("button", { name: "Continue with a wallet" })).toBeVisible();
    await expect(page.getByText("Last used")).toHaveCount(0);
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    const { ethereum_address: address } = await exchange(client, (await backAtApplication(page)).get("code")!);

    await page.goto(authorizeUrl({ client_id: client.id, state: "st-not-you" }));
    const loginPage = page.url();
    await expect(page.getByTestId("continue-as-label")).toHaveText(`Continue as ${address}`);
    await expect(page.getByRole("button", { name: /^Continue with a wallet/ })).toContainText("Last used");
    await expect(page.getByRole("button", { name: /^Continue with Google/ })).not.toContainText("Last used");
    await expectNoAxeViolations(page, "the login page with Not you? and Last used");
    await page.getByRole("button", { name: "Not you? Sign out" }).click();
    await expect(page.getByRole("button", { name: /^Continue as/ })).toHaveCount(0);
    expect(page.url()).toBe(loginPage);
    expect((await page.context().cookies()).find((c) => c.name === "keyfob_session")).toBeUndefined();
    await expect(page.getByRole("button", { name: /^Continue with a wallet/ })).not.toContainText("Last used");
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    expect((await backAtApplication(page)).get("state")).toBe("st-not-you");
  });

  test("a blocked account is told so, and not offered Try again", async ({ page }) => {
    const client = await registerClient("Acme Fleet");
    await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    await page.goto(authorizeUrl({ client_id: client.id }));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    const { ethereum_address: address } = await exchange(client, (await backAtApplication(page)).get("code")!);
    await db.account.update({ where: { id: address as string }, data: { blockedAt: new Date() } });

    await page.goto(authorizeUrl({ client_id: client.id, prompt: "login" }));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    const problem = page.getByTestId("wallet-problem");
    await expect(problem).toContainText("This account is blocked");
    await expect(problem).toContainText("An administrator has blocked this account");
    await expect(problem.getByRole("button", { name: "Try again" })).toHaveCount(0);
  });

  test("a logout link without an ID token asks first, then shows Keyfob's signed-out page", async ({ page }) => {
    const client = await registerClient("Acme Fleet");
    await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    await page.goto(authorizeUrl({ client_id: client.id }));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    await backAtApplication(page);
    const hits = app.hits.length;

    await page.goto(`/session/end?${new URLSearchParams({ client_id: client.id, post_logout_redirect_uri: app.url, state: "x" })}`);
    await expect(page.getByRole("heading", { name: "Sign out of Keyfob?" })).toBeVisible();
    await expect(page.getByText("Acme Fleet asks to sign you out of Keyfob in this browser.")).toBeVisible();
    await expectNoAxeViolations(page, "the logout confirmation");
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page.getByRole("heading", { name: "You have signed out" })).toBeVisible();
    await expectNoAxeViolations(page, "the signed-out page");
    // Never sent back without an ID token vouching for the URI (the browser may still fetch the application's favicon).
    expect(app.hits.slice(hits).filter((hit) => hit.pathname === "/callback")).toEqual([]);
    expect((await page.context().cookies()).find((c) => c.name === "keyfob_session")).toBeUndefined();

    const refused = await page.request.get(`/session/end?id_token_hint=garbage&post_logout_redirect_uri=${encodeURIComponent(app.url)}`, {
      maxRedirects: 0,
    });
    expect(refused.status()).toBe(400);
  });
});

test.describe("Google and Apple", () => {
  test("signs in with Google; the code gives tokens with the verified email; prompt=none then reuses the session", async ({ page }) => {
    const client = await registerClient("Acme Fleet", true);
    const login = `alice-${randomBytes(4).toString("hex")}`;
    await page.goto(authorizeUrl({ client_id: client.id, state: "st-google", nonce: "n-google" }));
    await page.getByRole("button", { name: "Continue with Google" }).click();
    await loginAtStandIn(page, "google", login);

    const response = await backAtApplication(page);
    expect(response.get("state")).toBe("st-google");
    expect(response.get("iss")).toBe(baseURL);
    const claims = await exchange(client, response.get("code")!);
    expect(claims).toMatchObject({
      provider_id: "google",
      email: emailOf(login, upstreams.google),
      email_verified: true,
      nonce: "n-google",
    });

    // Same browser, prompt=none: straight back with a code for the same account.
    await page.goto(`${baseURL}${authorizeUrl({ client_id: client.id, state: "st-silent", prompt: "none" })}`);
    const silent = await backAtApplication(page);
    expect(silent.get("state")).toBe("st-silent");
    const again = await exchange(client, silent.get("code")!);
    expect(again.ethereum_address).toBe(claims.ethereum_address);

    // Without prompt=none, the page offers to continue with that session: on a phone too, the
    // whole email address, and the Google icon inside the button; Google is marked as the last way in.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${baseURL}${authorizeUrl({ client_id: client.id, state: "st-continue" })}`);
    const email = emailOf(login, upstreams.google);
    const continueAs = page.getByRole("button", { name: `Continue as ${email}` });
    await expect(page.getByTestId("continue-as-label")).toHaveText(`Continue as ${email}`);
    const fits = await continueAs.evaluate((button) => {
      const box = button.getBoundingClientRect();
      const inside = (el: Element) => el.getBoundingClientRect().left >= box.left && el.getBoundingClientRect().right <= box.right;
      const label = button.querySelector("[data-testid=continue-as-label]")!;
      return { icon: inside(button.querySelector("svg")!), label: inside(label) && label.scrollWidth <= label.clientWidth };
    });
    expect(fits).toEqual({ icon: true, label: true });
    await expect(page.getByRole("button", { name: /^Continue with Google/ })).toContainText("Last used");
    await continueAs.click();
    expect((await backAtApplication(page)).get("state")).toBe("st-continue");
  });

  test("signs in with Apple (form_post answer, email_verified as a string)", async ({ page }) => {
    const client = await registerClient("Acme Fleet", true);
    const login = `bob-${randomBytes(4).toString("hex")}`;
    await page.goto(authorizeUrl({ client_id: client.id, state: "st-apple" }));
    await page.getByRole("button", { name: "Continue with Apple" }).click();
    await loginAtStandIn(page, "apple", login);

    const response = await backAtApplication(page);
    expect(response.get("state")).toBe("st-apple");
    expect(response.get("iss")).toBe(baseURL);
    const claims = await exchange(client, response.get("code")!);
    expect(claims).toMatchObject({ provider_id: "apple", email: emailOf(login, upstreams.apple), email_verified: true });
  });

  test("cancelling at Google shows what happened, and offers to try again or return to the application", async ({ page }) => {
    const client = await registerClient("Acme Fleet");
    await page.goto(authorizeUrl({ client_id: client.id, state: "st-google-cancel" }));
    await page.getByRole("button", { name: "Continue with Google" }).click();
    await page.waitForURL((url) => url.href.startsWith(upstreams.google.issuer));
    await page.getByRole("link", { name: "[ Cancel ]" }).click();

    await page.waitForURL((url) => url.pathname === "/auth/error");
    await expect(page.getByRole("main").getByRole("alert")).toContainText("Sign-in with Google or Apple did not complete");
    await expect(page.getByRole("link", { name: "Try again" })).toHaveAttribute("href", /^\/auth\?/);
    await expectNoAxeViolations(page, "the error page after a cancelled Google sign-in");
    await page.getByRole("button", { name: "Return to the application" }).click();
    const response = await backAtApplication(page);
    expect(response.get("error")).toBe("access_denied");
    expect(response.get("state")).toBe("st-google-cancel");
  });

  test("a Google account links a wallet on /account; the wallet then signs in to the same account", async ({ page, context }) => {
    const client = await registerClient("Acme Fleet");
    await page.goto("/account");
    await page.getByRole("button", { name: "Continue with Google" }).click();
    await loginAtStandIn(page, "google", `carol-${randomBytes(4).toString("hex")}`);
    await page.waitForURL(`${baseURL}/account`);
    const accountId = (await page.getByTestId("account-address").textContent())!.trim();
    expect(accountId).toMatch(/^0x[0-9a-fA-F]{40}$/);

    const key = generatePrivateKey();
    const linking = await context.newPage();
    await installWallet(linking, { privateKey: key, chainId: CHAIN_ID });
    await linking.goto("/account");
    await expectNoAxeViolations(linking, "the account page, signed in with Google");
    await linking.getByRole("button", { name: "Link wallet" }).click();
    await expect(linking.getByRole("status").filter({ hasText: "Wallet linked" })).toBeVisible();
    await expectNoAxeViolations(linking, "the account page after linking a wallet");

    const login = await context.newPage();
    await installWallet(login, { privateKey: key, chainId: CHAIN_ID });
    const { verifier, challenge } = pkce();
    await login.goto(authorizeUrl({ client_id: client.id, code_challenge: challenge, code_challenge_method: "S256" }));
    await login.getByRole("button", { name: "Continue with a wallet" }).click();
    const claims = await exchange(client, (await backAtApplication(login)).get("code")!, verifier);
    expect(claims).toMatchObject({ provider_id: "web3", ethereum_address: accountId });
  });
});

test.describe("/account", () => {
  test("trusts only a live Keyfob session: revoking it or blocking the account signs the page out, and a blocked account cannot sign in", async ({
    page,
    browser,
  }) => {
    const subject = `dave-${randomBytes(4).toString("hex")}`;
    /** A Google sign-in at /account in a browser of its own (the stand-in then asks for the login again). */
    const signInAtAccount = async (withWallet = false) => {
      const context = await browser.newContext();
      const tab = await context.newPage();
      if (withWallet) await installWallet(tab, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
      await tab.goto(`${baseURL}/account`);
      await tab.getByRole("button", { name: "Continue with Google" }).click();
      await loginAtStandIn(tab, "google", subject);
      await tab.waitForURL((url) => url.pathname === "/account");
      return { context, tab };
    };

    await page.goto("/account");
    await page.getByRole("button", { name: "Continue with Google" }).click();
    await loginAtStandIn(page, "google", subject);
    await page.waitForURL(`${baseURL}/account`);
    const accountId = (await page.getByTestId("account-address").textContent())!.trim();
    // The Google sign-in became a Keyfob session; no upstream session is left to fall back on.
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === "keyfob_session")).toBeDefined();
    expect(cookies.find((c) => c.name.includes("authjs.session-token"))).toBeUndefined();

    await db.loginSession.updateMany({ where: { accountId }, data: { revokedAt: new Date() } });
    await page.reload();
    await expect(page.getByText("Sign in to manage your account.")).toBeVisible();
    await expect(page.getByTestId("account-address")).toHaveCount(0);

    // Signed in again, then blocked while the page is open: its actions refuse, the next view is signed out.
    const second = await signInAtAccount(true);
    await expect(second.tab.getByTestId("account-address")).toHaveText(accountId);
    await db.account.update({ where: { id: accountId }, data: { blockedAt: new Date() } });
    await second.tab.getByRole("button", { name: "Link wallet" }).click();
    await expect(second.tab.getByTestId("wallet-problem")).toContainText("You are no longer signed in");
    expect(await db.identity.count({ where: { accountId, provider: "web3" } })).toBe(0);
    await second.tab.reload();
    await expect(second.tab.getByTestId("account-address")).toHaveCount(0);
    await second.context.close();

    const third = await signInAtAccount();
    expect(new URL(third.tab.url()).searchParams.get("problem")).toBe("blocked");
    await expect(third.tab.getByRole("alert").filter({ hasText: "An administrator has blocked this account" })).toBeVisible();
    await expect(third.tab.getByTestId("account-address")).toHaveCount(0);
    await expectNoAxeViolations(third.tab, "the account page after a blocked account's sign-in");
    await third.context.close();
  });
});

test.describe("errors", () => {
  test("an unregistered redirect_uri gets an error page, and no redirect", async ({ page, request }) => {
    const client = await registerClient("Acme Fleet");
    const hitsBefore = app.hits.length;
    const url = authorizeUrl({ client_id: client.id, redirect_uri: "http://localhost:1/elsewhere", state: "st-bad-uri" });
    await page.goto(url);
    await expect(page.getByRole("heading", { name: "This sign-in link doesn't work" })).toBeVisible();
    await expect(page.getByRole("main")).toContainText("The redirect_uri is not registered for this application.");
    expect(new URL(page.url()).pathname).toBe("/auth");
    expect(app.hits.length).toBe(hitsBefore);

    const raw = await request.get(url, { maxRedirects: 0 });
    expect(raw.status()).toBe(400);
    expect(raw.headers().location).toBeUndefined();
    const unknown = await request.get(authorizeUrl({ client_id: "unknown-client" }), { maxRedirects: 0 });
    expect(unknown.headers().location).toBeUndefined();
    expect(await unknown.text()).toContain("This application is unknown or disabled.");
  });

  test("a bad scope goes back to the application with error=invalid_scope, state and iss", async ({ page }) => {
    const client = await registerClient("Acme Fleet");
    await page.goto(authorizeUrl({ client_id: client.id, scope: "openid wallet:everything", state: "st-scope" }));
    const response = await backAtApplication(page);
    expect(response.get("error")).toBe("invalid_scope");
    expect(response.get("state")).toBe("st-scope");
    expect(response.get("iss")).toBe(baseURL);
    expect(response.get("code")).toBeNull();
  });

  test("Cancel goes back to the application with error=access_denied", async ({ page }) => {
    const client = await registerClient("Acme Fleet");
    await page.goto(authorizeUrl({ client_id: client.id, state: "st-cancel" }));
    await page.getByRole("button", { name: "Cancel and return to Acme Fleet" }).click();
    const response = await backAtApplication(page);
    expect(response.get("error")).toBe("access_denied");
    expect(response.get("state")).toBe("st-cancel");
    expect(response.get("iss")).toBe(baseURL);
  });

  test("Cancel then Back: the page says the sign-in was cancelled, and returns to the application or starts again", async ({ page }) => {
    const client = await registerClient("Acme Fleet");
    await page.goto(authorizeUrl({ client_id: client.id, state: "st-ended" }));
    await page.getByRole("button", { name: "Cancel and return to Acme Fleet" }).click();
    expect((await backAtApplication(page)).get("error")).toBe("access_denied");

    await page.goBack();
    await expect(page.getByRole("heading", { name: "This sign-in has ended" })).toBeVisible();
    await expect(page.getByRole("main").getByRole("status")).toContainText("You cancelled this sign-in");
    await expect(page.getByRole("main")).not.toContainText("took too long");
    await expectNoAxeViolations(page, "the login page of a cancelled sign-in");
    await page.getByRole("button", { name: "Return to Acme Fleet" }).click();
    const back = await backAtApplication(page);
    expect([back.get("error"), back.get("error_description"), back.get("state")]).toEqual([
      "access_denied",
      "the user cancelled the login",
      "st-ended",
    ]);

    await page.goBack();
    await page.getByRole("link", { name: "Start again" }).click();
    await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
    await expect(page.getByRole("button", { name: "Continue with a wallet" })).toBeVisible();
  });

  test("an expired sign-in says so before the wallet is asked to sign, the user leaves for Google, or a passkey is asked", async ({
    page,
  }) => {
    const client = await registerClient("Acme Fleet");
    const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    /** Opens the login page, then lets its interaction expire. */
    const expiredLoginPage = async (state: string) => {
      await page.goto(authorizeUrl({ client_id: client.id, state }));
      await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
      const id = new URL(page.url()).pathname.split("/").pop()!;
      await db.interaction.update({ where: { id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    };

    await expiredLoginPage("st-expired");
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    await expect(page.getByRole("heading", { name: "This sign-in has ended" })).toBeVisible();
    await expect(page.getByRole("main").getByRole("alert")).toContainText("This sign-in has expired");
    expect(wallet.requests).not.toContain("personal_sign");
    await expect(page.getByRole("link", { name: "Start again" })).toHaveAttribute("href", /^\/auth\?/);
    await page.getByRole("button", { name: "Return to Acme Fleet" }).click();
    const back = await backAtApplication(page);
    expect([back.get("error"), back.get("error_description"), back.get("state")]).toEqual([
      "access_denied",
      "the login expired",
      "st-expired",
    ]);

    await expiredLoginPage("st-expired-google");
    const loginPage = page.url();
    await page.getByRole("button", { name: "Continue with Google" }).click();
    await expect(page.getByRole("heading", { name: "This sign-in has ended" })).toBeVisible();
    expect(page.url()).toBe(loginPage);
    await expect(page.getByRole("link", { name: "Start again" })).toBeVisible();

    // A passkey's options are refused before the browser's passkey window opens.
    await expiredLoginPage("st-expired-passkey");
    await page.getByRole("button", { name: "Continue with a passkey" }).click();
    await expect(page.getByRole("heading", { name: "This sign-in has ended" })).toBeVisible();
    await expect(page.getByRole("main").getByRole("alert")).toContainText("This sign-in has expired");
  });

  test("Google and Apple callbacks are built from ISSUER_URL, whatever the Host headers say", async ({ request }) => {
    const response = await request.get("/api/auth/providers", {
      headers: { "x-forwarded-host": "evil.example.com", "x-forwarded-proto": "https" },
    });
    const providers = await response.json();
    for (const id of ["google", "apple"]) {
      expect(providers[id]).toMatchObject({
        signinUrl: `${baseURL}/api/auth/signin/${id}`,
        callbackUrl: `${baseURL}/api/auth/callback/${id}`,
      });
    }
  });

  test("a Google callback for a login this browser did not start is refused", async ({ page }) => {
    await page.goto("/auth/callback?interaction=not-started-here");
    await expect(page.getByRole("main").getByRole("alert")).toContainText("This sign-in was started elsewhere");
    await expectNoAxeViolations(page, "the error page of a sign-in started elsewhere");
  });
});

test("screenshots of the login page, desktop and mobile", async ({ page }, testInfo) => {
  const client = await registerClient("Acme Fleet");
  const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
  const dir = path.resolve("e2e/artifacts");
  await mkdir(dir, { recursive: true });
  const shoot = async (name: string) => {
    const file = path.join(dir, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    await testInfo.attach(name, { path: file, contentType: "image/png" });
  };
  for (const [name, viewport] of [
    ["desktop", { width: 1280, height: 860 }],
    ["mobile", { width: 390, height: 844 }],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.goto(authorizeUrl({ client_id: client.id, state: "st-shot" }));
    await expect(page.getByRole("button", { name: "Continue with a wallet" })).toBeVisible();
    await page.waitForLoadState("networkidle");
    await shoot(`login-${name}`);
  }
  // The mobile page after a declined signature, and the error page on a desktop.
  wallet.rejectSignatures(true);
  await page.getByRole("button", { name: "Continue with a wallet" }).click();
  await expect(page.getByRole("main").getByRole("alert")).toContainText("Signature declined");
  await shoot("login-mobile-declined");
  await page.setViewportSize({ width: 1280, height: 860 });
  await page.goto(authorizeUrl({ client_id: client.id, redirect_uri: "https://elsewhere.example/cb" }));
  await expect(page.getByRole("heading", { name: "This sign-in link doesn't work" })).toBeVisible();
  await shoot("error-desktop");
});
