/**
 * Resource indicators (RFC 8707): the resource servers a client registered, and the one a request
 * names with `resource` at /auth, /par or /token. Its access token then carries that resource as
 * `aud` (RFC 9068 3), and a token asked for no resource keeps the client as `aud`, as before.
 *
 * One resource per request and per grant: an access token has one audience, so a resource server
 * that checks `aud` never accepts a token meant for another too, and a refresh family stays for the
 * resource it was granted for. A second `resource` is refused (invalid_target) rather than one of
 * them picked; a client that needs tokens for two resource servers asks for each.
 */
import { OAuthError } from "./errors";

/** The longest resource URI registered or accepted, and how many one client may register. */
export const MAX_RESOURCE_LENGTH = 2000;
export const MAX_RESOURCES = 50;

/** Why `uri` cannot be registered as a resource (RFC 8707 2: an absolute URI without a fragment), or undefined when it can. */
export function resourceProblem(uri: string): string | undefined {
  if (uri.length > MAX_RESOURCE_LENGTH) return `must not exceed ${MAX_RESOURCE_LENGTH} characters`;
  if (!URL.canParse(uri) || /\s/.test(uri)) return "must be an absolute URI";
  if (uri.includes("#")) return "must not contain a fragment (RFC 8707 2)";
  return undefined;
}

export const invalidTarget = (description: string) => new OAuthError("invalid_target", description);

/** Refuses a second `resource` in one request (see above). */
export const oneResourceOnly = () => invalidTarget("one resource per request: ask for a token for each resource server");

/**
 * The resource a request names, checked against what the client registered: undefined when it
 * names none, invalid_target when it is malformed or not the client's.
 */
export function requestedResource(registered: readonly string[] | undefined, resource: string | undefined): string | undefined {
  if (resource === undefined) return undefined;
  if (resourceProblem(resource) !== undefined) throw invalidTarget("resource must be an absolute URI without a fragment (RFC 8707 2)");
  if (!registered?.includes(resource)) throw invalidTarget("resource is not one of this client's registered resources");
  return resource;
}

/** Refuses (invalid_target, RFC 8707 2.2) a `resource` other than the one a grant (a code, a refresh family) was authorized for. */
export function requireGrantedResource(granted: string | null, resource: string | undefined): void {
  if (resource !== undefined && resource !== granted)
    throw invalidTarget(
      granted === null ? "the grant was authorized for no resource" : "resource is not the one the grant was authorized for",
    );
}

/**
 * The resource of a token issued under a refresh family authorized for `granted`: the request may
 * name that one again or none (requireGrantedResource), and the client must still register it.
 */
export function grantedResource(registered: readonly string[] | undefined, granted: string | null, resource: string | undefined) {
  requireGrantedResource(granted, resource);
  if (granted !== null && !registered?.includes(granted))
    throw invalidTarget("the grant's resource is no longer registered for this client");
  return granted ?? undefined;
}
