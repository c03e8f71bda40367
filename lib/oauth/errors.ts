/** OAuth error codes Keyfob answers with, and the HTTP status each one carries by default. */
const STATUS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  invalid_scope: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_token: 401,
  server_error: 500,
  temporarily_unavailable: 503,
} as const;

export type OAuthErrorCode = keyof typeof STATUS;

/** An error the client is meant to see. Its description must never carry a secret or token. */
export class OAuthError extends Error {
  readonly status: number;
  constructor(
    readonly code: OAuthErrorCode,
    description: string,
    status?: number,
  ) {
    super(description);
    this.name = "OAuthError";
    this.status = status ?? STATUS[code];
  }

  /** Both shapes at once: OAuth's (`error`, `error_description`) and the platform SDKs' (`status`, `message`). */
  toJSON() {
    return { error: this.code, error_description: this.message, status: this.status, message: this.message };
  }
}

export const invalidRequest = (description: string) => new OAuthError("invalid_request", description);
export const invalidGrant = (description: string) => new OAuthError("invalid_grant", description);
export const invalidClient = (description: string) => new OAuthError("invalid_client", description);
