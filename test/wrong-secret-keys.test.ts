/**
 * Two instances on one database, one started with another KEYFOB_SECRET than the one that sealed
 * the stored signing keys (a restore without the secret, a typo in one server's settings). It
 * cannot open those keys, so any key it made would be one its peers cannot open: its scheduled
 * maintenance, a rotation and an emergency revocation's replacement create nothing, in either key
 * set, and say why (a log line; 503 at the management API, never a 500), while the same operations
 * on the instance with the right secret work. The admin CLI run with the wrong secret is refused too.
 */
import { randomBytes } from "node:crypto";
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ALL_SCOPES, type Admin } from "@/lib/admin/access";
import { runAdminChange } from "@/lib/admin/changes";
import { ADMIN_SCOPE } from "@/lib/admin/scopes";
import { createClient, rotateClientSecret, updateClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { log } from "@/lib/log";
import { cliOn } from "./support/cli";
import { ISSUER } from "./support/flow-a";
import { FORM } from "./support/flow-b";
import { emptyDatabase, tables } from "./support/database";
import { serveRequest } from "./support/routes";

const operator: Admin = { accountId: "cli", label: "cli:test", scopes: ALL_SCOPES };
let url: string;
let right: Keyfob;
let wrong: Keyfob;
const wrongSecret = randomBytes(32).toString("base64url");
/** A management API token, issued by the right instance (the wrong one signs nothing). */
let adminToken: string;
let automationCredentials: string;

/** The automation client's client_credentials request for a management API token, at instance `k`. */
const tokenRequest = (k: Keyfob) =>
  serveRequest(
    new Request(`${ISSUER}/token`, {
      method: "POST",
      headers: { ...FORM, authorization: `Basic ${automationCredentials}` },
      body: new URLSearchParams({ grant_type: "client_credentials", scope: ADMIN_SCOPE }),
    }),
    k,
  );

beforeAll(async () => {
  url = await emptyDatabase("wrong_secret_keys_test");
  await migrateDatabase(url);
  const instance = (secret: string) => createKeyfob({ ...loadConfig(process.env), databaseUrl: url, secret, recoveryThreads: 0 });
  right = instance(randomBytes(32).toString("base64url"));
  wrong = instance(wrongSecret);
  await right.keys.refresh(); // the first start: the access set's first key, sealed with the right secret

  const automation = await createClient(right.store, { name: "Automation" });
  const secret = await rotateClientSecret(right, automation.id);
  await updateClient(right.store, automation.id, { managementApi: true, managementScopes: [ADMIN_SCOPE] });
  automationCredentials = Buffer.from(`${automation.id}:${secret}`).toString("base64");
  const answer = await tokenRequest(right);
  expect(answer.status).toBe(200);
  adminToken = ((await answer.json()) as { access_token: string }).access_token;
});

afterAll(async () => {
  await right?.close();
  await wrong?.close();
});

/** The kids stored in each set, revoked or not. */
async function stored() {
  const db = tables(right);
  const kids = async (rows: Promise<{ kid: string }[]>) => (await rows).map((row) => row.kid).sort();
  return {
    access: await kids(db.signingKey.findMany({ select: { kid: true } })),
    vehicle: await kids(db.vehicleSigningKey.findMany({ select: { kid: true } })),
    algs: await kids(db.algSigningKey.findMany({ select: { kid: true } })),
  };
}

/** The management API of instance `k`, called with the admin token. */
async function api(k: Keyfob, path: string) {
  const response = await serveRequest(
    new Request(`${ISSUER}/api/admin/v1${path}`, { method: "POST", headers: { authorization: `Bearer ${adminToken}` } }),
    k,
  );
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json() };
}

/** Runs `work` with log.error captured: what it logged. */
async function loggedErrors(work: () => Promise<unknown>): Promise<string[]> {
  const errors = vi.spyOn(log, "error").mockImplementation(() => undefined);
  try {
    await work();
    return errors.mock.calls.map(([message]) => String(message));
  } finally {
    errors.mockRestore();
  }
}

const CANNOT_OPEN = /^signing keys cannot be decrypted with this KEYFOB_SECRET: no new key is created/;

