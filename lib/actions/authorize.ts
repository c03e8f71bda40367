import { resolveAccount, type LoginIdentity } from "../accounts/accounts";
import { normalizeClientId } from "../clients/registry";
import type { Keyfob } from "../keyfob";
import { invalidRequest, OAuthError } from "../oauth/errors";
import { opaqueDigest, randomOpaque } from "../oauth/opaque";
import { parseCodeChallenge } from "../oauth/pkce";
import { parseScope } from "../oauth/scope";
import { generateNonce } from "../siwe/challenge";
import { verifyLoginMessage } from "../siwe/login";

const PROMPTS = ["none", "login", "consent", "select_account"];
/** How long the user has to log in on the hosted page. */
const INTERACTION_TTL_MS = 10 * 60_000;

/** What GET /auth does next. */
export type AuthorizationStart =
  /** client_id or redirect_uri cannot be trusted: show this on an error page, never redirect. */
  | { kind: "error"; description: string }
  /** Send the browser to the client: an error response (RFC 6749 4.1.2.1) or, for prompt=none, a code. */
  | { kind: "redirect"; location: string }
  /** Show the login page for this interaction. */
  | { kind: "login"; interactionId: string; clientName: string; walletNonce: string; scope: string[]; loginHint?: string };

/**
 * Validates an authorization request (GET /auth). Only once client_id and redirect_uri are known
 * to belong together are errors sent back to the redirect URI, with state and iss (RFC 9207).
 * With prompt=none the current session, if any, completes the request at once.
 */
export async function startAuthorization(keyfob: Keyfob, query: URLSearchParams, session?: LoginIdentity): Promise<AuthorizationStart> {
  const { db, config } = keyfob;
  const rawClientId = query.get("client_id");
  const redirectUri = query.get("redirect_uri");
  if (!rawClientId) return { kind: "error", description: "The request has no client_id." };
  if (query.getAll("client_id").length > 1 || query.getAll("redirect_uri").length > 1) {
    return { kind: "error", description: "client_id and redirect_uri must each be given once." };
  }
  const clientId = normalizeClientId(rawClientId);
  const client = await db.client.findUnique({
    where: { id: clientId },
    select: { name: true, enabled: true, redirectUris: { where: { uri: redirectUri ?? "" }, select: { uri: true } } },
  });
  if (!client?.enabled) return { kind: "error", description: "This application is unknown or disabled." };
  if (!redirectUri || client.redirectUris.length === 0) {
    return { kind: "error", description: "The redirect_uri is not registered for this application." };
  }

  const state = query.get("state") ?? undefined;
  const respond = (params: Record<string, string | undefined>) => ({
    kind: "redirect" as const,
    location: authorizationResponse(redirectUri, { ...params, state, iss: config.issuerUrl }),
  });
  let request: PendingRequest;
  try {
    for (const name of new Set(query.keys())) {
      if (query.getAll(name).length > 1) throw invalidRequest(`parameter "${name}" is included more than once`);
    }
    const responseType = query.get("response_type");
    if (!responseType) throw invalidRequest("missing required parameter \"response_type\"");
    if (responseType !== "code") throw new OAuthError("unsupported_response_type", 'response_type must be "code"');
    const scope = query.get("scope");
    if (!scope) throw invalidRequest('missing required parameter "scope"');
    const prompt = parsePrompt(query.get("prompt") || undefined);
    request = {
      clientId,
      redirectUri,
      scope: parseScope(scope).join(" "),
      state: state ?? null,
      nonce: query.get("nonce") || null,
      codeChallenge: parseCodeChallenge(query.get("code_challenge") || undefined, query.get("code_challenge_method") || undefined) ?? null,
      prompt: prompt ?? null,
    };
  } catch (error) {
    if (error instanceof OAuthError) return respond({ error: error.code, error_description: error.message });
    throw error;
  }

  if (request.prompt?.split(" ").includes("none")) {
    if (!session) return respond({ error: "login_required", error_description: "the user is not logged in" });
    return { kind: "redirect", location: await issueAuthorizationCode(keyfob, request, session) };
  }
  const interaction = await db.interaction.create({
    data: { id: randomOpaque(), ...request, walletNonce: generateNonce(), expiresAt: new Date(Date.now() + INTERACTION_TTL_MS) },
  });
  return {
    kind: "login",
    interactionId: interaction.id,
    clientName: client.name,
    walletNonce: interaction.walletNonce!,
    scope: request.scope.split(" "),
    loginHint: query.get("login_hint") || undefined,
  };
}

/** Ends an interaction with the identity that logged in: an authorization code, and where to send it. */
export async function completeAuthorization(keyfob: Keyfob, interactionId: string, identity: LoginIdentity): Promise<string> {
  const { db } = keyfob;
  const now = new Date();
  const interaction = await db.interaction.findUnique({ where: { id: interactionId }, include: { client: { select: { enabled: true } } } });
  if (!interaction || interaction.expiresAt <= now || interaction.completedAt) throw expiredInteraction();
  if (!interaction.client.enabled) throw new OAuthError("invalid_client", "this application has been disabled");
  const { count } = await db.interaction.updateMany({
    where: { id: interactionId, completedAt: null, expiresAt: { gt: now } },
    data: { completedAt: now },
  });
  if (count !== 1) throw expiredInteraction();
  return issueAuthorizationCode(keyfob, interaction, identity);
}

/** A wallet login on the hosted page: the EIP-4361 message must carry this interaction's nonce. */
export async function loginWithWallet(keyfob: Keyfob, interactionId: string, message: string, signature: string): Promise<string> {
  const interaction = await keyfob.db.interaction.findUnique({ where: { id: interactionId }, select: { walletNonce: true } });
  if (!interaction?.walletNonce) throw expiredInteraction();
  const address = await verifyLoginMessage(keyfob, message, signature, interaction.walletNonce);
  return completeAuthorization(keyfob, interactionId, { provider: "web3", subject: address, emailVerified: false });
}

/** The interaction's client and redirect URI, for an error redirect when the user cancels. */
export async function interactionRedirect(keyfob: Keyfob, interactionId: string, error: string, description: string) {
  const interaction = await keyfob.db.interaction.findUnique({ where: { id: interactionId } });
  if (!interaction) throw expiredInteraction();
  return authorizationResponse(interaction.redirectUri, {
    error,
    error_description: description,
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
};

async function issueAuthorizationCode(keyfob: Keyfob, request: PendingRequest, identity: LoginIdentity): Promise<string> {
  const { db, config } = keyfob;
  const accountId = await resolveAccount(keyfob, identity);
  const code = randomOpaque();
  await db.authorizationCode.create({
    data: {
      codeHash: opaqueDigest(code),
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      accountId,
      connector: identity.provider,
      scope: request.scope,
      nonce: request.nonce,
      codeChallenge: request.codeChallenge,
      email: identity.email,
      emailVerified: identity.emailVerified,
      expiresAt: new Date(Date.now() + config.authorizationCodeTtl * 1000),
    },
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

function expiredInteraction() {
  return invalidRequest("this login has expired or was already completed; start again from the application");
}
