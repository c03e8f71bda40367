/**
 * Emergency revocation of a signing key in the dashboard, in real Chromium against the built
 * server: the confirmation says what it breaks and asks to type the kid (as deleting a client asks
 * for its id), Cancel changes nothing, and once confirmed the key leaves the schedule and /keys for
 * the key history, a new key signs, and the key's tokens stop working.
 */
import { mkdir } from "node:fs/promises";
import { expect, test, type Page } from "@playwright/test";
import { decodeProtectedHeader } from "jose";
import type { Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { getToken } from "@keyfob/flow-a-client";
import { addRedirectUri, createClient, updateClient } from "../lib/clients/registry";
import { createStore, rawConnection } from "../lib/store";
import { baseURL } from "../playwright.config";
import { expectNoAxeViolations } from "./support/axe";
import { installWallet } from "./support/wallet";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);
const ARTIFACTS = "e2e/artifacts";

test.afterAll(() => store.close());

/** Signs in at /admin with a wallet whose account holds the admin role (granted in the database, as in admin.spec.ts). */
async function signInAsAdmin(page: Page) {
  const key: Hex = generatePrivateKey();
  await db.adminRole.create({ data: { accountId: privateKeyToAccount(key).address, grantedBy: "e2e" } });
  await installWallet(page, { privateKey: key, chainId: 1 });
  await page.goto("/admin");
  await page.waitForURL((url) => url.pathname.startsWith("/auth/interaction/"));
  await page.getByRole("button", { name: "Continue with a wallet" }).click();
  await page.waitForURL(`${baseURL}/admin`, { timeout: 30_000 });
}

test("an admin revokes the current signing key: the confirmation says what breaks, and the key is gone at once", async ({
  page,
  request,
}) => {
  // A client with a token signed by the current key.
  const ownerKey = generatePrivateKey();
  const clientId = privateKeyToAccount(ownerKey).address;
  const domain = `https://revocation.example.com/${clientId.slice(2, 8)}`;
  await createClient(store, { id: clientId, name: "Revocation" });
  await addRedirectUri(store, clientId, domain);
  const before = await getToken({ authUrl: baseURL, clientId, domain, privateKey: ownerKey });
  const kid = decodeProtectedHeader(before.access_token).kid as string;
  const userinfo = (token: string) => request.get("/userinfo", { headers: { authorization: `Bearer ${token}` } });
  expect((await userinfo(before.access_token)).status()).toBe(200);

  await signInAsAdmin(page);
  await page.goto("/admin/keys");
  const row = page.getByRole("row").filter({ hasText: kid });
  await expect(row.getByText("Current")).toBeVisible();

  // The confirmation, plainly: tokens stop working, local verifiers lag by their JWKS cache, signing moves now.
  const trigger = page.getByRole("button", { name: `Revoke key ${kid} now` });
  await trigger.click();
  const dialog = page.getByRole("dialog", { name: "Revoke the current signing key now?" });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText(kid);
  await expect(dialog).toContainText("Every token this key signed stops working at once");
  await expect(dialog).toContainText(
    "Resource servers that verify JWTs locally keep accepting those tokens until their JWKS cache expires (up to 5 minutes)",
  );
  await expect(dialog).toContainText("Signing moves to a new key immediately, without the usual 1 day publish lead");
  await expect(dialog.getByRole("button", { name: "Cancel" })).toBeFocused(); // Enter by habit does nothing harmful
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: `${ARTIFACTS}/admin-key-revoke-confirm.png`, fullPage: true });

  // Cancel changes nothing.
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
  await expect(trigger).toBeFocused();
  expect((await (await request.get("/keys")).json()).keys.map((k: { kid: string }) => k.kid)).toContain(kid);
  expect((await userinfo(before.access_token)).status()).toBe(200);

  // Confirmed only once the kid is typed in full: the key leaves the schedule, a new key is current, and the page says so.
  await trigger.click();
  const revoke = dialog.getByRole("button", { name: "Revoke key" });
  await expect(revoke).toBeDisabled();
  const typed = dialog.getByLabel("Type the key ID to confirm");
  await typed.fill(kid.slice(0, -1));
  await expect(revoke).toBeDisabled();
  await typed.fill(kid);
  await revoke.click();
  await page.waitForURL((url) => url.pathname === "/admin/keys" && url.searchParams.get("revoked") === kid);
  const notice = page.getByRole("status").filter({ hasText: `Key ${kid} was revoked` });
  await expect(notice).toBeVisible();
  const schedule = page.getByRole("table", { name: "Signing keys, newest first" });
  await expect(schedule.getByRole("row").filter({ hasText: kid })).toHaveCount(0);
  // Kept as history, with who revoked it.
  const historyRow = page.getByRole("table", { name: "Key history, newest first" }).getByRole("row").filter({ hasText: kid });
  await expect(historyRow.getByText("Revoked", { exact: true })).toBeVisible();
  await expect(historyRow).toContainText("Revoked by ");
  await expect(historyRow.getByRole("button", { name: /Revoke/ })).toHaveCount(0);
  const current = schedule.getByRole("row").filter({ has: page.getByText("Current", { exact: true }) });
  await expect(current).toHaveCount(1);
  const successor = new URL(page.url()).searchParams.get("successor")!;
  await expect(current).toContainText(successor);
  await expect(notice).toContainText(`New key ${successor} signs from now`);
  await page.screenshot({ path: `${ARTIFACTS}/admin-key-revoked.png`, fullPage: true });

  // Outside the browser: gone from /keys, its token refused, new tokens signed by the successor.
  expect((await (await request.get("/keys")).json()).keys.map((k: { kid: string }) => k.kid)).not.toContain(kid);
  const refused = await userinfo(before.access_token);
  expect(refused.status()).toBe(401);
  expect((await refused.json()).error).toBe("invalid_token");
  const after = await getToken({ authUrl: baseURL, clientId, domain, privateKey: ownerKey });
  expect(decodeProtectedHeader(after.access_token).kid).toBe(successor);
  expect((await userinfo(after.access_token)).status()).toBe(200);

  // Audited with the kid.
  const event = await db.auditEvent.findFirstOrThrow({
    where: { action: "key.revoked", detail: { startsWith: kid } },
    orderBy: { id: "desc" },
  });
  expect(event.outcome).toBe("success");
});

