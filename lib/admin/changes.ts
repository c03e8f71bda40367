import { z } from "zod";
import { ADMIN_CLIENT_ID, claimedClientId } from "../clients/client-id";
import { MAX_SECRET_OVERLAP_SECONDS, RegistryError, type ClientSettings, type Refusal } from "../clients/registry";
import type { Keyfob } from "../keyfob";
import { KeyCreationRefused, SIGNING_ALGS } from "../keys/keystore";
import { hasControlCharacter } from "../oauth/params";
import { MAX_RESOURCE_LENGTH, MAX_RESOURCES, resourceProblem } from "../oauth/resource";
import { AdminAccessError, InsufficientScope, requireAdmin, type Admin } from "./access";
import * as ops from "./operations";
import { MANAGEMENT_SCOPES, type ManagementScope } from "./scopes";
import { readAdminSession } from "./session";

/**
 * Every admin change goes through here, whoever asks: the dashboard's server actions (a session,
 * checked first: 401 signed out, 403 not an admin), the management API (an admin token, checked by
 * lib/admin/api.ts) and the command line (the operator). The input is validated with the same zod
 * schema for all three, with field-level errors, then the audited operation runs. Refusals are
 * audited too, with their reason: a non-admin's attempt (`forbidden`), invalid input and refused
 * changes (`rejected`, with the field errors).
 */

/** Form text: trimmed, bounded, and never a control character (PostgreSQL refuses NUL). */
const text = (max = 500) =>
  z
    .string()
    .trim()
    .max(max)
    .refine((value) => !hasControlCharacter(value), "must not contain control characters");
const clientId = text(128).min(1, "required");
const accountId = text(42).min(1, "required");
/**
 * A yes/no setting: a JSON boolean (API), "true"/"false" (forms, CLI) or a checkbox's "on"; absent
 * (or null, or empty): unchanged.
 */
const flag = z
  .preprocess(
    (v) => (v === "on" || v === true ? "true" : v === false ? "false" : v === null || v === "" ? undefined : v),
    z.enum(["true", "false"], { message: "must be true or false" }).optional(),
  )
  .transform((v) => (v === undefined ? undefined : v === "true"));
/** Management API scopes: a JSON array (API), or text separated by spaces or commas (forms, CLI). */
const managementScopes = z
  .preprocess(
    (v) => (typeof v === "string" ? v.split(/[\s,]+/).filter(Boolean) : v),
    z.array(
      z.enum(Object.keys(MANAGEMENT_SCOPES) as [ManagementScope, ...ManagementScope[]], {
        message: `must be among ${Object.keys(MANAGEMENT_SCOPES).join(", ")}`,
      }),
    ),
  )
  .refine((scopes) => scopes.length > 0, "choose at least one scope")
  .transform((scopes) => [...new Set(scopes)]);
/**
 * A client's registered resources (RFC 8707 resource indicators, lib/oauth/resource.ts): a JSON array
 * (API), or text separated by spaces or lines (forms, CLI); empty or null: none.
 */
const resources = z
  .preprocess(
    (v) => (v === null ? [] : typeof v === "string" ? v.split(/\s+/).filter(Boolean) : v),
    z
      .array(
        text(MAX_RESOURCE_LENGTH).superRefine((uri, context) => {
          const problem = resourceProblem(uri);
          if (problem) context.addIssue({ code: "custom", message: `${uri}: ${problem}` });
        }),
      )
      .max(MAX_RESOURCES, `at most ${MAX_RESOURCES} resources`),
  )
  .transform((uris) => [...new Set(uris)]);
const optionalText = (max = 500) => z.preprocess((v) => (v === "" || v === null ? undefined : v), text(max).optional());

/** JSON text as a value, or a field error. */
function parseJson(value: string, context: z.RefinementCtx): unknown {
  try {
    return JSON.parse(value);
  } catch {
    context.addIssue({ code: "custom", message: "must be JSON" });
    return z.NEVER;
  }
}

type Change<I> = { audit: string; input: z.ZodType<I>; run: (k: Keyfob, a: Admin, i: I) => Promise<Record<string, unknown>> };
const change = <I>(
  audit: string,
  input: z.ZodType<I>,
  run: (k: Keyfob, a: Admin, i: I) => Promise<Record<string, unknown>>,
): Change<I> => ({ audit, input, run });
const none = () => ({});

