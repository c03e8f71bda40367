import { OAuthError } from "./errors";

export const SUPPORTED_SCOPES = ["openid", "email", "profile"] as const;
export type Scope = (typeof SUPPORTED_SCOPES)[number];

/** Parses a space-delimited scope (RFC 6749 3.3); `openid` is required, unknown values are refused. */
export function parseScope(raw: string): Scope[] {
  const values = [...new Set(raw.split(" ").filter(Boolean))];
  const unknown = values.filter((value) => !(SUPPORTED_SCOPES as readonly string[]).includes(value));
  if (unknown.length > 0) {
    throw new OAuthError("invalid_scope", `unsupported scope: ${unknown.join(" ")} (supported: ${SUPPORTED_SCOPES.join(" ")})`);
  }
  if (!values.includes("openid")) throw new OAuthError("invalid_scope", "scope must include openid");
  return values as Scope[];
}
