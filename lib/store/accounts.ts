import { Prisma } from "../db/generated/client";
import { refusingDuplicates, type Connection } from "./connection";
import type { AccountQuery, AccountStore, IdentityKey } from "./contract";
import { deleteSessions, queueLogouts } from "./logouts";

/**
 * Accounts with their identities and passkeys, login sessions, and the dashboard's sessions, admin
 * roles and the first admin's set-up codes. Blocking and deleting an account revoke what it holds
 * in other groups' tables (codes, tokens, refresh tokens), in the account's transaction.
 */

/** The advisory lock first-admin claims take, so two at once cannot both find no admin. */
const FIRST_ADMIN_LOCK_ID = 0x6b66_6164_6d6en; /* "kfadmn" */

/** What an account is made of, as listed and shown to admins (AccountView). */
const ACCOUNT_VIEW = {
  id: true,
  createdAt: true,
  blockedAt: true,
  identities: {
    orderBy: { createdAt: "asc" },
    select: { provider: true, subject: true, email: true, emailVerified: true, createdAt: true, lastLoginAt: true },
  },
} satisfies Prisma.AccountSelect;

/**
 * Withdraws the approved device authorizations (RFC 8628) `where` selects that the device has not
 * redeemed yet: denied, so its next poll gets access_denied instead of the tokens of an account
 * that was blocked or deleted, or of a session that ended. Pending ones name no account or session
 * until a login approves them, which a blocked account or an ended session cannot.
 */
function withdrawDeviceAuthorizations(tx: Prisma.TransactionClient, where: Prisma.DeviceAuthorizationWhereInput) {
  return tx.deviceAuthorization.updateMany({ where: { ...where, status: "approved", usedAt: null }, data: { status: "denied" } });
}

