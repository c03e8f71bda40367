/**
 * The hosted login's interaction, from the validated authorization request to its end: created by
 * /auth (or, for a device authorization, /device), shown by the login page, completed by a login
 * (wallet, passkey, Google/Apple, or the browser's session) with an authorization code (or the
 * device authorization's approval), or cancelled. Every login method ends here.
 */
import type { LoginIdentity } from "../accounts/accounts";
import { ADMIN_CLIENT_ID } from "../clients/client-id";
import { authorizationResponse } from "../clients/redirect-uri";
import { addressBucket } from "../http/client-ip";
import type { Keyfob } from "../keyfob";
import { invalidRequest, OAuthError } from "../oauth/errors";
import { isOpaque, opaqueDigest, randomOpaque } from "../oauth/opaque";
import { logIn, type FreshLogin } from "../sessions/login";
import type { InteractionRow, InteractionWithClientRow } from "../store/contract";
import { consentScope, recordConsent, scopesToConsent } from "../consent/grants";
import { CONTRACT_SIGNATURE, type LoginSession } from "../sessions/login-session";
import { generateNonce } from "../siwe/challenge";
import { rateLimited } from "../metrics";
import { tooManyRequests } from "../rate-limit";

/** How long the user has to log in on the hosted page. */
const INTERACTION_TTL_MS = 10 * 60_000;

/** A validated authorization request, as an interaction keeps it. */
export type PendingRequest = Pick<
  InteractionRow,
  | "clientId"
  | "redirectUri"
  | "scope"
  | "state"
  | "nonce"
  | "codeChallenge"
  | "prompt"
  | "loginHint"
  | "maxAge"
  | "hintAccount"
  | "uiLocales"
  | "dpopJkt"
  | "resource"
>;

/** How an interaction ends in a login: a fresh one, or the browser's live session. */
export type Login = (FreshLogin & { session?: undefined }) | { session: LoginSession; identity?: undefined };

/** A completed interaction: where to send the browser, and the new session of a fresh login (for its cookie). */
export type Completion = { location: string; newSession?: { token: string; expiresAt: Date } };

/**
 * Starts the hosted login for a validated request; undefined when the caller already has as many
 * unfinished logins as the cap allows.
 */
export async function createInteraction(keyfob: Pick<Keyfob, "config" | "clock" | "store">, request: PendingRequest, ip?: string) {
  const { store, config } = keyfob;
  const now = keyfob.clock.now();
  // Counted per caller as the rate limits count them (an IPv6 caller by its /64).
  const caller = ip ? addressBucket(ip) : null;
  if (caller) {
    const cap = config.pendingCaps.loginsPerIp;
    if ((await store.interactions.countPending(caller, cap, now)) >= cap) return undefined;
  }
  const interaction = await store.interactions.create({
    id: randomOpaque(),
    ...request,
    walletNonce: generateNonce(),
    ip: caller,
    expiresAt: new Date(now.getTime() + INTERACTION_TTL_MS),
  });
  return { id: interaction.id, walletNonce: interaction.walletNonce! };
}

/**
 * Starts the hosted login that approves a device authorization, from its user code (which this uses
 * up): undefined when the code is unknown, used or expired; refused (429) when the caller has as
 * many unfinished logins as the cap allows. Its redirect URI is Keyfob's /device page, where the
 * login ends.
 */
export async function createDeviceInteraction(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  userCodeHash: string,
  context: { ip?: string; uiLocales?: string },
): Promise<string | undefined> {
  const { store, config } = keyfob;
  const now = keyfob.clock.now();
  const caller = context.ip ? addressBucket(context.ip) : null;
  if (caller) {
    const cap = config.pendingCaps.loginsPerIp;
    if ((await store.interactions.countPending(caller, cap, now)) >= cap) {
      rateLimited.inc({ endpoint: "device", limit: "pending_logins" });
      throw tooManyRequests(INTERACTION_TTL_MS / 1000, "too many unfinished sign-ins from this address; finish or wait for them to expire");
    }
  }
  const interaction = await store.deviceAuthorizations.enterUserCode(
    userCodeHash,
    {
      id: randomOpaque(),
      redirectUri: `${config.issuerUrl}/device`,
      walletNonce: generateNonce(),
      ip: caller,
      uiLocales: context.uiLocales ?? null,
      expiresAt: new Date(now.getTime() + INTERACTION_TTL_MS),
    },
    now,
  );
  return interaction?.id;
}

