import { createHash, randomBytes } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from "jose";
import { authorizationCode } from "../actions/exchange-code";
import { RegistryError } from "../clients/registry";
import type { Keyfob } from "../keyfob";
import { OAuthError } from "../oauth/errors";
import type { Issued } from "../tokens/issue";
import { decodeSubject } from "../tokens/sub";
import { verifyAccessToken } from "../tokens/verify";
import type { Admin } from "./access";
import { tryRedirectUri } from "./integration";

/**
 * "Try a sign-in" from a client's page: the dashboard runs the hosted login as that client, with
 * PKCE, to Keyfob's own callback (`<issuer>/admin/try/callback`, which an admin registers as one of
 * the client's redirect URIs with one click, audited like any other), redeems the code itself and
 * shows the decoded ID and access token. The code can only be redeemed by the signed-in admin's
 * browser that started the attempt (state and verifier in an httpOnly cookie), so registering the
 * callback gives no one else a way to the tokens; the access token is revoked once decoded.
 */

export const TRY_COOKIE = "keyfob_admin_try";
export const TRY_RESULT_COOKIE = "keyfob_admin_try_result";
export const TRY_SCOPE = "openid email";

/** Starts an attempt: the authorization URL, and the cookie (client, state, verifier) to keep in the browser. */
export async function beginTrySignIn(k: Pick<Keyfob, "config" | "store">, clientId: string): Promise<{ location: string; cookie: string }> {
  const client = await k.store.clients.findWithRedirectUri(clientId, tryRedirectUri(k.config.issuerUrl));
  if (!client) throw new RegistryError("clientId", `no client with id ${clientId}`);
  if (!client.enabled) throw new RegistryError("clientId", "the client is disabled: enable it to try a sign-in");
  if (!client.redirectUriRegistered) throw new RegistryError("uri", "register Keyfob's test callback for this client first");
  const state = randomBytes(16).toString("base64url");
  const verifier = randomBytes(32).toString("base64url");
  const query = new URLSearchParams({
    response_type: "code",
    client_id: client.id,
    redirect_uri: tryRedirectUri(k.config.issuerUrl),
    scope: TRY_SCOPE,
    state,
    nonce: randomBytes(12).toString("base64url"),
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  });
  return {
    location: `${k.config.issuerUrl}/auth?${query}`,
    cookie: `${Buffer.from(client.id).toString("base64url")}.${state}.${verifier}`,
  };
}

export type TryResult = {
  clientId: string;
  at: string;
  ok: boolean;
  /** The OAuth error of a refused attempt (the hosted login's, or the exchange's), with its description. */
  error?: string;
  description?: string;
  idToken?: { header: Record<string, unknown>; claims: Record<string, unknown> };
  accessToken?: { header: Record<string, unknown>; claims: Record<string, unknown> };
  subject?: { userId: string; connector: string };
};

/** The client an attempt's cookie is for, or undefined. */
export function tryCookieClient(cookie: string | undefined): string | undefined {
  const [client] = (cookie ?? "").split(".");
  return client ? Buffer.from(client, "base64url").toString("utf8") || undefined : undefined;
}

/**
 * Ends an attempt at Keyfob's callback: checks the state against the cookie, redeems the code with
 * the verifier (as the client: the dashboard speaks for it here), decodes both tokens, revokes the
 * access token, and audits it (`client.sign_in_tried`). Returns undefined when the cookie or state
 * does not match (nothing is redeemed).
 */
export async function finishTrySignIn(
  k: Keyfob,
  admin: Admin,
  cookie: string | undefined,
  query: URLSearchParams,
): Promise<TryResult | undefined> {
  const [encodedClient, state, verifier] = (cookie ?? "").split(".");
  const clientId = tryCookieClient(cookie);
  if (!encodedClient || !state || !verifier || !clientId || query.get("state") !== state) return undefined;
  const at = k.clock.now().toISOString();
  const audit = (outcome: string, detail: string, accountId?: string) =>
    k.audit.write({ actor: admin.label, action: "client.sign_in_tried", outcome, clientId, accountId, detail });
  const error = query.get("error");
  if (error) {
    const description = query.get("error_description") ?? "";
    await audit(error, `the hosted login answered ${error}${description ? `: ${description}` : ""}`);
    return { clientId, at, ok: false, error, description };
  }
  const client = await k.store.clients.find(clientId);
  const form = new Map([
    ["code", query.get("code") ?? ""],
    ["redirect_uri", tryRedirectUri(k.config.issuerUrl)],
    ["code_verifier", verifier],
  ]);
  let tokens: Issued["response"];
  try {
    ({ response: tokens } = await authorizationCode.answer(
      k,
      { client: { id: clientId, confidential: client?.secretHash != null }, caller: { endpoint: "try_sign_in" } },
      { get: (name) => form.get(name) || undefined },
    ));
  } catch (caught) {
    if (!(caught instanceof OAuthError) || caught.status >= 500) throw caught;
    await audit(caught.code, `the code exchange failed: ${caught.message}`);
    return { clientId, at, ok: false, error: caught.code, description: caught.message };
  }
  const { payload } = await verifyAccessToken(k, tokens.access_token);
  // The ID token is checked like a relying party would: our key, our issuer, this client.
  await jwtVerify(tokens.id_token, await k.keys.verificationKeys(), { issuer: k.config.issuerUrl, audience: clientId });
  await k.store.tokens.revoke(payload.jti, k.clock.now());
  const subject = decodeSubject(payload.sub);
  await audit(
    "success",
    `test sign-in from the dashboard via ${subject.connector}; its access token was revoked once decoded`,
    subject.userId,
  );
  const decode = (token: string) => ({
    header: decodeProtectedHeader(token) as Record<string, unknown>,
    claims: decodeJwt(token) as Record<string, unknown>,
  });
  return { clientId, at, ok: true, idToken: decode(tokens.id_token), accessToken: decode(tokens.access_token), subject };
}

const RESULT_AUDIENCE = "keyfob_admin_try_result";

/** The result, signed for the browser's cookie (a key of its own). */
export function sealTryResult(k: Pick<Keyfob, "macKeys">, result: TryResult): Promise<string> {
  return new SignJWT({ result })
    .setProtectedHeader({ alg: "HS256" })
    .setAudience(RESULT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(k.macKeys.tryResult);
}

export async function openTryResult(k: Pick<Keyfob, "macKeys">, sealed: string | undefined): Promise<TryResult | undefined> {
  if (!sealed) return undefined;
  try {
    const { payload } = await jwtVerify(sealed, k.macKeys.tryResult, { audience: RESULT_AUDIENCE, algorithms: ["HS256"] });
    return payload.result as TryResult;
  } catch {
    return undefined;
  }
}