describe("an instance whose KEYFOB_SECRET cannot open the stored keys", () => {
  it("creates no first key of the vehicle set either (the access set's keys show the secret is not the one in use)", async () => {
    const before = await stored();
    expect(before.vehicle).toEqual([]);
    const errors = await loggedErrors(() => wrong.vehicleKeys.refresh());
    expect(await stored()).toEqual(before);
    expect(errors).toContainEqual(expect.stringMatching(CANNOT_OPEN));

    await right.vehicleKeys.refresh();
    expect((await stored()).vehicle).toHaveLength(1);
    expect((await right.vehicleKeys.signingKey()).kid).toBe((await stored()).vehicle[0]);
  });

  it("creates no first key of an alg a client asks for (ES256) either: 503 where it would sign; the right instance creates it", async () => {
    const automation = (await tables(right).client.findFirstOrThrow({ where: { name: "Automation" } })).id;
    await updateClient(right.store, automation, { idTokenSignedResponseAlg: "ES256" });
    try {
      const before = await stored();
      expect(before.algs).toEqual([]);
      const errors = await loggedErrors(async () => {
        const answer = await tokenRequest(wrong);
        expect(answer.status).toBe(503);
        expect(await answer.json()).toMatchObject({ error: "temporarily_unavailable" });
      });
      expect(errors).toContainEqual(expect.stringMatching(CANNOT_OPEN));
      expect(await stored()).toEqual(before);

      const answer = await tokenRequest(right);
      expect(answer.status).toBe(200);
      const { access_token } = (await answer.json()) as { access_token: string };
      expect(decodeProtectedHeader(access_token)).toMatchObject({ alg: "ES256", kid: (await stored()).algs[0] });
    } finally {
      await updateClient(right.store, automation, { idTokenSignedResponseAlg: "RS256" });
    }
  });

  it("answers 503 with Retry-After where it would sign, as its readiness says (an instance with the right secret can), never 500", async () => {
    const errors = await loggedErrors(async () => {
      const answer = await tokenRequest(wrong);
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toBeTruthy();
      expect(await answer.json()).toMatchObject({ error: "temporarily_unavailable" });
    });
    expect(errors).toContain("signing keys cannot be decrypted with this KEYFOB_SECRET");
  });

  it("refuses a rotation of either set, with 503 at the management API; the right instance's rotation creates both keys", async () => {
    const before = await stored();
    let refused: Awaited<ReturnType<typeof api>> | undefined;
    const errors = await loggedErrors(async () => (refused = await api(wrong, "/keys/rotate")));
    expect(refused).toMatchObject({ status: 503, retryAfter: expect.any(String), body: { error: "temporarily_unavailable" } });
    expect(refused?.body.error_description).toMatch(/KEYFOB_SECRET/);
    expect(errors).toContainEqual(expect.stringMatching(CANNOT_OPEN));
    // The vehicle set alone (its rotation comes second), on the instance directly.
    await loggedErrors(() => expect(wrong.vehicleKeys.rotateNow()).rejects.toThrow(/KEYFOB_SECRET/));
    expect(await stored()).toEqual(before);

    expect(await api(right, "/keys/rotate")).toMatchObject({ status: 200 });
    const after = await stored();
    expect(after.access).toHaveLength(before.access.length + 1);
    expect(after.vehicle).toHaveLength(before.vehicle.length + 1);
  });

  it("refuses to revoke a current key (its replacement would be sealed with its secret): nothing is revoked or created; the right instance revokes and replaces it", async () => {
    const current = (await right.keys.signingKey()).kid;
    const currentVehicle = (await right.vehicleKeys.signingKey()).kid;
    const before = await stored();

    let refused: Awaited<ReturnType<typeof api>> | undefined;
    const errors = await loggedErrors(async () => (refused = await api(wrong, `/keys/${current}/revoke`)));
    expect(refused).toMatchObject({ status: 503, body: { error: "temporarily_unavailable" } });
    expect(refused?.body.error_description).toMatch(/KEYFOB_SECRET/);
    expect(errors).toContainEqual(expect.stringMatching(CANNOT_OPEN));
    const vehicle = await loggedErrors(async () =>
      expect(await runAdminChange(wrong, operator, "key.revoke", { kid: currentVehicle })).toMatchObject({ ok: false, status: 503 }),
    );
    expect(vehicle).toContainEqual(expect.stringMatching(CANNOT_OPEN));
    const cli = await cliOn(url, { KEYFOB_SECRET: wrongSecret })("keys", "revoke", current);
    expect(cli).toMatchObject({
      code: 5,
      stderr: expect.stringMatching(/^error: this instance's KEYFOB_SECRET cannot decrypt the stored signing key/),
    });
    expect(await stored()).toEqual(before);
    expect(await tables(right).signingKey.findUniqueOrThrow({ where: { kid: current } })).toMatchObject({ revokedAt: null });

    const revoked = await api(right, `/keys/${current}/revoke`);
    expect(revoked).toMatchObject({ status: 200, body: { kid: current, revoked: true, was: "current", successor: expect.any(String) } });
    expect((await right.keys.signingKey()).kid).toBe(revoked.body.successor);
    expect(await runAdminChange(right, operator, "key.revoke", { kid: currentVehicle })).toMatchObject({
      ok: true,
      value: { revoked: true, was: "current" },
    });
  });
});