const clientInput = z.object({ clientId });
const signingAlg = z.enum(SIGNING_ALGS, { message: `must be one of ${SIGNING_ALGS.join(", ")}` });
const uriInput = z.object({ clientId, uri: text(2000).min(1, "required") });
const originInput = z.object({ clientId, origin: text(2000).min(1, "required") });
const accountInput = z.object({ accountId });

const changes = {
  "client.create": change(
    "client.created",
    z.object({ id: optionalText(128), name: text(200).min(1, "required"), logoUrl: optionalText(2000) }),
    (k, a, i) => ops.createClient(k, a, i).then((c) => ({ clientId: c.id })),
  ),
  "client.enable": change("client.enabled", clientInput, (k, a, i) => ops.setClientEnabled(k, a, i.clientId, true).then(none)),
  "client.disable": change("client.disabled", clientInput, (k, a, i) => ops.setClientEnabled(k, a, i.clientId, false).then(none)),
  "client.delete": change("client.deleted", clientInput, (k, a, i) => ops.deleteClient(k, a, i.clientId).then(none)),
  "client.rotate_secret": change(
    "client.secret_rotated",
    z.object({
      clientId,
      // How long the replaced secret stays valid (seconds); absent or 0: it stops at once.
      overlapSeconds: z.preprocess(
        (v) => (v === "" || v === null ? undefined : v),
        z.coerce
          .number({ message: "must be a number of seconds" })
          .int("must be a whole number of seconds")
          .min(0, "must not be negative")
          .max(MAX_SECRET_OVERLAP_SECONDS, "must be at most 30 days (2592000 seconds)")
          .optional(),
      ),
    }),
    (k, a, i) =>
      ops
        .rotateClientSecret(k, a, i.clientId, i.overlapSeconds)
        .then(({ secret, previousSecretExpiresAt }) => ({ secret, previousSecretExpiresAt })),
  ),
  "client.end_secret_overlap": change("client.secret_overlap_ended", clientInput, (k, a, i) =>
    ops.endSecretOverlap(k, a, i.clientId).then(none),
  ),
  "client.update": change(
    "client.updated",
    z.object({
      clientId,
      name: text(200).min(1, "required").optional(),
      // null or empty: no logo.
      logoUrl: z.preprocess((v) => (v === null ? "" : v), text(2000).optional()),
      enabled: flag,
      requirePkce: flag,
      resourceServer: flag,
      refreshTokensAllowed: flag,
      managementApi: flag,
      managementScopes: managementScopes.optional(),
      requirePushedAuthorizationRequests: flag,
      requireConsent: flag,
      // null or empty: no back-channel logout.
      backchannelLogoutUri: z.preprocess((v) => (v === null ? "" : v), text(2000).optional()),
      backchannelLogoutSessionRequired: flag,
      deviceFlow: flag,
      deviceFlowOfflineAccess: flag,
      tokenExchange: flag,
      dpopBoundAccessTokens: flag,
      resources: resources.optional(),
      idTokenSignedResponseAlg: signingAlg.optional(),
    }),
    (k, a, { clientId, ...changes }) =>
      ops.updateClient(k, a, clientId, changes as Partial<ClientSettings>).then((settings) => ({ settings })),
  ),
  "client.set_authentication": change(
    "client.authentication_set",
    z.object({
      clientId,
      // Absent, null or empty: the client's secret (or none, for a public client).
      tokenEndpointAuthMethod: z.preprocess(
        (v) => (v === "" || v === null ? undefined : v),
        z.enum(["private_key_jwt", "client_secret_jwt"], { message: "must be private_key_jwt or client_secret_jwt" }).optional(),
      ),
      // A JWK Set: a JSON object (API), or its text (forms, CLI).
      jwks: z.preprocess(
        (v) => (v === "" || v === null ? undefined : v),
        z.union([text(100_000).transform((value, context) => parseJson(value, context)), z.record(z.string(), z.unknown())]).optional(),
      ),
      jwksUri: optionalText(2000),
    }),
    (k, a, { clientId, tokenEndpointAuthMethod, jwks, jwksUri }) =>
      ops.setClientAuthentication(k, a, clientId, { tokenEndpointAuthMethod: tokenEndpointAuthMethod ?? null, jwks, jwksUri }).then(none),
  ),
  "redirect_uri.add": change("redirect_uri.added", uriInput, (k, a, i) => ops.addRedirectUri(k, a, i.clientId, i.uri).then(none)),
  "redirect_uri.remove": change("redirect_uri.removed", uriInput, (k, a, i) => ops.removeRedirectUri(k, a, i.clientId, i.uri).then(none)),
  "post_logout_redirect_uri.add": change("post_logout_redirect_uri.added", uriInput, (k, a, i) =>
    ops.addPostLogoutRedirectUri(k, a, i.clientId, i.uri).then(none),
  ),
  "post_logout_redirect_uri.remove": change("post_logout_redirect_uri.removed", uriInput, (k, a, i) =>
    ops.removePostLogoutRedirectUri(k, a, i.clientId, i.uri).then(none),
  ),
  "allowed_origin.add": change("allowed_origin.added", originInput, (k, a, i) =>
    ops.addAllowedOrigin(k, a, i.clientId, i.origin).then(none),
  ),
  "allowed_origin.remove": change("allowed_origin.removed", originInput, (k, a, i) =>
    ops.removeAllowedOrigin(k, a, i.clientId, i.origin).then(none),
  ),
  "signer.add": change(
    "signer.added",
    z.object({
      clientId,
      address: text(42).min(1, "required"),
      expiresAt: z.preprocess((v) => (v === "" || v === null ? undefined : v), z.coerce.date({ message: "must be a date" }).optional()),
    }),
    (k, a, i) =>
      ops
        .addSigner(k, a, i.clientId, i.address, i.expiresAt)
        .then((s) => ({ signer: { address: s.address, enabledAt: s.enabledAt, expiresAt: s.expiresAt } })),
  ),
  "signer.revoke": change("signer.revoked", z.object({ clientId, address: text(42).min(1, "required") }), (k, a, i) =>
    ops.revokeSigner(k, a, i.clientId, i.address).then(none),
  ),
  "key.rotate": change(
    "key.rotated",
    // One alg's keys of the access set; none: every alg in use, and the vehicle tokens' keys.
    z.object({ alg: z.preprocess((v) => (v === "" ? undefined : v), signingAlg.optional()) }),
    (k, a, i) => ops.rotateSigningKey(k, a, i.alg).then(none),
  ),
  "key.revoke": change("key.revoked", z.object({ kid: text(100).min(1, "required") }), (k, a, i) =>
    ops.revokeSigningKey(k, a, i.kid).then((revocation) => ({ ...revocation })),
  ),
  "token.revoke": change(
    "token.revoked",
    z.object({ jti: optionalText(100), clientId: optionalText(128), accountId: optionalText(42) }),
    (k, a, i) => ops.revokeTokens(k, a, i).then((revoked) => ({ revoked })),
  ),
  "refresh_token.revoke": change(
    "refresh_token.revoked",
    z.object({ familyId: optionalText(100), clientId: optionalText(128), accountId: optionalText(42) }),
    (k, a, i) => ops.revokeRefreshGrants(k, a, i).then((revoked) => ({ revoked })),
  ),
  "admin.grant": change("admin.granted", accountInput, (k, a, i) => ops.grantAdmin(k, a, i.accountId).then(none)),
  "admin.revoke": change("admin.revoked", accountInput, (k, a, i) => ops.revokeAdmin(k, a, i.accountId).then(none)),
  "account.block": change("account.blocked", accountInput, (k, a, i) =>
    ops.blockAccount(k, a, i.accountId).then(({ revokedTokens, revokedSessions }) => ({ revokedTokens, revokedSessions })),
  ),
  "account.unblock": change("account.unblocked", accountInput, (k, a, i) => ops.unblockAccount(k, a, i.accountId).then(none)),
  "account.delete": change("account.deleted", accountInput, (k, a, i) =>
    ops.deleteAccount(k, a, i.accountId).then(({ revokedTokens, endedSessions }) => ({ revokedTokens, endedSessions })),
  ),
  "session.revoke": change("session.revoked", z.object({ accountId, sessionId: optionalText(100) }), (k, a, i) =>
    ops.revokeSessions(k, a, i.accountId, i.sessionId).then((revoked) => ({ revoked })),
  ),
  "consent.revoke": change("consent.revoked", z.object({ accountId, clientId }), (k, a, i) =>
    ops.revokeConsentGrant(k, a, i.accountId, i.clientId).then(({ families }) => ({ revoked: families })),
  ),
};

