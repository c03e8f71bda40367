import type { JWK } from "jose";
import type { Prisma, SigningKey } from "../db/generated/client";
import type { Connection } from "./connection";
import type { KeyPurpose, SigningKeyRow, SigningKeyStore } from "./contract";

/** Serialise key creation among instances sharing one PostgreSQL, per key set (the access set's is the one releases before key sets used). */
const KEY_LOCK_IDS: Record<KeyPurpose, bigint> = { access: 0x6b6579666f62n /* "keyfob" */, vehicle: 0x6b6579666f63n };

/** A key's row, its public JWK as the JWK it was stored as (Prisma reads a JSON column as any JSON). */
const asKey = (row: SigningKey): SigningKeyRow => ({ ...row, publicJwk: row.publicJwk as JWK });

/** Signing keys. */
export function keyStatements({ db }: Connection): SigningKeyStore {
  return {
    /** A transaction-level advisory lock: it ends with the transaction. */
    async lock(purpose) {
      await db.$executeRaw`SELECT pg_advisory_xact_lock(${KEY_LOCK_IDS[purpose]})`;
    },

    async live(purpose) {
      const rows = await db.signingKey.findMany({
        where: { purpose, revokedAt: null, unpublishedAt: null },
        orderBy: { activatesAt: "asc" },
      });
      return rows.map(asKey);
    },

    history(limit) {
      return db.signingKey.findMany({
        where: { OR: [{ revokedAt: { not: null } }, { unpublishedAt: { not: null } }] },
        orderBy: { activatesAt: "desc" },
        take: limit,
        select: {
          kid: true,
          alg: true,
          purpose: true,
          createdAt: true,
          activatesAt: true,
          revokedAt: true,
          revokedBy: true,
          unpublishedAt: true,
        },
      });
    },

    async find(kid) {
      const row = await db.signingKey.findUnique({ where: { kid } });
      return row ? asKey(row) : undefined;
    },

    async create(key) {
      await db.signingKey.create({ data: { ...key, publicJwk: key.publicJwk as Prisma.InputJsonObject } });
    },

    async revoke(kid, by, now) {
      await db.signingKey.update({ where: { kid }, data: { revokedAt: now, revokedBy: by, privateJwe: "" } });
    },

    async unpublish(kids, now) {
      await db.signingKey.updateMany({ where: { kid: { in: kids } }, data: { unpublishedAt: now, privateJwe: "" } });
    },

    /** keyfob_changed (a migration): a NOTIFY, and a version for polling. */
    async announce(channel, payload) {
      await db.$executeRaw`SELECT keyfob_changed(${channel}, ${payload})`;
    },
  };
}
