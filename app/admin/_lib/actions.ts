"use server";
/**
 * The dashboard's server actions: each one hands the form's fields and the session cookie to
 * performAdminChange (lib/admin/changes.ts), which checks the admin on the server, validates, and
 * runs the audited change. Signed out → the sign-in; not an admin → the 403 page. Next.js checks
 * that a server action comes from this origin; nothing here adds CORS.
 */
import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { isClientFlag } from "@/components/admin/client/flags";
import type { FormState } from "@/components/admin/form-state";
import { performAdminChange, type AdminChangeName } from "@/lib/admin/changes";
import { tryRedirectUri } from "@/lib/admin/integration";
import { keyfob } from "@/lib/runtime";
import { FORBIDDEN_PATH, LOGIN_PATH, sessionToken } from "./guard";

type Fields = Record<string, string>;

/**
 * A form field as text: "" when absent, a file, or when the request carried no form at all (a
 * hand-made action request with another payload is refused field by field, never a 500).
 */
function value(form: unknown, name: string): string {
  const found = form instanceof FormData ? form.get(name) : null;
  return typeof found === "string" ? found : "";
}

function fields(form: unknown, names: string[]): Fields {
  return Object.fromEntries(names.map((name) => [name, value(form, name)]));
}

async function perform(name: AdminChangeName, input: Fields): Promise<{ state: FormState; value?: Record<string, unknown> }> {
  const result = await performAdminChange(keyfob(), await sessionToken(), name, input);
  const at = Date.now();
  if (!result.ok) {
    if (result.status === 401) redirect(LOGIN_PATH);
    if (result.status === 403) redirect(FORBIDDEN_PATH);
    return { state: { ok: false, error: result.error, fieldErrors: result.fieldErrors, values: input, at } };
  }
  revalidatePath("/admin", "layout");
  return { state: { ok: true, at }, value: result.value };
}

const done = async (name: AdminChangeName, input: Fields, message?: string): Promise<FormState> => {
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
  const enable = value(form, "enabled") === "true";
  return done(enable ? "client.enable" : "client.disable", fields(form, ["clientId"]), enable ? "Client enabled." : "Client disabled.");
}

export async function deleteClientAction(_: FormState, form: FormData): Promise<FormState> {
  const input = fields(form, ["clientId"]);
  // The dialog asked to type the id; checked here too, so no other form deletes a client by accident.
  if (value(form, "confirm").trim() !== input.clientId) {
    return {
      ok: false,
      error: "type the client ID exactly to delete it",
      fieldErrors: { confirm: "does not match the client ID" },
      at: Date.now(),
    };
  }
  const { state } = await perform("client.delete", input);
  if (!state.ok) return state;
  redirect(`/admin/clients?deleted=${encodeURIComponent(input.clientId)}`);
}

export async function rotateSecretAction(_: FormState, form: FormData): Promise<FormState> {
  const { state, value } = await perform("client.rotate_secret", fields(form, ["clientId", "overlapSeconds"]));
  return state.ok ? { ...state, secret: String(value!.secret) } : state;
}

export async function endSecretOverlapAction(_: FormState, form: FormData): Promise<FormState> {
  return done("client.end_secret_overlap", fields(form, ["clientId"]), "The previous secret no longer works.");
}

export async function setClientAuthenticationAction(_: FormState, form: FormData): Promise<FormState> {
  return done(
    "client.set_authentication",
    fields(form, ["clientId", "tokenEndpointAuthMethod", "jwks", "jwksUri"]),
    "Authentication saved.",
  );
}

export async function addRedirectUriAction(_: FormState, form: FormData): Promise<FormState> {
  return done("redirect_uri.add", fields(form, ["clientId", "uri"]), "Redirect URI added.");
}

export async function removeRedirectUriAction(_: FormState, form: FormData): Promise<FormState> {
  return done("redirect_uri.remove", fields(form, ["clientId", "uri"]), "Redirect URI removed.");
}

/** The text settings a form may send (each form sends its own). */
const CLIENT_TEXTS = ["name", "logoUrl", "backchannelLogoutUri", "resources", "idTokenSignedResponseAlg"];

