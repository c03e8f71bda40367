/**
 * Consent grants: what an account allowed a third-party client (Client.requireConsent). A login for
 * such a client asks the user's consent (the hosted login's consent page, lib/interactions/consent.ts)
 * to the scopes the account has not granted it yet, and to all of them on prompt=consent (OpenID
 * Connect Core 3.1.2.1); prompt=none then answers consent_required. A first-party client (the
 * default) never asks: the admin's registration stands for consent. Revoking a grant ends the
 * client's refresh tokens for the account, so nothing it was granted outlives the grant.
 */
import type { Keyfob } from "../keyfob";
import { OFFLINE_ACCESS } from "../oauth/scope";

/** What a third-party client needs to say of itself for its consent. */
export type ConsentClient = { requireConsent: boolean; refreshTokensAllowed: boolean };

/**
 * The scopes of a request the user is asked to allow: offline_access only of a client that may get
 * refresh tokens (for any other it is dropped, never granted: lib/oauth/scope.ts).
 */
export function consentScope(scope: string, client: Pick<ConsentClient, "refreshTokensAllowed">): string[] {
  const values = scope.split(" ");
  return client.refreshTokensAllowed ? values : values.filter((value) => value !== OFFLINE_ACCESS);
}

/** The request's scopes the user must consent to before a code is issued: none when no consent step is needed. */
export async function scopesToConsent(
  keyfob: Pick<Keyfob, "store">,
  request: { clientId: string; scope: string; prompt: string | null },
  client: ConsentClient,
  accountId: string,
): Promise<string[]> {
  if (!client.requireConsent) return [];
  const asked = consentScope(request.scope, client);
  if (request.prompt?.split(" ").includes("consent")) return asked;
  const granted = new Set((await keyfob.store.consentGrants.find(accountId, request.clientId))?.scope.split(" "));
  return asked.filter((scope) => !granted.has(scope));
}

/** The scopes an account granted a client so far (none: never, or revoked). */
export async function grantedScopes(keyfob: Pick<Keyfob, "store">, accountId: string, clientId: string): Promise<string[]> {
  return (await keyfob.store.consentGrants.find(accountId, clientId))?.scope.split(" ") ?? [];
}

/** Records the user's consent to a client's scopes (added to what it granted before), audited. */
export async function recordConsent(
  keyfob: Pick<Keyfob, "clock" | "store" | "audit">,
  accountId: string,
  clientId: string,
  scope: string[],
): Promise<void> {
  await keyfob.store.consentGrants.grant(accountId, clientId, scope, keyfob.clock.now());
  keyfob.audit.record({ action: "consent.granted", outcome: "success", clientId, accountId, detail: scope.join(" ") });
}

/** An account's grants, most recent first: the client's name and logo, the scopes, when. */
export async function accountConsents(keyfob: Pick<Keyfob, "store">, accountId: string) {
  return (await keyfob.store.consentGrants.listForAccount(accountId)).map((grant) => ({
    clientId: grant.clientId,
    clientName: grant.clientName,
    clientLogoUrl: grant.clientLogoUrl,
    scope: grant.scope.split(" "),
    grantedAt: grant.grantedAt,
  }));
}

/**
 * Revokes an account's grant to a client: the grant goes, and so do the client's codes and device
 * authorizations for the account not redeemed yet, and its refresh tokens for the account (with the
 * access tokens issued with them). Undefined when there was no grant. The
 * caller audits it (the account at /account, or an admin's change in its transaction).
 */
export async function revokeConsent(keyfob: Pick<Keyfob, "clock" | "store">, accountId: string, clientId: string) {
  if (!(await keyfob.store.consentGrants.revoke(accountId, clientId, keyfob.clock.now()))) return undefined;
  return keyfob.store.tokens.revokeRefreshFamilies({ clientId, accountId }, keyfob.clock.now());
}
