/**
 * The admin dashboard (/admin) in real Chromium against the built server. Admins sign in through
 * Keyfob's own hosted login with a browser wallet (fake EIP-1193 provider, key kept in Node); what
 * they change in the browser is then checked from the outside: Flow A with the client library,
 * the code flow's /auth page, the CSV export. Screenshots of the main pages go to e2e/artifacts/.
 *
 * The e2e server gets no ADMIN_ADDRESSES, so the admin's account is granted the role in the
 * database first: the same path as a role granted in the dashboard.
 */
import { mkdir } from "node:fs/promises";
import { expect, test, type Page, type TestInfo } from "@playwright/test";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { getAddress, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { getToken, KeyfobError } from "@keyfob/flow-a-client";
import { addRedirectUri, createClient } from "../lib/clients/registry";
import { createStore, rawConnection } from "../lib/store";
import { baseURL } from "../playwright.config";
import { expectNoAxeViolations } from "./support/axe";
import { installWallet } from "./support/wallet";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);
const jwks = createRemoteJWKSet(new URL(`${baseURL}/keys`));
const CHAIN_ID = 1; // Keyfob's default CHAIN_ID
const ARTIFACTS = "e2e/artifacts";

test.afterAll(() => store.close());

/** A wallet whose account holds the admin role. */
async function adminWallet(): Promise<Hex> {
  const key = generatePrivateKey();
  await db.adminRole.create({ data: { accountId: privateKeyToAccount(key).address, grantedBy: "e2e" } });
  return key;
}

/** Signs in at /admin: /admin/login → the hosted /auth page → "Continue with a wallet" → back at /admin/callback. */
async function signIn(page: Page, key: Hex, landing = `${baseURL}/admin`) {
  await installWallet(page, { privateKey: key, chainId: CHAIN_ID });
  await page.goto("/admin");
  await page.waitForURL((url) => url.pathname.startsWith("/auth/interaction/"));
  await expect(page.getByText("to continue to Keyfob admin")).toBeVisible();
  await page.getByRole("button", { name: "Continue with a wallet" }).click();
  await page.waitForURL(landing, { timeout: 30_000 });
}

async function screenshot(page: Page, testInfo: TestInfo, name: string) {
  await mkdir(ARTIFACTS, { recursive: true });
  const body = await page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage: true });
  await testInfo.attach(name, { body, contentType: "image/png" });
}

