/**
 * What the dashboard's browser tests share: an admin wallet (its account granted the role in the
 * database, the same path as a role granted in the dashboard), signing in through Keyfob's own
 * hosted login, confirming dialogs, a user who signs in to an application on the hosted page, and
 * a second `npm run serve` instance of the same build on the same database.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { expect, type Browser, type BrowserContext, type Page, type TestInfo } from "@playwright/test";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { Database } from "../../lib/store/connection";
import { baseURL } from "../../playwright.config";
import { freePort } from "../../scripts/free-port";
import { expectNoAxeViolations } from "./axe";
import { installWallet } from "./wallet";

export const CHAIN_ID = 1; // Keyfob's default CHAIN_ID
export const ARTIFACTS = "e2e/artifacts";

/** A wallet whose account holds the admin role. */
export async function adminWallet(db: Database): Promise<Hex> {
  const key = generatePrivateKey();
  await db.adminRole.create({ data: { accountId: privateKeyToAccount(key).address, grantedBy: "e2e" } });
  return key;
}

/** Signs in at /admin: /admin/login → the hosted /auth page → "Continue with a wallet" → back at /admin/callback. */
export async function signIn(page: Page, key: Hex, landing = `${baseURL}/admin`) {
  await installWallet(page, { privateKey: key, chainId: CHAIN_ID });
  await page.goto("/admin");
  await page.waitForURL((url) => url.pathname.startsWith("/auth/interaction/"));
  await expect(page.getByText("to continue to Keyfob admin")).toBeVisible();
  await page.getByRole("button", { name: "Continue with a wallet" }).click();
  await page.waitForURL(landing, { timeout: 30_000 });
}

/**
 * A dashboard session for a new admin without going through the hosted login (whose own tests
 * are elsewhere): the rows /admin/callback leaves, a login session and the dashboard session tied
 * to it, and the cookie holding the latter's token.
 */
export async function adminSession(context: BrowserContext, db: Database, email?: string): Promise<string> {
  const accountId = privateKeyToAccount(await adminWallet(db)).address;
  await db.account.upsert({ where: { id: accountId }, create: { id: accountId }, update: {} });
  if (email)
    await db.identity.create({ data: { provider: "google", subject: `admin-${accountId}`, accountId, email, emailVerified: true } });
  const loginSessionId = createHash("sha256")
    .update(await addSession(db, accountId, accountId))
    .digest("base64url");
  const token = randomBytes(32).toString("base64url");
  await db.adminSession.create({
    data: {
      idHash: createHash("sha256").update(token).digest("base64url"),
      accountId,
      loginSessionId,
      expiresAt: new Date(Date.now() + 3600_000),
    },
  });
  await context.addCookies([{ name: "keyfob_admin", value: token, url: baseURL, httpOnly: true, sameSite: "Lax" }]);
  return accountId;
}

/**
 * An end user's account as the hosted login leaves it: a wallet's own account (or one with a
 * Google identity and a linked wallet), with a live login session whose cookie value is returned.
 */
export async function seedUser(db: Database, options: { google?: boolean } = {}) {
  const key = generatePrivateKey();
  const wallet = privateKeyToAccount(key).address;
  const accountId = options.google ? privateKeyToAccount(generatePrivateKey()).address : wallet;
  const email = `user.${accountId.slice(2, 10).toLowerCase()}@example.com`;
  await db.account.create({ data: { id: accountId } });
  await db.identity.create({ data: { provider: "web3", subject: wallet, accountId } });
  if (options.google)
    await db.identity.create({ data: { provider: "google", subject: `g-${accountId}`, accountId, email, emailVerified: true } });
  const sessionToken = await addSession(db, accountId, wallet);
  return { accountId, wallet, key, email: options.google ? email : undefined, sessionToken };
}

/**
 * A live login session of an account (as a wallet login leaves it; `amr` "wallet contract" as one
 * the chain RPC vouched for); returns the cookie's value.
 */
export async function addSession(db: Database, accountId: string, wallet: string, amr = "wallet"): Promise<string> {
  const sessionToken = randomBytes(32).toString("base64url");
  const now = new Date();
  await db.loginSession.create({
    data: {
      idHash: createHash("sha256").update(sessionToken).digest("base64url"),
      accountId,
      connector: "web3",
      subject: wallet,
      amr,
      authTime: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + 86400_000),
      ip: "203.0.113.7",
      userAgent: "Mozilla/5.0 (e2e) a rather long user agent string that should be truncated on narrow screens",
    },
  });
  return sessionToken;
}

