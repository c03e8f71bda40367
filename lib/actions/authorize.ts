import type { LoginIdentity } from "../accounts/accounts";
import { normalizeClientId } from "../clients/client-id";
import { addressBucket } from "../http/client-ip";
import type { Keyfob } from "../keyfob";
import { ADMIN_CLIENT_ID } from "../admin/session";
import { errorDescription, invalidRequest, OAuthError } from "../oauth/errors";
import { rateLimited } from "../metrics";
import { isOpaque, opaqueDigest, randomOpaque } from "../oauth/opaque";
import { checkParameter, hasControlCharacter, isAcceptableParameter } from "../oauth/params";
import { parseCodeChallenge } from "../oauth/pkce";
import type { Reason, ReasonCode } from "../oauth/reasons";
import { parseScope } from "../oauth/scope";
import { generateNonce } from "../siwe/challenge";
import { logIn, type FreshLogin } from "../sessions/login";
import { CONTRACT_SIGNATURE, type LoginSession } from "../sessions/login-session";
import { verifyLoginMessage } from "../siwe/login";
import { verifyIdTokenHint } from "../tokens/id-token-hint";

const PROMPTS = ["none", "login", "consent", "select_account"];
/** How long the user has to log in on the hosted page. */
const INTERACTION_TTL_MS = 10 * 60_000;

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

/** How an interaction ends in a login: a fresh one, or the browser's live session. */
export type Login = (FreshLogin & { session?: undefined }) | { session: LoginSession; identity?: undefined };

/** A completed interaction: where to send the browser, and the new session of a fresh login (for its cookie). */
export type Completion = { location: string; newSession?: { token: string; expiresAt: Date } };

/**
 * Validates an authorization request (GET or POST /auth). Only once client_id and redirect_uri are
 * known to belong together are errors sent back to the redirect URI, with state and iss (RFC 9207).
 * With prompt=none the browser's session completes the request at once, if it may (see
 * sessionMayComplete); otherwise login_required.
 */
export async function startAuthorization(keyfob: Keyfob, query: URLSearchParams, context: AuthorizationContext = {}): Promise<AuthorizationStart> {
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
    location: authorizationResponse(redirectUri, { ...params, state: state !== undefined && isAcceptableParameter("state", state) ? state : undefined, iss: config.issuerUrl }),
  });
  let request: PendingRequest;
  try {
    for (const name of new Set(query.keys())) {
      if (query.getAll(name).length > 1) throw invalidRequest(`parameter ${name} is included more than once`);
      checkParameter(name, query.get(name)!);
    }
    // Request objects (OpenID Connect Core 6, RFC 9101) are not supported: refused rather than
    // ignored, since the parameters inside them would be lost (discovery says so too).
    if (query.has("request")) throw new OAuthError("request_not_supported", "request objects are not supported; send the parameters in the query");
    if (query.has("request_uri")) throw new OAuthError("request_uri_not_supported", "request_uri is not supported; send the parameters in the query");
    const responseType = query.get("response_type");
    if (!responseType) throw invalidRequest("missing required parameter: response_type");
    if (responseType !== "code") throw new OAuthError("unsupported_response_type", "response_type must be code");
    const scope = query.get("scope");
    if (!scope) throw invalidRequest("missing required parameter: scope");
    const prompt = parsePrompt(query.get("prompt") || undefined);
    const codeChallenge = parseCodeChallenge(query.get("code_challenge") || undefined, query.get("code_challenge_method") || undefined) ?? null;
    // RFC 9700 2.1.1: PKCE for every public client; a confidential one when an admin requires it.
    if (!codeChallenge && (!client.secretHash || client.requirePkce)) {
      throw invalidRequest("code_challenge is required for this client (PKCE with S256)");
    }
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
    };
  } catch (error) {
    if (error instanceof OAuthError) return respond({ error: error.code, error_description: error.message });
    throw error;
  }

  if (request.prompt?.split(" ").includes("none")) {
    const { session } = context;
    if (!session || !sessionMayComplete(request, session, config)) {
      return respond({ error: "login_required", error_description: session ? "a new login is required for this request" : "the user is not logged in" });
    }
    return { kind: "redirect", location: await issueAuthorizationCode(keyfob, request, session.identity, session) };
  }
  const now = new Date();
  // Counted per caller as the rate limits count them (an IPv6 caller by its /64).
  const caller = context.ip ? addressBucket(context.ip) : null;
  if (caller) {
    const cap = config.pendingCaps.loginsPerIp;
    const pending = await store.codes.pendingInteractions(caller, cap, now);
    if (pending >= cap) {
      rateLimited.inc({ endpoint: "authorize", limit: "pending_logins" });
      return respond({ error: "temporarily_unavailable", error_description: "too many unfinished sign-ins from this address; finish or wait for them to expire" });
    }
  }
  const interaction = await store.codes.createInteraction({
    id: randomOpaque(),
    ...request,
    walletNonce: generateNonce(),
    ip: caller,
    expiresAt: new Date(now.getTime() + INTERACTION_TTL_MS),
  });
  return {
    kind: "login",
    interactionId: interaction.id,
    clientName: client.name,
    walletNonce: interaction.walletNonce!,
    scope: request.scope.split(" "),
    loginHint: request.loginHint ?? undefined,
  };
}

