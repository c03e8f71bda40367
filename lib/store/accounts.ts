import { Prisma } from "../db/generated/client";
import { refusingDuplicates, type Connection } from "./connection";
import { deleteSessions, queueLogouts } from "./logouts";

/** What an account is made of, as listed and shown to admins. */
const ACCOUNT_VIEW = {
  id: true,
  createdAt: true,
  blockedAt: true,
  identities: {
    orderBy: { createdAt: "asc" },
    select: { provider: true, subject: true, email: true, emailVerified: true, createdAt: true, lastLoginAt: true },
  },
} satisfies Prisma.AccountSelect;

/** How admins look for accounts: by an address (the account's own or a linked wallet's), or text anywhere in an id, subject or email (any case). */
export type AccountQuery = { address: string } | { text: string } | Record<string, never>;

export type IdentityKey = { provider: string; subject: string };

/**
 * Accounts with their identities and passkeys, login sessions, and the dashboard's sessions and
 * admin roles. Blocking and deleting an account revoke what it holds in other groups' tables
 * (codes, tokens, refresh tokens), in the account's transaction.
 */
/**
 * Withdraws the approved device authorizations (RFC 8628) `where` selects that the device has not
 * redeemed yet: denied, so its next poll gets access_denied instead of the tokens of an account
 * that was blocked or deleted, or of a session that ended. Pending ones name no account or session
 * until a login approves them, which a blocked account or an ended session cannot.
 */
function withdrawDeviceAuthorizations(tx: Prisma.TransactionClient, where: Prisma.DeviceAuthorizationWhereInput) {
  return tx.deviceAuthorization.updateMany({ where: { ...where, status: "approved", usedAt: null }, data: { status: "denied" } });
}

