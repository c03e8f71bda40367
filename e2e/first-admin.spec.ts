/**
 * The first admin's set-up link (/admin/setup) in real Chromium: with no admin at all, whoever opens
 * the link signs in with their wallet through the dashboard's own sign-in and becomes the admin;
 * then the link is refused. The code is put in the database as the server's start would (hashed,
 * an hour): the server's printed link goes to its terminal, which this test does not read. The
 * admin roles other specs left are set aside for the test and put back after it.
 */
import { expect, test } from "@playwright/test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { opaqueDigest, randomOpaque } from "../lib/oauth/opaque";
import { createStore, rawConnection } from "../lib/store";
import { baseURL } from "../playwright.config";
import { CHAIN_ID } from "./support/admin";
import { expectNoAxeViolations } from "./support/axe";
import { installWallet } from "./support/wallet";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);

test.afterAll(() => store.close());

async function setupCode(): Promise<string> {
  const code = randomOpaque();
  await db.adminSetupCode.create({ data: { codeHash: opaqueDigest(code), expiresAt: new Date(Date.now() + 3600_000) } });
  return code;
}

test("a set-up link makes the wallet that signs in the first admin, once", async ({ page }) => {
  const others = await db.adminRole.findMany();
  await db.adminRole.deleteMany();
  try {
    const key = generatePrivateKey();
    const address = privateKeyToAccount(key).address;
    await installWallet(page, { privateKey: key, chainId: CHAIN_ID });
    const code = await setupCode();

    await page.goto(`/admin/setup?code=${code}`);
    await expect(page).toHaveURL(`${baseURL}/admin/setup`); // the code left the address bar
    await expect(page.getByRole("heading", { name: "Become Keyfob's first admin" })).toBeVisible();
    await expectNoAxeViolations(page, "set-up link, signed out");

    await page.getByRole("button", { name: "Sign in with your wallet" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/auth/interaction/"));
    await page.getByRole("button", { name: "Continue with a wallet" }).click();
    await page.waitForURL(`${baseURL}/admin/setup`, { timeout: 30_000 });
    await expect(page.getByText(address)).toBeVisible();
    await expectNoAxeViolations(page, "set-up link, signed in");

    await page.getByRole("button", { name: /^Make 0x.* the admin$/ }).click();
    await page.waitForURL(`${baseURL}/admin`);
    await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();
    expect(await db.adminRole.findUnique({ where: { accountId: address } })).toMatchObject({ grantedBy: "setup link" });

    // The dashboard's own client is read-only here: its details, nothing to change.
    await page.goto("/admin/clients/keyfob-admin");
    await expect(page.getByText("It is built in and read-only")).toBeVisible();
    await expect(page.getByRole("button", { name: /^(Disable|Enable|Delete|Add|Remove|Save|Rotate)/ })).toHaveCount(0);
    await expectNoAxeViolations(page, "the built-in client");

    // Used once: refused while an admin exists, and as used once none does.
    const again = await page.goto(`/admin/setup?code=${code}`);
    expect(again?.status()).toBe(403);
    await expect(page.getByRole("heading", { name: "Keyfob already has an admin" })).toBeVisible();
    await expectNoAxeViolations(page, "set-up link refused");
    await db.adminRole.deleteMany();
    expect((await page.goto(`/admin/setup?code=${code}`))?.status()).toBe(410);
    await expect(page.getByText("This set-up link has already been used: each one works once.")).toBeVisible();
  } finally {
    await db.adminRole.deleteMany();
    await db.adminRole.createMany({ data: others });
  }
});
