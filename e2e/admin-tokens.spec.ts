/**
 * The Tokens page shows a vehicle token for what it is: its vehicle (the asset DID, cut with a copy
 * button as other ids are) and its privileges by name, beside the client's other tokens, and the
 * list narrows to vehicle tokens (kind=vehicle). The rows are
 * arranged in the database: issuing vehicle tokens (RFC 8693 token exchange) is tested with the
 * protocol side.
 */
import { expect, test } from "@playwright/test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createClient } from "../lib/clients/registry";
import { createStore, rawConnection } from "../lib/store";
import { adminSession } from "./support/admin";
import { expectNoAxeViolations } from "./support/axe";

const store = createStore(process.env.DATABASE_URL!, 2);
const { db } = rawConnection(store);
test.afterAll(() => store.close());

test("a client's vehicle token shows its vehicle and its privileges by name", async ({ page }) => {
  const clientId = `kf_vehicles_${Date.now()}`;
  await createClient(store, { id: clientId, name: "Fleet app" });
  const vehicle = "did:erc721:137:0xbA5738a18d83D41847dfFbDC6101d37C69c9B0cF:1234";
  const holder = privateKeyToAccount(generatePrivateKey()).address;
  const expiresAt = new Date(Date.now() + 3600_000);
  await db.issuedToken.createMany({
    data: [
      { jti: `at-${clientId}`, clientId, userId: holder, connector: "web3", scope: "openid", expiresAt },
      {
        jti: `vt-${clientId}`,
        clientId,
        userId: holder,
        connector: "web3",
        scope: "",
        vehicle,
        vehiclePrivileges: [1, 3],
        subjectJti: `at-${clientId}`,
        expiresAt,
      },
    ],
  });
  await adminSession(page.context(), db);

  await page.goto(`/admin/tokens?client=${clientId}`);
  const row = (jti: string) => page.getByRole("row").filter({ hasText: jti });
  await expect(row(`vt-${clientId}`).getByRole("button", { name: `Copy vehicle ${vehicle}` })).toBeVisible();
  await expect(row(`vt-${clientId}`).getByTitle(vehicle, { exact: true })).toHaveText(vehicle);
  await expect(row(`vt-${clientId}`).getByRole("list", { name: "Privileges" }).getByRole("listitem")).toHaveText([
    "GetNonLocationHistory",
    "GetCurrentLocation",
  ]);
  await expect(row(`at-${clientId}`).getByRole("list", { name: "Privileges" })).toHaveCount(0);
  await expectNoAxeViolations(page, "the tokens page with a vehicle token");

  // Vehicle tokens only; revoking all (every token of the client) is not offered on this view.
  await page.getByLabel("Kind").selectOption("vehicle");
  await page.getByRole("button", { name: "Show" }).click();
  await page.waitForURL(/kind=vehicle/);
  await expect(page.getByRole("table", { name: `Active vehicle tokens of client ${clientId}` })).toBeVisible();
  await expect(row(`vt-${clientId}`)).toHaveCount(1);
  await expect(row(`at-${clientId}`)).toHaveCount(0);
  await expect(page.getByRole("button", { name: /^Revoke all/ })).toHaveCount(0);
  await expectNoAxeViolations(page, "the tokens page filtered to vehicle tokens");
});
