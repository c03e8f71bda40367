/**
 * The management API end to end against the built server: an admin allows a confidential client
 * the API in the browser; the client gets a keyfob:admin token with client_credentials over HTTP
 * and reaches every resource; its changes and refusals appear in the audit log under its name,
 * with their reasons (rows opened, outcome filter); a missing or invalid token is 401 with
 * WWW-Authenticate, a token without the scope or from a client whose permission an admin withdrew
 * in the browser is 403.
 */
import { expect, test } from "@playwright/test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { getToken } from "@keyfob/flow-a-client";
import { addRedirectUri, createClient } from "../lib/clients/registry";
import { createStore, rawConnection } from "../lib/store";
import { baseURL } from "../playwright.config";
import { adminSession, confirm, screenshot, seedUser } from "./support/admin";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);
test.afterAll(() => store.close());

const API = `${baseURL}/api/admin/v1`;

async function call(token: string | undefined, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${API}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text && response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text,
  };
}

test("a client allowed in the browser manages Keyfob through the API; the audit log explains; 401 and 403 as documented", async ({
  page,
}, testInfo) => {
  test.setTimeout(180_000);
  const automation = `kf_automation_${Date.now()}`;
  await createClient(store, { id: automation, name: "Automation" });
  await adminSession(page.context(), db);
  await page.goto(`/admin/clients/${automation}`);
  await confirm(page, "Generate secret", "Generate secret");
  const secret = await page.getByRole("textbox", { name: "New client secret" }).inputValue();
  await page.getByRole("button", { name: "I have stored it: hide the secret" }).click();
  const settings = page.getByRole("form", { name: "Client settings" });
  await settings.getByLabel("Management API").check();
  // Least privilege: no scope is ticked until the admin chooses one, and saving without one is refused.
  for (const scope of ["keyfob:admin", "keyfob:read", "keyfob:clients", "keyfob:accounts", "keyfob:keys"])
    await expect(settings.getByLabel(scope, { exact: true })).not.toBeChecked();
  await settings.getByRole("button", { name: "Save settings" }).click();
  await expect(settings.getByRole("alert")).toContainText(/choose at least one management API scope/i);
  // React resets a form after its action, refused or not: the boxes are as saved again.
  await settings.getByLabel("Management API").check();
  await settings.getByLabel("keyfob:admin", { exact: true }).check();
  await settings.getByRole("button", { name: "Save settings" }).click();
  await expect(settings.getByRole("status")).toHaveText("Settings saved.");

  // client_credentials, with the snippet's parameters (client_secret_post).
  const issued = await fetch(`${baseURL}/token`, {
    method: "POST",
    body: new URLSearchParams({ grant_type: "client_credentials", scope: "keyfob:admin", client_id: automation, client_secret: secret }),
  });
  const grant = await issued.json();
  expect(issued.status, JSON.stringify(grant)).toBe(200);
  expect(grant).toMatchObject({ token_type: "bearer", expires_in: 600, scope: "keyfob:admin" });
  expect(grant.id_token).toBeUndefined();
  const token: string = grant.access_token;

  // The OpenAPI document, served by Keyfob.
  const openapi = await call(undefined, "GET", "/openapi.json");
  expect(openapi.status).toBe(200);
  expect(openapi.body).toMatchObject({ openapi: "3.1.0", servers: [{ url: API }] });

  // Clients, and everything of a client.
  const created = await call(token, "POST", "/clients", { name: "Made by the API" });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  expect((await call(token, "PATCH", `/clients/${id}`, { logoUrl: "http://not-https.example.com/logo.png" })).body).toMatchObject({
    status: 400,
    field_errors: { logoUrl: "must be an https URL" },
  });
  expect((await call(token, "PATCH", `/clients/${id}`, { requirePkce: true, name: "Renamed by the API" })).body).toMatchObject({
    requirePkce: true,
    name: "Renamed by the API",
  });
  expect((await call(token, "POST", `/clients/${id}/redirect-uris`, { uri: "https://api-made.example.com/cb" })).status).toBe(201);
  expect((await call(token, "POST", `/clients/${id}/post-logout-redirect-uris`, { uri: "https://api-made.example.com/bye" })).status).toBe(
    201,
  );
  expect((await call(token, "POST", `/clients/${id}/allowed-origins`, { origin: "https://spa.api-made.example.com" })).status).toBe(201);
  // Signers are a license's only: this client's generated id is not an address.
  const signer = privateKeyToAccount(generatePrivateKey()).address;
  expect((await call(token, "POST", `/clients/${id}/signers`, { address: signer })).body).toMatchObject({
    status: 400,
    field_errors: { clientId: expect.stringMatching(/license address/) },
  });
  expect((await call(token, "POST", `/clients/${id}/secret`)).body.secret).toMatch(/^[\w-]{43}$/);
  const shown = await call(token, "GET", `/clients/${id}`);
  expect(shown.body).toMatchObject({
    confidential: true,
    redirectUris: ["https://api-made.example.com/cb"],
    postLogoutRedirectUris: ["https://api-made.example.com/bye"],
    allowedOrigins: ["https://spa.api-made.example.com"],
    signers: [],
  });
  expect(
    (await call(token, "DELETE", `/clients/${id}/allowed-origins?origin=${encodeURIComponent("https://spa.api-made.example.com")}`)).status,
  ).toBe(204);

  // Keys, tokens, accounts, sessions, admins, the audit log.
  expect((await call(token, "GET", "/keys")).body.items.length).toBeGreaterThan(0);
  expect((await call(token, "POST", `/keys/${"f".repeat(40)}/revoke`)).status).toBe(400);
  const licenseKey = generatePrivateKey();
  const license = privateKeyToAccount(licenseKey).address;
  await createClient(store, { id: license, name: "API license" });
  await addRedirectUri(store, license, "https://api-license.example.com/cb");
  const flowA = await getToken({
    authUrl: baseURL,
    clientId: license,
    domain: "https://api-license.example.com/cb",
    privateKey: licenseKey,
  });
  expect((await call(token, "GET", `/tokens?client=${license}`)).body.total).toBe(1);
  expect((await call(token, "POST", "/tokens/revoke", { clientId: license })).body).toEqual({ revoked: 1 });
  expect((await fetch(`${baseURL}/userinfo`, { headers: { authorization: `Bearer ${flowA.access_token}` } })).status).toBe(401);
  expect((await call(token, "GET", "/refresh-grants")).status).toBe(200);
  const user = await seedUser(db, { google: true });
  expect((await call(token, "GET", `/accounts?search=${encodeURIComponent(user.email!)}`)).body.items[0].id).toBe(user.accountId);
  expect((await call(token, "GET", `/accounts/${user.wallet}/sessions`)).body.items).toHaveLength(1);
  expect((await call(token, "DELETE", `/accounts/${user.accountId}/sessions`)).body).toEqual({ revoked: 1 });
  expect((await call(token, "POST", `/accounts/${user.accountId}/block`)).body).toEqual({ revokedTokens: 0, revokedSessions: 0 });
  expect((await call(token, "POST", `/accounts/${user.accountId}/unblock`)).body.blockedAt).toBeNull();
  expect((await call(token, "POST", "/admins", { accountId: user.accountId })).status).toBe(201);
  expect((await call(token, "DELETE", `/admins/${user.accountId}`)).status).toBe(204);
  expect((await call(token, "DELETE", `/accounts/${user.accountId}`)).status).toBe(200);
  const audit = await call(token, "GET", `/audit?client=${id}`);
  expect(audit.body.items.every((e: { actor: string }) => e.actor === `api:${automation}`)).toBe(true);
  expect((await call(token, "GET", `/audit.csv?client=${id}`)).body).toContain(`"api:${automation}"`);
  expect((await call(token, "DELETE", `/clients/${id}`)).status).toBe(204);

  // The dashboard's audit log: the API's refusal and its reason, found with the outcome filter.
  await page.goto(`/admin/audit?client=${id}`);
  await page.getByLabel("Outcome").selectOption("rejected");
  await page.getByRole("button", { name: "Apply filter" }).click();
  // Two refusals, newest first: the signer (this client is no license), then the logo URL.
  const rows = page.getByRole("table").getByRole("row");
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(1)).toContainText("signer.added");
  await expect(rows.nth(2)).toContainText(`api:${automation}`);
  await rows
    .nth(2)
    .getByRole("button", { name: /^Details/ })
    .click();
  const details = page.getByRole("definition").filter({ hasText: "logoUrl: must be an https URL" });
  await expect(details).toBeVisible();
  await screenshot(page, testInfo, "admin-audit-api-refusal");
  const options = await page.getByLabel("Outcome").locator("option").allTextContents();
  expect(options).toEqual(
    expect.arrayContaining([
      "Any outcome",
      "success",
      "rejected (admin input refused)",
      "forbidden (not an admin)",
      "invalid_grant",
      "insufficient_scope",
    ]),
  );

  // 401: no token, a broken one; 403: a valid token without the scope.
  const missing = await call(undefined, "GET", "/clients");
  expect(missing).toMatchObject({ status: 401, body: { error: "invalid_token", status: 401 } });
  expect(missing.headers.get("www-authenticate")).toBe('Bearer realm="keyfob", scope="keyfob:read"');
  const broken = await call("eyJhbGciOiJub25lIn0.e30.", "GET", "/clients");
  expect(broken.status).toBe(401);
  expect(broken.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
  const flowAToken = (
    await getToken({ authUrl: baseURL, clientId: license, domain: "https://api-license.example.com/cb", privateKey: licenseKey })
  ).access_token;
  const noScope = await call(flowAToken, "GET", "/clients");
  expect(noScope).toMatchObject({ status: 403, body: { error: "insufficient_scope", status: 403, message: expect.any(String) } });

  // An admin withdraws the permission in the browser: the client's token is refused at once.
  await page.goto(`/admin/clients/${automation}`);
  await settings.getByLabel("Management API").uncheck();
  await settings.getByRole("button", { name: "Save settings" }).click();
  await expect(settings.getByRole("status")).toHaveText("Settings saved.");
  expect(await call(token, "GET", "/clients")).toMatchObject({ status: 403, body: { error: "access_denied" } });
  const refusedGrant = await fetch(`${baseURL}/token`, {
    method: "POST",
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: automation, client_secret: secret }),
  });
  expect(refusedGrant.status).toBe(400);
  expect((await refusedGrant.json()).error).toBe("unauthorized_client");
  // The refusals are in the audit log, with why.
  await expect(async () => {
    await page.goto(`/admin/audit?client=${automation}&action=admin_api.`);
    await expect(page.getByRole("table")).toContainText("access_denied", { timeout: 1000 });
  }).toPass();
  await page
    .getByRole("table")
    .getByRole("button", { name: /^Details/ })
    .first()
    .click();
  await expect(page.getByRole("definition").filter({ hasText: "no longer allowed the management API" })).toBeVisible();
});
