const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Whether a URL's hostname is this machine: the one place plain http is acceptable. */
export const isLoopbackHost = (hostname: string) => LOOPBACK_HOSTS.has(hostname);

/**
 * Why a redirect URI cannot be registered, or undefined when it can: an absolute https URI, or
 * http on a loopback host (RFC 8252 7.3), without a fragment (RFC 6749 3.1.2). It is then stored
 * and matched exactly as written.
 */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return "must be an absolute URI";
  }
  if (uri !== uri.trim()) return "must not start or end with white space";
  if (uri.includes("#")) return "must not contain a fragment";
  if (url.username || url.password) return "must not contain credentials";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:") {
    return LOOPBACK_HOSTS.has(url.hostname) ? undefined : "http is allowed only on localhost or a loopback address; use https";
  }
  return "must use https (or http on localhost)";
}

/** Why an origin cannot be allowed for CORS, or undefined: scheme, host and port only; https, or http on loopback. */
export function originProblem(origin: string): string | undefined {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return "must be an origin such as https://app.example.com";
  }
  if (url.origin !== origin) return `must be an origin only (scheme, host and port), such as ${url.origin}`;
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:")
    return LOOPBACK_HOSTS.has(url.hostname) ? undefined : "http is allowed only on localhost or a loopback address; use https";
  return "must use https (or http on localhost)";
}

/** The redirect URI with response parameters added; a query it already has is kept. */
export function authorizationResponse(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(name, value);
  return url.toString();
}