/**
 * Whether a smart account's signature, which the RPC provider vouches for, may log in to this
 * client: not to the dashboard unless ADMIN_CONTRACT_SIGNATURES allows it.
 */
export function contractSignatureAccepted(clientId: string, config: { adminContractSignatures: boolean }): boolean {
  return clientId !== ADMIN_CLIENT_ID || config.adminContractSignatures;
}

/** The interaction for a login method to check its answer against, or undefined when unknown. */
export async function findInteraction(keyfob: Pick<Keyfob, "store">, interactionId: string) {
  return isOpaque(interactionId) ? keyfob.store.interactions.find(interactionId) : undefined;
}

/**
 * Whether the browser's session may complete a request without a new login: not when the request
 * asks for one (prompt=login), when the login is older than max_age, or when id_token_hint names
 * another account (OpenID Connect Core 3.1.2.1); and not for the dashboard when a smart account's
 * contract vouched for the login's signature, unless ADMIN_CONTRACT_SIGNATURES allows it.
 */
export function sessionMayComplete(
  request: { clientId: string; prompt: string | null; maxAge: number | null; hintAccount: string | null },
  session: LoginSession,
  config: { adminContractSignatures: boolean },
  now: Date,
): boolean {
  if (request.prompt?.split(" ").includes("login")) return false;
  if (request.maxAge !== null && now.getTime() - session.authTime.getTime() > request.maxAge * 1000) return false;
  if (session.amr.includes(CONTRACT_SIGNATURE) && !contractSignatureAccepted(request.clientId, config)) return false;
  return request.hintAccount === null || request.hintAccount === session.accountId;
}

/** What the hosted login page shows for an interaction, or undefined when it is unknown, expired or finished. */
export async function pendingInteraction(keyfob: Pick<Keyfob, "clock" | "store">, interactionId: string) {
  if (!isOpaque(interactionId)) return undefined;
  const interaction = await keyfob.store.interactions.findWithClient(interactionId);
  // One awaiting consent is past its login: its page is the consent page.
  if (!interaction || interaction.outcome === "consent" || endOf(interaction, keyfob.clock.now())) return undefined;
  return {
    id: interaction.id,
    clientId: interaction.clientId,
    clientName: interaction.client.name,
    clientLogoUrl: interaction.client.logoUrl,
    redirectUri: interaction.redirectUri,
    scope: interaction.scope.split(" "),
    prompt: interaction.prompt,
    maxAge: interaction.maxAge,
    hintAccount: interaction.hintAccount,
    walletNonce: interaction.walletNonce!,
    loginHint: interaction.loginHint ?? undefined,
    /** The request's ui_locales: the page's language comes first from it. */
    uiLocales: interaction.uiLocales ?? undefined,
    /** The authorization request again, to start over from. */
    restartUrl: restartUrl(interaction),
    /** It approves a device authorization (RFC 8628) rather than sending a code to redirectUri. */
    device: interaction.deviceCodeHash !== null,
  };
}

/** How an interaction ended: the user cancelled it, signed in with it, or let it expire. */
export type InteractionEnd = "cancelled" | "signed_in" | "expired";

/** A login awaiting consent has not ended until it is decided, or expires. */
function endOf(interaction: { completedAt: Date | null; outcome: string | null; expiresAt: Date }, now: Date): InteractionEnd | undefined {
  if (interaction.completedAt && interaction.outcome !== "consent") return interaction.outcome === "cancelled" ? "cancelled" : "signed_in";
  return interaction.expiresAt <= now ? "expired" : undefined;
}

/**
 * What the login page says of an interaction that is over, and the ways on: start again (the same
 * authorization request), and back to the application unless the login sent a code there already.
 * Undefined when the interaction is unknown (the sweep deletes it a while after it expired) or live.
 */
export async function endedInteraction(keyfob: Pick<Keyfob, "clock" | "store">, interactionId: string) {
  if (!isOpaque(interactionId)) return undefined;
  const interaction = await keyfob.store.interactions.findWithClient(interactionId);
  const end = interaction && endOf(interaction, keyfob.clock.now());
  if (!interaction || !end) return undefined;
  return {
    id: interaction.id,
    end,
    clientName: interaction.client.name,
    restartUrl: restartUrl(interaction),
    mayReturn: end !== "signed_in",
  };
}

