/**
 * Fit and finish of the dashboard, with data on every page: at phone width (390 px) no page
 * scrolls sideways (tables scroll inside their own boxes, header included), every tab of the nav
 * is on screen, every page has a title, and axe-core finds no WCAG A/AA violation nor best-practice
 * finding (unique landmarks, heading order…) on any page,
 * light or dark, nor in a dialog; dark mode follows the system like the login page; times
 * are shown in the viewer's time zone (UTC on hover); the overview's chart costs no charting
 * library and links to the filtered audit log.
 */
import { expect, test } from "@playwright/test";
import { systemClock } from "@/lib/clock";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { getToken } from "@keyfob/flow-a-client";
import { addRedirectUri, addSigner, createClient, rotateClientSecret } from "../lib/clients/registry";
import { createStore, rawConnection } from "../lib/store";
import { baseURL } from "../playwright.config";
import { adminSession, screenshot, seedUser, sidewaysOverflow } from "./support/admin";
import { expectNoAxeViolations } from "./support/axe";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);
test.afterAll(() => store.close());

/** A license with signers (one far from expiring) and tokens, a confidential client, a signed-in account with Flow A tokens, a refused token request. */
async function seed() {
  const ownerKey = generatePrivateKey();
  const license = privateKeyToAccount(ownerKey).address;
  const domain = `https://fit.example.com/${license.slice(2, 8)}/callback?with=a&rather=long&query=string`;
  await createClient(store, { id: license, name: "A client with a rather long name for a phone screen" });
  await addRedirectUri(store, license, domain);
  await addSigner(
    { store, clock: systemClock },
    license,
    privateKeyToAccount(generatePrivateKey()).address,
    new Date("2099-12-31T00:00:00Z"),
  );
  await addSigner({ store, clock: systemClock }, license, privateKeyToAccount(generatePrivateKey()).address);
  for (let i = 0; i < 2; i++) await getToken({ authUrl: baseURL, clientId: license, domain, privateKey: ownerKey });
  // A refused Flow A request: a failure on the chart and in the audit log.
  await fetch(`${baseURL}/auth/web3/submit_challenge`, {
    method: "POST",
    body: new URLSearchParams({ client_id: license, state: "unknown", grant_type: "authorization_code", domain, signature: "0x00" }),
  });
  const app = `kf_fit_${Date.now()}`;
  await createClient(store, { id: app, name: "Fit app" });
  await rotateClientSecret({ store, clock: systemClock }, app);
  await addRedirectUri(store, app, `${baseURL}/fit-app/callback`);
  const user = await seedUser(db, { google: true });
  await getToken({ authUrl: baseURL, clientId: license, domain, privateKey: user.key, address: user.wallet });
  return { license, app, user: { address: user.accountId } };
}

