/**
 * ENS profiles in real Chromium against the built server: a wallet's name and avatar, as a wallet
 * login on an instance with RPC_URL keeps them in ens_profiles (test/ens-profile.test.ts resolves
 * them on a local chain; this server has no chain), show on "Continue as" and on /account, and the
 * code exchange with the profile scope carries them.
 */
import { expect, test } from "@playwright/test";
import { generatePrivateKey } from "viem/accounts";
import { baseURL } from "../playwright.config";
import { expectNoAxeViolations } from "./support/axe";
import { authorizeUrl, backAtApplication, CHAIN_ID, exchange, hostedLoginSetup, registerClient } from "./support/hosted-login";
import { installWallet } from "./support/wallet";

const { store, db, app } = hostedLoginSetup();

test("a wallet's ENS name and avatar show on Continue as and /account, and come in the ID token with profile", async ({ page }) => {
  const client = await registerClient(store, app, "Acme Fleet");
  const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
  const name = `driver-${wallet.address.slice(2, 8).toLowerCase()}.eth`;
  const avatar = `https://avatars.example.com/${name}.png`;

  await page.goto(authorizeUrl(app, { client_id: client.id, scope: "openid profile" }));
  await page.getByRole("button", { name: "Continue with a wallet" }).click();
  const first = await exchange(app, client, (await backAtApplication(page, app)).get("code")!);
  // This server has no RPC: nothing was resolved.
  expect(first).not.toHaveProperty("preferred_username");

  await db.ensProfile.create({
    data: { address: wallet.address.toLowerCase(), name, avatar, expiresAt: new Date(Date.now() + 3_600_000) },
  });

  await page.goto(authorizeUrl(app, { client_id: client.id, scope: "openid profile", state: "st-ens" }));
  await expect(page.getByTestId("continue-as-label")).toHaveText(`Continue as ${name}`);
  await expect(page.getByTestId("continue-as-label")).toHaveAttribute("title", wallet.address);
  await expect(page.getByRole("button", { name: /^Continue as/ }).getByTestId("ens-avatar")).toHaveAttribute("src", avatar);
  await expectNoAxeViolations(page, "the login page with an ENS name on Continue as");
  await page.getByRole("button", { name: /^Continue as/ }).click();
  const second = await exchange(app, client, (await backAtApplication(page, app)).get("code")!);
  expect(second).toMatchObject({ preferred_username: name, picture: avatar });

  await page.goto(`${baseURL}/account`);
  await expect(page.getByTestId("account-address")).toHaveText(wallet.address);
  for (const shown of [page.locator("dl").getByTestId("ens-name"), page.getByTestId("identity").getByTestId("ens-name")]) {
    await expect(shown).toHaveText(name);
    await expect(shown).toHaveAttribute("title", wallet.address);
    await expect(shown.getByTestId("ens-avatar")).toHaveAttribute("src", avatar);
  }
  await expectNoAxeViolations(page, "the account page with an ENS name");
});
