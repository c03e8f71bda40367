/**
 * Consent for a third-party client (Client.requireConsent) in real Chromium against the built
 * server: after a wallet login the hosted login shows the consent page (the client's name, the
 * scopes in words); Deny sends access_denied to the application, Allow a code that is exchanged for
 * tokens; the next login for the same scopes goes on without the page; /account lists the
 * application and revokes its access; revoked, the page asks again (in German for ui_locales=de),
 * and the login page leads to it. An admin revokes a consent on the account's dashboard page.
 * The pages are checked with axe.
 */
import { expect, test } from "@playwright/test";
import { generatePrivateKey } from "viem/accounts";
import { updateClient } from "../lib/clients/registry";
import { adminSession, confirm, seedUser } from "./support/admin";
import { expectNoAxeViolations } from "./support/axe";
import { authorizeUrl, backAtApplication, CHAIN_ID, exchange, hostedLoginSetup, registerClient } from "./support/hosted-login";
import { installWallet } from "./support/wallet";

const { store, db, app } = hostedLoginSetup();

test("a wallet user denies, then allows a third-party application, and revokes its access at /account", async ({ page }) => {
  const client = await registerClient(store, app, "Acme Maps");
  await updateClient(store, client.id, { requireConsent: true });
  const wallet = await installWallet(page, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });

  // The login, then the consent page: Deny sends access_denied with the state, and no code.
  await page.goto(authorizeUrl(app, { client_id: client.id, state: "st-deny" }));
  await page.getByRole("button", { name: "Continue with a wallet" }).click();
  await page.waitForURL((url) => url.pathname.endsWith("/consent"));
  await expect(page.getByRole("heading", { name: "Allow access" })).toBeVisible();
  await expect(page.getByTestId("client-name")).toHaveText("Acme Maps");
  await expect(page.getByTestId("consent-account")).toContainText(wallet.address);
  const scopes = page.getByTestId("consent-scopes");
  await expect(scopes).toContainText("Know your account address");
  await expect(scopes).toContainText("See your email address");
  await expectNoAxeViolations(page, "the consent page");
  await page.getByRole("button", { name: "Deny" }).click();
  const denied = await backAtApplication(page, app);
  expect([denied.get("error"), denied.get("state"), denied.get("code")]).toEqual(["access_denied", "st-deny", null]);

  // Again with the browser's session: the page asks again, and Allow sends a code that gets tokens.
  await page.goto(authorizeUrl(app, { client_id: client.id, state: "st-allow" }));
  await page.getByRole("button", { name: /^Continue as/ }).click();
  await page.waitForURL((url) => url.pathname.endsWith("/consent"));
  await page.getByRole("button", { name: "Allow" }).click();
  const allowed = await backAtApplication(page, app);
  expect(allowed.get("state")).toBe("st-allow");
  expect(await exchange(app, client, allowed.get("code")!)).toMatchObject({ ethereum_address: wallet.address });

  // Granted: the next login for the same scopes goes on without the page.
  await page.goto(authorizeUrl(app, { client_id: client.id, state: "st-again" }));
  await page.getByRole("button", { name: /^Continue as/ }).click();
  const again = await backAtApplication(page, app);
  expect([again.get("state"), again.has("code")]).toEqual(["st-again", true]);

  // /account lists the application with what it may do; Revoke takes the access away.
  await page.goto("/account");
  const applications = page.getByTestId("applications").getByTestId("application");
  await expect(applications).toHaveCount(1);
  await expect(applications).toContainText("Acme Maps");
  await expect(applications).toContainText("Know your account address");
  await expectNoAxeViolations(page, "/account with an allowed application");
  await applications.getByRole("button", { name: "Revoke the access of Acme Maps" }).click();
  await expect(page.getByTestId("account-outcome")).toContainText("That application's access was revoked.");
  await expect(page.getByTestId("applications")).toHaveCount(0);

  // Revoked: the page asks again, in the request's language; the login page now leads to it.
  await page.goto(authorizeUrl(app, { client_id: client.id, state: "st-de", ui_locales: "de" }));
  await page.getByRole("button", { name: /^Weiter als/ }).click();
  await page.waitForURL((url) => url.pathname.endsWith("/consent"));
  await expect(page.getByRole("heading", { name: "Zugriff erlauben" })).toBeVisible();
  await expect(page.getByTestId("consent-scopes")).toContainText("Ihre Kontoadresse kennen");
  await page.goto(page.url().replace(/\/consent$/, ""));
  await page.waitForURL((url) => url.pathname.endsWith("/consent"));
  await page.getByRole("button", { name: "Ablehnen" }).click();
  expect((await backAtApplication(page, app)).get("error")).toBe("access_denied");
});

test("an admin sees an account's consent on its dashboard page and revokes it", async ({ page }) => {
  const client = await registerClient(store, app, "Acme Routes");
  await updateClient(store, client.id, { requireConsent: true });
  const user = await seedUser(db);
  await store.consentGrants.grant(user.accountId, client.id, ["openid", "email"], new Date());
  await adminSession(page.context(), db);
  await page.goto(`/admin/accounts/${user.accountId}`);
  const consents = page.locator("#consents");
  await expect(consents).toContainText("Acme Routes");
  await expect(consents).toContainText("email openid");
  await confirm(page, "Revoke the consent to Acme Routes", "Revoke consent", undefined, "the revoke-consent dialog");
  await expect(consents).toContainText("No consents");
  expect(await store.consentGrants.find(user.accountId, client.id)).toBeUndefined();
});
