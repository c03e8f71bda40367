/**
 * Emergency revocation of a signing key, on a real PostgreSQL of its own shared by two Keyfob
 * instances (each with its own pool and key cache, as two servers behind a balancer), plus the
 * admin CLI as a separate process. A revoked key leaves every instance's JWKS within a second
 * (NOTIFY), never signs again, and every token it signed is refused at /userinfo and introspection
 * from the next request, even by an instance whose cache still holds the key.
 */
import { randomBytes } from "node:crypto";
import { ALL_SCOPES } from "@/lib/admin/access";
import { decodeProtectedHeader } from "jose";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoginIdentity } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { performAdminChange } from "@/lib/admin/changes";
import { keyHistory, revokeSigningKey } from "@/lib/admin/operations";
import { beginAdminLogin, finishAdminLogin } from "@/lib/admin/session";
import { addRedirectUri, createClient, rotateClientSecret, updateClient } from "@/lib/clients/registry";
import { loadConfig, type Config } from "@/lib/config";
import { createStore, type Store } from "@/lib/store";
import { migrateDatabase } from "@/lib/db/migrate";
import { routesOn } from "./support/routes";
import { jwksAnswer } from "@/lib/http/metadata";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { deriveEncryptionKey } from "@/lib/keys/encryption";
import { KeyStore, type KeyPolicy } from "@/lib/keys/keystore";
import { issueTokens, newAccessTokenId } from "@/lib/tokens/issue";
import { verifyAccessToken } from "@/lib/tokens/verify";
import { cliOn, within } from "./support/cli";
import { tables, emptyDatabase } from "./support/database";

const ISSUER = "http://localhost:3000";
const adminWallet = privateKeyToAccount(generatePrivateKey()).address;
let config: Config;
/** The admin CLI on this file's database. */
const cli = (...args: string[]) => cliOn(config.databaseUrl!)(...args);
let a: Keyfob;
let b: Keyfob;
/** Instance B's storage with a key cache that does not listen: it keeps serving a revoked key until its periodic reload. */
let deaf: Keyfob;
let admin: string;
let license: { clientId: string; domain: string; owner: PrivateKeyAccount };
let resourceServer: string; // Basic credentials of a confidential client, for introspection

/** A copy of the migrated database `url` (a PostgreSQL template: no second `prisma migrate deploy`). */
async function copyDatabase(url: string, name: string): Promise<string> {
  const server = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await server.connect();
  try {
    await server.query(`DROP DATABASE IF EXISTS ${name}`);
    await server.query(`CREATE DATABASE ${name} TEMPLATE ${new URL(url).pathname.slice(1)}`);
  } finally {
    await server.end();
  }
  const copy = new URL(url);
  copy.pathname = `/${name}`;
  return copy.toString();
}
let clockDatabaseUrl: string;

beforeAll(async () => {
  const url = await emptyDatabase("key_revocation_test");
  await migrateDatabase(url);
  clockDatabaseUrl = await copyDatabase(url, "key_revocation_clock_test"); // before anything connects to it
  config = { ...loadConfig({ ...process.env, ADMIN_ADDRESSES: adminWallet.toLowerCase() }), databaseUrl: url, recoveryThreads: 0 };
  a = createKeyfob(config); // its own pool
  b = createKeyfob(config); // another pool, another key cache: a second instance
  const policy = { rotationPeriod: config.keyRotationPeriod, publishLead: config.keyPublishLead, tokenTtl: config.accessTokenTtl };
  deaf = { ...b, keys: new KeyStore(b.store, b.encryptionKey, policy, () => b.clock.now(), 60_000) };
  await a.keys.refresh();
  await Promise.all([b.keys.refresh(), deaf.keys.refresh()]);

  const owner = privateKeyToAccount(generatePrivateKey());
  license = { clientId: owner.address, domain: "https://fleet.example.com/callback", owner };
  await createClient(a.store, { id: owner.address, name: "Fleet" });
  await addRedirectUri(a.store, owner.address, license.domain);
  const rs = await createClient(a.store, { name: "Resource server" });
  await updateClient(a.store, rs.id, { resourceServer: true });
  resourceServer = `Basic ${Buffer.from(`${rs.id}:${await rotateClientSecret(a, rs.id)}`).toString("base64")}`;
  admin = await signIn(wallet(adminWallet));
});

