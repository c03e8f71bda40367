import { describeReason, type Reason } from "./reasons";

/** OAuth error codes Keyfob answers with, and the HTTP status each one carries by default. */
const STATUS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  invalid_scope: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  // RFC 8707 2: a resource the server does not know or will not issue for.
  invalid_target: 400,
  invalid_token: 401,
  // DPoP (RFC 9449 4.3, 8): 400 at the token endpoints, 401 with a DPoP challenge at resource endpoints.
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
  // The resource owner (or an admin, for a blocked account) refused (RFC 6749 4.1.2.1).
  access_denied: 403,
  // OpenID Connect Core 3.1.2.6, sent back to the redirect URI.
  request_not_supported: 400,
  request_uri_not_supported: 400,
  // The device authorization grant's polling answers (RFC 8628 3.5).
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
  server_error: 500,
  temporarily_unavailable: 503,
} as const;

export type OAuthErrorCode = keyof typeof STATUS;

/**
 * An error description as RFC 6749 (5.2, 4.1.2.1) allows it: printable ASCII without `"` and `\`
 * (%x20-21 / %x23-5B / %x5D-7E). Messages are written that way; this keeps it so whatever a
 * message quotes.
 */
export function errorDescription(text: string): string {
  return text
    .replace(/"/g, "'")
    .replace(/\\/g, "/")
    .replace(/[^\x20-\x7e]/g, "?");
}

/**
 * An error the client is meant to see. Its description must never carry a secret or token. One a
 * person may see on a page is given as a Reason: its description is the reason's English, and
 * pages word it from the code.
 */
export class OAuthError extends Error {
  readonly status: number;
  /** Seconds after which a retry may succeed (429, 503): sent as Retry-After. */
  readonly retryAfter?: number;
  /** Why, as a code the pages word (lib/oauth/reasons.ts). */
  readonly why?: Reason;
  /**
   * The WWW-Authenticate challenge, when not the one errorResponse derives from the code: a
   * resource endpoint sets it for the scheme the token needs (RFC 9449 7.1).
   */
  challenge?: string;
  constructor(
    readonly code: OAuthErrorCode,
    description: string | Reason,
    status?: number,
    options: { retryAfter?: number } = {},
  ) {
    super(errorDescription(typeof description === "string" ? description : describeReason(description)));
    this.name = "OAuthError";
    if (typeof description !== "string") this.why = description;
    this.status = status ?? STATUS[code];
    this.retryAfter = options.retryAfter;
  }

  /** Both shapes at once: OAuth's (`error`, `error_description`) and the platform SDKs' (`status`, `message`). */
  toJSON() {
    return { error: this.code, error_description: this.message, status: this.status, message: this.message };
  }
}

export const invalidRequest = (description: string | Reason) => new OAuthError("invalid_request", description);
export const invalidGrant = (description: string | Reason) => new OAuthError("invalid_grant", description);
export const invalidClient = (description: string) => new OAuthError("invalid_client", description);
