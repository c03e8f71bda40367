/**
 * RP-Initiated Logout 1.0 decisions (lib/actions/end-session.ts), with the cases of the OpenID
 * Foundation's RP-Initiated Logout plan: a valid id_token_hint logs out at once and returns to a
 * registered post_logout_redirect_uri with the state; anything else asks first and never returns.
 */
import { decodeJwt, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { decideEndSession } from "@/lib/actions/end-session";
import { addPostLogoutRedirectUri } from "@/lib/clients/registry";
import { keyfob } from "@/lib/runtime";
import { findSession, type LoginSession } from "@/lib/sessions/login-session";
import { signLogoutToken } from "@/lib/tokens/logout-token";
import { decodeSubject } from "@/lib/tokens/sub";
import { ISSUER } from "./support/flow-a";
import { authorizeQuery, google, registerApp, token, type App } from "./support/flow-b";

const params = (values: Record<string, string>) => ({ get: (name: string) => values[name] || undefined });

/** A login to `app`: its ID token (the hint) and the browser's session. */
async function loggedIn(app: App): Promise<{ hint: string; session: LoginSession }> {
  const start = await startAuthorization(keyfob(), authorizeQuery(app));
  if (start.kind !== "login") throw new Error("expected the login page");
  const { location, newSession } = await completeAuthorization(keyfob(), start.interactionId, { identity: google() });
  const body = await (await token(app, { code: new URL(location).searchParams.get("code")! })).json();
  return { hint: body.id_token, session: (await findSession(keyfob(), newSession!.token))! };
}

async function appWithLogoutUri() {
  const app = await registerApp();
  const bye = "https://fleet.example.com/signed-out?from=keyfob";
  await addPostLogoutRedirectUri(keyfob().store, app.clientId, bye);
  return { app, bye };
}

describe("end_session_endpoint", () => {
  it("logs out at once with a valid id_token_hint, back to the registered URI with the state", async () => {
    const { app, bye } = await appWithLogoutUri();
    const { hint, session } = await loggedIn(app);
    const decision = await decideEndSession(
      keyfob(),
      params({ id_token_hint: hint, post_logout_redirect_uri: bye, state: "s-1" }),
      session,
      false,
    );
    expect(decision).toEqual({ kind: "logout", location: `${bye}&state=s-1` });
    // No state: none added. No redirect URI: Keyfob's own page. No session left: still fine.
    expect(await decideEndSession(keyfob(), params({ id_token_hint: hint, post_logout_redirect_uri: bye }), session, false)).toEqual({
      kind: "logout",
      location: bye,
    });
    expect(await decideEndSession(keyfob(), params({ id_token_hint: hint }), session, false)).toEqual({
      kind: "logout",
      location: undefined,
    });
    expect(
      await decideEndSession(keyfob(), params({ id_token_hint: hint, post_logout_redirect_uri: bye }), undefined, false),
    ).toMatchObject({ kind: "logout" });
  });

  it("accepts an expired id_token_hint", async () => {
    const { app, bye } = await appWithLogoutUri();
    const { hint, session } = await loggedIn(app);
    const { kid, privateKey } = await keyfob().keys.signingKey();
    const expired = await new SignJWT({ ...decodeJwt(hint), iat: 1_000, exp: 2_000 })
      .setProtectedHeader({ alg: "RS256", kid })
      .sign(privateKey);
    expect(await decideEndSession(keyfob(), params({ id_token_hint: expired, post_logout_redirect_uri: bye }), session, false)).toEqual({
      kind: "logout",
      location: bye,
    });
  });

  it("refuses, without redirecting, a modified or foreign hint, another client_id, and an unregistered URI", async () => {
    const { app, bye } = await appWithLogoutUri();
    const { hint, session } = await loggedIn(app);
    const [header, payload] = hint.split(".");
    const unsigned = `${Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url")}.${payload}.`;
    for (const bad of [unsigned, `${header}.${payload}.AAAA`, "garbage"]) {
      expect(await decideEndSession(keyfob(), params({ id_token_hint: bad, post_logout_redirect_uri: bye }), session, false)).toMatchObject(
        { kind: "error" },
      );
    }
    const other = await registerApp();
    expect(await decideEndSession(keyfob(), params({ id_token_hint: hint, client_id: other.clientId }), session, false)).toMatchObject({
      kind: "error",
    });
    for (const uri of [`${bye}&foo=bar`, "https://evil.example.com/"]) {
      expect(
        await decideEndSession(keyfob(), params({ id_token_hint: hint, post_logout_redirect_uri: uri }), session, false),
      ).toMatchObject({ kind: "error" });
    }
  });

  it("refuses as a hint any Keyfob-signed JWT that is not an ID token: a logout token, an access token", async () => {
    // Security review, third round, item 10: the keys that sign ID tokens sign these too.
    const { app, bye } = await appWithLogoutUri();
    const start = await startAuthorization(keyfob(), authorizeQuery(app));
    if (start.kind !== "login") throw new Error("expected the login page");
    const { location, newSession } = await completeAuthorization(keyfob(), start.interactionId, { identity: google() });
    const tokens = await (await token(app, { code: new URL(location).searchParams.get("code")! })).json();
    const session = (await findSession(keyfob(), newSession!.token))!;
    const subject = decodeSubject(decodeJwt(tokens.id_token).sub!);
    const logoutToken = await signLogoutToken(keyfob().keys, ISSUER, { clientId: app.clientId, subject, sid: "sid-1" }, new Date());
    const { kid, privateKey } = await keyfob().keys.signingKey();
    // An ID token's claims under a logout token's type.
    const retyped = await new SignJWT(decodeJwt(tokens.id_token))
      .setProtectedHeader({ alg: "RS256", kid, typ: "logout+jwt" })
      .sign(privateKey);
    for (const [what, hint] of [
      ["logout token", logoutToken],
      ["access token", tokens.access_token],
      ["ID token claims typed logout+jwt", retyped],
    ]) {
      expect(
        await decideEndSession(keyfob(), params({ id_token_hint: hint, post_logout_redirect_uri: bye }), session, false),
        what,
      ).toMatchObject({
        kind: "error",
      });
    }
    expect(
      await decideEndSession(keyfob(), params({ id_token_hint: tokens.id_token, post_logout_redirect_uri: bye }), session, false),
    ).toEqual({
      kind: "logout",
      location: bye,
    });
  });

  it("asks first, and never returns to the application, without a hint or for another account's session", async () => {
    const { app, bye } = await appWithLogoutUri();
    const { session } = await loggedIn(app);
    const noHint = params({ client_id: app.clientId, post_logout_redirect_uri: bye, state: "s" });
    expect(await decideEndSession(keyfob(), noHint, session, false)).toEqual({ kind: "confirm", clientName: "Fleet dashboard" });
    expect(await decideEndSession(keyfob(), noHint, session, true)).toEqual({ kind: "logout", location: undefined });
    expect(await decideEndSession(keyfob(), params({}), session, false)).toEqual({ kind: "confirm", clientName: undefined });
    expect(await decideEndSession(keyfob(), params({ state: "only" }), session, true)).toEqual({ kind: "logout", location: undefined });

    const { hint: othersHint } = await loggedIn(app);
    expect(
      await decideEndSession(keyfob(), params({ id_token_hint: othersHint, post_logout_redirect_uri: bye }), session, false),
    ).toMatchObject({ kind: "confirm" });
  });
});
