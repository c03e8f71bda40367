/**
 * Requests that answered 500 from the built server, answered as they should be:
 * 1. the dashboard's lists with filters PostgreSQL refuses (a NUL, year 0000) show the page with the
 *    field's error, and the CSV export answers 400 (lib/admin/filters.ts);
 * 2. server actions (POST with Next-Action, to any page) from another origin, with a body over Next's
 *    limit, a Content-Type its client never sends, an undecodable body or an id the build does not
 *    know are refused with 4xx before Next.js sees them (server/server-actions.ts); actions the
 *    browser really sends, from the dashboard and from the login page (whose referrer policy is
 *    no-referrer), still work;
 * 3. a method a route handler in app/ does not take is 405 with the Allow header RFC 9110 15.5.6
 *    requires (Next.js leaves it out), as the protocol routes answer.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { addRedirectUri, createClient } from "../lib/clients/registry";
import { createStore, rawConnection } from "../lib/store";
import { baseURL } from "../playwright.config";
import { currentBuild } from "../server/build";
import { adminSession } from "./support/admin";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);
test.afterAll(() => store.close());

test("the dashboard's lists show a field error for filters PostgreSQL refuses, never an error page", async ({ page }) => {
  await adminSession(page.context(), db);
  const CONTROL = "Must not contain control characters.";
  const cases: [string, string, string][] = [
    ["/admin/clients?q=%00", "Search clients by id or name", CONTROL],
    ["/admin/clients?q=a%01b", "Search clients by id or name", CONTROL],
    ["/admin/accounts?q=%00x", "Search accounts by address, email or id", CONTROL],
    [`/admin/accounts?q=${"x".repeat(300)}`, "Search accounts by address, email or id", "Must be at most 200 characters."],
    ["/admin/tokens?client=%00", "Client ID", CONTROL],
    ["/admin/tokens?account=%00", "Account address", CONTROL],
    ["/admin/audit?from=0000-01-01", "From (UTC day)", "Must be a day from 0001-01-01 to 9999-12-31."],
    ["/admin/audit?to=0000-12-31", "To (UTC day, inclusive)", "Must be a day from 0001-01-01 to 9999-12-31."],
    ["/admin/audit?action=token.%00", "Action", CONTROL],
    ["/admin/audit?outcome=%00", "Outcome", CONTROL],
    ["/admin/audit?client=%00", "Client ID", CONTROL],
  ];
  for (const [url, label, message] of cases) {
    const response = await page.goto(url);
    expect.soft(response?.status(), url).toBe(200);
    await expect.soft(page.getByLabel(label, { exact: true }), url).toHaveAccessibleDescription(message, { timeout: 2000 });
  }
  // What can be used is: the last day of year 9999 (no end bound), a search with a broken encoding.
  for (const url of ["/admin/audit?from=0001-01-01&to=9999-12-31", "/admin/clients?q=%E0%A4%A", "/admin/tokens?client=%E0%A4%A"]) {
    const response = await page.goto(url);
    expect(response?.status(), url).toBe(200);
    await expect(page.getByText(/^Must (be|not) /), url).toHaveCount(0);
  }
  // The CSV export reads the same filter: 400 with the reason, not a 500.
  const csv = await page.request.get("/admin/audit/export?from=0000-01-01");
  expect([csv.status(), await csv.text()]).toEqual([400, "from: Must be a day from 0001-01-01 to 9999-12-31."]);
  expect((await page.request.get("/admin/audit/export?client=%00")).status()).toBe(400);
  expect((await page.request.get("/admin/audit/export?to=9999-12-31")).status()).toBe(200);
});

/** An action id of the build, by the function's name (server/server-reference-manifest.json in the current build). */
function actionId(name: string): string {
  const manifest = JSON.parse(readFileSync(path.join(currentBuild()!, "server/server-reference-manifest.json"), "utf8")) as {
    node: Record<string, { exportedName: string }>;
  };
  const found = Object.entries(manifest.node).find(([, action]) => action.exportedName === name);
  if (!found) throw new Error(`no server action ${name} in the build`);
  return found[0];
}