/** The authorization request again, as a new login; for a device authorization, the code entry page. */
const restartUrl = (request: PendingRequest & { deviceCodeHash: string | null }) =>
  request.deviceCodeHash ? "/device" : `/auth?${authorizationRequestQuery(request)}`;

/** The query of the authorization request an interaction was made from. */
function authorizationRequestQuery(request: PendingRequest): URLSearchParams {
  const query = new URLSearchParams({
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    response_type: "code",
    scope: request.scope,
  });
  if (request.state !== null) query.set("state", request.state);
  if (request.nonce) query.set("nonce", request.nonce);
  if (request.codeChallenge) {
    query.set("code_challenge", request.codeChallenge);
    query.set("code_challenge_method", "S256");
  }
  if (request.prompt) query.set("prompt", request.prompt);
  if (request.loginHint) query.set("login_hint", request.loginHint);
  if (request.maxAge !== null) query.set("max_age", String(request.maxAge));
  if (request.uiLocales) query.set("ui_locales", request.uiLocales);
  if (request.dpopJkt) query.set("dpop_jkt", request.dpopJkt);
  if (request.resource) query.set("resource", request.resource);
  return query;
}

/**
 * Ends an interaction with a login: an authorization code, and where to send it. A fresh login
 * (wallet, Google, Apple) also starts a login session; the browser's session ("Continue as") may
 * complete it only if sessionMayComplete says so.
 */
export async function completeAuthorization(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "audit">,
  interactionId: string,
  login: Login,
): Promise<Completion> {
  const { store } = keyfob;
  const now = keyfob.clock.now();
  if (!isOpaque(interactionId)) throw expiredInteraction();
  const interaction = await store.interactions.findWithClient(interactionId);
  if (!interaction || interaction.expiresAt <= now || interaction.completedAt) throw expiredInteraction();
  if (!interaction.client.enabled) throw new OAuthError("invalid_client", "this application has been disabled");
  if (login.session && !sessionMayComplete(interaction, login.session, keyfob.config, now))
    throw invalidRequest({ code: "needs_new_login" });
  // A third-party client's login may still need the user's consent: it waits for it (outcome "consent").
  const consent = !interaction.deviceCodeHash && interaction.client.requireConsent;
  if (!(await store.interactions.complete(interactionId, now, consent ? "consent" : "login"))) throw expiredInteraction();
  // A device authorization's login approves it, and the user sees so on Keyfob's own page.
  const answer = (identity: LoginIdentity, session: LoginSession) =>
    interaction.deviceCodeHash
      ? approveDevice(keyfob, interaction, interaction.deviceCodeHash, identity, session, now)
      : consent
        ? consentOrCode(keyfob, interaction, session, now)
        : issueAuthorizationCode(keyfob, interaction, identity, session);
  if (login.session) {
    keyfob.audit.record({
      action: "login.session_used",
      outcome: "success",
      clientId: interaction.clientId,
      accountId: login.session.accountId,
      detail: login.session.identity.provider,
    });
    return { location: await answer(login.session.identity, login.session) };
  }
  const { token, expiresAt, session } = await logIn(keyfob, login, interaction.clientId, now);
  return { location: await answer(login.identity, session), newSession: { token, expiresAt } };
}

/** The hosted login's consent page of an interaction. */
export const consentUrl = (config: { issuerUrl: string }, interactionId: string) =>
  `${config.issuerUrl}/auth/interaction/${encodeURIComponent(interactionId)}/consent`;

/**
 * After the login of an interaction awaiting consent: the consent page when the account has not
 * granted the client every scope asked for (or prompt=consent asks anew); otherwise the code at once.
 */
async function consentOrCode(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  interaction: InteractionWithClientRow,
  session: LoginSession,
  now: Date,
): Promise<string> {
  const { store } = keyfob;
  if (!(await store.interactions.awaitConsent(interaction.id, session.id))) throw expiredInteraction();
  if ((await scopesToConsent(keyfob, interaction, interaction.client, session.accountId)).length > 0)
    return consentUrl(keyfob.config, interaction.id);
  if (!(await store.interactions.decideConsent(interaction.id, session.id, now, "login"))) throw expiredInteraction();
  return issueAuthorizationCode(keyfob, interaction, session.identity, session);
}

