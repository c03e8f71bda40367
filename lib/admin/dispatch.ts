import { z } from "zod";
import { hasControlCharacter } from "../oauth/params";
import { RegistryError, type ClientSettings } from "../clients/registry";
import type { Keyfob } from "../keyfob";
import { AdminAccessError, requireAdmin, type Admin } from "./access";
import * as ops from "./operations";

/**
 * Every dashboard change goes through here: the session is checked on the server first (401
 * signed out, 403 not an admin), then the input is validated with field-level errors, then the
 * audited operation runs. Server actions are thin wrappers around `performAdminAction`.
 */

/** Form text: trimmed, bounded, and never a control character (PostgreSQL refuses NUL). */
const text = (max = 500) =>
  z
    .string()
    .trim()
    .max(max)
    .refine((value) => !hasControlCharacter(value), "must not contain control characters");
const clientId = text(128).min(1, "required");
/** A yes/no setting, as a form sends it ("true"/"false", or a checkbox's "on"); absent: unchanged. */
const flag = z.preprocess((v) => (v === "on" ? "true" : v === null || v === "" ? undefined : v), z.enum(["true", "false"]).optional()).transform((v) => (v === undefined ? undefined : v === "true"));
const optionalText = (max = 500) => z.preprocess((v) => (v === "" || v === null ? undefined : v), text(max).optional());

const actions = {
  "client.create": {
    input: z.object({ id: optionalText(128), name: text(200).min(1, "required"), logoUrl: optionalText(2000) }),
    run: (k: Keyfob, a: Admin, i: { id?: string; name: string; logoUrl?: string }) => ops.createClient(k, a, i).then((c) => ({ clientId: c.id })),
  },
  "client.enable": { input: z.object({ clientId }), run: (k: Keyfob, a: Admin, i: { clientId: string }) => ops.setClientEnabled(k, a, i.clientId, true).then(() => ({})) },
  "client.disable": { input: z.object({ clientId }), run: (k: Keyfob, a: Admin, i: { clientId: string }) => ops.setClientEnabled(k, a, i.clientId, false).then(() => ({})) },
  "client.delete": { input: z.object({ clientId }), run: (k: Keyfob, a: Admin, i: { clientId: string }) => ops.deleteClient(k, a, i.clientId).then(() => ({})) },
  "client.rotate_secret": {
    input: z.object({ clientId }),
    run: (k: Keyfob, a: Admin, i: { clientId: string }) => ops.rotateClientSecret(k, a, i.clientId).then((secret) => ({ secret })),
  },
  "redirect_uri.add": {
    input: z.object({ clientId, uri: text(2000).min(1, "required") }),
    run: (k: Keyfob, a: Admin, i: { clientId: string; uri: string }) => ops.addRedirectUri(k, a, i.clientId, i.uri).then(() => ({})),
  },
  "client.update": {
    input: z.object({
      clientId,
      name: text(200).min(1, "required").optional(),
      logoUrl: z.preprocess((v) => (v === null ? undefined : v), text(2000).optional()),
      requirePkce: flag,
      resourceServer: flag,
      refreshTokensAllowed: flag,
    }),
    run: (k: Keyfob, a: Admin, { clientId, ...changes }: { clientId: string } & Partial<ClientSettings>) => ops.updateClient(k, a, clientId, changes).then(() => ({})),
  },
  "post_logout_redirect_uri.add": {
    input: z.object({ clientId, uri: text(2000).min(1, "required") }),
    run: (k: Keyfob, a: Admin, i: { clientId: string; uri: string }) => ops.addPostLogoutRedirectUri(k, a, i.clientId, i.uri).then(() => ({})),
  },
  "post_logout_redirect_uri.remove": {
    input: z.object({ clientId, uri: text(2000).min(1, "required") }),
    run: (k: Keyfob, a: Admin, i: { clientId: string; uri: string }) => ops.removePostLogoutRedirectUri(k, a, i.clientId, i.uri).then(() => ({})),
  },
  "allowed_origin.add": {
    input: z.object({ clientId, origin: text(2000).min(1, "required") }),
    run: (k: Keyfob, a: Admin, i: { clientId: string; origin: string }) => ops.addAllowedOrigin(k, a, i.clientId, i.origin).then(() => ({})),
  },
  "allowed_origin.remove": {
    input: z.object({ clientId, origin: text(2000).min(1, "required") }),
    run: (k: Keyfob, a: Admin, i: { clientId: string; origin: string }) => ops.removeAllowedOrigin(k, a, i.clientId, i.origin).then(() => ({})),
  },
  "redirect_uri.remove": {
    input: z.object({ clientId, uri: text(2000).min(1, "required") }),
    run: (k: Keyfob, a: Admin, i: { clientId: string; uri: string }) => ops.removeRedirectUri(k, a, i.clientId, i.uri).then(() => ({})),
  },
  "signer.add": {
    input: z.object({
      clientId,
      address: text(42).min(1, "required"),
      expiresAt: z.preprocess((v) => (v === "" || v === null ? undefined : v), z.coerce.date({ message: "must be a date" }).optional()),
    }),
    run: (k: Keyfob, a: Admin, i: { clientId: string; address: string; expiresAt?: Date }) =>
      ops.addSigner(k, a, i.clientId, i.address, i.expiresAt).then(() => ({})),
  },
  "signer.revoke": {
    input: z.object({ clientId, address: text(42).min(1, "required") }),
    run: (k: Keyfob, a: Admin, i: { clientId: string; address: string }) => ops.revokeSigner(k, a, i.clientId, i.address).then(() => ({})),
  },
  "key.rotate": { input: z.object({}), run: (k: Keyfob, a: Admin) => ops.rotateSigningKey(k, a).then(() => ({})) },
  "key.revoke": {
    input: z.object({ kid: text(100).min(1, "required") }),
    run: (k: Keyfob, a: Admin, i: { kid: string }) => ops.revokeSigningKey(k, a, i.kid).then((revocation) => ({ ...revocation })),
  },
  "token.revoke": {
    input: z.object({ jti: optionalText(100), clientId: optionalText(128), accountId: optionalText(42) }),
    run: (k: Keyfob, a: Admin, i: { jti?: string; clientId?: string; accountId?: string }) => ops.revokeTokens(k, a, i).then((revoked) => ({ revoked })),
  },
  "refresh_token.revoke": {
    input: z.object({ familyId: optionalText(100), clientId: optionalText(128), accountId: optionalText(42) }),
    run: (k: Keyfob, a: Admin, i: { familyId?: string; clientId?: string; accountId?: string }) => ops.revokeRefreshGrants(k, a, i).then((revoked) => ({ revoked })),
  },
  "admin.grant": { input: z.object({ accountId: text(42).min(1, "required") }), run: (k: Keyfob, a: Admin, i: { accountId: string }) => ops.grantAdmin(k, a, i.accountId).then(() => ({})) },
  "admin.revoke": { input: z.object({ accountId: text(42).min(1, "required") }), run: (k: Keyfob, a: Admin, i: { accountId: string }) => ops.revokeAdmin(k, a, i.accountId).then(() => ({})) },
} as const;

