/**
 * A newcomer's first minutes: what `npm start` prints once Keyfob serves (the dashboard, the
 * account page, how the first admin is named, the docs), and the front page, which links the
 * dashboard, the account page and the documentation besides discovery and the keys, is
 * accessible (axe-core, light and dark), and whose every link answers.
 */
import { expect, test } from "@playwright/test";
import { baseURL } from "../playwright.config";
import { expectNoAxeViolations } from "./support/axe";
import { ready, startInstance } from "./support/instances";

test("the front page links the dashboard, the account page and the docs, every link answers, and axe finds nothing", async ({ page }) => {
  await page.goto("/");
  const main = page.getByRole("main");
  await expect(main.getByRole("link", { name: "Dashboard" })).toHaveAttribute("href", "/admin");
  await expect(main.getByRole("link", { name: "Your account" })).toHaveAttribute("href", "/account");
  await expect(main.getByRole("heading", { name: "Documentation" })).toBeVisible();
  await expect(main.getByText("docs/quickstart.md")).toBeVisible();
  await expect(main).toContainText("npm run keyfob -- admins grant <address>");
  for (const href of ["/.well-known/openid-configuration", "/keys", "/api/admin/v1/openapi.json"])
    await expect(main.locator(`a[href="${href}"]`)).toHaveCount(1);

  const hrefs = await main.locator("a[href]").evaluateAll((links) => links.map((a) => a.getAttribute("href")!));
  for (const href of hrefs) {
    const response = await page.request.get(`${baseURL}${href}`);
    expect(response.status(), href).toBe(200);
  }
  await expectNoAxeViolations(page, "front page");
});

test("once it serves, the launcher prints the next steps", async () => {
  const instance = await startInstance("newcomer", { KEYFOB_LOG: "warn" });
  try {
    await ready(instance);
    await expect.poll(() => instance.output.join("")).toContain("Next steps:");
    const output = instance.output.join("");
    expect(output).toContain(`Dashboard      ${instance.url}/admin`);
    expect(output).toContain(`Your account   ${instance.url}/account`);
    expect(output).toContain("npm run keyfob -- admins grant <address>");
    expect(output).toContain("docs/quickstart.md");
  } finally {
    instance.process.kill("SIGTERM");
    await instance.exited;
  }
});
