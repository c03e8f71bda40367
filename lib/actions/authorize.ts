import { normalizeClientId } from "../clients/client-id";
import { scopesToConsent } from "../consent/grants";
import { authorizationResponse } from "../clients/redirect-uri";
import { createInteraction, issueAuthorizationCode, sessionMayComplete, type PendingRequest } from "../interactions/interactions";
import type { Keyfob } from "../keyfob";
import { invalidRequest, OAuthError } from "../oauth/errors";
import { rateLimited } from "../metrics";
import { isOpaque, opaqueDigest } from "../oauth/opaque";
import { checkParameter, hasControlCharacter, isAcceptableParameter } from "../oauth/params";
import { parseCodeChallenge } from "../oauth/pkce";
import type { Reason, ReasonCode } from "../oauth/reasons";
import { oneResourceOnly, requestedResource } from "../oauth/resource";
import { parseScope } from "../oauth/scope";
import type { LoginSession } from "../sessions/login-session";
import { verifyIdTokenHint } from "../tokens/id-token-hint";

const PROMPTS = ["none", "login", "consent", "select_account"];

/** How the authorization response is returned (OAuth 2.0 Multiple Response Type Encoding Practices 2.1): in the redirect URI's query only. */
export const RESPONSE_MODES = ["query"];

/** A pushed request's request_uri: this prefix, then a random value (RFC 9126 2.2). */
export const REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:";

/** What GET /auth does next. */
export type AuthorizationStart =
  /** client_id or redirect_uri cannot be trusted: show why on an error page, never redirect. */
  | { kind: "error"; reason: Reason }
  /** Send the browser to the client: an error response (RFC 6749 4.1.2.1, `error` for the metrics) or, for prompt=none, a code. */
  | { kind: "redirect"; location: string; error?: string }
  /** Show the login page for this interaction. */
  | { kind: "login"; interactionId: string; clientName: string; walletNonce: string; scope: string[]; loginHint?: string };

/** Who is asking: the browser's login session with Keyfob, if any, and its address (for the cap on unfinished logins). */
export type AuthorizationContext = { session?: LoginSession; ip?: string };

/** An authorization request checked: untrusted (shown why, never redirected), refused (an error for the redirect URI) or valid. */
export type CheckedRequest =
  | { kind: "untrusted"; reason: Reason }
  | { kind: "refused"; error: OAuthError; redirectUri: string; state?: string }
  | { kind: "valid"; request: PendingRequest; clientName: string; requireConsent: boolean; refreshTokensAllowed: boolean };

/**
 * Validates an authorization request (GET or POST /auth, the parameters of a pushed one, or one
 * being pushed at /par: the same checks for all). Only once client_id and redirect_uri are known to
 * belong together is a failure `refused` (for the redirect URI). `pushed`: the parameters came
 * through PAR, which a client that requires it (RFC 9126 6) must use.
 */