test("an admin rotates one alg's keys: a new ES256 key is published, and the RS256 schedule is left alone", async ({ page, request }) => {
  // An ES256 client's token makes the set's first ES256 key.
  const ownerKey = generatePrivateKey();
  const clientId = privateKeyToAccount(ownerKey).address;
  const domain = `https://fapi.example.com/${clientId.slice(2, 8)}`;
  await createClient(store, { id: clientId, name: "FAPI" });
  await addRedirectUri(store, clientId, domain);
  await updateClient(store, clientId, { idTokenSignedResponseAlg: "ES256" });
  const token = await getToken({ authUrl: baseURL, clientId, domain, privateKey: ownerKey });
  expect(decodeProtectedHeader(token.access_token).alg).toBe("ES256");

  await signInAsAdmin(page);
  await page.goto("/admin/keys");
  const schedule = page.getByRole("table", { name: "Signing keys, newest first" });
  const es256 = schedule.getByRole("row").filter({ hasText: "ES256" });
  await expect(es256).toHaveCount(1);
  const rs256Before = await schedule.getByRole("row").filter({ hasText: "RS256" }).count();

  await page.getByRole("button", { name: "Rotate ES256" }).click();
  const dialog = page.getByRole("dialog", { name: "Rotate the ES256 key now?" });
  await expect(dialog).toContainText("The other algs' keys do not change.");
  await dialog.getByRole("button", { name: "Rotate now" }).click();
  await expect(es256).toHaveCount(2);
  await expect(es256.filter({ has: page.getByText("Upcoming", { exact: true }) })).toHaveCount(1);
  await expect(schedule.getByRole("row").filter({ hasText: "RS256" })).toHaveCount(rs256Before);
  // One rotation at a time: the button is back once the new key signs.
  await expect(page.getByRole("button", { name: "Rotate ES256" })).toHaveCount(0);
  await expectNoAxeViolations(page, "the signing keys page with two algs");

  const published = (await (await request.get("/keys")).json()).keys as { alg: string }[];
  expect(published.filter((key) => key.alg === "ES256")).toHaveLength(2);
});