export async function updateClientAction(_: FormState, form: FormData): Promise<FormState> {
  // An unchecked checkbox is not sent: the form says which settings it shows, and those are false unless checked.
  const shown = value(form, "settings").split(" ");
  const input = fields(form, ["clientId", ...CLIENT_TEXTS.filter((name) => form instanceof FormData && form.has(name))]);
  for (const name of shown.filter(isClientFlag)) input[name] = value(form, name) === "on" ? "true" : "false";
  // The scopes of a client allowed the API (unchanged while it is not, so they come back with it).
  if (shown.includes("managementScopes") && input.managementApi === "true") {
    const scopes = form instanceof FormData ? form.getAll("managementScopes").filter((scope) => typeof scope === "string") : [];
    if (scopes.length === 0) return { ok: false, error: "choose at least one management API scope", at: Date.now() };
    input.managementScopes = scopes.join(" ");
  }
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

/** Rotates one alg's keys (the form's `alg`), or without one every alg in use and the vehicle tokens' keys. */
export async function rotateKeyAction(_: FormState, form: FormData): Promise<FormState> {
  const { alg } = fields(form, ["alg"]);
  return done("key.rotate", { alg }, `A new ${alg ? `${alg} ` : ""}signing key is published; it signs once its activation time comes.`);
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

/** Emergency revocation of a signing key: back to the keys page, which says what happened (the key moves to the history). */
export async function revokeKeyAction(_: FormState, form: FormData): Promise<FormState> {
  const input = fields(form, ["kid"]);
  // The dialog asked to type the kid, as deleting a client asks for its id; checked here too.
  if (value(form, "confirm").trim() !== input.kid) {
    return {
      ok: false,
      error: "type the key ID exactly to revoke it",
      fieldErrors: { confirm: "does not match the key ID" },
      at: Date.now(),
    };
  }
  const { state, value: revocation } = await perform("key.revoke", input);
  if (!state.ok) return state;
  const kid = String(revocation!.kid);
  const outcome = new URLSearchParams(revocation!.revoked ? { revoked: kid } : { unchanged: kid });
  if (revocation!.successor) outcome.set("successor", String(revocation!.successor));
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

/** Registers Keyfob's own test callback as a redirect URI of the client, for "Try a sign-in" (an audited redirect_uri.add). */
export async function registerTryCallbackAction(_: FormState, form: FormData): Promise<FormState> {
  return done(
    "redirect_uri.add",
    { clientId: value(form, "clientId"), uri: tryRedirectUri(keyfob().config.issuerUrl) },
    "Keyfob's test callback is registered for this client.",
  );
}

// Accounts and their login sessions.

export async function blockAccountAction(_: FormState, form: FormData): Promise<FormState> {
  const { state, value } = await perform("account.block", fields(form, ["accountId"]));
  if (!state.ok) return state;
  return {
    ...state,
    message: `Account blocked: ${value!.revokedTokens} access tokens and ${value!.revokedSessions} sessions revoked, with its refresh tokens and codes.`,
  };
}

export async function unblockAccountAction(_: FormState, form: FormData): Promise<FormState> {
  return done("account.unblock", fields(form, ["accountId"]), "Account unblocked: it can log in again. Nothing revoked came back.");
}

export async function deleteAccountAction(_: FormState, form: FormData): Promise<FormState> {
  const input = fields(form, ["accountId"]);
  if (value(form, "confirm").trim().toLowerCase() !== input.accountId.toLowerCase()) {
    return {
      ok: false,
      error: "type the account's address exactly to delete it",
      fieldErrors: { confirm: "does not match the account" },
      at: Date.now(),
    };
  }
  const { state } = await perform("account.delete", input);
  if (!state.ok) return state;
  redirect(`/admin/accounts?deleted=${encodeURIComponent(input.accountId)}`);
}

/** Revokes one login session (sessionId) or all of the account's. */
/** Revokes an account's consent grant to a client, with the client's refresh tokens for the account. */
export async function revokeConsentAction(_: FormState, form: FormData): Promise<FormState> {
  const { state, value } = await perform("consent.revoke", fields(form, ["accountId", "clientId"]));
  if (!state.ok) return state;
  return { ...state, message: `Consent revoked; ${Number(value!.revoked)} refresh grant(s) ended.` };
}

export async function revokeSessionsAction(_: FormState, form: FormData): Promise<FormState> {
  const input = Object.fromEntries(Object.entries(fields(form, ["accountId", "sessionId"])).filter(([, value]) => value !== ""));
  const { state, value } = await perform("session.revoke", input);
  if (!state.ok) return state;
  const revoked = Number(value!.revoked);
  return {
    ...state,
    message: input.sessionId ? "Session revoked." : revoked === 1 ? "1 session revoked." : `${revoked} sessions revoked.`,
  };
}
