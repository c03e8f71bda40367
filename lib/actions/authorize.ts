import { normalizeClientId } from "../clients/client-id";
import { authorizationResponse } from "../clients/redirect-uri";
import { createInteraction, issueAuthorizationCode, sessionMayComplete, type PendingRequest } from "../interactions/interactions";
import type { Keyfob } from "../keyfob";
import { invalidRequest, OAuthError } from "../oauth/errors";
import { rateLimited } from "../metrics";
import { checkParameter, hasControlCharacter, isAcceptableParameter } from "../oauth/params";
import { parseCodeChallenge } from "../oauth/pkce";
import type { Reason, ReasonCode } from "../oauth/reasons";
import { parseScope } from "../oauth/scope";
import type { LoginSession } from "../sessions/login-session";
import { verifyIdTokenHint } from "../tokens/id-token-hint";

const PROMPTS = ["none", "login", "consent", "select_account"];

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

/**
 * Validates an authorization request (GET or POST /auth). Only once client_id and redirect_uri are
 * known to belong together are errors sent back to the redirect URI, with state and iss (RFC 9207).
 * With prompt=none the browser's session completes the request at once, if it may (see
 * sessionMayComplete); otherwise login_required.
 */
export async function startAuthorization(
  keyfob: Keyfob,
  query: URLSearchParams,
  context: AuthorizationContext = {},
): Promise<AuthorizationStart> {
  const { store, config } = keyfob;
  const rawClientId = query.get("client_id");
  const redirectUri = query.get("redirect_uri");
  const untrusted = (code: ReasonCode) => ({ kind: "error" as const, reason: { code } });
  if (!rawClientId) return untrusted("no_client_id");
  if (query.getAll("client_id").length > 1 || query.getAll("redirect_uri").length > 1) return untrusted("client_parameter_repeated");
  if (hasControlCharacter(rawClientId) || hasControlCharacter(redirectUri ?? "")) return untrusted("client_parameter_control_character");
  const clientId = normalizeClientId(rawClientId);
  const client = await store.clients.findWithRedirectUri(clientId, redirectUri ?? "");
  if (!client?.enabled) return untrusted("unknown_client");
  if (!redirectUri || !client.redirectUriRegistered) return untrusted("unregistered_redirect_uri");

  const state = query.get("state") ?? undefined;
  const respond = (params: { error: string; error_description: string }) => ({
    kind: "redirect" as const,
    error: params.error,
    // A state that is itself refused is not echoed back.
    location: authorizationResponse(redirectUri, {
      ...params,
      state: state !== undefined && isAcceptableParameter("state", state) ? state : undefined,
      iss: config.issuerUrl,
    }),
  });
  let request: PendingRequest;
  try {
    for (const name of new Set(query.keys())) {
      if (query.getAll(name).length > 1) throw invalidRequest(`parameter ${name} is included more than once`);
      checkParameter(name, query.get(name)!);
    }
    // Request objects (OpenID Connect Core 6, RFC 9101) are not supported: refused rather than
    // ignored, since the parameters inside them would be lost (discovery says so too).
    if (query.has("request"))
      throw new OAuthError("request_not_supported", "request objects are not supported; send the parameters in the query");
    if (query.has("request_uri"))
      throw new OAuthError("request_uri_not_supported", "request_uri is not supported; send the parameters in the query");
    const responseType = query.get("response_type");
    if (!responseType) throw invalidRequest("missing required parameter: response_type");
    if (responseType !== "code") throw new OAuthError("unsupported_response_type", "response_type must be code");
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
    const hint = query.get("id_token_hint");
    const hinted = hint ? await verifyIdTokenHint(keyfob, hint) : undefined;
    if (hinted && hinted.clientId !== clientId) throw invalidRequest("id_token_hint was issued to another client");
    request = {
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
    };
  } catch (error) {
    if (error instanceof OAuthError) return respond({ error: error.code, error_description: error.message });
    throw error;
  }

  if (request.prompt?.split(" ").includes("none")) {
    const { session } = context;
    if (!session || !sessionMayComplete(request, session, config)) {
      return respond({
        error: "login_required",
        error_description: session ? "a new login is required for this request" : "the user is not logged in",
      });
    }
    return { kind: "redirect", location: await issueAuthorizationCode(keyfob, request, session.identity, session) };
  }
  const interaction = await createInteraction(keyfob, request, context.ip);
  if (!interaction) {
    rateLimited.inc({ endpoint: "authorize", limit: "pending_logins" });
    return respond({
      error: "temporarily_unavailable",
      error_description: "too many unfinished sign-ins from this address; finish or wait for them to expire",
    });
  }
  return {
    kind: "login",
    interactionId: interaction.id,
    clientName: client.name,
    walletNonce: interaction.walletNonce,
    scope: request.scope.split(" "),
    loginHint: request.loginHint ?? undefined,
  };
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