export type AdminActionName = keyof typeof actions;
export const ADMIN_ACTIONS = Object.keys(actions) as AdminActionName[];

export type AdminActionResult =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; status: 400 | 401 | 403; error: string; fieldErrors?: Record<string, string> };

/** Runs a dashboard change for the holder of `sessionToken`. `input` is the form's fields. */
export async function performAdminAction(
  keyfob: Keyfob,
  sessionToken: string | undefined,
  name: AdminActionName,
  input: Record<string, unknown>,
): Promise<AdminActionResult> {
  let admin: Admin;
  try {
    admin = await requireAdmin(keyfob, sessionToken);
  } catch (error) {
    if (error instanceof AdminAccessError) return { ok: false, status: error.reason === "signed-out" ? 401 : 403, error: error.message };
    throw error;
  }
  const action = actions[name];
  if (!action) return { ok: false, status: 400, error: "unknown action" };
  const parsed = action.input.safeParse(input);
  if (!parsed.success) {
    const fieldErrors = Object.fromEntries(parsed.error.issues.map((issue) => [String(issue.path[0] ?? "form"), issue.message]));
    return { ok: false, status: 400, error: "please correct the highlighted fields", fieldErrors };
  }
  try {
    const run = action.run as (k: Keyfob, a: Admin, i: unknown) => Promise<Record<string, unknown>>;
    return { ok: true, value: await run(keyfob, admin, parsed.data) };
  } catch (error) {
    if (error instanceof RegistryError) return { ok: false, status: 400, error: error.message, fieldErrors: { [error.field]: error.message } };
    throw error;
  }
}
