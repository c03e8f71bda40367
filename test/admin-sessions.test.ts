/**
 * Dashboard sessions are rows in PostgreSQL, tied to the login session they were signed in with,
 * and checked on every request: blocking, deleting, revoking the login session, logging out,
 * taking the admin role away and "sign out everywhere" end them at once on another instance. The
 * dashboard takes only a fresh login. Two instances (Keyfobs with pools of their own) on one
 * database, signed in through the real code flow of the admin client.
 */
import { SignJWT } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionCookie } from "@/app/admin/_lib/cookies";
import type { LoginIdentity } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { AdminAccessError, requireAdmin } from "@/lib/admin/access";
import { performAdminChange } from "@/lib/admin/changes";
import { beginAdminLogin, endAdminSessions, finishAdminLogin, readAdminSession } from "@/lib/admin/session";
import { loadConfig } from "@/lib/config";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { deriveKey } from "@/lib/keys/derive";
import { endSession, sessionCookieName, startSession } from "@/lib/sessions/login-session";
import { tables } from "./support/database";

const bootstrap = privateKeyToAccount(generatePrivateKey()).address;
let a: Keyfob;
let b: Keyfob;

beforeAll(() => {
  const config = { ...loadConfig({ ...process.env, ADMIN_ADDRESSES: bootstrap }), recoveryThreads: 0 };
  a = createKeyfob(config);
  b = createKeyfob(config);
});
afterAll(async () => {
  await a.close();
  await b.close();
});

const wallet = (address: string = privateKeyToAccount(generatePrivateKey()).address): LoginIdentity => ({
  provider: "web3",
  subject: address,
  emailVerified: false,
});

/** Signs in on `k` through the admin client's code flow; the dashboard session's token and the login session's. */
async function signIn(k: Keyfob, identity: LoginIdentity) {
  const { location, cookie } = await beginAdminLogin(k);
  const start = await startAuthorization(k, new URL(location).searchParams);
  if (start.kind !== "login") throw new Error(`admin login did not reach the login page: ${JSON.stringify(start)}`);
  const completion = await completeAuthorization(k, start.interactionId, { identity });
  const token = await finishAdminLogin(k, cookie, new URL(completion.location).searchParams);
  if (!token) throw new Error("no session");
  return { token, loginSession: completion.newSession!.token };
}

/** A new account with the admin role, signed in on instance A. */
async function grantedAdmin() {
  const identity = wallet();
  await tables(a).adminRole.create({ data: { accountId: identity.subject, grantedBy: "test" } });
  return { accountId: identity.subject, ...(await signIn(a, identity)) };
}

const signedOut = async (k: Keyfob, token: string) => {
  const refusal = await requireAdmin(k, token).then(
    () => undefined,
    (error: unknown) => error,
  );
  return refusal instanceof AdminAccessError && refusal.reason === "signed-out";
};