export function accountStatements({ db }: Connection) {
  const identityKey = ({ provider, subject }: IdentityKey) => ({ provider_subject: { provider, subject } });
  /** Whose tokens are the account's: its own id, and its linked wallets (Flow A tokens name the wallet). */
  const holders = async (tx: Pick<Prisma.TransactionClient, "identity">, accountId: string): Promise<string[]> => {
    const wallets = await tx.identity.findMany({ where: { accountId, provider: "web3" }, select: { subject: true } });
    return [...new Set([accountId, ...wallets.map((w) => w.subject)])];
  };
  /**
   * Revokes what an account holds, in `tx`: its unredeemed codes and approved device
   * authorizations, access tokens (those of `holderIds`) and refresh tokens.
   */
  const revokeHoldings = async (tx: Prisma.TransactionClient, accountId: string, holderIds: string[], now: Date) => {
    await tx.authorizationCode.updateMany({ where: { accountId, usedAt: null }, data: { expiresAt: now } });
    await withdrawDeviceAuthorizations(tx, { accountId });
    const tokens = await tx.issuedToken.updateMany({ where: { userId: { in: holderIds }, revokedAt: null }, data: { revokedAt: now } });
    await tx.refreshToken.updateMany({ where: { accountId, revokedAt: null }, data: { revokedAt: now } });
    return tokens.count;
  };
  /**
   * Ends the unrevoked sessions `where` selects, in `tx`, queueing back-channel logouts for those
   * still live (an expired one ended already) and withdrawing the device authorizations they
   * approved; returns how many it ended.
   */
  const endSessions = async (tx: Prisma.TransactionClient, where: Prisma.LoginSessionWhereInput, now: Date) => {
    const ended = await tx.loginSession.updateManyAndReturn({
      where: { ...where, revokedAt: null },
      data: { revokedAt: now },
      select: { idHash: true, expiresAt: true },
    });
    if (ended.length > 0) await withdrawDeviceAuthorizations(tx, { sessionId: { in: ended.map((s) => s.idHash) } });
    await queueLogouts(
      tx,
      ended.filter((s) => s.expiresAt > now).map((s) => s.idHash),
      now,
    );
    return ended.length;
  };

  return {
    async find(id: string) {
      return (await db.account.findUnique({ where: { id } })) ?? undefined;
    },

    /** A page of accounts matching `query`, newest first, with their identities; and how many match. */
    async search(query: AccountQuery, skip: number, take: number) {
      const where = accountWhere(query);
      const [items, total] = await Promise.all([
        db.account.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "asc" }], skip, take, select: ACCOUNT_VIEW }),
        db.account.count({ where }),
      ]);
      return { items, total };
    },

    count() {
      return db.account.count();
    },

    /** One account with its identities. */
    async view(id: string) {
      return (await db.account.findUnique({ where: { id }, select: ACCOUNT_VIEW })) ?? undefined;
    },

    /** The accounts (at most `take`) with an identity of this email, in any case. */
    async withEmail(email: string, take: number): Promise<string[]> {
      const rows = await db.identity.findMany({
        where: { email: { equals: email, mode: "insensitive" } },
        select: { accountId: true },
        distinct: ["accountId"],
        take,
      });
      return rows.map((row) => row.accountId);
    },

    holders: (accountId: string) => holders(db, accountId),

    /**
     * Blocks an account and, in the same transaction, revokes its login sessions, unredeemed codes,
     * access tokens (its wallets' too) and refresh tokens.
     */
    block(accountId: string, now: Date) {
      return db.$transaction(async (tx) => {
        const account = await tx.account.update({
          where: { id: accountId },
          data: { blockedAt: now },
          include: { identities: { where: { provider: "web3" } } },
        });
        const revokedSessions = await endSessions(tx, { accountId }, now);
        const revokedTokens = await revokeHoldings(tx, accountId, [account.id, ...account.identities.map((i) => i.subject)], now);
        return { revokedTokens, revokedSessions };
      });
    },

    async unblock(accountId: string): Promise<void> {
      await db.account.update({ where: { id: accountId }, data: { blockedAt: null } });
    },

    /**
     * Deletes an account with its identities and login sessions, in one transaction that first
     * revokes what it holds (queueing back-channel logouts for its live sessions) and removes its
     * admin role, and deletes its login sessions with the clients recorded in them (deleteSessions);
     * undefined when there is no such account.
     */
    delete(accountId: string, now: Date) {
      return db.$transaction(async (tx) => {
        const account = await tx.account.findUnique({
          where: { id: accountId },
          select: { id: true, _count: { select: { identities: true } } },
        });
        if (!account) return undefined;
        const holderIds = await holders(tx, accountId);
        const sessions = await tx.loginSession.findMany({
          where: { accountId, revokedAt: null, expiresAt: { gt: now } },
          select: { idHash: true },
        });
        await queueLogouts(
          tx,
          sessions.map((s) => s.idHash),
          now,
        );
        const revokedTokens = await revokeHoldings(tx, accountId, holderIds, now);
        await tx.adminRole.deleteMany({ where: { accountId } });
        await deleteSessions(tx, Prisma.sql`account_id = ${accountId}`);
        await tx.account.delete({ where: { id: accountId } });
        return { revokedTokens, endedSessions: sessions.length, identities: account._count.identities };
      });
    },

    // Identities.

    async findIdentity(key: IdentityKey) {
      return (await db.identity.findUnique({ where: identityKey(key) })) ?? undefined;
    },

    /** Records a login of a known identity, with its email when the provider sent one. */
    async touchIdentity(key: IdentityKey, email?: { email: string; emailVerified: boolean }): Promise<void> {
      await db.identity.update({ where: identityKey(key), data: { lastLoginAt: new Date(), ...email } });
    },

    /** An account (unless it exists) and a new identity of it, together; Duplicate when the identity exists. */
    async createWithIdentity(identity: {
      provider: string;
      subject: string;
      accountId: string;
      email?: string;
      emailVerified: boolean;
    }): Promise<void> {
      await refusingDuplicates(
        db.$transaction([
          db.account.upsert({ where: { id: identity.accountId }, create: { id: identity.accountId }, update: {} }),
          db.identity.create({ data: identity }),
        ]),
      );
    },

    /** A new identity of an existing account; Duplicate when it exists. */
    async addIdentity(identity: { provider: string; subject: string; accountId: string }): Promise<void> {
      await refusingDuplicates(db.identity.create({ data: identity }));
    },

    /** An account's identities, oldest first: what /account lists. */
    identities(accountId: string) {
      return db.identity.findMany({
        where: { accountId },
        orderBy: [{ createdAt: "asc" }, { provider: "asc" }],
        select: { provider: true, subject: true, email: true, createdAt: true, lastLoginAt: true },
      });
    },

    /**
     * Holds the account's row until the transaction ends (`tx` must be a transaction's store), so
     * changes to its ways in wait for each other; false when there is no such account. Prisma has
     * no FOR UPDATE, hence plain SQL.
     */
    async lockAccount(accountId: string): Promise<boolean> {
      const rows = await db.$queryRaw<{ id: string }[]>`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`;
      return rows.length === 1;
    },

    /** The ways into an account: its identities other than its passkey identity, and its passkeys. */
    async waysIn(accountId: string): Promise<number> {
      const [identities, passkeys] = await Promise.all([
        db.identity.count({ where: { accountId, provider: { not: "passkey" } } }),
        db.passkeyCredential.count({ where: { accountId } }),
      ]);
      return identities + passkeys;
    },

    /** Deletes an identity of the account; false when it has none such. */
    async removeIdentity(accountId: string, key: IdentityKey): Promise<boolean> {
      return (await db.identity.deleteMany({ where: { ...key, accountId } })).count === 1;
    },

    /** The subject of the account's first identity of `provider`. */
    async identitySubject(accountId: string, provider: string) {
      return (await db.identity.findFirst({ where: { provider, accountId }, select: { subject: true } }))?.subject;
    },

    /** The verified emails of the account's identities. */
    async verifiedEmails(accountId: string): Promise<string[]> {
      const rows = await db.identity.findMany({ where: { accountId, emailVerified: true, email: { not: null } }, select: { email: true } });
      return rows.map((row) => row.email!);
    },

    /** The email of one of the account's identities, if any has one. */
    async anyEmail(accountId: string) {
      return (await db.identity.findFirst({ where: { accountId, email: { not: null } }, select: { email: true } }))?.email ?? undefined;
    },

    // Passkeys.

    /** A new passkey; Duplicate when its credential id is registered. */
    async addPasskey(data: Prisma.PasskeyCredentialUncheckedCreateInput): Promise<void> {
      await refusingDuplicates(db.passkeyCredential.create({ data }));
    },

    async findPasskey(id: string) {
      return (await db.passkeyCredential.findUnique({ where: { id } })) ?? undefined;
    },

    /** What registration options exclude: the account's passkeys' ids and transports. */
    passkeyIds(accountId: string) {
      return db.passkeyCredential.findMany({ where: { accountId }, select: { id: true, transports: true } });
    },

    /** Records a passkey's use; its counter only moves forward. */
    async usedPasskey(id: string, use: { counter: bigint; backedUp: boolean; deviceType: string }): Promise<void> {
      await db.passkeyCredential.updateMany({ where: { id, counter: { lte: use.counter } }, data: { ...use, lastUsedAt: new Date() } });
    },

    /** An account's passkeys, newest first. */
    passkeys(accountId: string) {
      return db.passkeyCredential.findMany({
        where: { accountId },
        orderBy: { createdAt: "desc" },
        select: { id: true, name: true, createdAt: true, lastUsedAt: true, deviceType: true, backedUp: true },
      });
    },

    /** Names a passkey of the account; false when it has none of this id. */
    async renamePasskey(accountId: string, id: string, name: string): Promise<boolean> {
      return (await db.passkeyCredential.updateMany({ where: { id, accountId }, data: { name } })).count === 1;
    },

    /** Deletes a passkey of the account; false when it has none of this id. */
    async removePasskey(accountId: string, id: string): Promise<boolean> {
      return (await db.passkeyCredential.deleteMany({ where: { id, accountId } })).count === 1;
    },

    // Login sessions.

    createSession(data: Prisma.LoginSessionUncheckedCreateInput) {
      return db.loginSession.create({ data });
    },

    /** A live session (unrevoked, before its end, seen after `idleSince`, its account unblocked), marked seen now. */
    async useSession(idHash: string, now: Date, idleSince: Date) {
      const [row] = await db.loginSession.updateManyAndReturn({
        where: { idHash, revokedAt: null, expiresAt: { gt: now }, lastSeenAt: { gt: idleSince }, account: { blockedAt: null } },
        data: { lastSeenAt: now },
      });
      return row;
    },

    async findSession(idHash: string) {
      return (await db.loginSession.findUnique({ where: { idHash } })) ?? undefined;
    },

    /**
     * Revokes the unrevoked sessions of an account (one of them, by id), or the one of `idHash`, with
     * their back-channel logouts queued in the same transaction; returns how many.
     */
    revokeSessions(target: { accountId?: string; idHash?: string }, now = new Date()): Promise<number> {
      return db.$transaction((tx) => endSessions(tx, target, now));
    },

    /**
     * Ends the account's sessions logged in through a way in: an identity, or one passkey (and a
     * passkey session that does not name its passkey, from before sessions did), with their
     * back-channel logouts; and revokes what was issued in any session through it, ended earlier
     * or now: unredeemed codes, access tokens and refresh families. Returns how many sessions ended
     * and access tokens were revoked.
     */
    endSessionsThrough(
      accountId: string,
      wayIn: { identity: IdentityKey } | { passkey: string },
      now = new Date(),
    ): Promise<{ sessions: number; tokens: number }> {
      const where: Prisma.LoginSessionWhereInput =
        "identity" in wayIn
          ? { accountId, connector: wayIn.identity.provider, subject: wayIn.identity.subject }
          : { accountId, connector: "passkey", OR: [{ passkeyId: wayIn.passkey }, { passkeyId: null }] };
      return db.$transaction(async (tx) => {
        const sessionIds = (await tx.loginSession.findMany({ where, select: { idHash: true } })).map((s) => s.idHash);
        if (sessionIds.length === 0) return { sessions: 0, tokens: 0 };
        const sessions = await endSessions(tx, { idHash: { in: sessionIds } }, now);
        const inSessions = { sessionId: { in: sessionIds } };
        await tx.authorizationCode.updateMany({ where: { ...inSessions, usedAt: null }, data: { expiresAt: now } });
        await withdrawDeviceAuthorizations(tx, inSessions);
        await tx.refreshToken.updateMany({ where: { ...inSessions, revokedAt: null }, data: { revokedAt: now } });
        const tokens = await tx.issuedToken.updateMany({ where: { ...inSessions, revokedAt: null }, data: { revokedAt: now } });
        return { sessions, tokens: tokens.count };
      });
    },

    /** An account's live sessions, most recently used first. */
    liveSessions(accountId: string, now: Date, idleSince: Date) {
      return db.loginSession.findMany({
        where: { accountId, revokedAt: null, expiresAt: { gt: now }, lastSeenAt: { gt: idleSince } },
        orderBy: { lastSeenAt: "desc" },
        select: {
          idHash: true,
          connector: true,
          subject: true,
          email: true,
          amr: true,
          authTime: true,
          lastSeenAt: true,
          expiresAt: true,
          ip: true,
          userAgent: true,
        },
      });
    },

    // The dashboard's sessions and admin roles.

    async createAdminSession(data: Prisma.AdminSessionUncheckedCreateInput): Promise<void> {
      await db.adminSession.create({ data });
    },

    /** A live dashboard session: unrevoked, before its end, its login session unrevoked and its account unblocked. */
    async liveAdminSession(idHash: string, now: Date) {
      return (
        (await db.adminSession.findFirst({
          where: { idHash, revokedAt: null, expiresAt: { gt: now }, loginSession: { revokedAt: null, account: { blockedAt: null } } },
          select: { idHash: true, accountId: true },
        })) ?? undefined
      );
    },

    async findAdminSession(idHash: string) {
      return (await db.adminSession.findUnique({ where: { idHash } })) ?? undefined;
    },

    /** Ends unrevoked dashboard sessions: the one of `idHash`, or every one of `accountId`; returns how many. */
    async endAdminSessions(target: { idHash: string } | { accountId: string }): Promise<number> {
      return (await db.adminSession.updateMany({ where: { ...target, revokedAt: null }, data: { revokedAt: new Date() } })).count;
    },

    async findAdminRole(accountId: string) {
      return (await db.adminRole.findUnique({ where: { accountId } })) ?? undefined;
    },

    async grantAdminRole(accountId: string, grantedBy: string): Promise<void> {
      await db.adminRole.upsert({ where: { accountId }, create: { accountId, grantedBy }, update: {} });
    },

    /** Takes the role away; false when the account had none. */
    async revokeAdminRole(accountId: string): Promise<boolean> {
      return (await db.adminRole.deleteMany({ where: { accountId } })).count > 0;
    },

    adminRoles() {
      return db.adminRole.findMany({ orderBy: { grantedAt: "asc" } });
    },
  };
}

function accountWhere(query: AccountQuery): Prisma.AccountWhereInput {
  if ("address" in query) return { OR: [{ id: query.address }, { identities: { some: { provider: "web3", subject: query.address } } }] };
  if ("text" in query) {
    return {
      OR: [
        { id: { contains: query.text, mode: "insensitive" } },
        { identities: { some: { subject: { contains: query.text, mode: "insensitive" } } } },
        { identities: { some: { email: { contains: query.text, mode: "insensitive" } } } },
      ],
    };
  }
  return {};
}
