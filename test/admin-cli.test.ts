/**
 * The admin CLI's account commands as an operator runs them (separate processes on the shared
 * database): accounts show / block / unblock / delete and sessions revoke, named by id, wallet
 * address or email, and client settings (the management API, resources); changes go through the
 * dashboard's admin actions (validation and audit).
 */
import { expect, it } from "vitest";
import { linkWallet, resolveAccount } from "@/lib/accounts/accounts";
import { opaqueDigest, randomOpaque } from "@/lib/oauth/opaque";
import { keyfob } from "@/lib/runtime";
import { findSession, startSession } from "@/lib/sessions/login-session";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { cli } from "./support/cli";
import { google } from "./support/flow-b";
import { tables } from "./support/database";

it("shows, blocks, unblocks an account and revokes its sessions, by id, wallet or email", { timeout: 120_000 }, async () => {
  const k = keyfob();
  const identity = google();
  const accountId = await resolveAccount(k, identity);
  const wallet = privateKeyToAccount(generatePrivateKey()).address;
  await linkWallet(k, accountId, wallet);
  const [one, two] = await Promise.all([
    startSession(k, { accountId, identity, ip: "203.0.113.9" }),
    startSession(k, { accountId, identity }),
  ]);

  const shown = await cli("accounts", "show", identity.email!.toUpperCase());
  expect(shown).toMatchObject({ code: 0, stderr: "" });
  expect(shown.stdout).toMatch(new RegExp(`^account ${accountId}  active  created `));
  expect(shown.stdout).toContain(`identity      google   ${identity.email} (verified)`);
  expect(shown.stdout).toContain(`identity      web3     ${wallet} (linked wallet)`);
  expect(shown.stdout).toContain(`session       ${opaqueDigest(one.token)}  via google`);
  expect(shown.stdout).toContain("from 203.0.113.9");

  expect(await cli("sessions", "revoke", wallet.toLowerCase(), opaqueDigest(one.token))).toMatchObject({
    stderr: "",
    code: 0,
    stdout: `session ${opaqueDigest(one.token)} of ${accountId} revoked\n`,
  });
  expect(await findSession(k, one.token)).toBeUndefined();
  expect(await findSession(k, two.token)).toBeDefined();
  expect(await cli("sessions", "revoke", accountId, opaqueDigest(one.token))).toMatchObject({
    code: 2,
    stderr: "error: sessionId: no live session of this account has this id\n",
  });

  const blocked = await cli("accounts", "block", accountId);
  expect(blocked).toMatchObject({
    code: 0,
    stdout: `account ${accountId} blocked: 0 access tokens and 1 sessions revoked, with its refresh tokens and codes\n`,
  });
  expect(await findSession(k, two.token)).toBeUndefined();
  expect((await cli("accounts", "show", accountId)).stdout).toMatch(/BLOCKED since/);
  expect(await cli("accounts", "unblock", accountId)).toMatchObject({ code: 0, stdout: `account ${accountId} unblocked\n` });
  expect(await cli("accounts", "show", "nobody@example.com")).toMatchObject({
    code: 2,
    stderr: "error: account: no account matches nobody@example.com\n",
  });

  const events = await tables(k).auditEvent.findMany({ where: { accountId }, orderBy: { id: "asc" } });
  expect(events.map((e) => [e.action, e.outcome])).toEqual([
    ["session.revoked", "success"],
    ["session.revoked", "rejected"],
    ["account.blocked", "success"],
    ["account.unblocked", "success"],
  ]);
  expect(events.every((e) => e.actor?.startsWith("cli:"))).toBe(true);
  expect(await cli("accounts", "delete", identity.email!)).toMatchObject({ code: 0 });
  expect(await tables(k).account.findUnique({ where: { id: accountId } })).toBeNull();
});

it("revokes a session whose id begins with a dash", { timeout: 60_000 }, async () => {
  // A session id is base64url: one in 64 begins with a dash, which is no option here.
  const k = keyfob();
  const identity = google();
  const accountId = await resolveAccount(k, identity);
  let dashed = randomOpaque();
  while (!opaqueDigest(dashed).startsWith("-")) dashed = randomOpaque();
  const at = new Date();
  await k.store.accounts.createSession({
    idHash: opaqueDigest(dashed),
    ...{ accountId, connector: "google", subject: identity.subject, emailVerified: true, amr: "google" },
    ...{ authTime: at, lastSeenAt: at, expiresAt: new Date(at.getTime() + 3600_000) },
  });
  expect(await cli("sessions", "revoke", accountId, opaqueDigest(dashed))).toMatchObject({
    stderr: "",
    code: 0,
    stdout: `session ${opaqueDigest(dashed)} of ${accountId} revoked\n`,
  });
  expect(await findSession(k, dashed)).toBeUndefined();
});

it("sets the management API and its scopes, for confidential clients only", { timeout: 60_000 }, async () => {
  const id = /client (\S+) created/.exec((await cli("clients", "add", "--name", "Automation")).stdout)![1];
  expect(await cli("clients", "set", id, "--management-api", "yes")).toMatchObject({
    code: 1,
    stderr: "error: managementApi: only a confidential client (with a secret) may use the management API\n",
  });
  expect((await cli("clients", "secret", id)).code).toBe(0);
  expect((await cli("clients", "set", id, "--management-api", "yes")).stdout).toMatch(
    /"managementApi":true,"managementScopes":\[\]/, // none until an admin chooses them
  );
  expect((await cli("clients", "set", id, "--management-scopes", "keyfob:read,keyfob:keys")).stdout).toMatch(
    /"managementScopes":\["keyfob:read","keyfob:keys"\]/,
  );
  expect(await cli("clients", "set", id, "--management-scopes", "keyfob:root")).toMatchObject({
    code: 1,
    stderr: expect.stringMatching(/^error: managementScopes: must be among keyfob:admin, keyfob:read/),
  });
});

it("sets a client's resources (RFC 8707) and lists them; a fragment is refused", { timeout: 60_000 }, async () => {
  const id = /client (\S+) created/.exec((await cli("clients", "add", "--name", "Fleet API client")).stdout)![1];
  expect(
    (await cli("clients", "set", id, "--resources", "https://api.fleet.example.com https://telemetry.fleet.example.com/v2")).stdout,
  ).toMatch(/"resources":\["https:\/\/api\.fleet\.example\.com","https:\/\/telemetry\.fleet\.example\.com\/v2"\]/);
  expect(await cli("clients", "set", id, "--resources", "https://api.fleet.example.com#x")).toMatchObject({
    code: 1,
    stderr: expect.stringMatching(/^error: resources: https:\/\/api\.fleet\.example\.com#x: must not contain a fragment/),
  });
  const listed = (await cli("clients", "list")).stdout;
  expect(listed).toContain("    resource      https://api.fleet.example.com\n");
  expect(listed).toContain("    resource      https://telemetry.fleet.example.com/v2\n");
});
