/**
 * Consent for third-party clients (lib/consent, lib/interactions/consent.ts) on the real lib/
 * functions, route handlers and PostgreSQL: a first-party client never asks; a client that requires
 * consent shows the consent page after the login until the account granted it the scopes asked for,
 * again for more scopes and on prompt=consent; prompt=none answers consent_required; a decision is
 * single use and only the login session that logged in makes it; revoking a grant ends the client's
 * refresh tokens for the account. The consent page itself runs in real Chromium (e2e/consent.spec.ts).
 */
import { describe, expect, it } from "vitest";
import type { LoginIdentity } from "@/lib/accounts/accounts";
import { resolveAccount } from "@/lib/accounts/accounts";
import { accountOverview, revokeApplication } from "@/lib/accounts/self-service";
import { startAuthorization } from "@/lib/actions/authorize";
import { accountConsents, revokeConsent } from "@/lib/consent/grants";
import { consentRequest, declineConsent, giveConsent } from "@/lib/interactions/consent";
import { completeAuthorization, endedInteraction, leaveInteraction, pendingInteraction } from "@/lib/interactions/interactions";
import { keyfob } from "@/lib/runtime";
import { findSession, startSession, type LoginSession } from "@/lib/sessions/login-session";
import { tables } from "./support/database";
import { ISSUER } from "./support/flow-a";
import { authorizeQuery, google, registerApp, token, type App } from "./support/flow-b";

const thirdParty = (settings = {}) => registerApp({ settings: { requireConsent: true, ...settings } });

/** The authorization request and a fresh login of `identity`: where the browser goes next, and the login's session. */
async function logIn(app: App, identity: LoginIdentity, extra: Record<string, string> = {}) {
  const start = await startAuthorization(keyfob(), authorizeQuery(app, { state: "st-1", ...extra }));
  if (start.kind !== "login") throw new Error(`expected the login page, got ${JSON.stringify(start)}`);
  const { location, newSession } = await completeAuthorization(keyfob(), start.interactionId, { identity });
  const session = (await findSession(keyfob(), newSession!.token))!;
  return { interactionId: start.interactionId, location: new URL(location), session };
}

const consentPage = (interactionId: string) => `${ISSUER}/auth/interaction/${interactionId}/consent`;

/** Allows on the consent page; the code's redirect. */
async function allow(interactionId: string, session: LoginSession) {
  return new URL(await giveConsent(keyfob(), interactionId, session));
}

