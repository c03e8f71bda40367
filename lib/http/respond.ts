import { OAuthError } from "../oauth/errors";

const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" };

/**
 * An HTTP answer as plain values: what the protocol routes answer (lib/http/routes.ts), written as
 * is by Keyfob's server. No web Response is made for them
 * (docs/decisions/2026-11-27-plain-requests.md).
 */
export type Answer = { status: number; headers: Record<string, string>; body?: string | Uint8Array };

/** A refusal an endpoint shows as its answer: `refused` is its outcome for the metrics and the log. */
export type Refused = { answer: Answer; refused: string };

/** A JSON answer that no cache may keep (RFC 6749 5.1). */
export function jsonAnswer(body: unknown, status = 200, headers: Record<string, string> = {}): Answer {
  return { status, headers: { "Content-Type": "application/json", ...NO_STORE, ...headers }, body: JSON.stringify(body) };
}

/** The answer as a web Response, for Next.js's route handlers and for tests. */
export function toResponse({ status, headers, body }: Answer): Response {
  return new Response(status === 204 || status === 304 ? null : ((body ?? null) as BodyInit | null), { status, headers });
}

/**
 * The error as the client sees it: an OAuthError as is; a client that went away before its request
 * was read as 400 (its fault, logged at info); a database outage as 503; anything else as 500
 * without details.
 */
export function toOAuthError(error: unknown): OAuthError {
  if (error instanceof OAuthError) return error;
  if (isClientAbort(error)) return new OAuthError("invalid_request", "the client closed the connection before the request was read");
  if (isUnavailable(error)) return new OAuthError("temporarily_unavailable", "a dependency is unavailable; try again shortly");
  return new OAuthError("server_error", "the server could not complete the request");
}

export function errorResponse(error: OAuthError, extraHeaders: Record<string, string> = {}): Response {
  return toResponse(errorAnswer(error, extraHeaders));
}

/**
 * The error as the documented JSON body, with its status and challenge headers. invalid_client is
 * challenged with Basic only when the client authenticated with Basic (`basicUsed`, RFC 6749 5.2):
 * a client that posted its credentials gets the JSON error alone, which libraries read as
 * invalid_client (openid-client reads a 401 with a challenge as the challenge).
 */
export function errorAnswer(error: OAuthError, extraHeaders: Record<string, string> = {}, basicUsed = false): Answer {
  const headers: Record<string, string> = { ...extraHeaders };
  if (error.code === "invalid_token") headers["WWW-Authenticate"] = `Bearer error="invalid_token"`;
  if (error.code === "invalid_client" && basicUsed) headers["WWW-Authenticate"] = `Basic realm="keyfob"`;
  if (error.challenge) headers["WWW-Authenticate"] = error.challenge;
  const retryAfter = error.retryAfter ?? (error.status === 503 ? 5 : undefined);
  if (retryAfter !== undefined) headers["Retry-After"] = String(retryAfter);
  return jsonAnswer(error.toJSON(), error.status, headers);
}

/**
 * Whether the client closed the connection mid-request: Node then fails the request's stream with
 * Error "aborted", code ECONNRESET (a reset from the database says "read ECONNRESET": an outage).
 * Not Keyfob's failure, so never logged as an error. (Writing an answer to a closed connection
 * fails nothing in Node: it is dropped.)
 */
export function isClientAbort(error: unknown): boolean {
  for (let e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    if (e.code === "ECONNRESET" && e.message === "aborted") return true;
    e = e.cause as typeof e;
  }
  return false;
}

const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "57P01",
  "57P03",
  "53300",
  "P1001",
  "P1002",
  "P1017",
  "P2024",
  // A transaction that could not start, or finish, in its time (lib/store): the database is too busy.
  "P2028",
  // A statement cancelled past DATABASE_STATEMENT_TIMEOUT: the same, for one statement.
  "57014",
  // A write on a read-only server: a standby, or a node mid-promotion in a failover.
  "25006",
]);

function isUnavailable(error: unknown): boolean {
  for (
    let e = error as
        | { code?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown }; name?: string; message?: string }
        | undefined,
      depth = 0;
    e && depth < 5;
    depth++
  ) {
    if (typeof e.code === "string" && UNAVAILABLE_CODES.has(e.code)) return true;
    if (e.name === "PrismaClientInitializationError") return true;
    // This instance's KEYFOB_SECRET opens no signing key: it cannot sign, its readiness fails, and an
    // instance with the right secret can (a restore or a typo in one server's settings).
    if (e.name === "KeyDecryptionError") return true;
    // Nor a stored key, so it creates none (the first key of an alg a client asked for).
    if (e.name === "KeyCreationRefused") return true;
    // node-postgres, when no connection could be had within connectionTimeoutMillis, and when the
    // server closed a connection mid-query (PostgreSQL restarting: it answered 500 in a fault test).
    if (e.message?.startsWith("timeout exceeded when trying to connect")) return true;
    if (e.message === "Connection terminated unexpectedly") return true;
    // Prisma's error for a raw statement (P2010) carries PostgreSQL's under its driver adapter's.
    e = (e.cause ?? e.meta?.driverAdapterError) as typeof e;
  }
  return false;
}

/** The error's class and code for the log: enough to investigate, no values from the request. */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const code = (error as { code?: unknown }).code;
  return `${error.name}${code ? ` ${String(code)}` : ""}: ${error.message.split("\n")[0].slice(0, 200)}`;
}