export type AdminChangeName = keyof typeof changes;
export const ADMIN_CHANGES = Object.keys(changes) as AdminChangeName[];

/** The input schema of a change (the management API's OpenAPI document describes its bodies with them). */
export const changeInput = (name: AdminChangeName): z.ZodType => changes[name].input;

export type AdminChangeResult =
  | { ok: true; value: Record<string, unknown> }
  | {
      ok: false;
      /** 503: this instance cannot do it (its KEYFOB_SECRET does not open the stored keys); one that can may. */
      status: 400 | 401 | 403 | 503;
      error: string;
      fieldErrors?: Record<string, string>;
      scope?: ManagementScope;
      /** What kind of refusal a 400 is (invalid input, not found, a conflict with the current state). */
      refusal?: Refusal;
    };

/** The client and account an input names, when they can be such ids: the audit log files a refusal under them. */
function auditTarget(input: Record<string, unknown>) {
  const client = typeof input.clientId === "string" ? claimedClientId(input.clientId.trim()) : undefined;
  const account =
    typeof input.accountId === "string" && /^0x[0-9a-fA-F]{40}$/.test(input.accountId.trim())
      ? ops.normalizeAccountId(input.accountId.trim())
      : undefined;
  return { clientId: client, accountId: account };
}

/** Runs a dashboard change for the holder of `sessionToken`. `input` is the form's fields. */
export async function performAdminChange(
  keyfob: Keyfob,
  sessionToken: string | undefined,
  name: AdminChangeName,
  input: Record<string, unknown>,
): Promise<AdminChangeResult> {
  let admin: Admin;
  try {
    admin = await requireAdmin(keyfob, sessionToken);
  } catch (error) {
    if (!(error instanceof AdminAccessError)) throw error;
    if (error.reason === "forbidden" && changes[name]) {
      // A signed-in account that is not (or no longer) an admin tried: who, what, and why it was refused.
      const actor = (await readAdminSession(keyfob, sessionToken))?.accountId;
      await keyfob.audit.write({ actor, action: changes[name].audit, outcome: "forbidden", ...auditTarget(input), detail: error.message });
    }
    return { ok: false, status: error.reason === "signed-out" ? 401 : 403, error: error.message };
  }
  return runAdminChange(keyfob, admin, name, input);
}