/** Confirms a destructive action: the button opens a modal dialog; the confirm button in it runs the action. */
async function confirm(page: Page, trigger: string | RegExp, confirmLabel: string) {
  await page.getByRole("button", { name: trigger, exact: typeof trigger === "string" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toBeVisible();
  await dialog.getByRole("button", { name: confirmLabel }).click();
  await expect(dialog).toBeHidden();
}

function textbox(page: Page, label: string) {
  return page.getByRole("textbox", { name: label, exact: true });
}

test("an admin registers a client with a redirect URI and a signer; Flow A works until the signer is revoked in the browser", async ({
  page,
}, testInfo) => {
  await signIn(page, await adminWallet());
  await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();
  // The chart: one list item per day, each bar a link named with its day and count (to the filtered audit log).
  await expect(page.getByTestId("token-chart").getByRole("listitem")).toHaveCount(14);
  await screenshot(page, testInfo, "admin-overview");

  // Create the client: first with mistakes, which are named next to their fields.
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Clients" }).click();
  await expect(page.getByRole("heading", { name: "Clients" })).toBeVisible();
  await page.getByRole("link", { name: "New client" }).click();
  const license = privateKeyToAccount(generatePrivateKey()).address;
  await page.getByLabel(/^Client ID/).fill(license.toLowerCase());
  await page.getByLabel("Logo URL").fill("http://insecure.example.com/logo.png");
  await page.getByRole("button", { name: "Create client" }).click();
  const main = page.getByRole("main");
  await expect(main.getByRole("alert")).toHaveText("Please correct the highlighted fields.");
  await expect(textbox(page, "Name")).toHaveAttribute("aria-invalid", "true");
  await expect(textbox(page, "Name")).toHaveAccessibleDescription(/Required/);
  await expect(textbox(page, "Name")).toBeFocused();
  await expect(textbox(page, "Client ID (optional)")).toHaveValue(license.toLowerCase()); // kept after the error
  await textbox(page, "Name").fill("E2E Fleet");
  await page.getByRole("button", { name: "Create client" }).click();
  await expect(textbox(page, "Logo URL (optional)")).toHaveAccessibleDescription(/Must be an https URL/);
  await expect(textbox(page, "Name")).toHaveValue("E2E Fleet");
  await textbox(page, "Logo URL (optional)").fill("https://fleet.example.com/logo.png");
  await page.getByRole("button", { name: "Create client" }).click();

  // The license address is stored checksummed.
  await page.waitForURL((url) => url.pathname === `/admin/clients/${license}`);
  await expect(page.getByRole("heading", { name: "E2E Fleet" })).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: "Client created" })).toBeVisible();

  // A redirect URI: refused when not https, then stored and shown exactly as written.
  const domain = `https://fleet.example.com/callback?e2e=${license.slice(2, 8)}&x=1`;
  const uriField = textbox(page, "New redirect URI");
  const addUri = page.getByRole("form", { name: "Add a redirect URI" }).getByRole("button", { name: "Add URI" });
  await uriField.fill("http://fleet.example.com/callback");
  await addUri.click();
  await expect(uriField).toHaveAttribute("aria-invalid", "true");
  await expect(uriField).toHaveAccessibleDescription(/redirect URI/i);
  await uriField.fill(domain);
  await addUri.click();
  await expect(page.getByRole("list", { name: "Registered redirect URIs" }).getByText(domain, { exact: true })).toBeVisible();

  // Settings: renamed, made a resource server; a bad logo URL is named and changes nothing.
  const settings = page.getByRole("form", { name: "Client settings" });
  await settings.getByLabel("Logo URL").fill("http://insecure.example.com/logo.png");
  await settings.getByRole("button", { name: "Save settings" }).click();
  await expect(settings.getByLabel("Logo URL")).toHaveAccessibleDescription(/Must be an https URL/);
  await settings.getByLabel("Logo URL").fill("https://fleet.example.com/logo.png");
  await settings.getByLabel("Name").fill("E2E Fleet Two");
  await settings.getByLabel("Resource server").check();
  await settings.getByRole("button", { name: "Save settings" }).click();
  await expect(settings.getByRole("status")).toHaveText("Settings saved.");
  await expect(page.getByRole("heading", { name: "E2E Fleet Two" })).toBeVisible();
  expect(await db.client.findUniqueOrThrow({ where: { id: license } })).toMatchObject({
    name: "E2E Fleet Two",
    resourceServer: true,
    requirePkce: false,
  });
  await settings.getByLabel("Name").fill("E2E Fleet");
  await settings.getByRole("button", { name: "Save settings" }).click();
  await expect(page.getByRole("heading", { name: "E2E Fleet", exact: true })).toBeVisible();

  // A post-logout redirect URI, in its own list.
  const postLogout = page.getByRole("form", { name: "Add a post-logout redirect URI" });
  await postLogout.getByLabel("New post-logout redirect URI").fill("https://fleet.example.com/signed-out");
  await postLogout.getByRole("button", { name: "Add URI" }).click();
  await expect(
    page.getByRole("list", { name: "Registered post-logout redirect URIs" }).getByText("https://fleet.example.com/signed-out"),
  ).toBeVisible();

  // A signer: a bad address is named, then the signer's address is added.
  const signerKey = generatePrivateKey();
  const signer = privateKeyToAccount(signerKey).address;
  await page.getByLabel("Signer address").fill("0x1234");
  await page.getByRole("button", { name: "Add signer" }).click();
  await expect(page.getByLabel("Signer address")).toHaveAccessibleDescription(/0x-prefixed 20-byte hex address/);
  await page.getByLabel("Signer address").fill(signer.toLowerCase());
  await page.getByRole("button", { name: "Add signer" }).click();
  const signerRow = page.getByRole("row").filter({ hasText: signer });
  await expect(signerRow.getByText("Active")).toBeVisible();
  await screenshot(page, testInfo, "admin-client");

  // Flow A for the client, signed by that signer.
  const tokens = await getToken({ authUrl: baseURL, clientId: license, domain, privateKey: signerKey });
  const { payload } = await jwtVerify(tokens.id_token, jwks, { issuer: baseURL, audience: license });
  expect(payload.ethereum_address).toBe(license);

  // The token is listed for the client.
  await page.getByRole("link", { name: "Active tokens" }).click();
  await expect(page.getByRole("heading", { name: "Tokens" })).toBeVisible();
  await expect(page.getByRole("table")).toContainText(license);
  await screenshot(page, testInfo, "admin-tokens");
  await page.goBack();

  // Revoke the signer in the browser (the dialog can be dismissed with Escape first).
  await page.getByRole("button", { name: `Revoke signer ${signer}` }).click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await expect(page.getByRole("dialog").getByRole("button", { name: "Cancel" })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(page.getByRole("dialog")).toBeHidden();
  await expect(signerRow.getByText("Active")).toBeVisible();
  await confirm(page, `Revoke signer ${signer}`, "Revoke signer");
  await expect(signerRow.getByText("Revoked")).toBeVisible();

  // The next Flow A attempt with that signer is refused.
  const refused = await getToken({ authUrl: baseURL, clientId: license, domain, privateKey: signerKey }).catch((error) => error);
  expect(refused).toBeInstanceOf(KeyfobError);
  expect(refused).toMatchObject({ status: 400, code: "invalid_grant" });

  // The list shows the client, and the audit log what was done.
  await page.goto(`/admin/clients?q=${license.slice(2, 10)}`);
  await expect(page.getByRole("link", { name: "E2E Fleet" })).toBeVisible();
  await screenshot(page, testInfo, "admin-clients");
  await page.goto(`/admin/audit?client=${license}`);
  const events = page.getByRole("table");
  for (const action of [
    "client.created",
    "redirect_uri.added",
    "client.updated",
    "post_logout_redirect_uri.added",
    "signer.added",
    "signer.revoked",
    "token.issued",
  ]) {
    await expect(events.getByText(action, { exact: true }).first()).toBeVisible();
  }
  await expect(events.getByText("redirect_uri.added", { exact: true }).filter({ visible: true })).toHaveCount(2); // the refused one too (rows, not their collapsed details)
  await screenshot(page, testInfo, "admin-audit");
});

