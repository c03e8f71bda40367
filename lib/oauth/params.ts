import { invalidRequest, OAuthError } from "./errors";
import type { HttpRequest } from "../http/request";
import { oneResourceOnly } from "./resource";

/** C0 controls and DEL: never part of a valid parameter, and PostgreSQL refuses NUL in text (22021). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_CHARACTER = /[\x00-\x1f\x7f]/;

export function hasControlCharacter(value: string): boolean {
  return CONTROL_CHARACTER.test(value);
}

/**
 * Longest value accepted per parameter, in bytes. Whatever a request sends is stored (challenges,
 * logins) or copied into tokens (nonce), so every value is bounded; the body as a whole is too.
 */
const MAX_LENGTHS: Record<string, number> = {
  client_id: 128,
  state: 512,
  nonce: 512,
  login_hint: 512,
  code_verifier: 128, // RFC 7636 4.1: 43 to 128 characters
  // ERC-6492 wrappers carry the account factory's calldata.
  signature: 12 * 1024,
};
const MAX_LENGTH = 4096;

/** Refuses (400 invalid_request) a parameter name or value with a control character, or a value longer than its bound. */
export function checkParameter(name: string, value: string): void {
  if (hasControlCharacter(name)) throw invalidRequest("a parameter name contains a control character");
  if (hasControlCharacter(value)) throw invalidRequest(`parameter ${name} contains a control character`);
  const max = MAX_LENGTHS[name] ?? MAX_LENGTH;
  if (Buffer.byteLength(value) > max) throw invalidRequest(`parameter ${name} must not exceed ${max} bytes`);
}

export function isAcceptableParameter(name: string, value: string): boolean {
  try {
    checkParameter(name, value);
    return true;
  } catch {
    return false;
  }
}

/** Request bodies larger than this are refused with 413. */
export const MAX_BODY_BYTES = 16 * 1024;

export type Params = {
  /** The value of a parameter, or undefined when absent or empty (RFC 6749 3.1). */
  get(name: string): string | undefined;
};

/** Parameters as readParams read them: each one too, for an endpoint that keeps the whole request (PAR). */
export type ReadParams = Params & { entries(): Iterable<[string, string]> };

/**
 * Reads OAuth parameters from the query string and an `application/x-www-form-urlencoded` body,
 * which existing clients mix: some send everything in the query with an empty body and no
 * Content-Type. A parameter repeated with another value is refused (RFC 6749 3.1; a second `resource`
 * as invalid_target, lib/oauth/resource.ts), and so are the `bodyOnly` parameters in the query.
 */
export async function readParams(request: HttpRequest, bodyOnly: readonly string[] = []): Promise<ReadParams> {
  const query = new URL(request.url).searchParams;
  for (const name of bodyOnly) {
    if (query.has(name)) throw invalidRequest(`parameter ${name} must be sent in the request body, not in the URL`);
  }
  const body = await readFormBody(request);
  const merged = new Map<string, string>();
  for (const source of [query, body]) {
    for (const [name, value] of source) {
      checkParameter(name, value);
      const seen = merged.get(name);
      if (seen !== undefined && seen !== value)
        throw name === "resource" ? oneResourceOnly() : invalidRequest(`parameter ${name} is included more than once`);
      merged.set(name, value);
    }
  }
  return { get: (name) => merged.get(name) || undefined, entries: () => merged.entries() };
}

async function readFormBody(request: HttpRequest): Promise<URLSearchParams> {
  if (request.method === "GET" || request.method === "HEAD" || !request.body) return new URLSearchParams();
  const text = await readBodyText(request);
  if (text.length === 0) return new URLSearchParams();
  const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  if (type && type !== "application/x-www-form-urlencoded") {
    throw new OAuthError("invalid_request", { code: "body_not_form" }, 415);
  }
  return new URLSearchParams(text);
}

/** Reads the body as UTF-8, refusing with 413 as soon as it passes MAX_BODY_BYTES. */
export async function readBodyText(request: HttpRequest): Promise<string> {
  const tooLarge = () => new OAuthError("invalid_request", { code: "body_too_large", params: { max: MAX_BODY_BYTES } }, 413);
  const declared = Number(request.headers.get("content-length"));
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  if (request.body instanceof Uint8Array) {
    if (request.body.byteLength > MAX_BODY_BYTES) throw tooLarge();
    return Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength).toString("utf8");
  }
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The value of a required parameter. */
export function required(params: Params, name: string): string {
  const value = params.get(name);
  if (value === undefined) throw invalidRequest(`missing required parameter: ${name}`);
  return value;
}
