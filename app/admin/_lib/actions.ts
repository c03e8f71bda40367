"use server";
/**
 * The dashboard's server actions: each one hands the form's fields and the session cookie to
 * performAdminAction (lib/admin/dispatch), which checks the admin on the server, validates, and
 * runs the audited change. Signed out → the sign-in; not an admin → the 403 page. Next.js checks
 * that a server action comes from this origin; nothing here adds CORS.
 */
import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import type { FormState } from "@/components/admin/form-state";
import { performAdminAction, type AdminActionName } from "@/lib/admin/dispatch";
import { keyfob } from "@/lib/runtime";
import { FORBIDDEN_PATH, LOGIN_PATH, sessionToken } from "./guard";

type Fields = Record<string, string>;

function fields(form: FormData, names: string[]): Fields {
  const values: Fields = {};
  for (const name of names) {
    const value = form.get(name);
    values[name] = typeof value === "string" ? value : "";
  }
  return values;
}

async function perform(name: AdminActionName, input: Fields): Promise<{ state: FormState; value?: Record<string, unknown> }> {
  const result = await performAdminAction(keyfob(), await sessionToken(), name, input);
  const at = Date.now();
  if (!result.ok) {
    if (result.status === 401) redirect(LOGIN_PATH);
    if (result.status === 403) redirect(FORBIDDEN_PATH);
    return { state: { ok: false, error: result.error, fieldErrors: result.fieldErrors, values: input, at } };
  }
  revalidatePath("/admin", "layout");
  return { state: { ok: true, at }, value: result.value };
}

const done = async (name: AdminActionName, input: Fields, message?: string): Promise<FormState> => {
  const { state } = await perform(name, input);
  return state.ok ? { ...state, message } : state;
};

const clientPath = (clientId: string) => `/admin/clients/${encodeURIComponent(clientId)}`;

export async function createClientAction(_: FormState, form: FormData): Promise<FormState> {
  const input = fields(form, ["id", "name", "logoUrl"]);
  const { state, value } = await perform("client.create", input);
  if (!state.ok) return state;
  redirect(`${clientPath(String(value!.clientId))}?created=1`);
}

export async function setClientEnabledAction(_: FormState, form: FormData): Promise<FormState> {
  const enable = form.get("enabled") === "true";
  return done(enable ? "client.enable" : "client.disable", fields(form, ["clientId"]), enable ? "Client enabled." : "Client disabled.");
}

export async function deleteClientAction(_: FormState, form: FormData): Promise<FormState> {
  const input = fields(form, ["clientId"]);
  const { state } = await perform("client.delete", input);
  if (!state.ok) return state;
  redirect(`/admin/clients?deleted=${encodeURIComponent(input.clientId)}`);
}

export async function rotateSecretAction(_: FormState, form: FormData): Promise<FormState> {
  const { state, value } = await perform("client.rotate_secret", fields(form, ["clientId"]));
  return state.ok ? { ...state, secret: String(value!.secret) } : state;
}

export async function addRedirectUriAction(_: FormState, form: FormData): Promise<FormState> {
  return done("redirect_uri.add", fields(form, ["clientId", "uri"]), "Redirect URI added.");
}

export async function removeRedirectUriAction(_: FormState, form: FormData): Promise<FormState> {
  return done("redirect_uri.remove", fields(form, ["clientId", "uri"]), "Redirect URI removed.");
}

const CLIENT_FLAGS = ["requirePkce", "resourceServer", "refreshTokensAllowed"];

export async function updateClientAction(_: FormState, form: FormData): Promise<FormState> {
  // An unchecked checkbox is not sent: the form says which settings it shows, and those are false unless checked.
  const shown = String(form.get("settings") ?? "").split(" ").filter((name) => CLIENT_FLAGS.includes(name));
  const input = fields(form, ["clientId", ...["name", "logoUrl"].filter((name) => form.has(name))]);
  for (const name of shown) input[name] = form.get(name) === "on" ? "true" : "false";
  return done("client.update", input, "Settings saved.");
}

export async function addPostLogoutRedirectUriAction(_: FormState, form: FormData): Promise<FormState> {
  return done("post_logout_redirect_uri.add", fields(form, ["clientId", "uri"]), "Post-logout redirect URI added.");
}

export async function removePostLogoutRedirectUriAction(_: FormState, form: FormData): Promise<FormState> {
  return done("post_logout_redirect_uri.remove", fields(form, ["clientId", "uri"]), "Post-logout redirect URI removed.");
}

export async function addAllowedOriginAction(_: FormState, form: FormData): Promise<FormState> {
  return done("allowed_origin.add", fields(form, ["clientId", "origin"]), "Origin allowed.");
}

export async function removeAllowedOriginAction(_: FormState, form: FormData): Promise<FormState> {
  return done("allowed_origin.remove", fields(form, ["clientId", "origin"]), "Origin removed.");
}

export async function addSignerAction(_: FormState, form: FormData): Promise<FormState> {
  return done("signer.add", fields(form, ["clientId", "address", "expiresAt"]), "Signer added.");
}

export async function revokeSignerAction(_: FormState, form: FormData): Promise<FormState> {
  return done("signer.revoke", fields(form, ["clientId", "address"]), "Signer revoked.");
}

export async function rotateKeyAction(): Promise<FormState> {
  return done("key.rotate", {}, "A new signing key is published; it signs once its activation time comes.");
}

export async function revokeTokensAction(_: FormState, form: FormData): Promise<FormState> {
  const input = Object.fromEntries(Object.entries(fields(form, ["jti", "clientId", "accountId"])).filter(([, value]) => value !== ""));
  const { state, value } = await perform("token.revoke", input);
  if (!state.ok) return state;
  const revoked = Number(value!.revoked);
  return { ...state, message: revoked === 1 ? "1 token revoked." : `${revoked} tokens revoked.` };
}

export async function grantAdminAction(_: FormState, form: FormData): Promise<FormState> {
  return done("admin.grant", fields(form, ["accountId"]), "Admin role granted.");
}

export async function revokeAdminAction(_: FormState, form: FormData): Promise<FormState> {
  return done("admin.revoke", fields(form, ["accountId"]), "Admin role revoked.");
}

/** Emergency revocation of a signing key: back to the keys page, which says what happened (the key's row is gone). */
export async function revokeKeyAction(_: FormState, form: FormData): Promise<FormState> {
  const input = fields(form, ["kid"]);
  const { state, value } = await perform("key.revoke", input);
  if (!state.ok) return state;
  const kid = String(value!.kid);
  const outcome = new URLSearchParams(value!.revoked ? { revoked: kid } : { unchanged: kid });
  if (value!.successor) outcome.set("successor", String(value!.successor));
  redirect(`/admin/keys?${outcome}`);
}

/** Revokes one refresh-token grant, or every grant of the client or account shown, with the access tokens issued from them. */
export async function revokeRefreshGrantsAction(_: FormState, form: FormData): Promise<FormState> {
  const input = Object.fromEntries(Object.entries(fields(form, ["familyId", "clientId", "accountId"])).filter(([, value]) => value !== ""));
  const { state, value } = await perform("refresh_token.revoke", input);
  if (!state.ok) return state;
  const revoked = Number(value!.revoked);
  return { ...state, message: revoked === 1 ? "1 refresh grant revoked." : `${revoked} refresh grants revoked.` };
}