test("a client disabled in the browser is refused by Flow A and by the code flow", async ({ page, request }, testInfo) => {
  const clientId = privateKeyToAccount(generatePrivateKey()).address;
  const redirectUri = `https://disabled.example.com/${clientId.slice(2, 8)}`;
  await createClient(store, { id: clientId, name: "Soon Disabled" });
  await addRedirectUri(store, clientId, redirectUri);
  const challenge = `/auth/web3/generate_challenge?${new URLSearchParams({ client_id: clientId, domain: redirectUri, scope: "openid", response_type: "code", address: clientId })}`;
  expect((await request.post(challenge)).status()).toBe(200);

  await signIn(page, await adminWallet());
  await page.goto(`/admin/clients/${clientId}`);

  // A client secret: asked first, shown once, and it authenticates the client.
  await confirm(page, "Generate secret", "Generate secret");
  const secretField = page.getByRole("textbox", { name: "New client secret" });
  const secret = await secretField.inputValue();
  expect(secret).toMatch(/^[\w-]{43}$/);
  const introspect = (password: string) =>
    request.post("/token/introspect", {
      headers: {
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(password)}`).toString("base64")}`,
      },
      form: { token: "not-a-token" },
    });
  expect((await introspect(secret)).status()).toBe(200);
  expect((await introspect("a wrong secret")).status()).toBe(401);
  await expect(page.getByRole("button", { name: "Copy secret" })).toBeVisible();
  await screenshot(page, testInfo, "admin-client-secret");
  await page.getByRole("button", { name: "I have stored it: hide the secret" }).click();
  await expect(secretField).toHaveCount(0);
  await page.reload();
  await expect(page.getByText("Confidential", { exact: true })).toBeVisible();
  await expect(page.getByRole("button", { name: "Rotate secret" })).toBeVisible();
  await expect(page.getByText(secret)).toHaveCount(0);

  await confirm(page, "Disable", "Disable client");
  await expect(page.getByText("Disabled", { exact: true })).toBeVisible();
  await screenshot(page, testInfo, "admin-client-disabled");

  const refused = await request.post(challenge);
  expect(refused.status()).toBe(401);
  expect(await refused.json()).toMatchObject({ error: "invalid_client" });

  const flowB = await page.context().newPage();
  await flowB.goto(
    `/auth?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: "code", scope: "openid" })}`,
  );
  await expect(flowB.getByRole("heading", { name: "This sign-in link doesn't work" })).toBeVisible();
  await expect(flowB.getByText("This application is unknown or disabled.")).toBeVisible();
  await flowB.close();

  // Enabled again, it works again.
  await page.getByRole("button", { name: "Enable" }).click();
  await expect(page.getByText("Enabled", { exact: true })).toBeVisible();
  expect((await request.post(challenge)).status()).toBe(200);
});