describe("a dashboard session ends on every instance", () => {
  let boss: string;
  beforeAll(async () => {
    boss = (await signIn(b, wallet(bootstrap))).token;
  });

  it("when its account is blocked: the blocked admin can no longer grant anyone the role", async () => {
    const admin = await grantedAdmin();
    expect((await requireAdmin(a, admin.token)).accountId).toBe(admin.accountId);
    expect(await performAdminChange(b, boss, "account.block", { accountId: admin.accountId })).toMatchObject({ ok: true });

    const accomplice = privateKeyToAccount(generatePrivateKey()).address;
    expect(await performAdminChange(a, admin.token, "admin.grant", { accountId: accomplice })).toMatchObject({ ok: false, status: 401 });
    expect(await tables(a).adminRole.findUnique({ where: { accountId: accomplice } })).toBeNull();
    expect(await tables(a).auditEvent.count({ where: { action: "admin.granted", actor: admin.accountId } })).toBe(0);
    // Unblocking lets them sign in again, but the old session stays ended.
    expect(await performAdminChange(b, boss, "account.unblock", { accountId: admin.accountId })).toMatchObject({ ok: true });
    expect(await signedOut(a, admin.token)).toBe(true);
  });

  it("when a bootstrap admin (ADMIN_ADDRESSES) is blocked, without a restart, and they cannot sign in again", async () => {
    const own = await signIn(a, wallet(bootstrap));
    const other = await grantedAdmin();
    expect(await performAdminChange(a, other.token, "account.block", { accountId: bootstrap })).toMatchObject({ ok: true });
    expect(await signedOut(b, own.token)).toBe(true);
    expect(await signedOut(b, boss)).toBe(true);
    await expect(signIn(b, wallet(bootstrap))).rejects.toMatchObject({ code: "access_denied" });
    expect(await performAdminChange(a, other.token, "account.unblock", { accountId: bootstrap })).toMatchObject({ ok: true });
    boss = (await signIn(b, wallet(bootstrap))).token;
  });

  it("when its account is deleted", async () => {
    const admin = await grantedAdmin();
    expect(await performAdminChange(b, boss, "account.delete", { accountId: admin.accountId })).toMatchObject({ ok: true });
    expect(await signedOut(a, admin.token)).toBe(true);
    expect(await tables(b).adminSession.count({ where: { accountId: admin.accountId } })).toBe(0);
  });

  it("when its login session is revoked by an admin, or ended by logout", async () => {
    const revoked = await grantedAdmin();
    expect(await performAdminChange(b, boss, "session.revoke", { accountId: revoked.accountId })).toMatchObject({ ok: true });
    expect(await signedOut(a, revoked.token)).toBe(true);

    const loggedOut = await grantedAdmin();
    expect(await endSession(b, loggedOut.loginSession)).toBe(true);
    expect(await signedOut(a, loggedOut.token)).toBe(true);
  });

  it("when its admin role is taken away", async () => {
    const admin = await grantedAdmin();
    expect(await performAdminChange(b, boss, "admin.revoke", { accountId: admin.accountId })).toMatchObject({ ok: true });
    expect(await signedOut(a, admin.token)).toBe(true);
  });

  it("at sign-out, and at sign-out everywhere for every session of that admin only", async () => {
    const admin = await grantedAdmin();
    const second = await signIn(b, wallet(admin.accountId));
    const third = await signIn(b, wallet(admin.accountId));
    const bystander = await grantedAdmin();

    expect(await endAdminSessions(a, admin.token, "this")).toBe(1);
    expect(await signedOut(b, admin.token)).toBe(true);
    expect((await requireAdmin(a, second.token)).accountId).toBe(admin.accountId);

    expect(await endAdminSessions(a, second.token, "everywhere")).toBe(2);
    expect(await signedOut(b, second.token)).toBe(true);
    expect(await signedOut(b, third.token)).toBe(true);
    expect((await requireAdmin(b, bystander.token)).accountId).toBe(bystander.accountId);
  });
});

describe("what a dashboard session is", () => {
  it("a row: a token that is not one, or a cookie in the old signed format, signs nobody in", async () => {
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(bootstrap)
      .setAudience("keyfob_admin")
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(deriveKey(process.env.KEYFOB_SECRET!, "admin-try-result"));
    for (const token of [forged, "x".repeat(43), undefined]) expect(await readAdminSession(a, token)).toBeUndefined();
  });

  it("made from a fresh login only: an older session cannot be reused, even by a request without max_age", async () => {
    const identity = wallet(bootstrap);
    const { session } = await startSession(a, { accountId: bootstrap, identity }, new Date(Date.now() - 3600_000));
    const { location, cookie } = await beginAdminLogin(a);
    const asked = new URL(location).searchParams;
    const silent = await startAuthorization(a, new URLSearchParams({ ...Object.fromEntries(asked), prompt: "none" }), { session });
    expect(silent.kind === "redirect" && new URL(silent.location).searchParams.get("error")).toBe("login_required");

    asked.delete("max_age");
    const crafted = await startAuthorization(a, new URLSearchParams({ ...Object.fromEntries(asked), prompt: "none" }), { session });
    if (crafted.kind !== "redirect") throw new Error("expected a redirect with a code");
    await expect(finishAdminLogin(a, cookie, new URL(crafted.location).searchParams)).rejects.toMatchObject({
      code: "invalid_grant",
      message: "the dashboard needs a new login",
    });
  });

  it("held in a __Host- cookie (Secure, Path=/) when the issuer is https", () => {
    const https = createKeyfob(loadConfig({ ...process.env, ISSUER_URL: "https://auth.example.com" }), a.store);
    const [name, options] = sessionCookie(https);
    expect(name).toBe("__Host-keyfob_admin");
    expect(options).toMatchObject({ secure: true, path: "/", httpOnly: true });
    expect(sessionCookieName(https.config)).toBe("__Host-keyfob_session");
    expect(sessionCookie(a)[0]).toBe("keyfob_admin"); // http on localhost: browsers refuse __Host- without Secure
  });
});
