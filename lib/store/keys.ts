import type { Prisma } from "../db/generated/client";
import type { Connection } from "./connection";

/** Serialises key creation among instances sharing one PostgreSQL. */
const KEY_LOCK_ID = 0x6b6579666f62; // "keyfob"

/** Signing keys. Changes run in a transaction (Store.transaction) that first takes `lock()`. */
export function keyStatements({ db }: Connection) {
  return {
    /** Until the transaction ends, no other instance creates, drops or revokes keys. */
    async lock(): Promise<void> {
      await db.$executeRaw`SELECT pg_advisory_xact_lock(${KEY_LOCK_ID})`;
    },

    /** The keys in use (revoked and unpublished ones never are), by activation time. */
    live() {
      return db.signingKey.findMany({ where: { revokedAt: null, unpublishedAt: null }, orderBy: { activatesAt: "asc" } });
    },

    /** Keys out of use for good (revoked, or unpublished after retiring), newest first: history, without key material. */
    history(limit: number) {
      return db.signingKey.findMany({
        where: { OR: [{ revokedAt: { not: null } }, { unpublishedAt: { not: null } }] },
        orderBy: { activatesAt: "desc" },
        take: limit,
        select: { kid: true, alg: true, createdAt: true, activatesAt: true, revokedAt: true, revokedBy: true, unpublishedAt: true },
      });
    },

    async find(kid: string) {
      return (await db.signingKey.findUnique({ where: { kid } })) ?? undefined;
    },

    async create(key: Prisma.SigningKeyCreateInput): Promise<void> {
      await db.signingKey.create({ data: key });
    },

    /** Revokes a key for good: its private half is erased. */
    async revoke(kid: string, by: string, now: Date): Promise<void> {
      await db.signingKey.update({ where: { kid }, data: { revokedAt: now, revokedBy: by, privateJwe: "" } });
    },

    /** Takes retired keys out of the JWKS for good, their private halves erased; their rows stay as history. */
    async unpublish(kids: string[], now: Date): Promise<void> {
      await db.signingKey.updateMany({ where: { kid: { in: kids } }, data: { unpublishedAt: now, privateJwe: "" } });
    },

    /** Tells every instance (this one too) on `channel`, when the transaction commits (keyfob_changed: a NOTIFY, and a version for polling). */
    async announce(channel: string, payload: string): Promise<void> {
      await db.$executeRaw`SELECT keyfob_changed(${channel}, ${payload})`;
    },
  };
}

export type SigningKeyRow = Awaited<ReturnType<ReturnType<typeof keyStatements>["live"]>>[number];