test("a signed-in account that is not an admin gets 403 and nothing of the dashboard", async ({ page, browser }) => {
  const forbidden = page.waitForResponse((response) => new URL(response.url()).pathname === "/admin/forbidden");
  await signIn(page, generatePrivateKey(), `${baseURL}/admin/forbidden`);
  expect((await forbidden).status()).toBe(403);
  await expect(page.getByRole("heading", { name: "This account is not an admin" })).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Dashboard" })).toHaveCount(0);
  await expectNoAxeViolations(page, "the page for a signed-in account that is not an admin");

  // Every page, and the export, refuse the session on the server.
  for (const path of ["/admin/clients", "/admin/keys", "/admin/audit"]) {
    const response = await page.request.get(path, { maxRedirects: 0 });
    expect(response.status(), path).toBe(307);
    expect(response.headers().location).toBe("/admin/forbidden");
  }
  expect((await page.request.get("/admin/audit/export")).status()).toBe(403);
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: `${ARTIFACTS}/admin-forbidden.png` });

  // Signing out ends the session; a signed-out visitor is sent to the sign-in.
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page.getByRole("heading", { name: "You have signed out" })).toBeVisible();
  await expectNoAxeViolations(page, "the dashboard's signed-out page");
  const anonymous = await browser.newContext();
  const response = await anonymous.request.get(`${baseURL}/admin/tokens`, { maxRedirects: 0 });
  expect(response.status()).toBe(307);
  expect(response.headers().location).toBe("/admin/login");
  expect((await anonymous.request.get(`${baseURL}/admin/audit/export`)).status()).toBe(401);
  const login = await anonymous.request.get(`${baseURL}/admin/login`, { maxRedirects: 0 });
  expect(login.status()).toBe(303);
  expect(login.headers().location).toMatch(new RegExp(`^${baseURL}/auth\\?client_id=keyfob-admin&`));
  const loginCookie = login.headers()["set-cookie"];
  expect(loginCookie).toMatch(/^keyfob_admin_login=[\w-]+\.[\w-]+;/);
  for (const attribute of [/Path=\/admin(;|$)/, /HttpOnly/i, /SameSite=lax/i, /Max-Age=600/]) expect(loginCookie).toMatch(attribute);
  await anonymous.close();
});

