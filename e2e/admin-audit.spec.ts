/**
 * The audit log's layout: at 1280 px each event is one line (ids cut to their ends, 0x1234…abcd,
 * the whole value on hover, in the page and behind a copy button; the detail cut short), with
 * nothing behind a sideways scroll; at 390 px the filters wait behind a "Filters" button until it
 * is pressed, and the events come first. axe-core finds nothing either way.
 */
import { expect, test } from "@playwright/test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createStore, rawConnection } from "../lib/store";
import { adminSession, screenshot, sidewaysOverflow } from "./support/admin";
import { expectNoAxeViolations } from "./support/axe";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);
test.afterAll(() => store.close());

const address = () => privateKeyToAccount(generatePrivateKey()).address;

/** An event naming all three parties, with long ids and a long detail: the widest row there is. */
async function seedEvent() {
  const action = `e2e.layout_${Date.now()}`;
  const event = {
    action,
    outcome: "invalid_grant",
    actor: `admin.with.a.rather.long.email.${Date.now()}@example-company.example.com`,
    clientId: address(),
    accountId: address(),
    ip: "2001:db8:85a3::8a2e:370:7334",
    detail: `submit_challenge: ${"the signature does not recover to the address the challenge was made for; ".repeat(3)}`,
  };
  await db.auditEvent.create({ data: event });
  return event;
}

test("at 1280 px an audit event is one line, its ids cut to their ends with the whole value on hover and a copy button", async ({
  page,
}, testInfo) => {
  const event = await seedEvent();
  await page.setViewportSize({ width: 1280, height: 800 });
  await adminSession(page.context(), db);
  await page.goto(`/admin/audit?action=${event.action}`);

  const events = page.getByRole("region", { name: "Audit events" });
  const row = events.locator("tbody tr").first();
  await expect(row).toContainText(event.action);
  // One line: the row's tallest cell is its Details button (32 px) and the cells' padding (2 × 12 px); a second line of text would add 20 px.
  const box = (await row.boundingBox())!;
  expect(box.height).toBeLessThan(64);
  expect(await events.evaluate((region) => region.scrollWidth - region.clientWidth), "no sideways scroll").toBe(0);

  const short = `${event.accountId.slice(0, 6)}…${event.accountId.slice(-4)}`;
  await expect(row.getByText(short, { exact: true })).toBeVisible();
  await expect(row.locator(`[title="${event.accountId}"]`)).toBeVisible();
  await expect(row).toContainText(event.accountId); // for screen readers and find in page
  for (const name of ["Copy actor", "Copy client ID", "Copy account"]) await expect(row.getByRole("button", { name })).toBeVisible();
  await expect(page.getByRole("button", { name: /^Filters/ })).toBeHidden();
  await expect(page.getByRole("form", { name: "Filter the audit log" })).toBeVisible();
  await expectNoAxeViolations(page, "the audit log at 1280 px");
  await screenshot(page, testInfo, "admin-audit-wide");
});

test("at 390 px the filters are folded behind a Filters button until it is pressed; the events come first", async ({ page }, testInfo) => {
  const event = await seedEvent();
  await page.setViewportSize({ width: 390, height: 844 });
  await adminSession(page.context(), db);
  await page.goto(`/admin/audit?action=${event.action}`);

  const filters = page.getByRole("button", { name: /^Filters/ });
  const form = page.getByRole("form", { name: "Filter the audit log" });
  await expect(filters).toHaveAttribute("aria-expanded", "false");
  await expect(filters).toContainText("1 set");
  await expect(form).toBeHidden();
  const row = page.getByRole("region", { name: "Audit events" }).locator("tbody tr").first();
  await expect(row.getByText(event.action, { exact: true })).toBeInViewport({ ratio: 1 });
  expect((await sidewaysOverflow(page)).scrollWidth).toBeLessThanOrEqual(390);
  await expectNoAxeViolations(page, "the audit log at 390 px, filters folded");
  await screenshot(page, testInfo, "admin-audit-filters-folded");

  await filters.click();
  await expect(filters).toHaveAttribute("aria-expanded", "true");
  await expect(form).toBeVisible();
  await expect(page.getByLabel("Action")).toHaveValue(event.action);
  expect((await sidewaysOverflow(page)).scrollWidth).toBeLessThanOrEqual(390);
  await expectNoAxeViolations(page, "the audit log at 390 px, filters open");
});