test.describe("server actions are screened before Next.js", () => {
  const action = (id: string, headers: Record<string, string> = {}) => ({
    headers: { "next-action": id, origin: baseURL, "content-type": "text/plain;charset=UTF-8", accept: "text/x-component", ...headers },
  });

  test("refuses cross-site, oversized, mistyped, undecodable and unknown actions with 4xx", async ({ request }) => {
    const cancel = actionId("cancelLogin");
    const grant = actionId("grantAdminAction");
    const cases: [string, string, Parameters<typeof request.post>[1], number][] = [
      ["another origin", "/auth/error", { ...action(cancel, { origin: "https://evil.example" }), data: "[]" }, 403],
      ["Origin: null", "/auth/error", { ...action(cancel, { origin: "null" }), data: "[]" }, 403],
      ["another origin, a dashboard action", "/admin/admins", { ...action(grant, { origin: "https://evil.example" }), data: "[]" }, 403],
      ["JSON", "/auth/error", { ...action(cancel, { "content-type": "application/json" }), data: "[]" }, 415],
      ["no Content-Type", "/auth/error", { ...action(cancel, { "content-type": "" }), data: Buffer.from("[]") }, 415],
      ["over 1 MB", "/auth/error", { ...action(cancel), data: `["${"a".repeat(1024 * 1024)}"]` }, 413],
      ["a garbage body", "/auth/error", { ...action(cancel), data: "garbage{{" }, 400],
      [
        "a garbage multipart body",
        "/admin/admins",
        { ...action(grant, { "content-type": "multipart/form-data; boundary=xyz" }), data: "garbage" },
        400,
      ],
      ["an unknown id", "/auth/error", { ...action(`40${"ab".repeat(20)}`), data: "[]" }, 409],
      ["a malformed id", "/auth/error", { ...action("toString"), data: "[]" }, 400],
    ];
    for (const [what, path, options, status] of cases) {
      const response = await request.post(path, { ...options, maxRedirects: 0 });
      expect.soft([what, response.status()], await response.text().then((t) => t.slice(0, 200))).toEqual([what, status]);
      expect.soft(response.headers()["content-type"], what).toBe("text/plain");
    }
    // A well-formed action that is not a form: the action finds no interaction (no 500 either).
    const stray = await request.post("/auth/error", { ...action(cancel), data: '["x"]', maxRedirects: 0 });
    expect(stray.status()).toBeLessThan(500);
  });

  test("lets the browser's own actions through: a dashboard form, and Cancel on the login page", async ({ page }) => {
    const seen: Promise<string | undefined>[] = [];
    page.on("request", (request) => {
      if (request.method() !== "POST") return;
      seen.push(
        request
          .allHeaders()
          .then((headers) => (headers["next-action"] ? `${new URL(request.url()).pathname} ${headers.origin}` : undefined))
          // A page request still open when the test ends (the callback page's own) rejects; it is no action.
          .catch(() => undefined),
      );
    });
    await adminSession(page.context(), db);
    await page.goto("/admin/admins");
    const newcomer = `0x${"5a".repeat(20)}`;
    await page.getByLabel("Grant the admin role to an account").fill(newcomer);
    await page.getByRole("button", { name: "Grant role" }).click();
    await expect(page.getByRole("row").filter({ hasText: /0x5[aA]5[aA]/ })).toBeVisible();

    const clientId = `kf_screen_${Date.now()}`;
    const redirectUri = `${baseURL}/screened-callback`;
    await createClient(store, { id: clientId, name: "Screened" });
    await addRedirectUri(store, clientId, redirectUri);
    const query = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: "openid",
      state: "st",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
    });
    await page.goto(`/auth?${query}`);
    await page.getByRole("button", { name: "Cancel and return to Screened" }).click();
    await page.waitForURL((url) => url.href.startsWith(`${redirectUri}?`));
    expect(new URL(page.url()).searchParams.get("error")).toBe("access_denied");
    // Chromium names Keyfob's origin on both, the login page's no-referrer policy notwithstanding.
    const origins = (await Promise.all(seen)).filter(Boolean);
    expect(origins).toEqual([`/admin/admins ${baseURL}`, expect.stringMatching(new RegExp(`^/auth/interaction/\\S+ ${baseURL}$`))]);
  });
});

test("answers a method a route handler does not take with 405 and Allow, and OPTIONS with the methods", async ({ request }) => {
  const cases: [string, string, string][] = [
    ["PUT", "/auth", "GET, POST, HEAD, OPTIONS"],
    ["DELETE", "/session/end", "GET, POST, HEAD, OPTIONS"],
    ["POST", "/auth/callback", "GET, HEAD, OPTIONS"],
    ["PATCH", "/account/login", "GET, HEAD, OPTIONS"],
    ["PUT", "/admin/logout", "POST, OPTIONS"],
    ["DELETE", "/api/auth/session", "GET, POST, HEAD, OPTIONS"],
  ];
  for (const [method, path, allow] of cases) {
    const response = await request.fetch(path, { method, maxRedirects: 0 });
    expect
      .soft([method, path, response.status(), response.headers().allow], await response.text().then((t) => t.slice(0, 200)))
      .toEqual([method, path, 405, allow]);
  }
  const options = await request.fetch("/auth/callback", { method: "OPTIONS" });
  expect([options.status(), options.headers().allow]).toEqual([204, "GET, HEAD, OPTIONS"]);
});