export async function checkAuthorizationRequest(
  keyfob: Pick<Keyfob, "config" | "store" | "keys">,
  query: URLSearchParams,
  pushed: boolean,
): Promise<CheckedRequest> {
  const { store } = keyfob;
  const rawClientId = query.get("client_id");
  const redirectUri = query.get("redirect_uri");
  const untrusted = (code: ReasonCode) => ({ kind: "untrusted" as const, reason: { code } });
  if (!rawClientId) return untrusted("no_client_id");
  if (query.getAll("client_id").length > 1 || query.getAll("redirect_uri").length > 1) return untrusted("client_parameter_repeated");
  if (hasControlCharacter(rawClientId) || hasControlCharacter(redirectUri ?? "")) return untrusted("client_parameter_control_character");
  const clientId = normalizeClientId(rawClientId);
  const client = await store.clients.findWithRedirectUri(clientId, redirectUri ?? "");
  if (!client?.enabled) return untrusted("unknown_client");
  if (!redirectUri || !client.redirectUriRegistered) return untrusted("unregistered_redirect_uri");

  const state = query.get("state") ?? undefined;
  try {
    for (const name of new Set(query.keys())) {
      if (name === "resource" && query.getAll(name).length > 1) throw oneResourceOnly();
      if (query.getAll(name).length > 1) throw invalidRequest(`parameter ${name} is included more than once`);
      checkParameter(name, query.get(name)!);
    }
    if (client.requirePushedAuthorizationRequests && !pushed)
      throw invalidRequest("this client must push its authorization requests (PAR) and send their request_uri");
    // Request objects (OpenID Connect Core 6, RFC 9101) are not supported: refused rather than
    // ignored, since the parameters inside them would be lost (discovery says so too).
    if (query.has("request"))
      throw new OAuthError("request_not_supported", "request objects are not supported; send the parameters in the query");
    if (query.has("request_uri"))
      throw new OAuthError(
        "request_uri_not_supported",
        pushed
          ? "a pushed request cannot carry a request_uri (RFC 9126 2.1)"
          : "request_uri is only accepted for requests pushed to /par (RFC 9126)",
      );
    const responseType = query.get("response_type");
    if (!responseType) throw invalidRequest("missing required parameter: response_type");
    if (responseType !== "code") throw new OAuthError("unsupported_response_type", "response_type must be code");
    // Refused rather than ignored: a client asking for another mode would not find the response where it looks.
    const responseMode = query.get("response_mode") || undefined;
    if (responseMode !== undefined && !RESPONSE_MODES.includes(responseMode))
      throw invalidRequest(`response_mode must be among: ${RESPONSE_MODES.join(", ")}`);
    const scope = query.get("scope");
    if (!scope) throw invalidRequest("missing required parameter: scope");
    const prompt = parsePrompt(query.get("prompt") || undefined);
    const codeChallenge =
      parseCodeChallenge(query.get("code_challenge") || undefined, query.get("code_challenge_method") || undefined) ?? null;
    // RFC 9700 2.1.1: PKCE for every public client; a confidential one when an admin requires it.
    if (!codeChallenge && (!client.secretHash || client.requirePkce)) {
      throw invalidRequest("code_challenge is required for this client (PKCE with S256)");
    }
    const dpopJkt = query.get("dpop_jkt") || null;
    // A JWK SHA-256 thumbprint (RFC 7638): 43 base64url characters.
    if (dpopJkt !== null && !/^[A-Za-z0-9_-]{43}$/.test(dpopJkt))
      throw invalidRequest("dpop_jkt must be the base64url SHA-256 thumbprint of a JWK (RFC 9449 10)");
    const resource = requestedResource(client.resources, query.get("resource") || undefined) ?? null;
    const hint = query.get("id_token_hint");
    const hinted = hint ? await verifyIdTokenHint(keyfob, hint) : undefined;
    if (hinted && hinted.clientId !== clientId) throw invalidRequest("id_token_hint was issued to another client");
    const request = {
      clientId,
      redirectUri,
      scope: parseScope(scope).join(" "),
      state: state ?? null,
      nonce: query.get("nonce") || null,
      codeChallenge,
      prompt: prompt ?? null,
      loginHint: query.get("login_hint") || null,
      maxAge: parseMaxAge(query.get("max_age") ?? undefined),
      hintAccount: hinted?.accountId ?? null,
      uiLocales: query.get("ui_locales") || null,
      dpopJkt,
      resource,
    };
    const { requireConsent, refreshTokensAllowed } = client;
    return { kind: "valid", request, clientName: client.name, requireConsent, refreshTokensAllowed };
  } catch (error) {
    if (error instanceof OAuthError) return { kind: "refused", error, redirectUri, state };
    throw error;
  }
}

/**
 * Starts an authorization request (GET or POST /auth): its own parameters or, with a request_uri,
 * those pushed at /par (RFC 9126 4), validated (checkAuthorizationRequest). Errors go back to the
 * redirect URI with state and iss (RFC 9207). With prompt=none the browser's session completes the
 * request at once, if it may (see sessionMayComplete; otherwise login_required) and if the client
 * needs no consent it lacks (otherwise consent_required, OpenID Connect Core 3.1.2.6).
 */