afterAll(async () => {
  for (const k of [a, b, deaf]) await k?.keys.close();
  await a?.close();
  await b?.close();
});

// The protocol endpoints of one instance, as route handlers bound to it.
const route = {
  challenge: (k: Keyfob) => routesOn(k).generateChallenge,
  submit: (k: Keyfob) => routesOn(k).submitChallenge,
  userinfo: (k: Keyfob) => routesOn(k).userinfo,
  introspect: (k: Keyfob) => routesOn(k).introspect,
};
const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  new Request(`${ISSUER}${path}`, {
    method: "POST",
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  });

/** Flow A on instance `k` (the license signing for itself): the access token. */
async function issue(k: Keyfob): Promise<string> {
  const params = {
    client_id: license.clientId,
    domain: license.domain,
    scope: "openid email",
    response_type: "code",
    address: license.clientId,
  };
  const challenge = await route.challenge(k)(form("/auth/web3/generate_challenge", params));
  expect(challenge.status).toBe(200);
  const { state, challenge: message } = await challenge.json();
  const signature = await license.owner.signMessage({ message });
  const submitted = await route.submit(k)(
    form("/auth/web3/submit_challenge", {
      client_id: license.clientId,
      state,
      grant_type: "authorization_code",
      domain: license.domain,
      signature,
    }),
  );
  expect(submitted.status).toBe(200);
  return (await submitted.json()).access_token;
}

/** What instance `k` says of a token: /userinfo's status and introspection's `active`. */
async function check(k: Keyfob, token: string) {
  const info = await route.userinfo(k)(new Request(`${ISSUER}/userinfo`, { headers: { authorization: `Bearer ${token}` } }));
  const introspected = await route.introspect(k)(form("/token/introspect", { token }, { authorization: resourceServer }));
  expect(introspected.status).toBe(200);
  return { userinfo: info.status, active: (await introspected.json()).active as boolean };
}
const accepted = { userinfo: 200, active: true };
const refused = { userinfo: 401, active: false };

/** The kids instance `k` publishes at /keys. */
async function published(k: Keyfob): Promise<string[]> {
  return (JSON.parse(String((await jwksAnswer(k.keys)).body)).keys as { kid: string }[]).map((key) => key.kid);
}
const kidOf = (token: string) => decodeProtectedHeader(token).kid;
const signingKid = async (k: Keyfob) => (await k.keys.signingKey()).kid;

async function signIn(identity: LoginIdentity): Promise<string> {
  const { location, cookie } = await beginAdminLogin(a);
  const start = await startAuthorization(a, new URL(location).searchParams);
  if (start.kind !== "login") throw new Error(`admin login did not reach the login page: ${JSON.stringify(start)}`);
  const callback = new URL((await completeAuthorization(a, start.interactionId, { identity })).location);
  const session = await finishAdminLogin(a, cookie, callback.searchParams);
  if (!session) throw new Error("no session");
  return session;
}
const wallet = (address: string): LoginIdentity => ({ provider: "web3", subject: address, emailVerified: false });

