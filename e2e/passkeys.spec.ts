/**
 * Passkeys in real Chromium with a virtual WebAuthn authenticator (DevTools protocol:
 * WebAuthn.enable, WebAuthn.addVirtualAuthenticator), against the built server: a new user creates
 * a passkey and gets an account with a server-generated address; the passkey then logs in again;
 * a signed-in user adds a passkey at /account and it logs into that account; a replayed or
 * tampered assertion sent by the page is refused; cancelling is explained. The verification itself
 * is tested on real signatures in test/passkeys.test.ts.
 */
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import { decodeSubject } from "../lib/tokens/sub";
import { baseURL } from "../playwright.config";
import { expectNoAxeViolations } from "./support/axe";
import { authorizeUrl, backAtApplication, exchange, hostedLoginSetup, registerClient } from "./support/hosted-login";
import { addVirtualAuthenticator, copyPasskeys, misbehave } from "./support/passkeys";
import { upstreams } from "./support/upstream";

const { store, db, app } = hostedLoginSetup();

test("a new user creates a passkey and gets an account; the passkey signs in again (sub, provider_id, amr say passkey)", async ({
  page,
}) => {
  const client = await registerClient(store, app, "Acme Fleet");
  const authenticator = await addVirtualAuthenticator(page);
  await page.goto(authorizeUrl(app, { client_id: client.id, state: "st-new", nonce: "n-new" }));
  await page.getByRole("button", { name: "Create a passkey" }).click();
  const first = await backAtApplication(page, app);
  expect(first.get("state")).toBe("st-new");
  const claims = await exchange(app, client, first.get("code")!);
  expect(claims).toMatchObject({ provider_id: "passkey", email_verified: false, amr: ["passkey"], nonce: "n-new" });
  expect(claims.ethereum_address).toMatch(/^0x[0-9a-fA-F]{40}$/);
  expect(decodeSubject(claims.sub!)).toEqual({ userId: claims.ethereum_address, connector: "passkey" });

  // The authenticator holds one discoverable passkey for Keyfob's RP ID (ISSUER_URL's host).
  const [credential] = await authenticator.credentials();
  expect(credential).toMatchObject({ isResidentCredential: true, rpId: new URL(baseURL).hostname });
  const stored = await db.passkeyCredential.findUniqueOrThrow({
    where: { id: credential.credentialId.replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_") },
  });
  expect(stored.accountId).toBe(claims.ethereum_address);
  // Its user.id: the UTF-8 bytes of the stored user handle, the bytes SimpleWebAuthn 9 gave passkeys.
  expect(Buffer.from(credential.userHandle!, "base64").toString("utf8")).toBe(stored.userHandle);

  // A returning user (prompt=login: the session alone would do otherwise).
  await page.goto(authorizeUrl(app, { client_id: client.id, state: "st-again", prompt: "login" }));
  await page.getByRole("button", { name: "Continue with a passkey" }).click();
  const again = await exchange(app, client, (await backAtApplication(page, app)).get("code")!);
  expect(again.sub).toBe(claims.sub);
  expect(again.amr).toEqual(["passkey"]);

  // The session it started is offered as "Continue as", and says how it was made.
  await page.goto(authorizeUrl(app, { client_id: client.id }));
  await expect(page.getByText("You are signed in with a passkey")).toBeVisible();
  await expectNoAxeViolations(page, "the login page offering Continue as, after a passkey login");
});

test("a replayed or a tampered assertion is refused, with focus on the message; trying again works", async ({ page }) => {
  const client = await registerClient(store, app, "Acme Fleet");
  await addVirtualAuthenticator(page);
  const setMode = await misbehave(page);
  await page.goto(authorizeUrl(app, { client_id: client.id }));
  await page.getByRole("button", { name: "Create a passkey" }).click();
  await backAtApplication(page, app);

  // A first login records its assertion (and uses its challenge up).
  await page.goto(authorizeUrl(app, { client_id: client.id, prompt: "login" }));
  await page.getByRole("button", { name: "Continue with a passkey" }).click();
  await backAtApplication(page, app);

  // The same assertion again, for a new login: its challenge is spent and not this login's.
  const hits = app.hits.length;
  await page.goto(authorizeUrl(app, { client_id: client.id, prompt: "login", state: "st-replay" }));
  await setMode("replay");
  await page.getByRole("button", { name: "Continue with a passkey" }).click();
  const problem = page.getByTestId("passkey-problem");
  await expect(problem).toContainText("This passkey request has expired or was already used.");
  await expect(problem).toBeFocused();
  await expectNoAxeViolations(page, "the login page after a refused passkey");

  // A fresh assertion with one signature byte changed.
  await setMode("tamper");
  await problem.getByRole("button", { name: "Try again" }).click();
  await expect(problem).toContainText("Keyfob could not verify this passkey.");
  expect(app.hits.length).toBe(hits);

  await setMode("none");
  await problem.getByRole("button", { name: "Try again" }).click();
  expect((await backAtApplication(page, app)).get("state")).toBe("st-replay");
  // The server writes audit events in batches: the refusals' may land a moment after the login.
  await expect
    .poll(() => db.auditEvent.count({ where: { clientId: client.id, action: "login.failed", detail: { startsWith: "passkey:" } } }))
    .toBeGreaterThanOrEqual(2);
});

test("no passkey on this device: the refused request is explained, and creating one is offered", async ({ page }) => {
  const client = await registerClient(store, app, "Acme Fleet");
  // An authenticator with no passkey for Keyfob: the browser finds none to offer.
  await addVirtualAuthenticator(page);
  await page.goto(authorizeUrl(app, { client_id: client.id, state: "st-none" }));
  await page.getByRole("button", { name: "Continue with a passkey" }).click();
  const problem = page.getByTestId("passkey-problem");
  await expect(problem).toContainText("No passkey was used", { timeout: 30_000 });
  await expect(problem).toBeFocused();
  await expectNoAxeViolations(page, "the login page when no passkey was used");
  await problem.getByRole("button", { name: "Create a passkey" }).click();
  expect((await backAtApplication(page, app)).get("state")).toBe("st-none");
});

test("a Google account adds a passkey at /account; the passkey then signs in to that account", async ({ page, context }) => {
  const client = await registerClient(store, app, "Acme Fleet");
  await page.goto("/account");
  await page.getByRole("button", { name: "Continue with Google" }).click();
  await page.waitForURL((url) => url.href.startsWith(upstreams.google.issuer));
  await page.locator('input[name="login"]').fill(`dana-${randomBytes(4).toString("hex")}`);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL(`${baseURL}/account`);
  const accountId = (await page.getByTestId("account-address").textContent())!.trim();
  await expect(page.getByText("This account has no passkey yet.")).toBeVisible();
  await expectNoAxeViolations(page, "the account page without a passkey");

  const authenticator = await addVirtualAuthenticator(page);
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await expect(page.getByTestId("add-passkey-result")).toContainText("Passkey added");
  await expect(page.getByTestId("passkeys").getByRole("listitem")).toHaveCount(1);
  await expectNoAxeViolations(page, "the account page after adding a passkey");

  // Another tab (its own virtual authenticator holding the same passkey), a fresh login.
  const login = await context.newPage();
  await copyPasskeys(authenticator, await addVirtualAuthenticator(login));
  await login.goto(authorizeUrl(app, { client_id: client.id, prompt: "login" }));
  await login.getByRole("button", { name: "Continue with a passkey" }).click();
  const claims = await exchange(app, client, (await backAtApplication(login, app)).get("code")!);
  expect(claims).toMatchObject({ provider_id: "passkey", ethereum_address: accountId, amr: ["passkey"] });
  expect(decodeSubject(claims.sub!)).toEqual({ userId: accountId, connector: "passkey" });

  // A second passkey on the same authenticator is refused by it (the account's passkeys are
  // excluded), and said so; nothing is stored.
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await expect(page.getByTestId("add-passkey-result")).toContainText("The passkey was not added");
  await expectNoAxeViolations(page, "the account page after a passkey was not added");
  await page.reload();
  await expect(page.getByTestId("passkeys").getByRole("listitem")).toHaveCount(1);
});