export async function startAuthorization(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys">,
  query: URLSearchParams,
  context: AuthorizationContext = {},
): Promise<AuthorizationStart> {
  const { config } = keyfob;
  // Any other request_uri (a request object by reference, RFC 9101) is refused as unsupported.
  const pushed = query.get("request_uri")?.startsWith(REQUEST_URI_PREFIX) ?? false;
  const parameters = pushed ? await pushedParameters(keyfob, query) : query;
  if (!(parameters instanceof URLSearchParams)) return { kind: "error", reason: parameters };
  const checked = await checkAuthorizationRequest(keyfob, parameters, pushed);
  if (checked.kind === "untrusted") return { kind: "error", reason: checked.reason };
  const respond = (redirectUri: string, state: string | undefined, error: { error: string; error_description: string }) => ({
    kind: "redirect" as const,
    error: error.error,
    // A state that is itself refused is not echoed back.
    location: authorizationResponse(redirectUri, {
      ...error,
      state: state !== undefined && isAcceptableParameter("state", state) ? state : undefined,
      iss: config.issuerUrl,
    }),
  });
  if (checked.kind === "refused")
    return respond(checked.redirectUri, checked.state, { error: checked.error.code, error_description: checked.error.message });
  const { request } = checked;
  const refuse = (error: { error: string; error_description: string }) => respond(request.redirectUri, request.state ?? undefined, error);

  if (request.prompt?.split(" ").includes("none")) {
    const { session } = context;
    if (!session || !sessionMayComplete(request, session, config, keyfob.clock.now())) {
      return refuse({
        error: "login_required",
        error_description: session ? "a new login is required for this request" : "the user is not logged in",
      });
    }
    // A third-party client the account has not granted these scopes: the consent page would be needed.
    if ((await scopesToConsent(keyfob, request, checked, session.accountId)).length > 0)
      return refuse({ error: "consent_required", error_description: "the user has not allowed this application this access" });
    return { kind: "redirect", location: await issueAuthorizationCode(keyfob, request, session.identity, session) };
  }
  const interaction = await createInteraction(keyfob, request, context.ip);
  if (!interaction) {
    rateLimited.inc({ endpoint: "authorize", limit: "pending_logins" });
    return refuse({
      error: "temporarily_unavailable",
      error_description: "too many unfinished sign-ins from this address; finish or wait for them to expire",
    });
  }
  return {
    kind: "login",
    interactionId: interaction.id,
    clientName: checked.clientName,
    walletNonce: interaction.walletNonce,
    scope: request.scope.split(" "),
    loginHint: request.loginHint ?? undefined,
  };
}

/**
 * The parameters of the pushed request an authorization request names by request_uri, used up
 * (single use): only for the client that pushed it, named by client_id (RFC 9126 4). The request's
 * other parameters are ignored, as RFC 9101 5 has it for request objects. A Reason when there is
 * none to use: unknown, expired, used, another client's.
 */
async function pushedParameters(keyfob: Pick<Keyfob, "clock" | "store">, query: URLSearchParams): Promise<URLSearchParams | Reason> {
  const rawClientId = query.get("client_id");
  const requestUri = query.get("request_uri") ?? "";
  if (!rawClientId) return { code: "no_client_id" };
  if (query.getAll("client_id").length > 1) return { code: "client_parameter_repeated" };
  if (hasControlCharacter(rawClientId)) return { code: "client_parameter_control_character" };
  const random = requestUri.startsWith(REQUEST_URI_PREFIX) ? requestUri.slice(REQUEST_URI_PREFIX.length) : undefined;
  if (query.getAll("request_uri").length > 1 || !isOpaque(random)) return { code: "unknown_request_uri" };
  const parameters = await keyfob.store.pushedRequests.consume(opaqueDigest(random), normalizeClientId(rawClientId), keyfob.clock.now());
  return parameters === undefined ? { code: "unknown_request_uri" } : new URLSearchParams(parameters);
}

function parsePrompt(prompt: string | undefined): string | undefined {
  if (prompt === undefined) return undefined;
  const values = prompt.split(" ").filter(Boolean);
  if (values.some((v) => !PROMPTS.includes(v))) throw invalidRequest(`prompt must be among: ${PROMPTS.join(", ")}`);
  if (values.includes("none") && values.length > 1) throw invalidRequest("prompt=none cannot be combined with other values");
  return values.join(" ");
}

/** max_age (OpenID Connect Core 3.1.2.1): seconds, a non-negative whole number. */
function parseMaxAge(value: string | undefined): number | null {
  if (value === undefined || value === "") return null;
  if (!/^\d{1,9}$/.test(value)) throw invalidRequest("max_age must be a whole number of seconds");
  return Number(value);
}