test("no dashboard page scrolls sideways at 390 px, with data; the nav shows every tab; every page has a title and passes axe-core", async ({
  page,
}, testInfo) => {
  test.setTimeout(300_000);
  const { license, user } = await seed();
  await page.setViewportSize({ width: 390, height: 844 });
  await adminSession(page.context(), db, `admin.with.a.long.email.${Date.now()}@example-company.example.com`);

  const pages: [string, string][] = [
    ["/admin", "Overview"],
    ["/admin/clients", "Clients"],
    ["/admin/clients/new", "New client"],
    [`/admin/clients/${license}`, `Client ${license}`],
    [`/admin/clients/${license}/try`, `Try a sign-in · ${license}`],
    ["/admin/accounts", "Accounts"],
    [`/admin/accounts/${user.address}`, `Account ${user.address}`],
    ["/admin/tokens", "Tokens"],
    [`/admin/tokens?client=${license}`, "Tokens"],
    ["/admin/keys", "Signing keys"],
    ["/admin/audit", "Audit log"],
    ["/admin/admins", "Admins"],
  ];
  for (const [path, title] of pages) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    await expect(page, path).toHaveTitle(`${title} · Keyfob admin`);
    // Every section of the nav is on screen, not hidden off its edge.
    for (const link of await page.getByRole("navigation", { name: "Dashboard" }).getByRole("link").all()) {
      await expect(link).toBeInViewport({ ratio: 1 });
    }
    const overflow = await sidewaysOverflow(page);
    expect(overflow.scrollWidth, `${path}: ${overflow.offenders.join(", ")}`).toBeLessThanOrEqual(390);
    expect(overflow.offenders, path).toEqual([]);
    await expectNoAxeViolations(page, path);
  }

  // The client page with its signers, the integration panel opened.
  await page.goto(`/admin/clients/${license}`);
  for (const summary of await page.locator("#integration summary").all()) await summary.click();
  expect((await sidewaysOverflow(page)).scrollWidth).toBeLessThanOrEqual(390);
  await expectNoAxeViolations(page, "the client page with the integration panel open");
  await screenshot(page, testInfo, "admin-client-mobile");

  // The tokens table scrolls inside its box, header and all.
  await page.goto(`/admin/tokens?client=${license}`);
  const region = page.getByRole("region", { name: `Active tokens of client ${license}` });
  const box = (await region.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  for (const cell of await region.locator("thead th").all()) {
    // Every header cell lies within the scroll box's content (it scrolls with the body, never out of the box).
    expect(await cell.evaluate((th) => th.closest("[role=region]")!.contains(th))).toBe(true);
  }
  const scroll = await region.evaluate((element) => ({
    scrollWidth: element.scrollWidth,
    clientWidth: element.clientWidth,
    theadWidth: element.querySelector("thead")!.getBoundingClientRect().width,
    tbodyWidth: element.querySelector("tbody")!.getBoundingClientRect().width,
  }));
  expect(scroll.theadWidth).toBe(scroll.tbodyWidth);
  await screenshot(page, testInfo, "admin-tokens-mobile");

  // The audit log at phone width: each row a card with its time, action, outcome and reason on
  // screen, nothing behind a sideways scroll; a row opens to show every field.
  await page.goto(`/admin/audit?client=${license}&action=token.failed`);
  const events = page.getByRole("region", { name: "Audit events" });
  expect(await events.evaluate((box) => box.scrollWidth - box.clientWidth)).toBe(0);
  const refused = await db.auditEvent.findFirstOrThrow({ where: { clientId: license, action: "token.failed" }, orderBy: { at: "desc" } });
  const event = events.locator("tbody tr").first();
  await event.scrollIntoViewIfNeeded(); // below the filter form
  for (const part of [
    event.locator("time"),
    event.getByText("token.failed", { exact: true }),
    event.getByText(refused.outcome, { exact: true }),
    event.getByText("submit_challenge: "),
  ]) {
    await expect(part).toBeInViewport({ ratio: 1 });
  }
  await page
    .getByRole("button", { name: /^Details of event/ })
    .first()
    .click();
  await expect(page.getByRole("definition").filter({ hasText: "submit_challenge: " }).first()).toBeVisible();
  expect((await sidewaysOverflow(page)).scrollWidth).toBeLessThanOrEqual(390);
  await expectNoAxeViolations(page, "the audit log with a row expanded");
  await screenshot(page, testInfo, "admin-audit-mobile");
  await page.goto("/admin");
  await screenshot(page, testInfo, "admin-overview-mobile");

  // The pages outside the console: signed out, and a sign-in that failed.
  for (const [path, heading] of [
    ["/admin/signed-out", "You have signed out"],
    ["/admin/signin-failed?reason=cancelled", "Sign-in to the dashboard failed"],
  ]) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(heading);
    expect((await sidewaysOverflow(page)).scrollWidth, path).toBeLessThanOrEqual(390);
    await expectNoAxeViolations(page, path);
  }
});

test("dark mode follows the system, on every page and in dialogs", async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  const { license, user } = await seed();
  await page.emulateMedia({ colorScheme: "dark" });
  await adminSession(page.context(), db);
  const luminance = (rgb: string) => {
    const [r, g, b] = (rgb.match(/[\d.]+/g) ?? []).slice(0, 3).map(Number);
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  };
  for (const path of ["/admin", `/admin/clients/${license}`, `/admin/accounts/${user.address}`, "/admin/audit"]) {
    await page.goto(path);
    await page.locator("main section").first().waitFor(); // past the page's loading skeleton
    const colours = await page.evaluate(() => {
      const found = (selector: string) =>
        document.querySelector(selector) ??
        (() => {
          throw new Error(`no ${selector} on ${location.pathname}`);
        })();
      const card = found("main section");
      const heading = found("h1");
      const paint = (element: Element) => {
        // Tailwind 4 writes colours in oklch; a 1x1 canvas turns any CSS colour into rgb.
        const canvas = document.createElement("canvas");
        canvas.width = canvas.height = 1;
        const context = canvas.getContext("2d")!;
        context.fillStyle = getComputedStyle(element).backgroundColor;
        context.fillRect(0, 0, 1, 1);
        return `rgb(${Array.from(context.getImageData(0, 0, 1, 1).data)
          .slice(0, 3)
          .join(",")})`;
      };
      const text = (element: Element) => {
        const canvas = document.createElement("canvas");
        canvas.width = canvas.height = 1;
        const context = canvas.getContext("2d")!;
        context.fillStyle = getComputedStyle(element).color;
        context.fillRect(0, 0, 1, 1);
        return `rgb(${Array.from(context.getImageData(0, 0, 1, 1).data)
          .slice(0, 3)
          .join(",")})`;
      };
      return {
        page: paint(found(".admin-theme > div")),
        card: paint(card),
        heading: text(heading),
        scheme: getComputedStyle(found(".admin-theme")).colorScheme,
      };
    });
    expect(luminance(colours.page), path).toBeLessThan(0.1);
    expect(luminance(colours.card), path).toBeLessThan(0.2);
    expect(luminance(colours.heading), path).toBeGreaterThan(0.85);
    expect(colours.scheme).toBe("dark");
  }
  await page.goto(`/admin/clients/${license}`);
  await screenshot(page, testInfo, "admin-client-dark");
  await page.getByRole("button", { name: "Delete client" }).click();
  const dialogBackground = await page.getByRole("dialog").evaluate((dialog) => getComputedStyle(dialog).backgroundColor);
  expect(dialogBackground).not.toBe("rgb(255, 255, 255)");
  await expectNoAxeViolations(page, "the delete-client dialog");
  await screenshot(page, testInfo, "admin-delete-dialog-dark");
  await page.keyboard.press("Escape");
  // Buttons keep white text on their solid colour.
  await page.goto("/admin/clients");
  expect(await page.getByRole("link", { name: "New client" }).evaluate((a) => getComputedStyle(a).color)).toBe("rgb(255, 255, 255)");
  await screenshot(page, testInfo, "admin-clients-dark");

  // Light mode stays light.
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(`/admin/clients/${license}`);
  expect(
    await page
      .locator("main section")
      .first()
      .evaluate((s) => getComputedStyle(s).backgroundColor),
  ).toBe("rgb(255, 255, 255)");
});

