/**
 * The audit log on a real database: every token is issued with its token.issued record (in the
 * statement that records the token) carrying the endpoint, the caller's address, the client and
 * the account; what a request sends can never break a write, and one bad event cannot take the
 * others of its batch with it.
 */
import { randomBytes } from "node:crypto";
import { systemClock } from "@/lib/clock";
import { ALL_SCOPES } from "@/lib/admin/access";
import { getAddress } from "viem";
import { expect, it } from "vitest";
import { AuditLog, type AuditEntry } from "@/lib/audit";
import { auditEventsDropped } from "@/lib/metrics";
import { blockAccount, updateClient as changeSettings } from "@/lib/admin/operations";
import { createClient, updateClient } from "@/lib/clients/registry";
import { CLIENT_IP_HEADER } from "@/lib/http/client-ip";
import { keyfob } from "@/lib/runtime";
import { ISSUER, registerLicense, requestChallenge, submit } from "./support/flow-a";
import { authorize, FORM, registerApp } from "./support/flow-b";
import { tables } from "./support/database";
import { route } from "./support/routes";

const submitChallengeRoute = route("/auth/web3/submit_challenge");
const tokenRoute = route("/token");

it("records every issuance with the endpoint, the caller's address, the client and the account", async () => {
  const db = tables(keyfob());
  const ip = "192.0.2.7";
  const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    (path === "/token" ? tokenRoute : submitChallengeRoute)(
      new Request(`${ISSUER}${path}`, {
        method: "POST",
        headers: { ...FORM, [CLIENT_IP_HEADER]: ip, ...headers },
        body: new URLSearchParams(form),
      }),
    );
  const issued = async (clientId: string) =>
    (await db.auditEvent.findMany({ where: { clientId, action: "token.issued" }, orderBy: { id: "asc" } })).map((e) => [
      e.outcome,
      e.detail,
      e.ip,
      e.accountId,
    ]);

  const license = await registerLicense();
  const { state, challenge } = await requestChallenge(license);
  const signature = await license.owner.signMessage({ message: challenge });
  expect(
    (
      await post("/auth/web3/submit_challenge", {
        client_id: license.clientId,
        state,
        grant_type: "authorization_code",
        domain: license.domain,
        signature,
      })
    ).status,
  ).toBe(200);
  expect(await issued(license.clientId)).toEqual([["success", "submit_challenge", ip, license.clientId]]);

  const app = await registerApp({ confidential: true });
  await updateClient(keyfob().store, app.clientId, { refreshTokensAllowed: true, managementApi: true, managementScopes: ["keyfob:read"] });
  const basic = { authorization: `Basic ${Buffer.from(`${app.clientId}:${app.secret}`).toString("base64")}` };
  const redirect = await authorize(app, undefined, { scope: "openid email offline_access" });
  const code = await post(
    "/token",
    { grant_type: "authorization_code", code: redirect.searchParams.get("code")!, redirect_uri: app.redirectUri },
    basic,
  );
  expect(code.status).toBe(200);
  const account = (await db.issuedToken.findFirstOrThrow({ where: { clientId: app.clientId } })).userId;
  expect((await post("/token", { grant_type: "refresh_token", refresh_token: (await code.json()).refresh_token }, basic)).status).toBe(200);
  expect((await post("/token", { grant_type: "client_credentials" }, basic)).status).toBe(200);
  expect(await issued(app.clientId)).toEqual([
    ["success", "token", ip, account],
    ["success", "token", ip, account],
    ["success", "token", ip, app.clientId],
  ]);
});