describe("emergency key revocation across instances", () => {
  let compromised: string; // the first key, revoked while current
  let replacement: string; // the key created on the spot to sign instead
  let upcoming: string; // published by a normal rotation before the revocation

  it("revoking the current key on A: B drops it at once (not at its minutely reload), both sign with a new key, and its tokens are refused everywhere", async () => {
    compromised = await signingKid(a);
    expect(await signingKid(b)).toBe(compromised);
    const before = [await issue(a), await issue(b)];
    expect(before.map(kidOf)).toEqual([compromised, compromised]);
    for (const k of [a, b, deaf]) for (const token of before) expect(await check(k, token)).toEqual(accepted);
    await a.keys.rotateNow(); // an upcoming key, which B does not know yet (it reloads every minute)
    upcoming = (await a.keys.schedule()).find((key) => key.status === "upcoming")!.kid;
    expect(await published(b)).toEqual([compromised]);

    // B's /keys is watched from the moment A starts (A's revocation includes generating an RSA key).
    const started = performance.now();
    const watching = within(10_000, async () => !(await published(b)).includes(compromised));
    const result = await performAdminChange(a, admin, "key.revoke", { kid: ` ${compromised} ` });
    const returned = performance.now() - started;
    expect(result).toMatchObject({ ok: true, value: { kid: compromised, revoked: true, was: "current", successor: expect.any(String) } });
    replacement = result.ok ? String(result.value.successor) : "";

    // B hears of it (NOTIFY): the key leaves its JWKS in far less than its one-minute reload (5 s
    // leaves room for a busy machine); it learns the new keys too.
    const dropped = await watching;
    console.log(`revocation on A returned after ${returned.toFixed(0)} ms; B's /keys dropped the key after ${dropped.toFixed(0)} ms`);
    expect(dropped - returned).toBeLessThan(5_000);
    expect((await published(b)).sort()).toEqual([replacement, upcoming].sort());
    expect(await published(a)).toEqual(await published(b));
    expect(await signingKid(a)).toBe(replacement);
    expect(await signingKid(b)).toBe(replacement);

    // Its tokens are refused from the next request on both, and by an instance still caching the key.
    expect(await published(deaf)).toContain(compromised);
    for (const k of [a, b, deaf]) for (const token of before) expect(await check(k, token)).toEqual(refused);
    await expect(verifyAccessToken(deaf, before[0])).rejects.toThrow("the key that signed the access token has been revoked");

    // Tokens of the new key work everywhere, also on the instance that has not heard of it yet.
    const after = [await issue(a), await issue(b)];
    expect(after.map(kidOf)).toEqual([replacement, replacement]);
    for (const k of [a, b, deaf]) for (const token of after) expect(await check(k, token)).toEqual(accepted);

    // Recorded, with its private half erased, and audited with the kid.
    const row = await tables(a).signingKey.findUniqueOrThrow({ where: { kid: compromised } });
    expect(row).toMatchObject({ revokedAt: expect.any(Date), revokedBy: adminWallet, privateJwe: "" });
    const event = await tables(a).auditEvent.findFirstOrThrow({ where: { action: "key.revoked" }, orderBy: { id: "desc" } });
    expect(event).toMatchObject({ actor: adminWallet, outcome: "success" });
    expect(event.detail).toContain(compromised);
  });

  it("revoking an upcoming key from the CLI: both instances drop it, signing does not change, and no rotation brings it back", async () => {
    const survivor = await issue(b); // signed by the replacement
    const [revoked, unknown] = await Promise.all([cli("keys", "revoke", upcoming), cli("keys", "revoke", "f".repeat(40))]);
    expect(revoked).toMatchObject({ code: 0, stderr: "" });
    expect(revoked.stdout).toContain(`signing key ${upcoming} (upcoming) revoked`);
    expect(unknown).toMatchObject({ code: 2, stdout: "" }); // not found
    expect(unknown.stderr.trim()).toBe(`error: kid: no signing key has the kid ${"f".repeat(40)}`);

    await within(5_000, async () => !(await published(a)).includes(upcoming) && !(await published(b)).includes(upcoming));
    expect(await signingKid(a)).toBe(replacement);
    expect(await signingKid(b)).toBe(replacement);
    expect(await check(a, survivor)).toEqual(accepted);

    // A new rotation publishes a new successor; neither revoked key ever comes back.
    await b.keys.rotateNow();
    await a.keys.refresh();
    const schedule = await a.keys.schedule();
    expect(schedule.map((key) => key.status).sort()).toEqual(["current", "upcoming"]);
    const successor = schedule.find((key) => key.status === "upcoming")!.kid;
    expect([compromised, upcoming]).not.toContain(successor);
    for (const k of [a, b]) expect(await published(k)).not.toContain(compromised);
    expect(await published(b)).not.toContain(upcoming);

    const listed = await cli("keys", "list");
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(listed.stdout).toMatch(
      new RegExp(
        `^${successor}  access   RS256  upcoming  signs from \\S+\\n${replacement}  access   RS256  current   signs from \\S+\\n[0-9a-f]{40}  vehicle  RS256  current   signs from \\S+\\n$`,
      ),
    );
    const event = await tables(a).auditEvent.findFirstOrThrow({ where: { action: "key.revoked", detail: { startsWith: upcoming } } });
    expect(event.actor).toMatch(/^cli:/);
  });

  it("refuses an unknown kid with a field error; revoking a revoked key again changes nothing and says so", async () => {
    const keysBefore = await tables(a).signingKey.findMany({ orderBy: { kid: "asc" } });
    expect(await performAdminChange(a, admin, "key.revoke", { kid: "0".repeat(40) })).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { kid: `no signing key has the kid ${"0".repeat(40)}` },
    });
    expect(await performAdminChange(a, admin, "key.revoke", { kid: " " })).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { kid: "required" },
    });
    const again = await performAdminChange(b, admin, "key.revoke", { kid: compromised });
    expect(again).toMatchObject({
      ok: true,
      value: { kid: compromised, revoked: false, message: expect.stringMatching(/already revoked on .* by .*; nothing changed/) },
    });
    expect(await tables(a).signingKey.findMany({ orderBy: { kid: "asc" } })).toEqual(keysBefore);
    expect(await signingKid(b)).toBe(replacement);

    const events = await tables(a).auditEvent.findMany({ where: { action: "key.revoked", actor: adminWallet }, orderBy: { id: "asc" } });
    expect(events.slice(-3).map((e) => [e.outcome, e.detail])).toEqual([
      ["rejected", `${"0".repeat(40)}; kid: no signing key has the kid ${"0".repeat(40)}`],
      ["rejected", "invalid input: kid: required"],
      ["success", `${compromised} (already revoked); no change`],
    ]);
  });

  it("refuses signed-out callers and non-admins before anything changes; the same request from an admin revokes", async () => {
    const nonAdmin = await signIn(wallet(privateKeyToAccount(generatePrivateKey()).address));
    // Only the non-admin's attempt is audited (who tried, refused as forbidden); nothing succeeds.
    const audited = () => tables(a).auditEvent.count({ where: { action: "key.revoked", outcome: { not: "forbidden" } } });
    const forbidden = () => tables(a).auditEvent.count({ where: { action: "key.revoked", outcome: "forbidden" } });
    const forbiddenBefore = await forbidden();
    const eventsBefore = await audited();
    expect(await performAdminChange(a, undefined, "key.revoke", { kid: replacement })).toMatchObject({ ok: false, status: 401 });
    expect(await performAdminChange(a, "forged.session.token", "key.revoke", { kid: replacement })).toMatchObject({
      ok: false,
      status: 401,
    });
    expect(await performAdminChange(b, nonAdmin, "key.revoke", { kid: replacement })).toMatchObject({ ok: false, status: 403 });
    expect(await tables(a).signingKey.findUniqueOrThrow({ where: { kid: replacement } })).toMatchObject({
      revokedAt: null,
      revokedBy: null,
    });
    expect(await audited()).toBe(eventsBefore);
    expect(await forbidden()).toBe(forbiddenBefore + 1);
    expect(await published(b)).toContain(replacement);
    expect(await signingKid(b)).toBe(replacement);

    expect(await performAdminChange(b, admin, "key.revoke", { kid: replacement })).toMatchObject({
      ok: true,
      value: { revoked: true, was: "current" },
    });
    expect(await tables(a).signingKey.findUniqueOrThrow({ where: { kid: replacement } })).toMatchObject({
      revokedAt: expect.any(Date),
      revokedBy: adminWallet,
    });
    expect(await signingKid(b)).not.toBe(replacement);
    await within(5_000, async () => !(await published(a)).includes(replacement));
  });
});

