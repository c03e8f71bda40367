/**
 * The Accounts page in the browser, against two instances of the built server on one database:
 * an admin finds an account by email from the overview, sees its identities, linked wallet,
 * session and tokens, revokes its session, blocks it (the dialog says everything is revoked at
 * once) and the other instance refuses its token and its session at the next request; unblocks
 * it; and deletes it after typing its address.
 */
import { expect, test } from "@playwright/test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { getToken } from "@keyfob/flow-a-client";
import { addRedirectUri, createClient } from "../lib/clients/registry";
import { createStore, rawConnection } from "../lib/store";
import { baseURL } from "../playwright.config";
import { addSession, adminSession, confirm, pkce, screenshot, secondInstance, seedUser } from "./support/admin";
import { expectNoAxeViolations } from "./support/axe";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);
let second: Awaited<ReturnType<typeof secondInstance>>;
test.beforeAll(async () => {
  test.setTimeout(180_000);
  second = await secondInstance();
});
test.afterAll(async () => {
  await second?.stop();
  await store.close();
});

test("find, inspect, revoke a session, block (effective on the other instance at once), unblock and delete an account", async ({
  page,
}, testInfo) => {
  test.setTimeout(240_000);
  const licenseKey = generatePrivateKey();
  const license = privateKeyToAccount(licenseKey).address;
  const domain = `https://accounts.example.com/${license.slice(2, 8)}`;
  await createClient(store, { id: license, name: "Accounts license" });
  await addRedirectUri(store, license, domain);
  const appId = `kf_accounts_${Date.now()}`;
  const callback = `${baseURL}/accounts-app/callback`;
  await createClient(store, { id: appId, name: "Accounts app" });
  await addRedirectUri(store, appId, callback);

  const user = await seedUser(db, { google: true });
  const flowA = await getToken({ authUrl: baseURL, clientId: license, domain, privateKey: user.key, address: user.wallet });
  const userinfoAt = (base: string, token = flowA.access_token) =>
    fetch(`${base}/userinfo`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
  /** prompt=none at the other instance, with the user's session cookie: a code, or the error it answers. */
  const silentLogin = async (sessionToken: string) => {
    const { challenge } = pkce();
    const query = new URLSearchParams({
      response_type: "code",
      client_id: appId,
      redirect_uri: callback,
      scope: "openid",
      prompt: "none",
      state: "s",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const response = await fetch(`${second.url}/auth?${query}`, {
      redirect: "manual",
      headers: { cookie: `keyfob_session=${sessionToken}` },
    });
    const location = new URL(response.headers.get("location")!, second.url);
    return location.searchParams.get("code") ? "code" : location.searchParams.get("error");
  };
  expect(await userinfoAt(second.url)).toBe(200);
  expect(await silentLogin(user.sessionToken)).toBe("code");

  // From the overview's account count to the account, found by its email.
  await adminSession(page.context(), db);
  await page.goto("/admin");
  await page.getByRole("link", { name: "Accounts" }).first().click();
  await expect(page.getByRole("heading", { name: "Accounts", level: 1 })).toBeVisible();
  await page.getByRole("searchbox", { name: "Search accounts by address, email or id" }).fill(user.email!.toUpperCase());
  await page.getByRole("button", { name: "Search" }).click();
  const rows = page.getByRole("table").getByRole("row");
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(1)).toContainText(user.email!);
  await expectNoAxeViolations(page, "the accounts list, searched");
  await rows.nth(1).getByRole("link", { name: user.accountId }).click();
  await expect(page.getByRole("heading", { name: user.email, level: 1 })).toBeVisible();

  // Identities, the linked wallet, the session, and what it holds.
  const identities = page.getByRole("table", { name: "Identities" });
  await expect(identities.getByText("Wallet", { exact: true })).toBeVisible();
  await expect(identities.getByText("Google", { exact: true })).toBeVisible();
  await expect(page.getByRole("list", { name: "Wallets" })).toContainText(user.wallet);
  await expect(page.getByRole("list", { name: "Wallets" })).toContainText("Linked");
  const sessions = page.getByRole("table", { name: "Live login sessions" });
  await expect(sessions.getByRole("row")).toHaveCount(2);
  await expect(page.getByRole("button", { name: `Copy account ID` })).toBeVisible();
  await page.getByRole("link", { name: "1 active access token" }).click();
  await expect(page.getByRole("table", { name: `Active tokens of account ${user.accountId}` })).toContainText(user.wallet);
  await page.goBack();
  await expect(page.getByRole("heading", { name: user.email, level: 1 })).toBeVisible();
  await expectNoAxeViolations(page, "an account's page");
  await screenshot(page, testInfo, "admin-account");

  // Revoke the session: the other instance no longer answers prompt=none with a code.
  await confirm(page, /^Revoke the session signed in via web3/, "Revoke session", undefined, "the revoke-session dialog");
  await expect(page.getByText("No live sessions")).toBeVisible();
  expect(await silentLogin(user.sessionToken)).toBe("login_required");
  expect(await userinfoAt(second.url)).toBe(200); // tokens are left alone

  // A new session, then block: the dialog says what it revokes; the other instance refuses at once.
  const again = await addSession(db, user.accountId, user.wallet);
  await page.reload();
  await page.getByRole("button", { name: "Block", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: "Block this account?" });
  await expect(dialog).toContainText("This revokes everything it holds at once, on every instance");
  await expect(dialog).toContainText("1 active access token");
  await expectNoAxeViolations(page, "the block-account dialog");
  await screenshot(page, testInfo, "admin-account-block-confirm");
  await dialog.getByRole("button", { name: "Block account" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "Blocked since" })).toBeVisible();
  await expectNoAxeViolations(page, "a blocked account's page");
  expect(await userinfoAt(second.url)).toBe(401);
  expect(await silentLogin(again)).toBe("login_required");
  const refused = await getToken({ authUrl: baseURL, clientId: license, domain, privateKey: user.key, address: user.wallet }).catch(
    (error: Error) => error,
  );
  expect(refused).toMatchObject({ code: "invalid_grant" });
  const blocked = await db.auditEvent.findFirstOrThrow({ where: { action: "account.blocked", accountId: user.accountId } });
  expect(blocked.detail).toBe("blocked: false -> true; 1 access tokens and 1 sessions revoked, refresh tokens and codes with them");

  // Unblocked, it can get tokens again (nothing revoked comes back).
  await page.getByRole("button", { name: "Unblock" }).click();
  await expect(page.getByText("Active", { exact: true })).toBeVisible();
  expect(await userinfoAt(second.url)).toBe(401);
  const fresh = await getToken({ authUrl: baseURL, clientId: license, domain, privateKey: user.key, address: user.wallet });
  expect(await userinfoAt(second.url, fresh.access_token)).toBe(200);

  // Delete, after typing the address.
  await confirm(page, "Delete account", "Delete permanently", user.accountId.toLowerCase(), "the delete-account dialog");
  await page.waitForURL((url) => url.pathname === "/admin/accounts");
  await expect(page.getByRole("status").filter({ hasText: `Account ${user.accountId} was deleted.` })).toBeVisible();
  await expectNoAxeViolations(page, "the accounts list after a deletion");
  expect(await db.account.findUnique({ where: { id: user.accountId } })).toBeNull();
  expect(await userinfoAt(second.url, fresh.access_token)).toBe(401);
  await page.goto(`/admin/accounts/${user.accountId}`);
  await expect(page.getByText("No such account")).toBeVisible();
});
