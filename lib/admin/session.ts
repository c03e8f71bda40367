import { randomBytes, createHash } from "node:crypto";
import { ADMIN_CLIENT_ID } from "../clients/client-id";
import type { Keyfob } from "../keyfob";
import { invalidGrant, OAuthError } from "../oauth/errors";
import { isOpaque, opaqueDigest, randomOpaque } from "../oauth/opaque";
import { verifyCodeVerifier } from "../oauth/pkce";
import { CONTRACT_SIGNATURE, RECENT_LOGIN_MS } from "../sessions/login-session";

/** The dashboard is a client of Keyfob itself: admins sign in through the hosted login page. */
export const ADMIN_LOGIN_COOKIE = "keyfob_admin_login";
export const ADMIN_SESSION_SECONDS = 8 * 3600;

/** The session cookie's name: `__Host-` (Secure, whole site, this host only) when the issuer is https. */
export const adminSessionCookieName = ({ config }: Pick<Keyfob, "config">) =>
  config.issuerUrl.startsWith("https:") ? "__Host-keyfob_admin" : "keyfob_admin";

export const adminRedirectUri = (keyfob: Pick<Keyfob, "config">) => `${keyfob.config.issuerUrl}/admin/callback`;

/** Registers the dashboard as a client (idempotent), with its callback as the only redirect URI. */
export async function ensureAdminClient(keyfob: Pick<Keyfob, "config" | "store">): Promise<void> {
  await keyfob.store.clients.ensure(ADMIN_CLIENT_ID, "Keyfob admin", adminRedirectUri(keyfob));
}

/** Starts an admin sign-in: the hosted login URL, and the state + PKCE verifier to keep in a cookie. */
export async function beginAdminLogin(keyfob: Pick<Keyfob, "config" | "store">): Promise<{ location: string; cookie: string }> {
  await ensureAdminClient(keyfob);
  const state = randomBytes(16).toString("base64url");
  const verifier = randomBytes(32).toString("base64url");
  const query = new URLSearchParams({
    client_id: ADMIN_CLIENT_ID,
    redirect_uri: adminRedirectUri(keyfob),
    scope: "openid email",
    response_type: "code",
    state,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    max_age: "0",
  });
  return { location: `${keyfob.config.issuerUrl}/auth?${query}`, cookie: `${state}.${verifier}` };
}

/**
 * Ends an admin sign-in: checks state, redeems the code with PKCE (the dashboard is Keyfob itself,
 * so no tokens are minted for it), and starts a dashboard session tied to the login session the
 * code was issued in. Returns the session cookie's token; undefined when this browser did not
 * start the sign-in. A login older than RECENT_LOGIN_MS, or a smart-account signature while
 * ADMIN_CONTRACT_SIGNATURES is off, is refused.
 */
export async function finishAdminLogin(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  loginCookie: string | undefined,
  query: URLSearchParams,
  client: { ip?: string; userAgent?: string } = {},
): Promise<string | undefined> {
  const { store, config } = keyfob;
  const [state, verifier] = (loginCookie ?? "").split(".");
  const code = query.get("code");
  if (!state || !verifier || !code || query.get("state") !== state) return undefined;
  if (!isOpaque(code)) throw invalidGrant("unknown authorization code");
  const now = keyfob.clock.now();
  const codeHash = opaqueDigest(code);
  const grant = await store.authorizationCodes.find(codeHash);
  if (!grant || grant.clientId !== ADMIN_CLIENT_ID || grant.redirectUri !== adminRedirectUri(keyfob))
    throw invalidGrant("unknown authorization code");
  verifyCodeVerifier(grant.codeChallenge, verifier);
  if (!(await store.authorizationCodes.use(codeHash, now))) throw invalidGrant("the authorization code has expired or was already used");
  // It asked for a new login (max_age=0); this holds even for a request whose max_age was taken out on the way.
  if (!grant.sessionId || !grant.authTime || now.getTime() - grant.authTime.getTime() > RECENT_LOGIN_MS)
    throw invalidGrant("the dashboard needs a new login");
  if (grant.amr?.split(" ").includes(CONTRACT_SIGNATURE) && !config.adminContractSignatures) {
    throw new OAuthError("invalid_grant", { code: "admin_contract_signature" });
  }
  const loginSession = await store.accounts.findSession(grant.sessionId);
  if (!loginSession) throw invalidGrant("the login session has ended");
  const token = randomOpaque();
  await store.accounts.createAdminSession({
    idHash: opaqueDigest(token),
    accountId: grant.accountId,
    loginSessionId: grant.sessionId,
    expiresAt: new Date(Math.min(now.getTime() + ADMIN_SESSION_SECONDS * 1000, loginSession.expiresAt.getTime())),
    ip: client.ip?.slice(0, 64),
    userAgent: client.userAgent?.slice(0, 300),
  });
  return token;
}

/** A live dashboard session: the admin's account and the session's id (the SHA-256 of its token). */
export type AdminSessionView = { id: string; accountId: string };

/**
 * The live dashboard session of a cookie's token, or undefined: unknown, signed out, past its end,
 * or its login session revoked (logout, an admin, blocking) or deleted with the account, or the
 * account blocked. Read from PostgreSQL on every request, so an end applies on every instance at once.
 */
export async function readAdminSession(
  { store, clock }: Pick<Keyfob, "clock" | "store">,
  token: string | undefined,
  now = clock.now(),
): Promise<AdminSessionView | undefined> {
  if (!isOpaque(token)) return undefined;
  const session = await store.accounts.liveAdminSession(opaqueDigest(token), now);
  return session ? { id: session.idHash, accountId: session.accountId } : undefined;
}

/** Ends dashboard sessions: the one of a token (sign out), or every one of its account (sign out everywhere). */
export async function endAdminSessions(
  { store, clock }: Pick<Keyfob, "clock" | "store">,
  token: string | undefined,
  scope: "this" | "everywhere",
): Promise<number> {
  if (!isOpaque(token)) return 0;
  const idHash = opaqueDigest(token);
  if (scope === "this") return store.accounts.endAdminSessions({ idHash }, clock.now());
  const session = await store.accounts.findAdminSession(idHash);
  if (!session) return 0;
  return store.accounts.endAdminSessions({ accountId: session.accountId }, clock.now());
}

/** Ends every dashboard session of an account (its admin role was taken away). */
export function revokeAdminSessions({ store, clock }: Pick<Keyfob, "store" | "clock">, accountId: string): Promise<number> {
  return store.accounts.endAdminSessions({ accountId }, clock.now());
}
