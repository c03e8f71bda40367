import { randomBytes, createHash } from "node:crypto";
import { jwtVerify, SignJWT } from "jose";
import { redeemCode } from "../actions/exchange-code";
import type { Keyfob } from "../keyfob";
import { decodeSubject } from "../tokens/sub";
import { verifyAccessToken } from "../tokens/verify";

/** The dashboard is a client of Keyfob itself: admins sign in through the hosted login page. */
export const ADMIN_CLIENT_ID = "keyfob-admin";
export const ADMIN_SESSION_COOKIE = "keyfob_admin";
export const ADMIN_LOGIN_COOKIE = "keyfob_admin_login";
export const ADMIN_SESSION_SECONDS = 8 * 3600;

export const adminRedirectUri = (keyfob: Keyfob) => `${keyfob.config.issuerUrl}/admin/callback`;

/** Registers the dashboard as a client (idempotent), with its callback as the only redirect URI. */
export async function ensureAdminClient(keyfob: Keyfob): Promise<void> {
  const { db } = keyfob;
  await db.client.upsert({ where: { id: ADMIN_CLIENT_ID }, create: { id: ADMIN_CLIENT_ID, name: "Keyfob admin" }, update: { enabled: true } });
  const uri = adminRedirectUri(keyfob);
  await db.redirectUri.upsert({ where: { clientId_uri: { clientId: ADMIN_CLIENT_ID, uri } }, create: { clientId: ADMIN_CLIENT_ID, uri }, update: {} });
}

/** Starts an admin sign-in: the hosted login URL, and the state + PKCE verifier to keep in a cookie. */
export async function beginAdminLogin(keyfob: Keyfob): Promise<{ location: string; cookie: string }> {
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
  });
  return { location: `${keyfob.config.issuerUrl}/auth?${query}`, cookie: `${state}.${verifier}` };
}

/** Ends an admin sign-in: checks state, redeems the code with PKCE, and returns a session token. */
export async function finishAdminLogin(keyfob: Keyfob, loginCookie: string | undefined, query: URLSearchParams): Promise<string | undefined> {
  const [state, verifier] = (loginCookie ?? "").split(".");
  const code = query.get("code");
  if (!state || !verifier || !code || query.get("state") !== state) return undefined;
  const form = new Map([
    ["code", code],
    ["redirect_uri", adminRedirectUri(keyfob)],
    ["code_verifier", verifier],
  ]);
  const tokens = await redeemCode(keyfob, { id: ADMIN_CLIENT_ID, confidential: false }, { get: (name) => form.get(name) });
  const { payload } = await verifyAccessToken(keyfob, tokens.access_token);
  return new SignJWT({})
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(decodeSubject(payload.sub).userId)
    .setAudience(ADMIN_SESSION_COOKIE)
    .setIssuedAt()
    .setExpirationTime(`${ADMIN_SESSION_SECONDS}s`)
    .sign(sessionKey(keyfob));
}

/** The account of a valid admin session token, or undefined. */
export async function readAdminSession(keyfob: Keyfob, token: string | undefined): Promise<string | undefined> {
  if (!token) return undefined;
  try {
    const { payload } = await jwtVerify(token, sessionKey(keyfob), { audience: ADMIN_SESSION_COOKIE, algorithms: ["HS256"] });
    return payload.sub;
  } catch {
    return undefined;
  }
}


const sessionKey = ({ macKeys }: Keyfob): Uint8Array => macKeys.adminSession;