/**
 * Whether the browser's session may complete a request without a new login: not when the request
 * asks for one (prompt=login), when the login is older than max_age, or when id_token_hint names
 * another account (OpenID Connect Core 3.1.2.1); and not for the dashboard when a smart account's
 * contract vouched for the login's signature, unless ADMIN_CONTRACT_SIGNATURES allows it.
 */
export function sessionMayComplete(
  request: { clientId: string; prompt: string | null; maxAge: number | null; hintAccount: string | null },
  session: LoginSession,
  config: { adminContractSignatures: boolean },
  now = new Date(),
): boolean {
  if (request.prompt?.split(" ").includes("login")) return false;
  if (request.maxAge !== null && now.getTime() - session.authTime.getTime() > request.maxAge * 1000) return false;
  if (request.clientId === ADMIN_CLIENT_ID && session.amr.includes(CONTRACT_SIGNATURE) && !config.adminContractSignatures) return false;
  return request.hintAccount === null || request.hintAccount === session.accountId;
}

/** What the hosted login page shows for an interaction, or undefined when it is unknown, expired or finished. */
export async function pendingInteraction(keyfob: Keyfob, interactionId: string) {
  if (!isOpaque(interactionId)) return undefined;
  const interaction = await keyfob.store.codes.findInteractionWithClient(interactionId);
  if (!interaction || interaction.completedAt || interaction.expiresAt <= new Date()) return undefined;
  return {
    id: interaction.id,
    clientId: interaction.clientId,
    clientName: interaction.client.name,
    clientLogoUrl: interaction.client.logoUrl,
    redirectUri: interaction.redirectUri,
    scope: interaction.scope.split(" "),
    prompt: interaction.prompt,
    maxAge: interaction.maxAge,
    hintAccount: interaction.hintAccount,
    walletNonce: interaction.walletNonce!,
    loginHint: interaction.loginHint ?? undefined,
    /** The request's ui_locales: the page's language comes first from it. */
    uiLocales: interaction.uiLocales ?? undefined,
    /** The authorization request again, to start over from. */
    restartUrl: `/auth?${authorizationRequestQuery(interaction)}`,
  };
}

/** The query of the authorization request an interaction was made from. */
function authorizationRequestQuery(request: PendingRequest): URLSearchParams {
  const query = new URLSearchParams({ client_id: request.clientId, redirect_uri: request.redirectUri, response_type: "code", scope: request.scope });
  if (request.state !== null) query.set("state", request.state);
  if (request.nonce) query.set("nonce", request.nonce);
  if (request.codeChallenge) {
    query.set("code_challenge", request.codeChallenge);
    query.set("code_challenge_method", "S256");
  }
  if (request.prompt) query.set("prompt", request.prompt);
  if (request.loginHint) query.set("login_hint", request.loginHint);
  if (request.maxAge !== null) query.set("max_age", String(request.maxAge));
  if (request.uiLocales) query.set("ui_locales", request.uiLocales);
  return query;
}

/**
 * Ends an interaction with a login: an authorization code, and where to send it. A fresh login
 * (wallet, Google, Apple) also starts a login session; the browser's session ("Continue as") may
 * complete it only if sessionMayComplete says so.
 */
export async function completeAuthorization(keyfob: Keyfob, interactionId: string, login: Login): Promise<Completion> {
  const { store } = keyfob;
  const now = new Date();
  if (!isOpaque(interactionId)) throw expiredInteraction();
  const interaction = await store.codes.findInteractionWithClient(interactionId);
  if (!interaction || interaction.expiresAt <= now || interaction.completedAt) throw expiredInteraction();
  if (!interaction.client.enabled) throw new OAuthError("invalid_client", "this application has been disabled");
  if (login.session && !sessionMayComplete(interaction, login.session, keyfob.config, now)) throw invalidRequest("this sign-in needs a new login");
  if (!(await store.codes.completeInteraction(interactionId, now))) throw expiredInteraction();
  if (login.session) {
    keyfob.audit.record({ action: "login.session_used", outcome: "success", clientId: interaction.clientId, accountId: login.session.accountId, detail: login.session.identity.provider });
    return { location: await issueAuthorizationCode(keyfob, interaction, login.session.identity, login.session) };
  }
  const { token, expiresAt, session } = await logIn(keyfob, login, interaction.clientId, now);
  return { location: await issueAuthorizationCode(keyfob, interaction, login.identity, session), newSession: { token, expiresAt } };
}