test("Sign out everywhere ends the admin's dashboard sessions in every browser, and no other admin's", async ({ page, browser }) => {
  const key = await adminWallet();
  await signIn(page, key);
  const other = await browser.newContext();
  const otherPage = await other.newPage();
  await signIn(otherPage, key);
  const bystander = await browser.newContext();
  const bystanderPage = await bystander.newPage();
  await signIn(bystanderPage, await adminWallet());

  await page.getByRole("button", { name: "Sign out everywhere" }).click();
  await expect(page.getByText("Every dashboard session of your account has ended, in every browser.")).toBeVisible();
  // The other browser still holds its cookie; the server no longer knows its session.
  const refused = await otherPage.request.get("/admin/accounts", { maxRedirects: 0 });
  expect(refused.status()).toBe(307);
  expect(refused.headers().location).toBe("/admin/login");
  expect((await otherPage.request.get("/admin/audit/export")).status()).toBe(401);
  expect((await bystanderPage.request.get("/admin/accounts", { maxRedirects: 0 })).status()).toBe(200);
  await other.close();
  await bystander.close();
});

test("signing keys rotate, tokens are revoked, the audit log filters and exports, admins are granted", async ({ page }, testInfo) => {
  // A client with tokens from Flow A (the license signing for itself).
  const ownerKey = generatePrivateKey();
  const clientId = privateKeyToAccount(ownerKey).address;
  const domain = `https://tokens.example.com/${clientId.slice(2, 8)}`;
  await createClient(store, { id: clientId, name: "Token Holder" });
  await addRedirectUri(store, clientId, domain);
  for (let i = 0; i < 2; i++) await getToken({ authUrl: baseURL, clientId, domain, privateKey: ownerKey });

  await signIn(page, await adminWallet());

  // Keys: current key listed; rotation asks first, then publishes an upcoming key.
  await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link", { name: "Signing keys" }).click();
  await expect(page.getByRole("heading", { name: "Signing keys" })).toBeVisible();
  const accessKeys = page.getByRole("table", { name: "Signing keys, newest first" });
  const vehicleKeys = page.getByRole("table", { name: "Vehicle token keys, newest first" });
  await expect(accessKeys.getByText("Current")).toBeVisible();
  await expect(vehicleKeys.getByText("Current")).toBeVisible();
  if (await page.getByRole("button", { name: "Rotate now" }).isVisible()) {
    await confirm(page, "Rotate now", "Rotate now");
    await expect(vehicleKeys.getByText("Upcoming")).toBeVisible(); // both sets rotate
  }
  await expect(accessKeys.getByText("Upcoming")).toBeVisible();
  await expect(page.getByRole("note")).toContainText("A rotation is under way");
  await screenshot(page, testInfo, "admin-keys");

  // Tokens: revoke one, then all of the client.
  await page.goto(`/admin/tokens?client=${clientId.toLowerCase()}`);
  const rows = page.getByRole("table").getByRole("row");
  await expect(rows).toHaveCount(3); // header + 2
  const first = (await rows
    .nth(1)
    .getByRole("button", { name: /^Revoke token / })
    .getAttribute("aria-label"))!;
  await confirm(page, first, "Revoke token");
  await expect(rows).toHaveCount(2);
  await confirm(page, "Revoke all 1", "Revoke all");
  await expect(page.getByText(`No active tokens for client ${clientId}`)).toBeVisible();

  // Audit: filter, a date range error, and the CSV export of the filter.
  await page.goto("/admin/audit");
  await page.getByLabel("Action").selectOption("token.revoked");
  await page.getByRole("textbox", { name: "Client ID" }).fill(clientId);
  await page.getByRole("button", { name: "Apply filter" }).click();
  await expect(page.getByRole("table").getByRole("row")).toHaveCount(3); // header + the single token's revocation + the client's revoke-all
  const download = page.waitForEvent("download");
  await page.getByRole("link", { name: "Export CSV" }).click();
  const csv = await (await download).createReadStream().then(async (stream) => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  });
  const lines = csv.trim().split("\r\n");
  expect(lines[0]).toBe("at,actor,action,clientId,accountId,ip,outcome,detail");
  expect(lines).toHaveLength(3);
  expect(lines.slice(1).every((line) => line.includes('"token.revoked"') && line.includes(`"${clientId}"`))).toBe(true);

  await page.goto("/admin/audit?from=2026-02-10&to=2026-02-01");
  await expect(page.getByLabel("To (UTC day, inclusive)")).toHaveAccessibleDescription("Must be on or after the start date.");

  // Admins: a bad address is named; a good one is granted and can be revoked again.
  await page.goto("/admin/admins");
  await page.getByLabel("Grant the admin role to an account").fill("not-an-address");
  await page.getByRole("button", { name: "Grant role" }).click();
  await expect(page.getByLabel("Grant the admin role to an account")).toHaveAccessibleDescription(/0x-prefixed 20-byte hex address/);
  const newcomer = privateKeyToAccount(generatePrivateKey()).address;
  await page.getByLabel("Grant the admin role to an account").fill(newcomer.toLowerCase());
  await page.getByRole("button", { name: "Grant role" }).click();
  await expect(page.getByRole("row").filter({ hasText: getAddress(newcomer) })).toBeVisible();
  await screenshot(page, testInfo, "admin-admins");
  await confirm(page, `Revoke the admin role of ${newcomer}`, "Revoke role");
  await expect(page.getByRole("row").filter({ hasText: newcomer })).toHaveCount(0);
});

