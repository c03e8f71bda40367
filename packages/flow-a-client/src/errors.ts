/**
 * The errors @keyfob/flow-a-client throws: Keyfob's refusals as they came over HTTP (KeyfobError),
 * and the challenges it will not sign (UnsafeChallengeError).
 */

/**
 * A refusal from Keyfob: the OAuth error (`error`, `error_description`, RFC 6749 5.2), the HTTP
 * status, and for a 429 or 503 the seconds to wait before trying again (its Retry-After).
 */
export class KeyfobError extends Error {
  /** The OAuth error code, e.g. invalid_client, invalid_grant, use_dpop_nonce. */
  readonly error: string;
  readonly error_description: string;
  /** Seconds after which a retry may succeed (the answer's Retry-After), when Keyfob said. */
  readonly retryAfter?: number;
  constructor(
    readonly status: number,
    code: string,
    description: string,
    retryAfter?: number,
  ) {
    super(`${code}: ${description}`);
    this.name = "KeyfobError";
    this.error = code;
    this.error_description = description;
    this.retryAfter = retryAfter;
  }

  /** The OAuth error code (the same as `error`). */
  get code(): string {
    return this.error;
  }

  /** The error of a failed answer, from its JSON body (Keyfob's documented shape) and headers. */
  static async of(response: Response): Promise<KeyfobError> {
    const body = await response.json().catch(() => ({}));
    const text = (value: unknown) => (typeof value === "string" ? value : undefined);
    return new KeyfobError(
      response.status,
      text(body?.error) ?? "http_error",
      text(body?.error_description) ?? response.statusText,
      retryAfterSeconds(response.headers.get("retry-after")),
    );
  }
}

/** Retry-After (RFC 9110 10.2.3) in seconds: delay-seconds, or an HTTP date from now. */
function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** A "challenge" the library refuses to sign: it is not the Flow A challenge it asked for. */
export class UnsafeChallengeError extends Error {
  constructor(reason: string) {
    super(`refusing to sign: ${reason}`);
    this.name = "UnsafeChallengeError";
  }
}