describe("emergency key revocation and the rotation schedule (controlled clock)", () => {
  const HOUR = 3600_000;
  const policy: KeyPolicy = { rotationPeriod: 24 * 3600, publishLead: 2 * 3600, tokenTtl: 6 * 3600 };
  let now = new Date("2030-01-01T00:00:00Z");
  const advance = (hours: number) => (now = new Date(now.getTime() + hours * HOUR));
  let k: Keyfob;
  let storage: Store;

  beforeAll(async () => {
    const url = clockDatabaseUrl;
    storage = createStore(url, 2);
    const encryptionKey = deriveEncryptionKey(randomBytes(32).toString("base64url"));
    const keys = new KeyStore(storage, encryptionKey, policy, () => now);
    k = { ...a, store: storage, encryptionKey, keys, config: { ...config, databaseUrl: url } };
    await tables({ store: storage }).client.create({ data: { id: "c", name: "Clock" } });
  });
  afterAll(async () => {
    await k?.keys.close();
    await storage?.close();
  });

  /** A token signed now by the store's signing key, recorded as issued. */
  async function token(): Promise<string> {
    const user = "0x98D78d711C0ec544F6fb5d54fcf6559CF41546a9";
    const { response, jti, expiresAt } = await issueTokens(
      k.keys,
      config.issuerUrl,
      { accessToken: policy.tokenTtl, idToken: policy.tokenTtl },
      {
        clientId: "c",
        userId: user,
        connector: "web3",
        scope: ["openid"],
        ethereumAddress: user,
        emailVerified: false,
      },
      newAccessTokenId({ accessToken: policy.tokenTtl, idToken: policy.tokenTtl }, Date.now()),
    );
    await tables(k).issuedToken.create({ data: { jti, clientId: "c", userId: user, connector: "web3", scope: "openid", expiresAt } });
    return response.access_token;
  }

  it("a revoked upcoming key's activation time goes to a new successor; revoking a retired key leaves signing alone", async () => {
    await k.keys.refresh();
    const first = await signingKid(k);
    advance(22);
    await k.keys.refresh();
    const next = (await k.keys.schedule()).find((key) => key.status === "upcoming")!;

    // Dropped before it signs: the schedule publishes a new successor for the same time at once.
    expect(await k.keys.revoke(next.kid, "test")).toEqual({ outcome: "revoked", revokedAt: now, was: "upcoming", successor: undefined });
    const successor = (await k.keys.schedule()).find((key) => key.status === "upcoming")!;
    expect(successor.kid).not.toBe(next.kid);
    expect(successor.activatesAt).toEqual(next.activatesAt);

    const old = await token();
    advance(2); // the successor signs; the first key is retired
    const current = await token();
    expect([kidOf(old), kidOf(current)]).toEqual([first, successor.kid]);
    expect(await k.keys.revoke(first, "test")).toMatchObject({ outcome: "revoked", was: "retired", successor: undefined });
    expect(await signingKid(k)).toBe(successor.kid);
    expect((await k.keys.schedule()).map((key) => key.kid)).toEqual([successor.kid]);
    await expect(verifyAccessToken(k, old)).rejects.toThrow(/invalid or has expired|revoked/);
    await expect(verifyAccessToken(k, current)).resolves.toMatchObject({ clientId: "c" });

    // Long after, through rotations and the clean-up of retired keys, revoked keys stay revoked.
    for (let i = 0; i < 4; i++) {
      advance(24);
      await k.keys.refresh();
      expect(await signingKid(k)).not.toBe(first);
    }
    const rows = await tables(k).signingKey.findMany({ where: { kid: { in: [first, next.kid] } } });
    expect(rows.map((row) => [row.revokedBy, row.privateJwe])).toEqual([
      ["test", ""],
      ["test", ""],
    ]);
    expect((await k.keys.publicKeys()).map((key) => key.kid)).not.toContain(first);
    expect((await k.keys.publicKeys()).map((key) => key.kid)).not.toContain(next.kid);

    // Retired keys whose tokens have all expired are unpublished, not deleted: the history lists
    // them with the revoked ones, newest first, and none can be revoked or loaded again.
    const operator = { accountId: "test", label: "test", scopes: ALL_SCOPES };
    const history = await keyHistory(k, operator);
    expect(history.map((key) => key.kid)).toEqual(expect.arrayContaining([first, next.kid, successor.kid]));
    expect(history.map((key) => key.activatesAt.getTime())).toEqual(history.map((key) => key.activatesAt.getTime()).sort((x, y) => y - x));
    const unpublished = history.find((key) => key.kid === successor.kid)!;
    expect(unpublished).toMatchObject({ revokedAt: null, unpublishedAt: expect.any(Date) });
    expect(history.find((key) => key.kid === first)).toMatchObject({ revokedBy: "test" });
    expect(Object.keys(unpublished)).not.toContain("privateJwe");
    await expect(revokeSigningKey(k, operator, successor.kid)).rejects.toThrow(/retired and left the JWKS .* nothing to revoke/);
    const schedule = (await k.keys.schedule()).map((key) => key.kid);
    for (const key of history) expect(schedule).not.toContain(key.kid);
  });
});