/** Where /device says how a device authorization ended. */
export const deviceEnd = (end: "approved" | "denied" | "expired") => `/device?result=${end}`;

/**
 * Approves the device authorization of a completed interaction with its login (the device's next
 * poll gets tokens), audited. Its page showed the client and the scopes before the login, so for a
 * client that requires consent the approval is the consent, and is recorded as a grant.
 */
async function approveDevice(
  keyfob: Pick<Keyfob, "clock" | "store" | "audit">,
  { clientId, scope, client }: InteractionWithClientRow,
  deviceCodeHash: string,
  identity: LoginIdentity,
  session: LoginSession,
  now: Date,
) {
  const approved = {
    accountId: session.accountId,
    connector: identity.provider,
    email: identity.email ?? null,
    emailVerified: identity.emailVerified,
    authTime: session.authTime,
    amr: session.amr.join(" "),
    sessionId: session.id,
  };
  const settled = await keyfob.store.deviceAuthorizations.settle(deviceCodeHash, now, { approved });
  if (settled && client.requireConsent) await recordConsent(keyfob, session.accountId, clientId, consentScope(scope, client));
  keyfob.audit.record({
    action: "device.approved",
    outcome: settled ? "success" : "expired_token",
    clientId,
    accountId: session.accountId,
    detail: identity.provider,
  });
  return deviceEnd(settled ? "approved" : "expired");
}

/**
 * Back to the application without a login (Cancel, or "Return to the application" once the login
 * is over): error=access_denied with the request's state and iss. A live interaction is completed
 * as cancelled in the same conditional update a login uses, so a login after a cancel (or a cancel
 * after a login) is refused. A cancelled or expired one may still go back, saying so; one that
 * ended in a login may not (its code went there already).
 */
export async function leaveInteraction(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "audit">,
  interactionId: string,
): Promise<string> {
  if (!isOpaque(interactionId)) throw expiredInteraction();
  const { store, config } = keyfob;
  const now = keyfob.clock.now();
  const interaction =
    (await store.interactions.complete(interactionId, now, "cancelled")) ?? (await store.interactions.find(interactionId));
  const end = interaction && endOf(interaction, now);
  // Awaiting consent, only the consent page's Deny (of the session that logged in) goes back.
  if (!interaction || end === "signed_in" || (interaction.outcome === "consent" && !end)) throw expiredInteraction();
  // A device authorization's cancel denies it: the device's next poll gets access_denied.
  if (interaction.deviceCodeHash) {
    const denied = await store.deviceAuthorizations.settle(interaction.deviceCodeHash, now, { denied: true });
    if (denied)
      keyfob.audit.record({
        action: "device.denied",
        outcome: "access_denied",
        clientId: interaction.clientId,
        ip: interaction.ip ?? undefined,
        detail: "login cancelled",
      });
    return deviceEnd(denied || end === "cancelled" ? "denied" : "expired");
  }
  return authorizationResponse(interaction.redirectUri, {
    error: "access_denied",
    error_description: end === "expired" ? "the login expired" : "the user cancelled the login",
    state: interaction.state ?? undefined,
    iss: config.issuerUrl,
  });
}

/** A code for the session's account, remembering when and how the user authenticated (auth_time, amr). */
export async function issueAuthorizationCode(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  request: PendingRequest,
  identity: LoginIdentity,
  session: LoginSession,
): Promise<string> {
  const { store, config } = keyfob;
  const code = randomOpaque();
  await store.authorizationCodes.create({
    codeHash: opaqueDigest(code),
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    accountId: session.accountId,
    connector: identity.provider,
    scope: request.scope,
    nonce: request.nonce,
    codeChallenge: request.codeChallenge,
    email: identity.email,
    emailVerified: identity.emailVerified,
    authTime: session.authTime,
    amr: session.amr.join(" "),
    sessionId: session.id,
    dpopJkt: request.dpopJkt,
    resource: request.resource,
    expiresAt: new Date(keyfob.clock.now().getTime() + config.authorizationCodeTtl * 1000),
  });
  return authorizationResponse(request.redirectUri, { code, state: request.state ?? undefined, iss: config.issuerUrl });
}

export function expiredInteraction() {
  return new OAuthError("invalid_request", { code: "interaction_expired" });
}
