/**
 * A client's page in the browser: its sections all on the page, each linked from the page's section
 * navigation; every setting edited and audited with before and after, the logo previewed; the
 * integration panel's snippets actually run (Flow A's curl commands and the client library against
 * the real server, Flow B's authorization URL in the browser and its code exchange with curl);
 * "Try a sign-in" runs the hosted login as the client and shows the decoded tokens; deleting asks
 * to type the client's id; the "client created" notice goes away.
 */
import { spawnSync } from "node:child_process";
import { systemClock } from "@/lib/clock";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { createRemoteJWKSet, decodeJwt, jwtVerify } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { addRedirectUri, addSigner, createClient, rotateClientSecret, updateClient } from "../lib/clients/registry";
import { createStore, rawConnection } from "../lib/store";
import { baseURL } from "../playwright.config";
import { adminWallet, CHAIN_ID, confirm, screenshot, signIn } from "./support/admin";
import { expectNoAxeViolations } from "./support/axe";
import { installWallet } from "./support/wallet";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);
const jwks = createRemoteJWKSet(new URL(`${baseURL}/keys`));
test.afterAll(() => store.close());

/** Runs a shell snippet as a developer would paste it, with their values in the environment. */
function sh(script: string, env: Record<string, string> = {}): string {
  const result = spawnSync("bash", ["-e", "-o", "pipefail", "-c", script], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(result.status, `${script}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

const snippet = (page: Page, id: string) =>
  page
    .getByTestId(`snippet-${id}`)
    .textContent()
    .then((text) => text!);

async function openIntegration(page: Page) {
  const panel = page.locator("#integration");
  for (const summary of await panel.locator("summary").all()) {
    if (!(await summary.evaluate((s) => (s.parentElement as HTMLDetailsElement).open))) await summary.click();
  }
  return panel;
}

test("every setting of a client is edited in the browser and audited with its old and new value", async ({ page }, testInfo) => {
  test.setTimeout(240_000); // about 1.6 min alone on 2 cores: room for a busy machine
  await signIn(page, await adminWallet(db));
  await page.goto("/admin/clients/new");
  await expectNoAxeViolations(page, "the new-client form");
  await page.getByLabel("Name").fill("Editable");
  await page.getByRole("button", { name: "Create client" }).click();
  await page.waitForURL((url) => url.pathname.startsWith("/admin/clients/kf_"));
  const clientId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop()!);
  // The notice says it once: not in the address any more, gone on reload, and it can be closed.
  const notice = page.getByRole("status").filter({ hasText: "Client created" });
  await expect(notice).toBeVisible();
  await expect(page).toHaveURL(`${baseURL}/admin/clients/${clientId}`);
  await expectNoAxeViolations(page, "a new client's page with its notice");
  await page.reload();
  await expect(notice).toHaveCount(0);
  // Every section is on the page (none hidden behind a tab), each one linked from the section navigation.
  const sections = page.getByRole("navigation", { name: "Sections of this client" }).getByRole("link");
  await expect(sections).toHaveCount(11);
  for (const link of await sections.all()) await expect(page.locator((await link.getAttribute("href"))!)).toBeVisible();
  // Its generated id is no license: the signers card explains what a signer needs instead of offering one.
  await expect(page.locator("#signers")).toContainText("This client cannot have signers: its ID is not a license address.");
  await expect(page.getByRole("button", { name: "Add signer" })).toHaveCount(0);

  const settings = page.getByRole("form", { name: "Client settings" });
  // The management API needs a secret first.
  await expect(settings.getByLabel("Management API")).toBeDisabled();
  await confirm(page, "Generate secret", "Generate secret", undefined, "the generate-secret dialog");
  await expect(page.getByRole("button", { name: "I have stored it: hide the secret" })).toBeVisible();
  await expectNoAxeViolations(page, "the client page showing a new secret");
  const firstSecret = await page.getByLabel("New client secret").inputValue();
  await page.getByRole("button", { name: "I have stored it: hide the secret" }).click();
  await expect(settings.getByLabel("Management API")).toBeEnabled();

  // Rotating with an overlap (a day, the default choice): both secrets work until it ends, here ended early.
  const introspects = async (secret: string) =>
    (
      await page.request.post("/token/introspect", {
        headers: {
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`,
        },
        form: { token: "x".repeat(43) },
      })
    ).status();
  await page.getByRole("button", { name: "Rotate secret", exact: true }).click();
  const rotation = page.getByRole("dialog", { name: "Rotate the client secret?" });
  await expect(rotation.getByLabel("The current secret keeps working for")).toHaveValue("86400");
  await expectNoAxeViolations(page, "the rotate-secret dialog with its overlap choice");
  await rotation.getByRole("button", { name: "Rotate secret" }).click();
  await expect(rotation).toBeHidden();
  const secondSecret = await page.getByLabel("New client secret").inputValue();
  expect(secondSecret).not.toBe(firstSecret);
  await page.getByRole("button", { name: "I have stored it: hide the secret" }).click();
  const overlap = page.locator("#secret").getByText("Overlap: the previous secret also works until");
  await expect(overlap).toBeVisible();
  expect([await introspects(firstSecret), await introspects(secondSecret)]).toEqual([200, 200]);
  await confirm(page, "End overlap now", "End overlap");
  await expect(overlap).toHaveCount(0);
  expect([await introspects(firstSecret), await introspects(secondSecret)]).toEqual([401, 200]);
  expect((await db.auditEvent.findFirstOrThrow({ where: { clientId, action: "client.secret_overlap_ended" } })).outcome).toBe("success");

  // The logo's preview: the sign-in page's initial until there is one, then the image at its fixed size.
  const preview = page.getByTestId("logo-preview");
  await expect(preview.getByTestId("client-logo-fallback")).toHaveText("E");
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");
  await page.route("https://edited.example.com/logo.png", (route) => route.fulfill({ body: png, contentType: "image/png" }));
  await settings.getByLabel("Name").fill("Edited");
  await settings.getByLabel("Logo URL").fill("https://edited.example.com/logo.png");
  // Resource indicators (RFC 8707): absolute URIs without a fragment, the refusal shown at the field.
  await settings.getByLabel("Resources").fill("https://api.edited.example.com#part");
  await settings.getByRole("button", { name: "Save settings" }).click();
  await expect(settings.getByText("must not contain a fragment")).toBeVisible();
  await settings.getByLabel("Resources").fill("https://api.edited.example.com https://telemetry.edited.example.com/v2");
  for (const label of [
    "Require PKCE",
    "Resource server",
    "Refresh tokens",
    "Keep devices signed in",
    "Vehicle token exchange",
    "Management API",
    "Require DPoP",
  ])
    await settings.getByLabel(label).check();
  await settings.getByLabel("keyfob:read", { exact: true }).check();
  await settings.getByLabel("Require pushed authorization requests (PAR)").check();
  await settings.getByLabel("Token signing algorithm").selectOption("ES256");
  await settings.getByRole("button", { name: "Save settings" }).click();
  await expect(settings.getByRole("status")).toHaveText("Settings saved.");
  const logo = preview.getByTestId("client-logo");
  await expect(logo).toHaveAttribute("src", "https://edited.example.com/logo.png");
  await expect
    .poll(() =>
      logo.evaluate((img: HTMLImageElement) => {
        const box = img.getBoundingClientRect(); // the tile, padding included, as on the sign-in page
        return [img.complete && img.naturalWidth, box.width, box.height];
      }),
    )
    .toEqual([1, 56, 56]);
  await expectNoAxeViolations(page, "the client page after saving its settings");
  expect(await db.client.findUniqueOrThrow({ where: { id: clientId } })).toMatchObject({
    name: "Edited",
    logoUrl: "https://edited.example.com/logo.png",
    requirePkce: true,
    resourceServer: true,
    refreshTokensAllowed: true,
    deviceFlowOfflineAccess: true,
    tokenExchange: true,
    managementApi: true,
    requirePushedAuthorizationRequests: true,
    dpopBoundAccessTokens: true,
    resources: ["https://api.edited.example.com", "https://telemetry.edited.example.com/v2"],
    idTokenSignedResponseAlg: "ES256",
  });
  await expect(settings.getByLabel("Resources")).toHaveValue("https://api.edited.example.com https://telemetry.edited.example.com/v2");
  await expect(settings.getByLabel("Token signing algorithm")).toHaveValue("ES256");
  await settings.getByLabel("Refresh tokens").uncheck();
  await settings.getByRole("button", { name: "Save settings" }).click();
  await expect(settings.getByRole("status")).toHaveText("Settings saved.");

  // Post-logout URIs and origins are settings too.
  await page
    .getByRole("form", { name: "Add a post-logout redirect URI" })
    .getByLabel("New post-logout redirect URI")
    .fill("https://edited.example.com/bye");
  await page.getByRole("form", { name: "Add a post-logout redirect URI" }).getByRole("button", { name: "Add URI" }).click();
  await page.getByRole("form", { name: "Allow an origin" }).getByLabel("New allowed origin").fill("https://spa.edited.example.com");
  await page.getByRole("form", { name: "Allow an origin" }).getByRole("button", { name: "Allow origin" }).click();
  await expect(page.getByRole("list", { name: "Allowed origins" }).getByText("https://spa.edited.example.com")).toBeVisible();

  await confirm(page, "Disable", "Disable client", undefined, "the disable-client dialog");
  await expect(page.getByText("Disabled", { exact: true })).toBeVisible();
  await expectNoAxeViolations(page, "a disabled client's page");
  await page.getByRole("button", { name: "Enable" }).click();
  await expect(page.getByText("Enabled", { exact: true })).toBeVisible();

  // The audit log says what changed, before and after, for each change.
  await page.goto(`/admin/audit?client=${encodeURIComponent(clientId)}`);
  const details = async (action: string, nth = 0) => {
    const row = page
      .getByRole("row")
      .filter({ has: page.getByText(action, { exact: true }) })
      .nth(nth);
    await row.getByRole("button", { name: /^Details/ }).click();
    const id = await row.getByRole("button", { name: /^Details/ }).getAttribute("aria-controls");
    return page.locator(`[id="${id}"]`);
  };
  const update = await details("client.updated", 1); // the first of the two, newest first
  await expect(update).toContainText('name: "Editable" -> "Edited"');
  await expect(update).toContainText('logoUrl: null -> "https://edited.example.com/logo.png"');
  await expect(update).toContainText("requirePkce: false -> true");
  await expect(update).toContainText("managementApi: false -> true");
  await expect(update).toContainText("deviceFlowOfflineAccess: false -> true");
  await expect(update).toContainText("tokenExchange: false -> true");
  await expect(await details("client.updated", 0)).toContainText("refreshTokensAllowed: true -> false");
  await expect(await details("client.disabled")).toContainText("enabled: true -> false");
  await expect(await details("client.enabled")).toContainText("enabled: false -> true");
  await expect(await details("allowed_origin.added")).toContainText('allowedOrigins: [] -> ["https://spa.edited.example.com"]');
  await expect(await details("client.secret_rotated", 1)).toContainText("confidential: false -> true"); // the first, newest first
  await expect(await details("client.secret_rotated", 0)).toContainText(
    "confidential: true -> true (secret replaced; the previous one valid until ",
  );
  await expectNoAxeViolations(page, "the audit log with rows expanded");
  await screenshot(page, testInfo, "admin-audit-client-changes");

  // Deleting asks to type the id; the button stays disabled until it matches.
  await page.goto(`/admin/clients/${encodeURIComponent(clientId)}`);

  // Back-channel logout: an http URI off localhost is refused with the reason; an https one is saved.
  const backchannel = page.getByRole("form", { name: "Back-channel logout settings" });
  await backchannel.getByLabel("Back-channel logout URI").fill("http://edited.example.com/logout");
  await backchannel.getByRole("button", { name: "Save back-channel logout" }).click();
  await expect(backchannel).toContainText("http is allowed only on localhost");
  await backchannel.getByLabel("Back-channel logout URI").fill("https://edited.example.com/logout");
  await backchannel.getByLabel("Session required").check();
  await backchannel.getByRole("button", { name: "Save back-channel logout" }).click();
  await expect(backchannel.getByRole("status")).toHaveText("Settings saved.");
  await expectNoAxeViolations(page, "the client page after saving its back-channel logout");
  expect(await db.client.findUniqueOrThrow({ where: { id: clientId } })).toMatchObject({
    backchannelLogoutUri: "https://edited.example.com/logout",
    backchannelLogoutSessionRequired: true,
  });
  await page.getByRole("button", { name: "Delete client" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Type the client ID to confirm").fill(clientId.slice(0, -1));
  await expect(dialog.getByRole("button", { name: "Delete permanently" })).toBeDisabled();
  await expectNoAxeViolations(page, "the delete-client dialog, the id not yet typed in full");
  await page.keyboard.press("Escape");
  await confirm(page, "Delete client", "Delete permanently", clientId);
  await page.waitForURL((url) => url.pathname === "/admin/clients");
  await expect(page.getByRole("status").filter({ hasText: `Client ${clientId} was deleted.` })).toBeVisible();
  await expectNoAxeViolations(page, "the clients list after a deletion");
  expect(await db.client.findUnique({ where: { id: clientId } })).toBeNull();
  const deleted = await db.auditEvent.findFirstOrThrow({ where: { action: "client.deleted", clientId } });
  expect(deleted.detail).toMatch(/^deleted: \{"name":"Edited",/);
});

test("a client's authentication is set in the browser: private_key_jwt with pasted keys, refused for an unreachable jwks_uri", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await signIn(page, await adminWallet(db));
  const { id } = await createClient(store, { name: "Assertions" });
  await page.goto(`/admin/clients/${encodeURIComponent(id)}#authentication`);
  const form = page.getByRole("form", { name: "Client authentication" });
  await form.getByLabel("Method").selectOption("private_key_jwt");
  await form.getByLabel("JWK Set URI (jwks_uri)").fill("https://169.254.169.254/keys");
  await form.getByRole("button", { name: "Save authentication" }).click();
  await expect(form.getByRole("alert")).toBeVisible();
  await expect(form).toContainText("must be on a public host");

  const keys = { keys: [{ kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", kid: "k1" }] };
  await form.getByLabel("JWK Set URI (jwks_uri)").fill("");
  await form.getByLabel("JWK Set (optional)", { exact: true }).fill(JSON.stringify(keys));
  await form.getByRole("button", { name: "Save authentication" }).click();
  await expect(form.getByRole("status")).toHaveText("Authentication saved.");
  await expectNoAxeViolations(page, "the client page after saving its authentication");
  expect(await db.client.findUniqueOrThrow({ where: { id } })).toMatchObject({ tokenEndpointAuthMethod: "private_key_jwt", jwks: keys });
  const audited = await db.auditEvent.findFirstOrThrow({
    where: { action: "client.authentication_set", clientId: id, outcome: "success" },
  });
  expect(audited.detail).toContain('tokenEndpointAuthMethod: null -> "private_key_jwt"');
});

test("the integration panel's Flow A snippets run: curl against the real server, and the client library", async ({ page }) => {
  test.setTimeout(120_000);
  const license = privateKeyToAccount(generatePrivateKey());
  const signerKey = generatePrivateKey();
  const domain = `https://snippets.example.com/${license.address.slice(2, 8)}/callback`;
  await createClient(store, { id: license.address, name: "Snippets" });
  await addRedirectUri(store, license.address, domain);
  await addSigner({ store, clock: systemClock }, license.address, privateKeyToAccount(signerKey).address);

  await signIn(page, await adminWallet(db));
  await page.goto(`/admin/clients/${license.address}`);
  const panel = await openIntegration(page);
  await expect(panel.getByText(`${baseURL}/.well-known/openid-configuration`)).toBeVisible();
  await expect(panel.getByText(`${baseURL}/token`, { exact: true })).toBeVisible();
  await expect(panel.getByRole("button", { name: "Copy: 1. Ask for a challenge (curl)" })).toBeVisible();

  // curl, step 1 (the license's address, for its signer) and step 2 with the signer's signature.
  const step1 = JSON.parse(sh(await snippet(page, "flow-a-challenge")));
  expect(step1.challenge).toContain(license.address);
  const signature = await privateKeyToAccount(signerKey).signMessage({ message: step1.challenge });
  const tokens = JSON.parse(sh(await snippet(page, "flow-a-submit"), { STATE: step1.state, SIGNATURE: signature }));
  const { payload } = await jwtVerify(tokens.id_token, jwks, { issuer: baseURL, audience: license.address });
  expect(payload.ethereum_address).toBe(license.address);

  // The client library snippet, as a script of its own, as written: tsx resolves @keyfob/flow-a-client
  // through the repository's tsconfig paths (test/flow-a-package.test.ts installs it from its tarball).
  const dir = path.resolve("test-results/snippets");
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `flow-a-${license.address.slice(2, 8)}.ts`);
  const library = await snippet(page, "flow-a-library");
  expect(library).toContain('from "@keyfob/flow-a-client"');
  expect(library).not.toMatch(/from "\.{1,2}\//);
  await writeFile(file, library);
  const run = spawnSync(process.execPath, ["--import", "tsx", file], {
    env: { ...process.env, KEYFOB_PRIVATE_KEY: signerKey },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  const accessToken = run.stdout.trim();
  expect(decodeJwt(accessToken)).toMatchObject({ aud: license.address, client_id: license.address });
});

test("Flow B's authorization URL with PKCE works in the browser, and its code exchange with curl (public and confidential)", async ({
  page,
  browser,
}) => {
  test.setTimeout(120_000);
  const callback = `${baseURL}/snippet-app/callback`;
  const publicId = `kf_snip_pub_${Date.now()}`;
  const confidentialId = `kf_snip_conf_${Date.now()}`;
  await createClient(store, { id: publicId, name: "Snippet public app" });
  await createClient(store, { id: confidentialId, name: "Snippet confidential app" });
  await addRedirectUri(store, publicId, callback);
  await addRedirectUri(store, confidentialId, callback);
  const secret = await rotateClientSecret({ store, clock: systemClock }, confidentialId);
  await signIn(page, await adminWallet(db));

  for (const [clientId, env] of [
    [publicId, {}],
    [confidentialId, { KEYFOB_CLIENT_SECRET: secret }],
  ] as const) {
    await page.goto(`/admin/clients/${clientId}`);
    await openIntegration(page);
    // DPoP's snippet: for the public client (its refresh tokens would be bound too), not the confidential one.
    await expect(page.getByTestId("snippet-flow-b-dpop")).toHaveCount(clientId === publicId ? 1 : 0);
    const output = sh(await snippet(page, "flow-b-authorize"));
    const verifier = /^code_verifier: (\S+)$/m.exec(output)![1];
    const url = /^(http\S+)$/m.exec(output)![1];
    expect(new URL(url).searchParams.get("code_challenge_method")).toBe("S256");

    // A user follows the URL in a browser of their own.
    const user = await browser.newContext({ baseURL });
    const userPage = await user.newPage();
    await installWallet(userPage, { privateKey: generatePrivateKey(), chainId: CHAIN_ID });
    await userPage.goto(url);
    await expect(userPage.getByText(clientId === publicId ? "Snippet public app" : "Snippet confidential app").first()).toBeVisible();
    await userPage.getByRole("button", { name: "Continue with a wallet" }).click();
    await userPage.waitForURL((u) => u.href.startsWith(`${callback}?`), { timeout: 30_000 });
    const code = new URL(userPage.url()).searchParams.get("code")!;
    await user.close();

    const tokens = JSON.parse(sh(await snippet(page, "flow-b-token"), { ...env, CODE: code, CODE_VERIFIER: verifier }));
    expect(tokens.token_type, JSON.stringify(tokens)).toBe("bearer");
    await jwtVerify(tokens.id_token, jwks, { issuer: baseURL, audience: clientId });
  }
  // The management API snippet is shown for a confidential client only. Allowed the API, it lists
  // the clients; with a wrong secret it shows the token endpoint's invalid_client, not a later invalid_token.
  await expect(page.getByTestId("snippet-management-api")).toHaveCount(1);
  await updateClient(store, confidentialId, { managementApi: true, managementScopes: ["keyfob:admin"] });
  const managementApi = await snippet(page, "management-api");
  const clients = JSON.parse(sh(managementApi, { KEYFOB_CLIENT_SECRET: secret }));
  expect(clients).toMatchObject({ page: 1, items: expect.arrayContaining([expect.objectContaining({ id: expect.any(String) })]) });
  const refused = JSON.parse(sh(managementApi, { KEYFOB_CLIENT_SECRET: `${secret}x` }));
  expect(refused.error).toBe("invalid_client");
  await page.goto(`/admin/clients/${publicId}`);
  await expect(page.getByTestId("snippet-management-api")).toHaveCount(0);
});

test("Try a sign-in registers Keyfob's test callback on request, runs the hosted login as the client, and shows the decoded tokens", async ({
  page,
}, testInfo) => {
  test.setTimeout(120_000);
  const clientId = `kf_try_${Date.now()}`;
  await createClient(store, { id: clientId, name: "Tried app" });
  const adminKey = await adminWallet(db);
  await signIn(page, adminKey);
  await page.goto(`/admin/clients/${clientId}`);
  await page.getByRole("link", { name: "Try a sign-in" }).click();
  await expect(page.getByRole("heading", { name: "Try a sign-in" })).toBeVisible();
  await expectNoAxeViolations(page, "Try a sign-in, no test callback registered");
  await page.getByRole("button", { name: "Register the test callback" }).click();
  await expect(page.getByRole("link", { name: "Start a test sign-in" })).toBeVisible();
  await expectNoAxeViolations(page, "Try a sign-in, ready to start");
  expect((await db.redirectUri.findMany({ where: { clientId } })).map((r) => r.uri)).toEqual([`${baseURL}/admin/try/callback`]);

  await page.getByRole("link", { name: "Start a test sign-in" }).click();
  await page.waitForURL((url) => url.pathname.startsWith("/auth/interaction/"));
  await expect(page.getByText("Tried app").first()).toBeVisible();
  await page.getByRole("button", { name: "Continue with a wallet" }).click();
  await page.waitForURL((url) => url.pathname === `/admin/clients/${clientId}/try`, { timeout: 30_000 });
  await expect(page.getByRole("status").filter({ hasText: "Signed in" })).toBeVisible();
  const idToken = JSON.parse((await page.getByTestId("decoded-id-token").textContent())!);
  expect(idToken.header).toMatchObject({ alg: "RS256" });
  expect(idToken.claims).toMatchObject({
    iss: baseURL,
    aud: clientId,
    provider_id: "web3",
    ethereum_address: privateKeyToAccount(adminKey).address,
    amr: ["wallet"],
  });
  const accessToken = JSON.parse((await page.getByTestId("decoded-access-token").textContent())!);
  expect(accessToken.header).toMatchObject({ typ: "at+jwt" });
  expect(accessToken.claims).toMatchObject({ client_id: clientId, scope: "openid email" });
  // The access token served to show its claims: it is revoked.
  expect(await db.issuedToken.findUniqueOrThrow({ where: { jti: accessToken.claims.jti } })).toMatchObject({ revokedAt: expect.any(Date) });
  expect(await db.auditEvent.findFirst({ where: { action: "client.sign_in_tried", clientId } })).toMatchObject({ outcome: "success" });
  await expectNoAxeViolations(page, "Try a sign-in with the decoded tokens");
  await screenshot(page, testInfo, "admin-try-sign-in");

  // The callback cannot be replayed: the attempt was single use.
  const replay = await page.request.get(`/admin/try/callback?code=x&state=y`, { maxRedirects: 0 });
  expect(replay.status()).toBe(303);
  expect(replay.headers().location).toMatch(/problem=/);
});