const BUILT_IN = `${ADMIN_CLIENT_ID} is built in (the dashboard's own sign-in) and cannot be changed`;

/**
 * Whether a change would alter the dashboard's own client (or create one with its id), which Keyfob
 * registers itself (lib/admin/session.ts) and would silently re-enable at the next admin sign-in.
 * Revoking tokens filed under it is no change to it.
 */
function changesBuiltInClient(name: AdminChangeName, input: unknown): boolean {
  if (name === "token.revoke" || name === "refresh_token.revoke") return false;
  const { clientId, id } = input as { clientId?: unknown; id?: unknown };
  return (name === "client.create" ? id : clientId) === ADMIN_CLIENT_ID;
}

/**
 * Runs a change for an admin already vouched for (a session above, an admin token in the
 * management API, the operator at the command line): validation, then the audited operation.
 */
export async function runAdminChange(
  keyfob: Keyfob,
  admin: Admin,
  name: AdminChangeName,
  input: Record<string, unknown>,
): Promise<AdminChangeResult> {
  const change = changes[name] as Change<unknown> | undefined;
  if (!change) return { ok: false, status: 400, error: "unknown change" };
  const parsed = change.input.safeParse(input);
  if (!parsed.success) {
    const fieldErrors: Record<string, string> = {};
    for (const issue of parsed.error.issues) fieldErrors[String(issue.path[0] ?? "form")] ??= issue.message;
    const reason = Object.entries(fieldErrors)
      .map(([field, message]) => `${field}: ${message}`)
      .join("; ");
    await keyfob.audit.write({
      actor: admin.label,
      action: change.audit,
      outcome: "rejected",
      ...auditTarget(input),
      detail: `invalid input: ${reason}`,
    });
    return { ok: false, status: 400, error: "please correct the highlighted fields", fieldErrors };
  }
  if (changesBuiltInClient(name, parsed.data)) {
    await keyfob.audit.write({ actor: admin.label, action: change.audit, outcome: "rejected", ...auditTarget(input), detail: BUILT_IN });
    return { ok: false, status: 400, error: BUILT_IN, fieldErrors: { clientId: BUILT_IN }, refusal: "conflict" };
  }
  try {
    return { ok: true, value: await change.run(keyfob, admin, parsed.data) };
  } catch (error) {
    if (error instanceof RegistryError)
      return { ok: false, status: 400, error: error.message, fieldErrors: { [error.field]: error.message }, refusal: error.refusal };
    if (error instanceof InsufficientScope) return { ok: false, status: 403, error: error.message, scope: error.scope };
    if (error instanceof KeyCreationRefused) return { ok: false, status: 503, error: error.message };
    throw error;
  }
}
