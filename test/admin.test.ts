/**
 * The dashboard's server-side authorization, on a real PostgreSQL: every change is refused to a
 * signed-out caller (401) and to a non-admin (403) before anything is read or written; admins come
 * from the allowlist (address or verified email) or a role granted in the dashboard; every change
 * is audited. Sessions are obtained through the real hosted-login code flow of the admin client.
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ALL_SCOPES } from "@/lib/admin/access";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoginIdentity } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { ADMIN_CHANGES, performAdminChange, type AdminChangeName } from "@/lib/admin/changes";
import { auditCsv, getClient, overview } from "@/lib/admin/operations";
import { beginAdminLogin, finishAdminLogin, readAdminSession } from "@/lib/admin/session";
import { loadConfig } from "@/lib/config";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { isolatedDatabase, tables } from "./support/database";

const bootstrapWallet = privateKeyToAccount(generatePrivateKey()).address;
let k: Keyfob;

// A database of its own: the snapshots below count whole tables (signing keys, admin roles) that
// other files change while this one runs.
beforeAll(async () => {
  k = createKeyfob(
    loadConfig({ ...process.env, ADMIN_ADDRESSES: bootstrapWallet.toLowerCase(), ADMIN_EMAILS: "Boss@Example.com" }),
    await isolatedDatabase("admin_test"),
  );
});
afterAll(async () => {
  await k.close();
  await k.store.close();
});

/** Signs in through the admin client's code flow (hosted login → code → PKCE exchange) and returns the session token. */
async function signIn(identity: LoginIdentity): Promise<string> {
  const { location, cookie } = await beginAdminLogin(k);
  const start = await startAuthorization(k, new URL(location).searchParams);
  if (start.kind !== "login") throw new Error(`admin login did not reach the login page: ${JSON.stringify(start)}`);
  const callback = new URL((await completeAuthorization(k, start.interactionId, { identity })).location);
  const session = await finishAdminLogin(k, cookie, callback.searchParams);
  if (!session) throw new Error("no session");
  return session;
}

const wallet = (address: string): LoginIdentity => ({ provider: "web3", subject: address, emailVerified: false });
const googleUser = (email: string, emailVerified = true): LoginIdentity => ({
  provider: "google",
  subject: `g-${email}-${emailVerified}`,
  email,
  emailVerified,
});

/** Valid input for each action, against `clientId` (which exists). */
function sampleInput(name: AdminChangeName, clientId: string): Record<string, unknown> {
  const address = privateKeyToAccount(generatePrivateKey()).address;
  return {
    "client.create": { name: "New app" },
    "client.enable": { clientId },
    "client.disable": { clientId },
    "client.delete": { clientId },
    "client.rotate_secret": { clientId },
    "client.end_secret_overlap": { clientId },
    "client.set_authentication": { clientId, tokenEndpointAuthMethod: "client_secret_jwt" },
    "redirect_uri.add": { clientId, uri: "https://new.example.com/cb" },
    "redirect_uri.remove": { clientId, uri: "https://app.example.com/cb" },
    "client.update": { clientId, requirePkce: "true", name: "Renamed" },
    "post_logout_redirect_uri.add": { clientId, uri: "https://app.example.com/bye" },
    "post_logout_redirect_uri.remove": { clientId, uri: "https://app.example.com/bye" },
    "allowed_origin.add": { clientId, origin: "https://spa.example.com" },
    "allowed_origin.remove": { clientId, origin: "https://spa.example.com" },
    "signer.add": { clientId, address },
    "signer.revoke": { clientId, address },
    "key.rotate": {},
    "key.revoke": { kid: "0".repeat(40) },
    "refresh_token.revoke": { clientId },
    "token.revoke": { clientId },
    "admin.grant": { accountId: address },
    "admin.revoke": { accountId: address },
    "account.block": { accountId: address },
    "account.unblock": { accountId: address },
    "account.delete": { accountId: address },
    "session.revoke": { accountId: address },
    "consent.revoke": { accountId: address, clientId },
  }[name];
}

describe("admin sessions", () => {
  it("signs an allowlisted wallet in through the code flow, with PKCE and state checked", async () => {
    const session = await signIn(wallet(bootstrapWallet));
    expect((await readAdminSession(k, session))?.accountId).toBe(bootstrapWallet);
    const { location, cookie } = await beginAdminLogin(k);
    const query = new URL(location).searchParams;
    expect(query.get("code_challenge_method")).toBe("S256");
    expect(query.get("max_age")).toBe("0");
    expect(await finishAdminLogin(k, cookie, new URLSearchParams({ code: "x", state: "wrong" }))).toBeUndefined();
    expect(await finishAdminLogin(k, undefined, new URLSearchParams({ code: "x", state: query.get("state")! }))).toBeUndefined();
    expect(await readAdminSession(k, `${session}x`)).toBeUndefined();
  });
});