export async function screenshot(page: Page, testInfo: TestInfo, name: string) {
  await mkdir(ARTIFACTS, { recursive: true });
  const body = await page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage: true });
  await testInfo.attach(name, { body, contentType: "image/png" });
}

/**
 * Confirms a destructive action: the button opens a modal dialog; the confirm button in it runs the
 * action. With `axeContext`, axe-core checks the page with the dialog open first.
 */
export async function confirm(page: Page, trigger: string | RegExp, confirmLabel: string, typed?: string, axeContext?: string) {
  await page.getByRole("button", { name: trigger, exact: typeof trigger === "string" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toBeVisible();
  if (axeContext) await expectNoAxeViolations(page, axeContext);
  if (typed !== undefined) {
    await expect(dialog.getByRole("button", { name: confirmLabel })).toBeDisabled();
    await dialog.getByRole("textbox").fill(typed);
  }
  await dialog.getByRole("button", { name: confirmLabel }).click();
  await expect(dialog).toBeHidden();
}

export function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/**
 * A user who signs in with a wallet on the hosted page to a public client (redirect URI on the
 * test server itself, which answers 404 there: only the URL matters) in a browser context of its
 * own, and exchanges the code: the account, its login session (the context's cookie), its tokens.
 */
export async function userSignsIn(browser: Browser, clientId: string, redirectUri: string, key: Hex = generatePrivateKey()) {
  const context = await browser.newContext({ baseURL });
  const page = await context.newPage();
  await installWallet(page, { privateKey: key, chainId: CHAIN_ID });
  const { verifier, challenge } = pkce();
  await page.goto(
    `/auth?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, scope: "openid email", state: "s1", code_challenge: challenge, code_challenge_method: "S256" })}`,
  );
  await page.getByRole("button", { name: "Continue with a wallet" }).click();
  await page.waitForURL((url) => url.href.startsWith(`${redirectUri}?`), { timeout: 30_000 });
  const code = new URL(page.url()).searchParams.get("code")!;
  const response = await fetch(`${baseURL}/token`, {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      client_id: clientId,
      code_verifier: verifier,
    }),
  });
  const tokens = await response.json();
  expect(response.status, JSON.stringify(tokens)).toBe(200);
  return { context, page, address: privateKeyToAccount(key).address, key, tokens: tokens as { access_token: string; id_token: string } };
}

/**
 * A second instance of the built server (`npm run serve`) on the same database, on a port of its
 * own: the same issuer unless `env` says otherwise (it is given the instance's URL). Node runs the
 * server itself (no npx or tsx launcher in between), so `stop` ends the server, not a wrapper.
 */
export async function secondInstance(
  env: (url: string) => Record<string, string> = () => ({}),
): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const url = `http://localhost:${port}`;
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
    env: { ...process.env, PORT: String(port), ISSUER_URL: baseURL, NEXT_TELEMETRY_DISABLED: "1", ...env(url) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout!.on("data", (chunk) => output.push(String(chunk)));
  child.stderr!.on("data", (chunk) => output.push(String(chunk)));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the second instance exited with ${child.exitCode}:\n${output.join("")}`);
    if (
      (await fetch(`${url}/healthz/ready`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      break;
    if (Date.now() > deadline) throw new Error(`the second instance was not ready:\n${output.join("")}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.on("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The page scrolls sideways (something is wider than the viewport)? Returns the widest offenders for the message. */
export async function sidewaysOverflow(page: Page): Promise<{ scrollWidth: number; offenders: string[] }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const offenders: string[] = [];
    for (const element of Array.from(document.querySelectorAll<HTMLElement>("body *"))) {
      const box = element.getBoundingClientRect();
      if (box.right > width + 1 && box.width > 0) {
        // Inside a scroll box that contains it, overflow is the box's business.
        let parent = element.parentElement;
        let contained = false;
        while (parent) {
          const style = getComputedStyle(parent);
          if (/(auto|scroll|hidden|clip)/.test(style.overflowX) && parent.getBoundingClientRect().right <= width + 1) {
            contained = true;
            break;
          }
          parent = parent.parentElement;
        }
        if (!contained)
          offenders.push(`${element.tagName.toLowerCase()}.${String(element.className).slice(0, 80)} right=${Math.round(box.right)}`);
      }
    }
    return { scrollWidth: document.documentElement.scrollWidth, offenders: offenders.slice(0, 5) };
  });
}
