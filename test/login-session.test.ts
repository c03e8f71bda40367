/**
 * Login sessions with Keyfob (OpenID Connect Core 3.1.2.1): prompt=none, prompt=login, max_age,
 * id_token_hint, auth_time and amr, idle and absolute ends, and revocation seen by another
 * instance. Real route handlers and PostgreSQL; two Keyfob instances with their own pools.
 */
import { decodeJwt, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveAccount, type LoginIdentity } from "@/lib/accounts/accounts";
import { startAuthorization, type AuthorizationStart } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { loadConfig } from "@/lib/config";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { endSession, findSession, liveSessions, revokeSessions, startSession } from "@/lib/sessions/login-session";
import { authorizeQuery, google, registerApp, token, type App } from "./support/flow-b";
import { tables } from "./support/database";

let other: Keyfob;
beforeAll(() => {
  other = createKeyfob({ ...loadConfig(), recoveryThreads: 0 }); // another instance: its own pool
});
afterAll(() => other.close());

/** A fresh login on the hosted page: the code's redirect, and the new session's cookie token. */
async function login(app: App, identity: LoginIdentity = google(), extra: Record<string, string> = {}) {
  const start = await startAuthorization(keyfob(), authorizeQuery(app, extra));
  if (start.kind !== "login") throw new Error(`expected the login page, got ${start.kind}`);
  const { location, newSession } = await completeAuthorization(keyfob(), start.interactionId, { identity });
  return { code: new URL(location).searchParams.get("code")!, token: newSession!.token };
}

function params(start: AuthorizationStart) {
  if (start.kind !== "redirect") throw new Error(`expected a redirect, got ${start.kind}`);
  return new URL(start.location).searchParams;
}

async function idToken(app: App, code: string) {
  const body = await (await token(app, { code })).json();
  return decodeJwt(body.id_token);
}

describe("a login session", () => {
  it("lets prompt=none answer at once, with the login's auth_time and amr in the ID token", async () => {
    const app = await registerApp();
    const first = await login(app);
    const firstToken = await idToken(app, first.code);
    expect(firstToken.amr).toEqual(["google"]);
    expect(typeof firstToken.auth_time).toBe("number");

    const session = await findSession(keyfob(), first.token);
    const silent = params(await startAuthorization(keyfob(), authorizeQuery(app, { prompt: "none", state: "s" }), { session }));
    expect(silent.get("state")).toBe("s");
    const second = await idToken(app, silent.get("code")!);
    expect(second.sub).toBe(firstToken.sub);
    expect(second.auth_time).toBe(firstToken.auth_time); // the same login, not a new one
  });

  it("is known to every instance, and a revocation on one ends it on the other at the next request", async () => {
    const app = await registerApp();
    const { token: cookie } = await login(app);
    const onOther = await findSession(other, cookie);
    expect(onOther).toBeDefined();
    expect(params(await startAuthorization(other, authorizeQuery(app, { prompt: "none" }), { session: onOther })).get("code")).toBeTruthy();
    expect(await liveSessions(keyfob(), onOther!.accountId)).toHaveLength(1);
    expect(await revokeSessions(keyfob(), onOther!.accountId, onOther!.id)).toBe(1);
    expect(await findSession(other, cookie)).toBeUndefined();
    expect(
      params(await startAuthorization(other, authorizeQuery(app, { prompt: "none" }), { session: await findSession(other, cookie) })).get(
        "error",
      ),
    ).toBe("login_required");
  });

  it("ends after the idle time without use, at its absolute end, and on logout", async () => {
    const app = await registerApp();
    const idle = await login(app);
    const row = { idHash: (await findSession(keyfob(), idle.token))!.id };
    const now = Date.now();
    await tables(keyfob()).loginSession.update({
      where: row,
      data: { lastSeenAt: new Date(now - keyfob().config.sessionIdleTtl * 1000 - 1000) },
    });
    expect(await findSession(keyfob(), idle.token)).toBeUndefined();

    const old = await login(app);
    await tables(keyfob()).loginSession.update({
      where: { idHash: (await findSession(keyfob(), old.token))!.id },
      data: { expiresAt: new Date(now - 1) },
    });
    expect(await findSession(keyfob(), old.token)).toBeUndefined();

    const ended = await login(app);
    expect(await endSession(other, ended.token)).toBe(true);
    expect(await findSession(keyfob(), ended.token)).toBeUndefined();
    expect(await findSession(keyfob(), "not-a-token")).toBeUndefined();
  });
});

