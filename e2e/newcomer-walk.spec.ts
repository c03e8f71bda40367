/**
 * A newcomer's path, with only what the docs say: Keyfob started on a database that holds nothing
 * (as a fresh clone's `npm start` does), the first-admin link it prints opened in Chromium and
 * claimed with a wallet, the README's examples run as written (a client registered, then a Flow A
 * token), then the quickstart's (its applications registered) and its openid-client code signing a
 * wallet in through the hosted login page in Chromium. Each step reads what the one before made:
 * the link from the start output, the admin it made, the clients the examples registered.
 */
import { expect, test } from "@playwright/test";
import { decodeJwt } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { OPENID_CLIENT_APP } from "../lib/admin/quickstart";
import { createStore, rawConnection } from "../lib/store";
import { emptyDatabase } from "../test/support/database";
import { runDocumentExamples } from "../test/support/docs-examples";
import { runOpenidClientQuickstart } from "../test/support/quickstart";
import { CHAIN_ID } from "./support/admin";
import { ready, startInstance } from "./support/instances";
import { installWallet } from "./support/wallet";

/** The README's Flow A example's license (the first Hardhat test key's address). */
const README_LICENSE = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

test("from nothing: the printed set-up link, the first admin, the README's Flow A, the quickstart's login", async ({ page, browser }) => {
  test.setTimeout(300_000);
  const databaseUrl = await emptyDatabase("newcomer_walk");
  // No configured admin: the start output is the newcomer's way in.
  const instance = await startInstance("newcomer", {
    DATABASE_URL: databaseUrl,
    ADMIN_ADDRESSES: "",
    ADMIN_EMAILS: "",
    KEYFOB_LOG: "warn",
  });
  const store = createStore(databaseUrl, 2);
  const { db } = rawConnection(store);
  const userContext = await browser.newContext();
  try {
    await ready(instance);
    await expect.poll(() => instance.output.join("")).toMatch(/\/admin\/setup\?code=/);
    const output = instance.output.join("");
    expect(output).toContain("Next steps:");
    const link = output.match(new RegExp(`${instance.url}/admin/setup\\?code=[\\w-]+`))?.[0];
    expect(link, output).toBeTruthy();

    // The first admin: whoever opens the link and signs in with a wallet.
    const adminKey = generatePrivateKey();
    await installWallet(page, { privateKey: adminKey, chainId: CHAIN_ID });
    await page.goto(link!);
    await page.getByRole("button", { name: "Sign in with your wallet" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/auth/interaction/"));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    await page.waitForURL(`${instance.url}/admin/setup`, { timeout: 30_000 });
    await page.getByRole("button", { name: /^Make 0x.* the admin$/ }).click();
    await page.waitForURL(`${instance.url}/admin`);
    await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();
    const adminAddress = privateKeyToAccount(adminKey).address;
    expect(await db.adminRole.findUnique({ where: { accountId: adminAddress } })).toMatchObject({ grantedBy: "setup link" });

    // The README's examples: register a client, then get a Flow A token.
    expect(await runDocumentExamples("README.md", instance.url, { DATABASE_URL: databaseUrl })).toEqual([]);
    expect(await db.issuedToken.count({ where: { clientId: README_LICENSE } })).toBeGreaterThan(0);

    // The quickstart: register its applications, then its openid-client code signs a user's wallet in.
    expect(await runDocumentExamples("docs/quickstart.md", instance.url, { DATABASE_URL: databaseUrl })).toEqual([]);
    const userKey = generatePrivateKey();
    const userPage = await userContext.newPage();
    await installWallet(userPage, { privateKey: userKey, chainId: CHAIN_ID });
    const callback = new URL(OPENID_CLIENT_APP.redirectUris[0]);
    // Nothing listens on the application's port here: the browser's arrival there is the callback.
    await userPage.route(`${callback.origin}/**`, (route) => route.fulfill({ status: 200, body: "signed in" }));
    const tokens = await runOpenidClientQuickstart(instance.url, async (authorizationUrl) => {
      await userPage.goto(authorizationUrl.toString());
      await userPage.getByRole("button", { name: "Continue with a wallet" }).click();
      await userPage.waitForURL((url) => url.origin === callback.origin, { timeout: 30_000 });
      return new URL(userPage.url());
    });
    expect(tokens.claims()).toMatchObject({
      iss: instance.url,
      aud: OPENID_CLIENT_APP.id,
      provider_id: "web3",
      ethereum_address: privateKeyToAccount(userKey).address,
    });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ iss: instance.url, client_id: OPENID_CLIENT_APP.id });
  } finally {
    await userContext.close();
    instance.process.kill("SIGTERM");
    await instance.exited;
    await store.close();
  }
});
