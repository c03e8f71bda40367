/**
 * /account's self-service in real Chromium against the built server: a Google account links a
 * wallet and adds a passkey (a virtual WebAuthn authenticator), sees every way in with its last
 * use, names the passkey, unlinks the wallet, removes the passkey, is refused removing its last
 * way in, sees its sessions (another browser's too) and signs out everywhere, then deletes the
 * account. Unlinking a wallet signs out the browser that signed in with it. A session a smart
 * account's signature opened (the chain RPC's word) is offered no change of the ways in and is
 * refused one; a login more than ten minutes old signs in again before unlinking or deleting.
 * Signed out, a wallet user signs back in through the hosted login page, at phone width in dark mode.
 */
import { randomBytes } from "node:crypto";
import { expect, type Browser, type Page, test } from "@playwright/test";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { baseURL } from "../playwright.config";
import { addSession } from "./support/admin";
import { expectNoAxeViolations } from "./support/axe";
import { CHAIN_ID, database } from "./support/hosted-login";
import { addVirtualAuthenticator } from "./support/passkeys";
import { upstreams } from "./support/upstream";
import { installWallet } from "./support/wallet";

const { store, db } = database();
test.afterAll(() => store.close());

/** A Google sign-in at /account; `again`: the stand-in remembers this browser and asks for nothing. */
async function signInWithGoogle(page: Page, login: string, again = false) {
  await page.goto("/account");
  await page.getByRole("button", { name: "Continue with Google" }).click();
  if (again) return page.waitForURL(`${baseURL}/account`);
  await page.waitForURL((url) => url.href.startsWith(upstreams.google.issuer));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL(`${baseURL}/account`);
}

/** The same Google user in a browser of its own. */
async function elsewhere(browser: Browser, login: string) {
  const context = await browser.newContext({ userAgent: "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0" });
  const page = await context.newPage();
  await signInWithGoogle(page, login);
  return { context, page };
}