describe("authorization of every dashboard change", () => {
  let nonAdmin: string;
  let admin: string;
  beforeAll(async () => {
    nonAdmin = await signIn(wallet(privateKeyToAccount(generatePrivateKey()).address));
    admin = await signIn(wallet(bootstrapWallet));
  });

  for (const name of ADMIN_CHANGES) {
    it(`${name}: 401 signed out, 403 for a non-admin, and nothing changes`, async () => {
      const { clientId } = await seededClient();
      const before = await snapshot(clientId);
      expect(await performAdminChange(k, undefined, name, sampleInput(name, clientId))).toMatchObject({ ok: false, status: 401 });
      expect(await performAdminChange(k, "forged.session.token", name, sampleInput(name, clientId))).toMatchObject({
        ok: false,
        status: 401,
      });
      expect(await performAdminChange(k, nonAdmin, name, sampleInput(name, clientId))).toMatchObject({ ok: false, status: 403 });
      expect(await snapshot(clientId)).toEqual(before);
    });
  }

  async function seededClient() {
    const created = await performAdminChange(k, admin, "client.create", { name: "Seeded" });
    if (!created.ok) throw new Error(created.error);
    const clientId = created.value.clientId as string;
    await performAdminChange(k, admin, "redirect_uri.add", { clientId, uri: "https://app.example.com/cb" });
    return { clientId };
  }

  async function snapshot(clientId: string) {
    const [client, keys, roles] = await Promise.all([
      tables(k).client.findUnique({ where: { id: clientId }, include: { redirectUris: true, signers: true, allowedOrigins: true } }),
      tables(k).signingKey.count(),
      tables(k).adminRole.count(),
    ]);
    return { client, keys, roles };
  }

  it("lets an admin change things, with field-level errors for bad input, and audits it", async () => {
    const created = await performAdminChange(k, admin, "client.create", { id: "", name: "Fleet", logoUrl: "" });
    expect(created.ok).toBe(true);
    const clientId = created.ok ? (created.value.clientId as string) : "";
    expect(await performAdminChange(k, admin, "redirect_uri.add", { clientId, uri: "http://insecure.example.com/cb" })).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { uri: expect.stringMatching(/http is allowed only on localhost/) },
    });
    expect(await performAdminChange(k, admin, "client.create", { name: "" })).toMatchObject({
      ok: false,
      fieldErrors: { name: "required" },
    });
    expect(await performAdminChange(k, admin, "signer.add", { clientId, address: "0x123" })).toMatchObject({
      ok: false,
      fieldErrors: { address: expect.any(String) },
    });
    expect(await performAdminChange(k, admin, "client.create", { id: clientId, name: "Again" })).toMatchObject({
      ok: false,
      fieldErrors: { id: expect.stringMatching(/already exists/) },
    });
    const secret = await performAdminChange(k, admin, "client.rotate_secret", { clientId });
    expect(secret.ok && secret.value.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const events = await tables(k).auditEvent.findMany({ where: { clientId }, orderBy: { id: "asc" } });
    expect(events.map((e) => [e.action, e.outcome, e.actor])).toEqual([
      ["client.created", "success", bootstrapWallet],
      ["redirect_uri.added", "rejected", bootstrapWallet],
      ["signer.added", "rejected", bootstrapWallet],
      ["client.created", "rejected", bootstrapWallet],
      ["client.secret_rotated", "success", bootstrapWallet],
    ]);
    // Refusals keep their reason; changes say what changed (never the secret).
    expect(events.map((e) => e.detail)).toEqual([
      'created: {"name":"Fleet","logoUrl":null,"enabled":true}',
      "http://insecure.example.com/cb; uri: redirect URI http is allowed only on localhost or a loopback address; use https",
      "0x123; address: must be a 0x-prefixed 20-byte hex address",
      `id: a client with id ${clientId} already exists`,
      "confidential: false -> true",
    ]);
    const csv = await auditCsv(k, { accountId: bootstrapWallet, label: "x", scopes: ALL_SCOPES }, { clientId });
    expect(csv.split("\r\n")[0]).toBe("at,actor,action,clientId,accountId,ip,outcome,detail");
    expect(csv).toContain('"client.secret_rotated"');
    expect((await overview(k, { accountId: bootstrapWallet, label: "x", scopes: ALL_SCOPES })).perDay).toHaveLength(14);
  });

  it("adds signers only to a license: a client with any other id is refused, with the reason audited", async () => {
    const app = await performAdminChange(k, admin, "client.create", { name: "Generated id" });
    const clientId = app.ok ? (app.value.clientId as string) : "";
    expect(clientId).toMatch(/^kf_/);
    const signer = privateKeyToAccount(generatePrivateKey()).address;
    expect(await performAdminChange(k, admin, "signer.add", { clientId, address: signer })).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { clientId: expect.stringMatching(/only for clients whose id is a license address/) },
    });
    expect(await tables(k).signer.count({ where: { clientId } })).toBe(0);
    const refusal = await tables(k).auditEvent.findFirstOrThrow({ where: { clientId, action: "signer.added" } });
    expect(refusal).toMatchObject({ outcome: "rejected", detail: expect.stringContaining(`${signer}; clientId: signers are only for`) });

    const license = privateKeyToAccount(generatePrivateKey()).address;
    expect(await performAdminChange(k, admin, "client.create", { id: license.toLowerCase(), name: "License" })).toMatchObject({ ok: true });
    expect(await performAdminChange(k, admin, "signer.add", { clientId: license, address: signer })).toMatchObject({
      ok: true,
      value: { signer: { address: signer } },
    });
  });

  it("rotates a secret with an overlap, shows its end, ends it early, and audits each step", async () => {
    const app = await performAdminChange(k, admin, "client.create", { name: "Overlap" });
    const clientId = app.ok ? (app.value.clientId as string) : "";
    expect(await performAdminChange(k, admin, "client.rotate_secret", { clientId, overlapSeconds: "60" })).toMatchObject({
      ok: false,
      fieldErrors: { overlapSeconds: "the client has no secret yet to keep valid" },
    });
    expect(await performAdminChange(k, admin, "client.rotate_secret", { clientId })).toMatchObject({
      ok: true,
      value: { previousSecretExpiresAt: null },
    });
    expect(await performAdminChange(k, admin, "client.rotate_secret", { clientId, overlapSeconds: "2592001" })).toMatchObject({
      ok: false,
      fieldErrors: { overlapSeconds: expect.stringMatching(/at most 30 days/) },
    });
    const before = Date.now();
    const rotated = await performAdminChange(k, admin, "client.rotate_secret", { clientId, overlapSeconds: "86400" });
    const until = rotated.ok ? (rotated.value.previousSecretExpiresAt as Date) : new Date(0);
    expect(until.getTime() - before).toBeGreaterThanOrEqual(86400_000 - 1000);
    expect(until.getTime() - before).toBeLessThan(86400_000 + 5000);
    expect((await getClient(k, { accountId: bootstrapWallet, label: "x", scopes: ALL_SCOPES }, clientId))?.secretOverlapEndsAt).toEqual(
      until,
    );
    expect(await performAdminChange(k, admin, "client.end_secret_overlap", { clientId })).toMatchObject({ ok: true });
    expect((await getClient(k, { accountId: bootstrapWallet, label: "x", scopes: ALL_SCOPES }, clientId))?.secretOverlapEndsAt).toBeNull();
    expect(await performAdminChange(k, admin, "client.end_secret_overlap", { clientId })).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { clientId: "the client has no previous secret that is still valid" },
    });
    const events = await tables(k).auditEvent.findMany({
      where: { clientId, action: { in: ["client.secret_rotated", "client.secret_overlap_ended"] } },
      orderBy: { id: "asc" },
    });
    expect(events.map((e) => [e.action, e.outcome, e.detail])).toEqual([
      ["client.secret_rotated", "rejected", "overlapSeconds: the client has no secret yet to keep valid"],
      ["client.secret_rotated", "success", "confidential: false -> true"],
      ["client.secret_rotated", "rejected", "invalid input: overlapSeconds: must be at most 30 days (2592000 seconds)"],
      [
        "client.secret_rotated",
        "success",
        `confidential: true -> true (secret replaced; the previous one valid until ${until.toISOString()})`,
      ],
      ["client.secret_overlap_ended", "success", `previous secret valid until: "${until.toISOString()}" -> "ended"`],
      ["client.secret_overlap_ended", "rejected", "clientId: the client has no previous secret that is still valid"],
    ]);
  });

  it("admits verified allowlisted emails, not unverified ones, and roles granted in the dashboard until revoked", async () => {
    expect(await performAdminChange(k, await signIn(googleUser("boss@example.com")), "key.rotate", {})).toMatchObject({ ok: true });
    expect(await performAdminChange(k, await signIn(googleUser("boss@example.com", false)), "key.rotate", {})).toMatchObject({
      status: 403,
    });

    const helper = privateKeyToAccount(generatePrivateKey()).address;
    const helperSession = await signIn(wallet(helper));
    expect(await performAdminChange(k, helperSession, "key.rotate", {})).toMatchObject({ status: 403 });
    expect(await performAdminChange(k, admin, "admin.grant", { accountId: helper })).toMatchObject({ ok: true });
    expect(await performAdminChange(k, helperSession, "key.rotate", {})).toMatchObject({ ok: true });
    expect(await performAdminChange(k, admin, "admin.revoke", { accountId: helper.toLowerCase() })).toMatchObject({ ok: true }); // any case
    const revokedEvent = await tables(k).auditEvent.findFirstOrThrow({ where: { action: "admin.revoked" }, orderBy: { id: "desc" } });
    expect(revokedEvent.accountId).toBe(helper);
    // Revoking the role ends its dashboard sessions: a new grant does not bring them back.
    expect(await performAdminChange(k, helperSession, "key.rotate", {})).toMatchObject({ status: 401 });
    expect(await performAdminChange(k, admin, "admin.grant", { accountId: helper })).toMatchObject({ ok: true });
    expect(await performAdminChange(k, helperSession, "key.rotate", {})).toMatchObject({ status: 401 });
    expect(await performAdminChange(k, await signIn(wallet(helper)), "key.rotate", {})).toMatchObject({ ok: true });
  });
});