describe("requests that need a new login", () => {
  it("prompt=login: the session is not used, and cannot complete the interaction", async () => {
    const app = await registerApp();
    const session = await findSession(keyfob(), (await login(app)).token);
    const start = await startAuthorization(keyfob(), authorizeQuery(app, { prompt: "login" }), { session });
    if (start.kind !== "login") throw new Error("expected the login page");
    await expect(completeAuthorization(keyfob(), start.interactionId, { session: session! })).rejects.toMatchObject({
      code: "invalid_request",
    });
    // A fresh login completes it.
    expect((await completeAuthorization(keyfob(), start.interactionId, { identity: session!.identity })).location).toContain("code=");
  });

  it("max_age: a login older than it is not enough; auth_time says when the user logged in", async () => {
    const app = await registerApp();
    const { token: cookie } = await login(app);
    const session = await findSession(keyfob(), cookie);
    await tables(keyfob()).loginSession.update({ where: { idHash: session!.id }, data: { authTime: new Date(Date.now() - 20_000) } });
    const aged = await findSession(keyfob(), cookie);
    expect(
      params(await startAuthorization(keyfob(), authorizeQuery(app, { prompt: "none", max_age: "10" }), { session: aged })).get("error"),
    ).toBe("login_required");
    const allowed = params(
      await startAuthorization(keyfob(), authorizeQuery(app, { prompt: "none", max_age: "10000" }), { session: aged }),
    );
    const claims = await idToken(app, allowed.get("code")!);
    expect(claims.auth_time).toBe(Math.floor(aged!.authTime.getTime() / 1000));
    expect(params(await startAuthorization(keyfob(), authorizeQuery(app, { max_age: "soon" }), { session: aged })).get("error")).toBe(
      "invalid_request",
    );
  });

  it("id_token_hint: the session must be of the hinted account; expired hints count; forged ones are refused", async () => {
    const app = await registerApp();
    const alice = google();
    const { code, token: cookie } = await login(app, alice);
    const hint = (await (await token(app, { code })).json()).id_token as string;
    const session = await findSession(keyfob(), cookie);
    expect(
      params(await startAuthorization(keyfob(), authorizeQuery(app, { prompt: "none", id_token_hint: hint }), { session })).get("code"),
    ).toBeTruthy();

    const bob = google();
    const { session: bobSession } = await startSession(keyfob(), { accountId: await resolveAccount(keyfob(), bob), identity: bob });
    expect(
      params(await startAuthorization(keyfob(), authorizeQuery(app, { prompt: "none", id_token_hint: hint }), { session: bobSession })).get(
        "error",
      ),
    ).toBe("login_required");

    const { kid, privateKey } = await keyfob().keys.signingKey();
    const claims = decodeJwt(hint);
    const expired = await new SignJWT({ ...claims, iat: 1_000, exp: 2_000 }).setProtectedHeader({ alg: "RS256", kid }).sign(privateKey);
    expect(
      params(await startAuthorization(keyfob(), authorizeQuery(app, { prompt: "none", id_token_hint: expired }), { session })).get("code"),
    ).toBeTruthy();

    const forged = `${hint.slice(0, -6)}AAAAAA`;
    expect(
      params(await startAuthorization(keyfob(), authorizeQuery(app, { prompt: "none", id_token_hint: forged }), { session })).get("error"),
    ).toBe("invalid_request");
    const otherApp = await registerApp();
    expect(
      params(await startAuthorization(keyfob(), authorizeQuery(otherApp, { prompt: "none", id_token_hint: hint }), { session })).get(
        "error",
      ),
    ).toBe("invalid_request");
  });
});