/** A new Google user signed in at /account, with a browser wallet (of `key`) linked to the account. */
async function googleUserWithWallet(page: Page, name: string, key: Hex = generatePrivateKey()) {
  const login = `${name}-${randomBytes(4).toString("hex")}`;
  const wallet = await installWallet(page, { privateKey: key, chainId: CHAIN_ID });
  await signInWithGoogle(page, login);
  const accountId = (await page.getByTestId("account-address").textContent())!.trim();
  await page.getByRole("button", { name: "Link wallet" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Wallet linked" })).toBeVisible();
  return { login, wallet, accountId };
}

const outcome = (page: Page) => page.getByTestId("account-outcome");

test("a Google account manages its ways in and sessions at /account, then deletes the account", async ({ page, browser }) => {
  // Link a wallet: it is listed at once and stays after a reload.
  const { login, wallet, accountId } = await googleUserWithWallet(page, "erin");
  const identities = page.getByTestId("identities").getByTestId("identity");
  await expect(identities).toHaveCount(2);
  await page.reload();
  await expect(identities).toHaveCount(2);
  await expect(identities.nth(0)).toContainText(`${login}@`);
  await expect(identities.nth(1)).toContainText(wallet.address);
  await expect(identities.nth(1)).toContainText("last used");

  // Add a passkey, then name it.
  await addVirtualAuthenticator(page);
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await expect(page.getByTestId("add-passkey-result")).toContainText("Passkey added");
  const passkeys = page.getByTestId("passkeys").getByTestId("passkey");
  await expect(passkeys).toHaveCount(1);
  await passkeys.locator("summary").click();
  await passkeys.getByLabel("Name", { exact: true }).fill("Work laptop");
  await passkeys.getByRole("button", { name: "Save name" }).click();
  await expect(outcome(page)).toContainText("The passkey was renamed.");
  await expect(passkeys).toContainText("Work laptop");
  await expectNoAxeViolations(page, "the account page with a wallet, Google and a named passkey");

  // Unlink the wallet and remove the passkey; Google, the last way in, stays.
  await identities
    .nth(1)
    .getByRole("button", { name: /^Unlink Wallet/ })
    .click();
  await expect(outcome(page)).toContainText("unlinked from your account");
  await expect(identities).toHaveCount(1);
  expect(await db.identity.count({ where: { accountId, provider: "web3" } })).toBe(0);
  await passkeys.getByRole("button", { name: "Remove Work laptop" }).click();
  await expect(outcome(page)).toContainText("The passkey was removed");
  await expect(page.getByText("This account has no passkey yet.")).toBeVisible();
  await identities.getByRole("button", { name: /^Unlink Google/ }).click();
  await expect(outcome(page)).toContainText("This is the last way to sign in to your account.");
  await expect(identities).toHaveCount(1);
  await expectNoAxeViolations(page, "the account page after refusing to unlink the last way in");

  // Another browser's session is listed with its device; signing out everywhere ends both.
  const other = await elsewhere(browser, login);
  await page.reload();
  const sessions = page.getByTestId("sessions").getByTestId("session");
  await expect(sessions).toHaveCount(2);
  await expect(sessions.filter({ hasText: "This browser" })).toHaveCount(1);
  await expect(sessions.filter({ hasText: "Firefox 133 on Linux" })).toContainText("IP address");
  await page.getByRole("button", { name: "Sign out everywhere" }).click();
  await expect(outcome(page)).toContainText("You were signed out everywhere.");
  await expect(page.getByTestId("account-address")).toHaveCount(0);
  await other.page.reload();
  await expect(other.page.getByTestId("account-address")).toHaveCount(0);
  await other.context.close();

  // Delete the account, after ticking the confirmation.
  await signInWithGoogle(page, login, true);
  await expect(page.getByTestId("account-address")).toHaveText(accountId);
  const deleteButton = page.getByRole("button", { name: "Delete my account" });
  await deleteButton.click();
  await expect(page.getByTestId("account-address")).toHaveText(accountId); // the browser asks for the tick first
  await page.getByLabel("I understand that this deletes my account").check();
  await deleteButton.click();
  await expect(outcome(page)).toContainText("Your account was deleted.");
  await expect(page.getByTestId("account-address")).toHaveCount(0);
  expect(await db.account.findUnique({ where: { id: accountId } })).toBeNull();
  await expect.poll(() => db.auditEvent.count({ where: { accountId, action: "account.deleted" } })).toBe(1);
});

test("unlinking a wallet signs out the browser that signed in with it, and only that one", async ({ page, browser }) => {
  const key = generatePrivateKey();
  const { wallet, accountId } = await googleUserWithWallet(page, "finn", key);

  // Another browser signs in to the same account with the linked wallet.
  const context = await browser.newContext();
  const other = await context.newPage();
  await installWallet(other, { privateKey: key, chainId: CHAIN_ID });
  await other.goto("/account");
  await other.getByRole("link", { name: "Sign in with a wallet or passkey" }).click();
  await other.waitForURL((url) => url.pathname.startsWith("/auth/interaction/"));
  await other.getByRole("button", { name: "Continue with a wallet" }).click();
  await other.waitForURL(`${baseURL}/account`);
  await expect(other.getByTestId("account-address")).toHaveText(accountId);

  await page.reload();
  await page
    .getByTestId("identities")
    .getByTestId("identity")
    .filter({ hasText: wallet.address })
    .getByRole("button", { name: /^Unlink Wallet/ })
    .click();
  await expect(outcome(page)).toContainText("unlinked from your account");
  await other.reload();
  await expect(other.getByText("Sign in to manage your account.")).toBeVisible();
  await expect(other.getByTestId("account-address")).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId("account-address")).toHaveText(accountId);
  await context.close();
});

test("a session a smart account's signature opened changes no way in: none offered, and the server refuses one", async ({
  page,
  context,
}) => {
  // A smart account's own account (its address has code on chain) with a Google identity too.
  const accountId = privateKeyToAccount(generatePrivateKey()).address;
  await db.account.create({ data: { id: accountId } });
  await db.identity.create({ data: { provider: "web3", subject: accountId, accountId } });
  await db.identity.create({
    data: { provider: "google", subject: `g-${accountId}`, accountId, email: `${accountId.slice(2, 10)}@example.com`, emailVerified: true },
  });
  const useSession = (token: string) =>
    context.addCookies([{ name: "keyfob_session", value: token, url: baseURL, httpOnly: true, sameSite: "Lax" }]);
  // As the hosted login leaves a wallet login whose signature only the RPC vouched for.
  const contractSession = await addSession(db, accountId, accountId, "wallet contract");
  await useSession(contractSession);
  await page.goto("/account");
  await expect(page.getByTestId("account-address")).toHaveText(accountId);
  const notice = page.getByTestId("contract-session");
  await expect(notice).toContainText("smart account's signature");
  await expect(notice.getByRole("link", { name: "Sign in another way" })).toHaveAttribute("href", "/account/login?fresh=1");
  for (const control of ["Link wallet", "Add a passkey", "Delete my account"]) {
    await expect(page.getByRole("button", { name: control })).toHaveCount(0);
  }
  await expect(page.getByTestId("identities").getByRole("button")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Sign out everywhere" })).toBeVisible();
  await expectNoAxeViolations(page, "the account page of a smart account's session");

  // The review's attack, sent by hand: the link form as a session that may link gets it (with the
  // account's link nonce), signed by the attacker's own wallet, posted with the smart account's session.
  const attacker = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
  await useSession(await addSession(db, accountId, accountId));
  await page.goto("/account");
  await useSession(contractSession);
  await page.getByRole("button", { name: "Link wallet" }).click();
  const problem = page.getByTestId("wallet-problem");
  await expect(problem).toContainText("cannot add a way to sign in");
  expect(await db.identity.count({ where: { subject: attacker.address } })).toBe(0);
  await expect
    .poll(() => db.auditEvent.count({ where: { accountId, action: "account.wallet_linked", outcome: "contract_session" } }))
    .toBe(1);
  // Reloading shows the session for what it is.
  await problem.getByRole("button", { name: "Reload" }).click();
  await expect(notice).toBeVisible();
});

test("a login more than ten minutes old signs in again before unlinking or deleting, and then may", async ({ page }) => {
  const { login, wallet, accountId } = await googleUserWithWallet(page, "gale");

  // Eleven minutes later, as far as the login session knows.
  await db.loginSession.updateMany({ where: { accountId }, data: { authTime: new Date(Date.now() - 11 * 60_000) } });
  await page.reload();
  const identities = page.getByTestId("identities").getByTestId("identity");
  await identities
    .filter({ hasText: wallet.address })
    .getByRole("button", { name: /^Unlink Wallet/ })
    .click();
  await expect(outcome(page)).toContainText("needs a recent sign-in");
  await expect(outcome(page).getByRole("link", { name: "Sign in again" })).toBeVisible();
  await expect(identities).toHaveCount(2);
  const deleteAccount = async () => {
    await page.getByLabel("I understand that this deletes my account").check();
    await page.getByRole("button", { name: "Delete my account" }).click();
  };
  await deleteAccount();
  await expect(outcome(page)).toContainText("needs a recent sign-in");
  expect(await db.account.findUnique({ where: { id: accountId } })).not.toBeNull();
  await expectNoAxeViolations(page, "the account page refusing a change to an old login");

  // "Sign in again": the hosted login asks for a new login, with no "Continue as" for this browser's session.
  await outcome(page).getByRole("link", { name: "Sign in again" }).click();
  await page.waitForURL((url) => url.pathname.startsWith("/auth/interaction/"));
  await expect(page.getByRole("button", { name: "Continue with a wallet" })).toBeVisible();
  await expect(page.getByTestId("continue-as-label")).toHaveCount(0);
  await page.getByRole("button", { name: "Continue with a wallet" }).click();
  await page.waitForURL(`${baseURL}/account`);
  await expect(page.getByTestId("account-address")).toHaveText(accountId);
  await identities
    .filter({ hasText: `${login}@` })
    .getByRole("button", { name: /^Unlink Google/ })
    .click();
  await expect(outcome(page)).toContainText("unlinked from your account");
  await deleteAccount();
  await expect(outcome(page)).toContainText("Your account was deleted.");
  expect(await db.account.findUnique({ where: { id: accountId } })).toBeNull();
});

test.describe("signed out, at phone width in dark mode", () => {
  test.use({ viewport: { width: 390, height: 844 }, colorScheme: "dark" });

  test("a wallet user signs back in at /account through the hosted login page", async ({ page }) => {
    const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    await page.goto("/account");
    await expect(page.getByRole("button", { name: "Continue with Google" })).toBeVisible();
    await expectNoAxeViolations(page, "the signed-out account page at 390 px, dark");
    await page.getByRole("link", { name: "Sign in with a wallet or passkey" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/auth/interaction/"));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    await page.waitForURL(`${baseURL}/account`);
    await expect(page.getByTestId("account-address")).toHaveText(wallet.address);
    const own = page.getByTestId("identities").getByTestId("identity");
    await expect(own).toContainText("This account's address");
    await expect(own.getByRole("button")).toHaveCount(0); // the account's own wallet is not unlinked
    await expectNoAxeViolations(page, "the account page of a wallet user at 390 px, dark");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    // Signed out here, the same wallet signs in again.
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await expect(page.getByText("Sign in to manage your account.")).toBeVisible();
    await page.getByRole("link", { name: "Sign in with a wallet or passkey" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/auth/interaction/"));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    await page.waitForURL(`${baseURL}/account`);
    await expect(page.getByTestId("account-address")).toHaveText(wallet.address);
  });
});