/** A wallet login on the hosted page: the EIP-4361 message must carry this interaction's nonce. */
export async function loginWithWallet(
  keyfob: Keyfob,
  interactionId: string,
  message: string,
  signature: string,
  client: { ip?: string; userAgent?: string } = {},
): Promise<Completion> {
  if (!isOpaque(interactionId)) throw expiredInteraction();
  // EIP-4361 messages are lines of printable text: a NUL or another control character (line feeds
  // aside) is no sign-in message, whatever the wallet signed.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  if (/[\x00-\x09\x0b-\x1f\x7f]/.test(message)) throw invalidRequest("the sign-in message contains a control character");
  const interaction = await keyfob.store.codes.findInteraction(interactionId);
  if (!interaction?.walletNonce) throw expiredInteraction();
  const { address, kind } = await verifyLoginMessage(keyfob, message, signature, interaction.walletNonce, "login").catch((error: unknown) => {
    // A refused wallet login is kept with its reason (the description the user saw).
    if (error instanceof OAuthError) keyfob.audit.record({ action: "login.failed", outcome: error.code, clientId: interaction.clientId, ip: client.ip, detail: `wallet: ${error.message}` });
    throw error;
  });
  // The RPC provider vouches for smart-account signatures: not enough for the dashboard unless the operator says so.
  if (kind === "contract" && interaction.clientId === ADMIN_CLIENT_ID && !keyfob.config.adminContractSignatures) {
    throw new OAuthError("invalid_grant", { code: "admin_contract_signature" });
  }
  return completeAuthorization(keyfob, interactionId, { identity: { provider: "web3", subject: address, emailVerified: false }, contractSignature: kind === "contract", ...client });
}

/**
 * Ends an interaction without a login (the user cancelled): it is completed in the same
 * conditional update a login uses, so a login after a cancel (or a cancel after a login, or of an
 * expired interaction) is refused. Returns the error redirect to the application.
 */
export async function interactionRedirect(keyfob: Keyfob, interactionId: string, error: string, description: string) {
  if (!isOpaque(interactionId)) throw expiredInteraction();
  const now = new Date();
  const interaction = await keyfob.store.codes.completeInteraction(interactionId, now);
  if (!interaction) throw expiredInteraction();
  return authorizationResponse(interaction.redirectUri, {
    error,
    // In RFC 6749's character set whatever the caller wrote, like every OAuthError's.
    error_description: errorDescription(description),
    state: interaction.state ?? undefined,
    iss: keyfob.config.issuerUrl,
  });
}

type PendingRequest = {
  clientId: string;
  redirectUri: string;
  scope: string;
  state: string | null;
  nonce: string | null;
  codeChallenge: string | null;
  prompt: string | null;
  loginHint: string | null;
  maxAge: number | null;
  hintAccount: string | null;
  uiLocales: string | null;
};

/** A code for the session's account, remembering when and how the user authenticated (auth_time, amr). */
async function issueAuthorizationCode(keyfob: Keyfob, request: PendingRequest, identity: LoginIdentity, session: LoginSession): Promise<string> {
  const { store, config } = keyfob;
  const code = randomOpaque();
  await store.codes.createCode({
    codeHash: opaqueDigest(code),
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    accountId: session.accountId,
    connector: identity.provider,
    scope: request.scope,
    nonce: request.nonce,
    codeChallenge: request.codeChallenge,
    email: identity.email,
    emailVerified: identity.emailVerified,
    authTime: session.authTime,
    amr: session.amr.join(" "),
    sessionId: session.id,
    expiresAt: new Date(Date.now() + config.authorizationCodeTtl * 1000),
  });
  return authorizationResponse(request.redirectUri, { code, state: request.state ?? undefined, iss: config.issuerUrl });
}

/** The redirect URI with response parameters added; a query it already has is kept. */
export function authorizationResponse(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.append(name, value);
  return url.toString();
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

function expiredInteraction() {
  return new OAuthError("invalid_request", { code: "interaction_expired" });
}
