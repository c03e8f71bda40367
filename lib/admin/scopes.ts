/**
 * The management API's scopes (client_credentials tokens): what each lets a token do, in one
 * table that the token endpoint, the API's check, the OpenAPI document and the dashboard read.
 * An admin chooses which of them a client may get; a client asks for some or all of those.
 */
export const MANAGEMENT_SCOPES = {
  "keyfob:admin": "everything, including granting and revoking the admin role",
  "keyfob:read": "every read: clients, accounts, sessions, tokens, signing keys, the audit log",
  "keyfob:clients": "change clients: settings, secrets, redirect URIs, origins and signers",
  "keyfob:accounts": "block, unblock and delete accounts; revoke their sessions, tokens and refresh grants",
  "keyfob:keys": "rotate signing keys and revoke one in an emergency",
} as const;

export type ManagementScope = keyof typeof MANAGEMENT_SCOPES;

/** The scope that holds all the others (and the only one before narrower scopes existed). */
export const ADMIN_SCOPE: ManagementScope = "keyfob:admin";

export const isManagementScope = (value: string): value is ManagementScope => Object.hasOwn(MANAGEMENT_SCOPES, value);

/** Whether scopes held (a token's, or a client's allowance) cover `needed`. */
export const covers = (held: readonly string[], needed: string): boolean => held.includes(ADMIN_SCOPE) || held.includes(needed);
