/**
 * The audit log on a real database: what a request sends can never break a write, and one bad
 * event cannot take the others of its batch with it.
 */
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { POST as submitChallengeRoute } from "@/app/auth/web3/submit_challenge/route";
import { AuditLog, type AuditEntry } from "@/lib/audit";
import { keyfob } from "@/lib/runtime";
import { ISSUER, registerLicense, requestChallenge, submit } from "./support/flow-a";

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
  const events = await keyfob().db.auditEvent.findMany({ where: { clientId: license.clientId, action: "token.issued" } });
  expect(events).toHaveLength(1);
});

it("stores control characters as U+FFFD and bounds every field", async () => {
  const { db, pool } = keyfob();
  const log = new AuditLog(pool);
  const marker = randomBytes(6).toString("hex");
  log.record({ action: "token.failed", outcome: "invalid_request", clientId: `${marker}\u0000\u0007\n`, detail: "x".repeat(10_000) });
  await log.flush();
  const [event] = await db.auditEvent.findMany({ where: { clientId: { startsWith: marker } } });
  expect(event.clientId).toBe(`${marker}\uFFFD\uFFFD\uFFFD`);
  expect(event.detail).toHaveLength(2000);
});

it("writes the rest of a batch one by one when one event cannot be written", async () => {
  const { db, pool } = keyfob();
  const log = new AuditLog(pool);
  const marker = randomBytes(6).toString("hex");
  log.record({ action: "token.issued", outcome: "success", clientId: `${marker}-a` });
  log.record({ action: "token.issued", clientId: `${marker}-bad` } as unknown as AuditEntry); // refused by the database: outcome is NOT NULL
  log.record({ action: "token.issued", outcome: "success", clientId: `${marker}-b` });
  await log.flush();
  const stored = await db.auditEvent.findMany({ where: { clientId: { startsWith: marker } }, orderBy: { id: "asc" } });
  expect(stored.map((e) => e.clientId)).toEqual([`${marker}-a`, `${marker}-b`]);
});

it("keeps why a token request or a wallet login failed, as the client or user was told", async () => {
  const { db } = keyfob();
  const license = await registerLicense();
  const { state } = await requestChallenge(license);
  await submit(license, state, `0x${"11".repeat(65)}`);
  await keyfob().audit.flush();
  const [failed] = await db.auditEvent.findMany({ where: { clientId: license.clientId, action: "token.failed" } });
  expect(failed).toMatchObject({ outcome: "invalid_grant", detail: expect.stringMatching(/^submit_challenge: the signature does not match/) });
});
