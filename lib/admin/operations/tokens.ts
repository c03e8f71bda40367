import * as directory from "../../accounts/directory";
import { normalizeClientId } from "../../clients/client-id";
import * as registry from "../../clients/registry";
import type { Keyfob } from "../../keyfob";
import type { Admin } from "../access";
import { normalizeAccountId, requireScopeForAccount } from "./accounts";
import { change, type AuditedStore } from "./audited";

/** Admin revocation of access tokens and refresh grants, by token, client or account. */
/** The user ids whose tokens are an account's: its own and its linked wallets' (Flow A tokens name the wallet). */
export async function tokenHolders(k: Pick<Keyfob, "store">, accountId: string | undefined) {
  return accountId ? await k.store.accounts.holders(accountId) : undefined;
}

/** The account a token's user id belongs to: the account of that id, or the one its wallet is linked to. */
async function holderAccount(k: Pick<Keyfob, "store">, userId: string): Promise<string | undefined> {
  if (!/^0x[0-9a-fA-F]{40}$/.test(userId)) return undefined;
  const found = await directory.findAccount(k.store, userId);
  return found && "id" in found ? found.id : undefined;
}

/** Revokes one token, or every active token of a client or an account (its linked wallets' too). Returns how many were revoked. */
export async function revokeTokens(k: AuditedStore, admin: Admin, target: { jti?: string; clientId?: string; accountId?: string }) {
  // A single token is audited under its own client and account, so filtering the log by either finds it.
  const token = target.jti ? await k.store.tokens.find(target.jti) : undefined;
  const clientId = target.clientId ? normalizeClientId(target.clientId) : token?.clientId;
  const accountId = target.accountId ? normalizeAccountId(target.accountId) : token?.userId;
  return change(
    k,
    admin,
    "token.revoked",
    { clientId, accountId, detail: target.jti },
    async (tx) => {
      if (!target.jti && !clientId && !accountId) throw new registry.RegistryError("target", "name a token, a client or an account");
      await requireScopeForAccount(tx, admin, accountId && (await holderAccount(tx, accountId)));
      return tx.store.tokens.revokeActive(
        target.jti ? { jti: target.jti, clientId, userId: accountId } : { clientId, userIds: await tokenHolders(tx, accountId) },
        k.clock.now(),
      );
    },
    (count) => `active tokens: ${count} -> 0`,
  );
}

/**
 * Revokes one refresh-token grant (a family: every rotation of one login's refresh token), or
 * every grant of a client or an account, with every access token issued from them. Audited as
 * `refresh_token.revoked` under the grant's client and account. Returns how many grants that could
 * still be used were revoked.
 */
export async function revokeRefreshGrants(
  k: AuditedStore,
  admin: Admin,
  target: { familyId?: string; clientId?: string; accountId?: string },
) {
  const family = target.familyId ? await k.store.tokens.findFamily(target.familyId) : undefined;
  const clientId = target.clientId ? normalizeClientId(target.clientId) : family?.clientId;
  const accountId = target.accountId ? normalizeAccountId(target.accountId) : family?.accountId;
  return change(
    k,
    admin,
    "refresh_token.revoked",
    { clientId, accountId, detail: target.familyId },
    async (tx) => {
      if (!target.familyId && !clientId && !accountId)
        throw new registry.RegistryError("target", "name a refresh grant, a client or an account");
      if (target.familyId && !family) throw new registry.RegistryError("familyId", "no refresh grant has this id", "not_found");
      await requireScopeForAccount(tx, admin, accountId);
      return tx.store.tokens.revokeRefreshFamilies({ familyId: target.familyId, clientId, accountId }, k.clock.now());
    },
    (revoked) => `live refresh grants: ${revoked.families} -> 0; ${revoked.accessTokens} access tokens revoked with them`,
  ).then((revoked) => revoked.families);
}
