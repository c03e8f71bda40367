import { OAuthError } from "./errors";

/**
 * `offline_access` (OpenID Connect Core 11) asks for a refresh token. It is granted only in the code
 * flow, to a client an admin allowed refresh tokens (Client.refreshTokensAllowed): Keyfob's condition
 * in place of prompt=consent; and in the device flow, to one allowed them on devices as well
 * (Client.deviceFlowOfflineAccess). Otherwise it is dropped from the granted scope, never an error:
 * the code exchange and the device's poll then say so in the token response's `scope`, and Flow A,
 * which issues no refresh tokens, leaves it out of its tokens (lib/tokens/issue.ts).
 */
export const OFFLINE_ACCESS = "offline_access";

/** The scopes that select claims (OpenID Connect Core 5.4). */
export const SUPPORTED_SCOPES = ["openid", "email", "profile"] as const;
/** Every scope a request may hold: the claim scopes and offline_access (what discovery's scopes_supported lists). */
export const ALL_SCOPES = [...SUPPORTED_SCOPES, OFFLINE_ACCESS] as const;
export type Scope = (typeof ALL_SCOPES)[number];

/** Parses a space-delimited scope (RFC 6749 3.3); `openid` is required, unknown values are refused. */
export function parseScope(raw: string): Scope[] {
  const values = [...new Set(raw.split(" ").filter(Boolean))];
  const unknown = values.filter((value) => !(ALL_SCOPES as readonly string[]).includes(value));
  if (unknown.length > 0) {
    throw new OAuthError("invalid_scope", `unsupported scope: ${unknown.join(" ")} (supported: ${ALL_SCOPES.join(" ")})`);
  }
  if (!values.includes("openid")) throw new OAuthError("invalid_scope", "scope must include openid");
  return values as Scope[];
}

/** A scope without offline_access: what is granted when no refresh token comes with the tokens. */
export function withoutOfflineAccess(scope: readonly Scope[]): Scope[] {
  return scope.filter((value) => value !== OFFLINE_ACCESS);
}

/**
 * The scope a refresh asks for (RFC 6749 6): the original one when `requested` is absent, else a
 * subset of it (invalid_scope for a value the original grant does not hold, or without openid).
 */
export function narrowScope(original: readonly Scope[], requested: string | undefined): Scope[] {
  if (requested === undefined) return [...original];
  const asked = parseScope(requested);
  const beyond = asked.filter((value) => !original.includes(value));
  if (beyond.length > 0)
    throw new OAuthError("invalid_scope", `the scope may only narrow the original grant, which does not include: ${beyond.join(" ")}`);
  return asked;
}