describe("consent", () => {
  it("asks for a third-party client's consent after the login, and never for a first-party client", async () => {
    const identity = google();
    const firstParty = await registerApp();
    for (const extra of [{}, { prompt: "consent" }] as Record<string, string>[])
      expect((await logIn(firstParty, identity, extra)).location.searchParams.get("code")).toBeTruthy();

    const app = await thirdParty();
    const { interactionId, location, session } = await logIn(app, identity);
    expect(location.href).toBe(consentPage(interactionId));
    expect(await consentRequest(keyfob(), interactionId, session)).toMatchObject({
      clientName: "Fleet dashboard",
      scope: [
        { scope: "openid", granted: false },
        { scope: "email", granted: false },
      ],
    });
    const answer = await allow(interactionId, session);
    expect([answer.origin + answer.pathname, answer.searchParams.get("state"), answer.searchParams.get("iss")]).toEqual([
      app.redirectUri.split("?")[0],
      "st-1",
      ISSUER,
    ]);
    const tokens = await (await token(app, { code: answer.searchParams.get("code")! })).json();
    expect(tokens.id_token).toBeTruthy();
    expect(await accountConsents(keyfob(), session.accountId)).toMatchObject([{ clientId: app.clientId, scope: ["email", "openid"] }]);
  });

  it("goes on without the page for scopes granted before; asks again for new ones, and always on prompt=consent", async () => {
    const app = await thirdParty();
    const identity = google();
    const first = await logIn(app, identity);
    await allow(first.interactionId, first.session);

    expect((await logIn(app, identity)).location.searchParams.get("code")).toBeTruthy();

    const more = await logIn(app, identity, { scope: "openid email profile" });
    expect(more.location.href).toBe(consentPage(more.interactionId));
    expect((await consentRequest(keyfob(), more.interactionId, more.session))?.scope).toEqual([
      { scope: "openid", granted: true },
      { scope: "email", granted: true },
      { scope: "profile", granted: false },
    ]);
    await allow(more.interactionId, more.session);
    expect((await accountConsents(keyfob(), more.session.accountId))[0].scope).toEqual(["email", "openid", "profile"]);

    const again = await logIn(app, identity, { prompt: "consent" });
    expect(again.location.href).toBe(consentPage(again.interactionId));
  });

  it("answers prompt=none with consent_required until the account granted the scopes", async () => {
    const app = await thirdParty();
    const identity = google();
    const { session } = await startSession(keyfob(), { accountId: await resolveAccount(keyfob(), identity), identity });
    const silent = () => startAuthorization(keyfob(), authorizeQuery(app, { prompt: "none", state: "st-2" }), { session });
    const refused = await silent();
    if (refused.kind !== "redirect") throw new Error("expected a redirect");
    const params = new URL(refused.location).searchParams;
    expect([params.get("error"), params.get("state"), params.get("iss")]).toEqual(["consent_required", "st-2", ISSUER]);

    const { interactionId, session: loginSession } = await logIn(app, identity);
    await allow(interactionId, loginSession);
    const granted = await silent();
    expect(granted.kind === "redirect" && new URL(granted.location).searchParams.get("code")).toBeTruthy();
  });

  it("sends access_denied on Deny; a decision is single use and only the session that logged in makes it", async () => {
    const app = await thirdParty();
    const { interactionId, session } = await logIn(app, google());
    const other = (await logIn(await thirdParty(), google())).session;
    expect(await consentRequest(keyfob(), interactionId, other)).toBeUndefined();
    await expect(giveConsent(keyfob(), interactionId, other)).rejects.toMatchObject({ why: { code: "interaction_expired" } });

    const denied = new URL(await declineConsent(keyfob(), interactionId, session));
    expect([denied.searchParams.get("error"), denied.searchParams.get("state"), denied.searchParams.get("code")]).toEqual([
      "access_denied",
      "st-1",
      null,
    ]);
    await expect(giveConsent(keyfob(), interactionId, session)).rejects.toMatchObject({ why: { code: "interaction_expired" } });
    expect(await consentRequest(keyfob(), interactionId, session)).toBeUndefined();
    expect(await accountConsents(keyfob(), session.accountId)).toEqual([]);
  });

  it("revoking a grant ends the client's refresh tokens for the account, and the next login asks again", async () => {
    const app = await thirdParty({ refreshTokensAllowed: true });
    const identity = google();
    const { interactionId, session } = await logIn(app, identity, { scope: "openid offline_access" });
    const code = (await allow(interactionId, session)).searchParams.get("code")!;
    const tokens = await (await token(app, { code })).json();
    expect(tokens.refresh_token).toBeTruthy();

    expect(await revokeConsent(keyfob(), session.accountId, app.clientId)).toMatchObject({ families: 1 });
    const refresh = await token(app, { grant_type: "refresh_token", refresh_token: tokens.refresh_token });
    expect([refresh.status, (await refresh.json()).error]).toEqual([400, "invalid_grant"]);
    expect(await accountConsents(keyfob(), session.accountId)).toEqual([]);
    expect(await revokeConsent(keyfob(), session.accountId, app.clientId)).toBeUndefined();

    const next = await logIn(app, identity, { scope: "openid offline_access" });
    expect(next.location.href).toBe(consentPage(next.interactionId));
  });

  it("revoking a grant ends a code issued before it: the exchange after it gets no tokens", async () => {
    const app = await thirdParty({ refreshTokensAllowed: true });
    const { interactionId, session } = await logIn(app, google(), { scope: "openid offline_access" });
    const code = (await allow(interactionId, session)).searchParams.get("code")!;
    expect(await revokeConsent(keyfob(), session.accountId, app.clientId)).toBeDefined();
    const late = await token(app, { code });
    expect([late.status, (await late.json()).error]).toEqual([400, "invalid_grant"]);
  });

  it("lists the applications an account allowed at /account; Revoke ends their access, audited, and a second one is refused", async () => {
    const app = await thirdParty({ refreshTokensAllowed: true });
    const { interactionId, session } = await logIn(app, google(), { scope: "openid offline_access" });
    const tokens = await (await token(app, { code: (await allow(interactionId, session)).searchParams.get("code")! })).json();
    expect((await accountOverview(keyfob(), session.accountId)).consents).toMatchObject([
      { clientId: app.clientId, clientName: "Fleet dashboard", scope: ["offline_access", "openid"] },
    ]);

    await revokeApplication(keyfob(), session.accountId, app.clientId, { ip: "203.0.113.5" });
    expect((await accountOverview(keyfob(), session.accountId)).consents).toEqual([]);
    expect((await token(app, { grant_type: "refresh_token", refresh_token: tokens.refresh_token })).status).toBe(400);
    expect(
      await tables(keyfob()).auditEvent.findMany({ where: { accountId: session.accountId, action: "consent.revoked" } }),
    ).toMatchObject([{ clientId: app.clientId, ip: "203.0.113.5", detail: "at /account: 1 refresh grant(s) ended" }]);
    await expect(revokeApplication(keyfob(), session.accountId, app.clientId)).rejects.toMatchObject({ why: { code: "unknown_consent" } });
  });

  it("a login awaiting consent is not the login page's any more; once expired, it goes back with access_denied", async () => {
    const app = await thirdParty();
    const { interactionId, session } = await logIn(app, google());
    expect(await pendingInteraction(keyfob(), interactionId)).toBeUndefined();
    expect(await endedInteraction(keyfob(), interactionId)).toBeUndefined();
    await expect(leaveInteraction(keyfob(), interactionId)).rejects.toMatchObject({ why: { code: "interaction_expired" } });

    await tables(keyfob()).interaction.update({ where: { id: interactionId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await consentRequest(keyfob(), interactionId, session)).toBeUndefined();
    await expect(giveConsent(keyfob(), interactionId, session)).rejects.toMatchObject({ why: { code: "interaction_expired" } });
    expect(await endedInteraction(keyfob(), interactionId)).toMatchObject({ end: "expired", mayReturn: true });
    const back = new URL(await leaveInteraction(keyfob(), interactionId)).searchParams;
    expect([back.get("error"), back.get("error_description"), back.get("state")]).toEqual(["access_denied", "the login expired", "st-1"]);
  });

  it("does not ask for offline_access of a client that may not get refresh tokens, nor record it", async () => {
    const app = await thirdParty();
    const identity = google();
    const { interactionId, session } = await logIn(app, identity, { scope: "openid offline_access" });
    expect((await consentRequest(keyfob(), interactionId, session))?.scope).toEqual([{ scope: "openid", granted: false }]);
    await allow(interactionId, session);
    expect((await accountConsents(keyfob(), session.accountId))[0].scope).toEqual(["openid"]);
    expect((await logIn(app, identity, { scope: "openid offline_access" })).location.searchParams.get("code")).toBeTruthy();
  });
});