test("client ids are shown and linked exactly as stored; lists have empty states", async ({ page }) => {
  const odd = `odd/${Date.now()}%41:é?#x`.replace("é", "e"); // printable ASCII, no spaces
  await createClient(store, { id: odd, name: "Odd Id" });
  await signIn(page, await adminWallet());
  await page.goto(`/admin/clients?q=${encodeURIComponent(odd)}`);
  await page.getByRole("link", { name: "Odd Id" }).click();
  await expect(page.getByRole("heading", { name: "Odd Id" })).toBeVisible();
  await expect(page.getByRole("region", { name: "Details" }).getByText(odd, { exact: true })).toBeVisible();

  await page.goto("/admin/clients?q=no-such-client-anywhere");
  await expect(page.getByText("No clients match “no-such-client-anywhere”")).toBeVisible();
  await page.goto("/admin/clients/no-such-client-anywhere");
  await expect(page.getByText("No such client")).toBeVisible();
  // A path that does not even decode is not found either, for admins and everyone else: never a 500.
  expect((await page.request.get("/admin/clients/%E0%A4%A")).status()).toBe(404);
  expect((await page.request.get("/admin/clients/%00")).status()).toBe(404);
  const anonymous = await page.context().browser()!.newContext();
  expect((await anonymous.request.get(`${baseURL}/admin/clients/%E0%A4%A`, { maxRedirects: 0 })).status()).toBe(404);
  expect((await anonymous.request.get(`${baseURL}/auth/interaction/%E0%A4%A`, { maxRedirects: 0 })).status()).toBe(404);
  await anonymous.close();
  await page.goto(`/admin/tokens?account=${privateKeyToAccount(generatePrivateKey()).address}`);
  await expect(page.getByText(/^No active tokens for account 0x/)).toBeVisible();
  await page.goto("/admin/tokens?account=0x12");
  await expect(page.getByLabel("Account address")).toHaveAccessibleDescription("Must be a 0x-prefixed 20-byte hex address.");
});

test("the dashboard works at phone width", async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, await adminWallet());
  const nav = page.getByRole("navigation", { name: "Dashboard" });
  await nav.getByRole("link", { name: "Clients" }).click();
  await expect(page.getByRole("heading", { name: "Clients" })).toBeVisible();
  await screenshot(page, testInfo, "admin-clients-mobile");
  await page.getByRole("link", { name: "New client" }).click();
  await expect(page.getByRole("button", { name: "Create client" })).toBeVisible();
  // Nothing wider than the screen but the tables' own scrolling.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await screenshot(page, testInfo, "admin-new-client-mobile");
});