it("issues no token whose token.issued record cannot be written, and leaves its state usable", async () => {
  const db = tables(keyfob());
  const license = await registerLicense();
  const refuse = `refuse_audit_${randomBytes(6).toString("hex")}`;
  // A database that refuses this client's issuance records, and only them (the test database is shared).
  await db.$executeRawUnsafe(`CREATE FUNCTION ${refuse}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
  await db.$executeRawUnsafe(
    `CREATE TRIGGER ${refuse} BEFORE INSERT ON audit_events FOR EACH ROW WHEN (NEW.action = 'token.issued' AND NEW.client_id = '${license.clientId}') EXECUTE FUNCTION ${refuse}()`,
  );
  const { state, challenge } = await requestChallenge(license);
  const signature = await license.owner.signMessage({ message: challenge });
  try {
    expect((await submit(license, state, signature)).status).toBe(500);
    expect(await db.issuedToken.count({ where: { clientId: license.clientId } })).toBe(0);
  } finally {
    await db.$executeRawUnsafe(`DROP TRIGGER ${refuse} ON audit_events`);
    await db.$executeRawUnsafe(`DROP FUNCTION ${refuse}`);
  }
  expect((await submit(license, state, signature)).status).toBe(200);
  expect(await db.auditEvent.count({ where: { clientId: license.clientId, action: "token.issued" } })).toBe(1);
});

it("keeps other requests' token.issued events when one request sends a NUL byte", async () => {
  const license = await registerLicense();
  const { state, challenge } = await requestChallenge(license);
  expect((await submit(license, state, await license.owner.signMessage({ message: challenge }))).status).toBe(200);
  // An unauthenticated request whose client_id is a NUL byte, in the same batch, through Basic auth.
  const hostile = await submitChallengeRoute(
    new Request(`${ISSUER}/auth/web3/submit_challenge`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from("%00:x").toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=authorization_code",
    }),
  );
  expect(hostile.status).toBeLessThan(500);
  await keyfob().audit.flush();
  const events = await tables(keyfob()).auditEvent.findMany({ where: { clientId: license.clientId, action: "token.issued" } });
  expect(events).toHaveLength(1);
});

it("stores control characters as U+FFFD and bounds every field", async () => {
  const db = tables(keyfob());
  const log = new AuditLog(keyfob().store, systemClock);
  const marker = randomBytes(6).toString("hex");
  log.record({ action: "token.failed", outcome: "invalid_request", clientId: `${marker}\u0000\u0007\n`, detail: "x".repeat(10_000) });
  await log.flush();
  const [event] = await db.auditEvent.findMany({ where: { clientId: { startsWith: marker } } });
  expect(event.clientId).toBe(`${marker}\uFFFD\uFFFD\uFFFD`);
  expect(event.detail).toHaveLength(2000);
});

it("writes the rest of a batch one by one when one event cannot be written", async () => {
  const db = tables(keyfob());
  const log = new AuditLog(keyfob().store, systemClock);
  const marker = randomBytes(6).toString("hex");
  log.record({ action: "token.issued", outcome: "success", clientId: `${marker}-a` });
  log.record({ action: "token.issued", clientId: `${marker}-bad` } as unknown as AuditEntry); // refused by the database: outcome is NOT NULL
  log.record({ action: "token.issued", outcome: "success", clientId: `${marker}-b` });
  await log.flush();
  const stored = await db.auditEvent.findMany({ where: { clientId: { startsWith: marker } }, orderBy: { id: "asc" } });
  expect(stored.map((e) => e.clientId)).toEqual([`${marker}-a`, `${marker}-b`]);
});

it("keeps why a token request or a wallet login failed, as the client or user was told", async () => {
  const db = tables(keyfob());
  const license = await registerLicense();
  const { state } = await requestChallenge(license);
  await submit(license, state, `0x${"11".repeat(65)}`);
  await keyfob().audit.flush();
  const [failed] = await db.auditEvent.findMany({ where: { clientId: license.clientId, action: "token.failed" } });
  expect(failed).toMatchObject({
    outcome: "invalid_grant",
    detail: expect.stringMatching(/^submit_challenge: the signature does not match/),
  });
});

/** Makes the database refuse (raise) every audit event whose client_id starts with a marker, until `allow()`. */
async function refuseEvents(marker: string) {
  const db = tables(keyfob());
  const name = `refuse_${marker}`;
  await db.$executeRawUnsafe(
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'unavailable'; END $$`,
  );
  await db.$executeRawUnsafe(
    `CREATE TRIGGER ${name} BEFORE INSERT ON audit_events FOR EACH ROW WHEN (starts_with(NEW.client_id, '${marker}')) EXECUTE FUNCTION ${name}()`,
  );
  return async () => {
    await db.$executeRawUnsafe(`DROP TRIGGER ${name} ON audit_events`);
    await db.$executeRawUnsafe(`DROP FUNCTION ${name}`);
  };
}

const dropped = async (reason: string) =>
  (await auditEventsDropped.get()).values.find((value) => value.labels.reason === reason)?.value ?? 0;

it("keeps queued events while the database cannot take them, and writes them, in order, once it can", async () => {
  const db = tables(keyfob());
  const log = new AuditLog(keyfob().store, systemClock, 20);
  const marker = randomBytes(6).toString("hex");
  const allow = await refuseEvents(marker);
  const stored = () => db.auditEvent.findMany({ where: { clientId: { startsWith: marker } }, orderBy: { id: "asc" } });
  try {
    for (const n of [1, 2, 3]) log.record({ action: "token.failed", outcome: "temporarily_unavailable", clientId: `${marker}-${n}` });
    await log.flush();
    await new Promise((resolve) => setTimeout(resolve, 200)); // retried meanwhile, refused again
    expect(await stored()).toEqual([]);
  } finally {
    await allow();
  }
  // The retry timer writes them, without a flush.
  await expect
    .poll(async () => (await stored()).map((e) => e.clientId), { timeout: 10_000 })
    .toEqual([`${marker}-1`, `${marker}-2`, `${marker}-3`]);
});

it("drops, counts and logs what exceeds its capacity, and keeps what it holds", async () => {
  const db = tables(keyfob());
  const log = new AuditLog(keyfob().store, systemClock, 20, 3);
  const marker = randomBytes(6).toString("hex");
  const before = await dropped("overflow");
  const allow = await refuseEvents(marker);
  try {
    for (const n of [1, 2, 3, 4, 5]) log.record({ action: "login.failed", outcome: "access_denied", clientId: `${marker}-${n}` });
    await log.flush();
    expect(await dropped("overflow")).toBe(before + 2);
  } finally {
    await allow();
  }
  await log.flush();
  expect(
    (await db.auditEvent.findMany({ where: { clientId: { startsWith: marker } }, orderBy: { id: "asc" } })).map((e) => e.clientId),
  ).toEqual([`${marker}-1`, `${marker}-2`, `${marker}-3`]);
});

it("writes what it holds when closed, and counts what the database still cannot take after a while", async () => {
  const db = tables(keyfob());
  const marker = randomBytes(6).toString("hex");
  const written = new AuditLog(keyfob().store, systemClock, 60_000);
  written.record({ action: "session.ended", outcome: "success", clientId: `${marker}-closed` });
  await written.close();
  expect(await db.auditEvent.count({ where: { clientId: `${marker}-closed` } })).toBe(1);

  const before = await dropped("shutdown");
  const allow = await refuseEvents(marker);
  try {
    const stuck = new AuditLog(keyfob().store, systemClock, 20);
    stuck.record({ action: "session.ended", outcome: "success", clientId: `${marker}-stuck` });
    await stuck.close(300);
    expect(await dropped("shutdown")).toBe(before + 1);
  } finally {
    await allow();
  }
});

it("commits an admin change with its audit record, or neither", async () => {
  const db = tables(keyfob());
  const admin = { accountId: "0x0000000000000000000000000000000000000001", label: "test-admin", scopes: ALL_SCOPES };
  const client = await createClient(keyfob().store, { name: "Before" });
  const account = getAddress(`0x${randomBytes(20).toString("hex")}`);
  await db.account.create({ data: { id: account } });
  const refuse = `refuse_audit_${randomBytes(6).toString("hex")}`;
  await db.$executeRawUnsafe(`CREATE FUNCTION ${refuse}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
  await db.$executeRawUnsafe(
    `CREATE TRIGGER ${refuse} BEFORE INSERT ON audit_events FOR EACH ROW WHEN (NEW.outcome = 'success' AND NEW.actor = 'test-admin' AND (NEW.client_id = '${client.id}' OR NEW.account_id = '${account}')) EXECUTE FUNCTION ${refuse}()`,
  );
  try {
    // A change, and one whose steps are a transaction of their own (blocking): both rolled back.
    await expect(changeSettings(keyfob(), admin, client.id, { name: "After" })).rejects.toThrow();
    await expect(blockAccount(keyfob(), admin, account)).rejects.toThrow();
  } finally {
    await db.$executeRawUnsafe(`DROP TRIGGER ${refuse} ON audit_events`);
    await db.$executeRawUnsafe(`DROP FUNCTION ${refuse}`);
  }
  expect((await db.client.findUniqueOrThrow({ where: { id: client.id } })).name).toBe("Before");
  expect((await db.account.findUniqueOrThrow({ where: { id: account } })).blockedAt).toBeNull();
  // Each failure is audited apart, as an error.
  expect(
    await db.auditEvent.findMany({
      where: { actor: "test-admin", OR: [{ clientId: client.id }, { accountId: account }] },
      select: { action: true, outcome: true },
      orderBy: { id: "asc" },
    }),
  ).toEqual([
    { action: "client.updated", outcome: "error" },
    { action: "account.blocked", outcome: "error" },
  ]);

  await changeSettings(keyfob(), admin, client.id, { name: "After" });
  await blockAccount(keyfob(), admin, account);
  expect((await db.client.findUniqueOrThrow({ where: { id: client.id } })).name).toBe("After");
  expect((await db.account.findUniqueOrThrow({ where: { id: account } })).blockedAt).not.toBeNull();
  expect(
    await db.auditEvent.count({
      where: { actor: "test-admin", outcome: "success", OR: [{ clientId: client.id }, { accountId: account }] },
    }),
  ).toBe(2);
});