export function accountStatements({ db }: Connection): AccountStore {
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
   * Ends the unrevoked sessions `where` selects, in `tx`, queueing their back-channel logouts (one
   * past its end unrevoked was never told: endRunOutSessions tells them) and withdrawing the device
   * authorizations they approved; returns how many it ended.
   */
  const endSessions = async (tx: Prisma.TransactionClient, where: Prisma.LoginSessionWhereInput, now: Date) => {
    const ended = await tx.loginSession.updateManyAndReturn({
      where: { ...where, revokedAt: null },
      data: { revokedAt: now },
      select: { idHash: true },
    });
    if (ended.length > 0) await withdrawDeviceAuthorizations(tx, { sessionId: { in: ended.map((s) => s.idHash) } });
    await queueLogouts(
      tx,
      ended.map((s) => s.idHash),
      now,
    );
    return ended.length;
  };

  return {
    async find(id) {
      return (await db.account.findUnique({ where: { id } })) ?? undefined;
    },

    async search(query, skip, take) {
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

    async view(id) {
      return (await db.account.findUnique({ where: { id }, select: ACCOUNT_VIEW })) ?? undefined;
    },

    async withEmail(email, take) {
      const rows = await db.identity.findMany({
        where: { email: { equals: email, mode: "insensitive" } },
        select: { accountId: true },
        distinct: ["accountId"],
        take,
      });
      return rows.map((row) => row.accountId);
    },

    holders: (accountId) => holders(db, accountId),

    block(accountId, now) {
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

    async unblock(accountId) {
      await db.account.update({ where: { id: accountId }, data: { blockedAt: null } });
    },

    /** Its login sessions go with the clients recorded in them as deleteSessions deletes them. */
    delete(accountId, now) {
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

    async findIdentity(key) {
      return (await db.identity.findUnique({ where: identityKey(key) })) ?? undefined;
    },

    async touchIdentity(key, now, email) {
      await db.identity.update({ where: identityKey(key), data: { lastLoginAt: now, ...email } });
    },

    async createWithIdentity(identity) {
      await refusingDuplicates(
        db.$transaction([
          db.account.upsert({ where: { id: identity.accountId }, create: { id: identity.accountId }, update: {} }),
          db.identity.create({ data: identity }),
        ]),
      );
    },

    async addIdentity(identity) {
      await refusingDuplicates(db.identity.create({ data: identity }));
    },

    identities(accountId) {
      return db.identity.findMany({
        where: { accountId },
        orderBy: [{ createdAt: "asc" }, { provider: "asc" }],
        select: { provider: true, subject: true, email: true, createdAt: true, lastLoginAt: true },
      });
    },

    /** Prisma has no FOR UPDATE, hence plain SQL. */
    async lockAccount(accountId) {
      const rows = await db.$queryRaw<{ id: string }[]>`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`;
      return rows.length === 1;
    },

    async waysIn(accountId) {
      const [identities, passkeys] = await Promise.all([
        db.identity.count({ where: { accountId, provider: { not: "passkey" } } }),
        db.passkeyCredential.count({ where: { accountId } }),
      ]);
      return identities + passkeys;
    },

    async removeIdentity(accountId, key) {
      return (await db.identity.deleteMany({ where: { ...key, accountId } })).count === 1;
    },

    async identitySubject(accountId, provider) {
      return (await db.identity.findFirst({ where: { provider, accountId }, select: { subject: true } }))?.subject;
    },

    async verifiedEmails(accountId) {
      const rows = await db.identity.findMany({ where: { accountId, emailVerified: true, email: { not: null } }, select: { email: true } });
      return rows.map((row) => row.email!);
    },

    async anyEmail(accountId) {
      return (await db.identity.findFirst({ where: { accountId, email: { not: null } }, select: { email: true } }))?.email ?? undefined;
    },

    // Passkeys.

    async addPasskey(data) {
      await refusingDuplicates(db.passkeyCredential.create({ data }));
    },

    async findPasskey(id) {
      return (await db.passkeyCredential.findUnique({ where: { id } })) ?? undefined;
    },

    passkeyIds(accountId) {
      return db.passkeyCredential.findMany({ where: { accountId }, select: { id: true, transports: true } });
    },

    async usedPasskey(id, use, now) {
      await db.passkeyCredential.updateMany({ where: { id, counter: { lte: use.counter } }, data: { ...use, lastUsedAt: now } });
    },

    passkeys(accountId) {
      return db.passkeyCredential.findMany({
        where: { accountId },
        orderBy: { createdAt: "desc" },
        select: { id: true, name: true, createdAt: true, lastUsedAt: true, deviceType: true, backedUp: true },
      });
    },

    async renamePasskey(accountId, id, name) {
      return (await db.passkeyCredential.updateMany({ where: { id, accountId }, data: { name } })).count === 1;
    },

    async removePasskey(accountId, id) {
      return (await db.passkeyCredential.deleteMany({ where: { id, accountId } })).count === 1;
    },

    // Login sessions.

    createSession(data) {
      return db.loginSession.create({ data });
    },

    async useSession(idHash, now, idleSince) {
      const [row] = await db.loginSession.updateManyAndReturn({
        where: { idHash, revokedAt: null, expiresAt: { gt: now }, lastSeenAt: { gt: idleSince }, account: { blockedAt: null } },
        data: { lastSeenAt: now },
      });
      return row;
    },

    async findSession(idHash) {
      return (await db.loginSession.findUnique({ where: { idHash } })) ?? undefined;
    },

    revokeSessions(target, now) {
      return db.$transaction((tx) => endSessions(tx, target, now));
    },

    endRunOutSessions(now, idleSince) {
      return db.$transaction((tx) => endSessions(tx, { OR: [{ expiresAt: { lte: now } }, { lastSeenAt: { lte: idleSince } }] }, now));
    },

    endSessionsThrough(accountId, wayIn, now) {
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

    liveSessions(accountId, now, idleSince) {
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

    async createAdminSession(data) {
      await db.adminSession.create({ data });
    },

    async liveAdminSession(idHash, now) {
      return (
        (await db.adminSession.findFirst({
          where: { idHash, revokedAt: null, expiresAt: { gt: now }, loginSession: { revokedAt: null, account: { blockedAt: null } } },
          select: { idHash: true, accountId: true },
        })) ?? undefined
      );
    },

    async findAdminSession(idHash) {
      return (await db.adminSession.findUnique({ where: { idHash } })) ?? undefined;
    },

    async endAdminSessions(target, now) {
      return (await db.adminSession.updateMany({ where: { ...target, revokedAt: null }, data: { revokedAt: now } })).count;
    },

    async findAdminRole(accountId) {
      return (await db.adminRole.findUnique({ where: { accountId } })) ?? undefined;
    },

    async grantAdminRole(accountId, grantedBy) {
      await db.adminRole.upsert({ where: { accountId }, create: { accountId, grantedBy }, update: {} });
    },

    async revokeAdminRole(accountId) {
      return (await db.adminRole.deleteMany({ where: { accountId } })).count > 0;
    },

    adminRoles() {
      return db.adminRole.findMany({ orderBy: { grantedAt: "asc" } });
    },

    async createAdminSetupCode(code, sweepBefore) {
      await db.adminSetupCode.deleteMany({ where: { expiresAt: { lt: sweepBefore } } });
      await db.adminSetupCode.create({ data: code });
    },

    async findAdminSetupCode(codeHash) {
      return (await db.adminSetupCode.findUnique({ where: { codeHash } })) ?? undefined;
    },

    /** Prisma has no advisory lock, hence plain SQL for it; held until the transaction ends. */
    claimAdminSetupCode(codeHash, accountId, now) {
      return db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${FIRST_ADMIN_LOCK_ID})`;
        if ((await tx.adminRole.count()) > 0) return "admin-exists" as const;
        const code = (await tx.adminSetupCode.findUnique({ where: { codeHash } })) ?? undefined;
        if (!code || code.usedAt || code.expiresAt <= now) return code;
        await tx.adminSetupCode.update({ where: { codeHash }, data: { usedAt: now, usedBy: accountId } });
        await tx.adminRole.create({ data: { accountId, grantedBy: "setup link", grantedAt: now } });
        return code;
      });
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