test("times are in the viewer's time zone, relative when recent, UTC on hover; the chart is light and links to the audit log", async ({
  browser,
}, testInfo) => {
  test.setTimeout(120_000);
  await seed(); // tokens issued today
  const context = await browser.newContext({ baseURL, timezoneId: "Asia/Tokyo", locale: "en-US" });
  const page = await context.newPage();
  const marker = `tz-${Date.now()}`;
  await db.auditEvent.create({
    data: { at: new Date("2026-01-15T10:00:00Z"), action: "e2e.timezone", outcome: "success", detail: marker },
  });
  await db.auditEvent.create({
    data: { at: new Date(Date.now() - 5 * 60_000), action: "e2e.timezone", outcome: "success", detail: `${marker}-recent` },
  });
  await adminSession(context, db);
  await page.goto("/admin");

  // The overview: no charting library, the chart's bars link to the filtered log.
  const scripts = await page.evaluate(() =>
    performance
      .getEntriesByType("resource")
      .filter((entry) => (entry as PerformanceResourceTiming).initiatorType === "script" || entry.name.endsWith(".js"))
      .map((entry) => ({ name: entry.name, bytes: (entry as PerformanceResourceTiming).encodedBodySize })),
  );
  const total = scripts.reduce((sum, script) => sum + script.bytes, 0);
  testInfo.annotations.push({
    type: "overview JavaScript",
    description: `${scripts.length} scripts, ${Math.round(total / 1024)} KiB transferred (compressed)`,
  });
  const bodies = await Promise.all(scripts.map((script) => fetch(script.name).then((r) => r.text())));
  expect(bodies.some((body) => body.includes("recharts"))).toBe(false);
  const today = new Date().toISOString().slice(0, 10);
  const bar = page
    .getByTestId("token-chart")
    .getByRole("link", { name: /: \d+ issued$/ })
    .last();
  await expect(bar).toBeVisible();
  await bar.click();
  await page.waitForURL(
    (url) => url.pathname === "/admin/audit" && url.searchParams.get("action") === "token.issued" && url.searchParams.get("to") === today,
  );
  await expect(page.getByLabel("Action")).toHaveValue("token.issued");

  await page.goto("/admin/audit?action=e2e.timezone");
  const rows = page.getByRole("table").getByRole("row");
  await expect(rows).toHaveCount(3);
  const recent = rows.nth(1).locator("time").first();
  const old = rows.nth(2).locator("time").first();
  await expect(recent).toHaveText(/^5 minutes ago$/);
  await expect(old).toHaveText("Jan 15, 2026, 07:00 PM GMT+9");
  await expect(old).toHaveAttribute("title", "2026-01-15 10:00:00 UTC");
  await expect(old).toHaveAttribute("datetime", "2026-01-15T10:00:00.000Z");
  // The CSV export stays in UTC.
  const csv = await (await page.request.get("/admin/audit/export?action=e2e.timezone")).text();
  expect(csv).toContain('"2026-01-15T10:00:00.000Z"');
  await context.close();
});
