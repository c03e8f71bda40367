import type { JWK } from "jose";
import type { Prisma, SigningKey } from "../db/generated/client";
import type { Connection } from "./connection";
import type { KeyPurpose, SigningKeyRow, SigningKeyStore } from "./contract";

/** Serialise key creation among instances sharing one PostgreSQL, per key set (the access set's is the one releases before key sets used). */
const KEY_LOCK_IDS: Record<KeyPurpose, bigint> = { access: 0x6b6579666f62n /* "keyfob" */, vehicle: 0x6b6579666f63n };

/**
 * Signing keys: the access set in signing_keys, the vehicle tokens' in vehicle_signing_keys (the
 * same columns; a table of its own so that a release without key sets never reads a vehicle key as
 * its own). A key's row says which set it is in by the table it is in.
 */
export function keyStatements({ db }: Connection): SigningKeyStore {
  // The two tables have the same columns, so their delegates the same methods.
  const tables = { access: db.signingKey, vehicle: db.vehicleSigningKey as unknown as typeof db.signingKey } as const;
  const purposes = Object.keys(tables) as KeyPurpose[];
  /** A key's row, with its set, and its public JWK as the JWK it was stored as (Prisma reads a JSON column as any JSON). */
  const asKey = (row: SigningKey, purpose: KeyPurpose): SigningKeyRow => ({ ...row, purpose, publicJwk: row.publicJwk as JWK });

  return {
    /** A transaction-level advisory lock: it ends with the transaction. */
    async lock(purpose) {
      await db.$executeRaw`SELECT pg_advisory_xact_lock(${KEY_LOCK_IDS[purpose]})`;
    },

    async live(purpose) {
      const rows = await tables[purpose].findMany({ where: { revokedAt: null, unpublishedAt: null }, orderBy: { activatesAt: "asc" } });
      return rows.map((row) => asKey(row, purpose));
    },

    async history(limit) {
      const select = { kid: true, alg: true, createdAt: true, activatesAt: true, revokedAt: true, revokedBy: true, unpublishedAt: true };
      const sets = await Promise.all(
        purposes.map(async (purpose) =>
          (
            await tables[purpose].findMany({
              where: { OR: [{ revokedAt: { not: null } }, { unpublishedAt: { not: null } }] },
              orderBy: { activatesAt: "desc" },
              take: limit,
              select,
            })
          ).map((row) => ({ ...row, purpose })),
        ),
      );
      return sets
        .flat()
        .sort((a, b) => b.activatesAt.getTime() - a.activatesAt.getTime())
        .slice(0, limit);
    },

    async find(kid) {
      for (const purpose of purposes) {
        const row = await tables[purpose].findUnique({ where: { kid } });
        if (row) return asKey(row, purpose);
      }
      return undefined;
    },

    async create({ purpose, ...key }) {
      await tables[purpose].create({ data: { ...key, publicJwk: key.publicJwk as Prisma.InputJsonObject } });
    },

    async revoke(kid, by, now) {
      for (const purpose of purposes)
        await tables[purpose].updateMany({ where: { kid }, data: { revokedAt: now, revokedBy: by, privateJwe: "" } });
    },

    async unpublish(kids, now) {
      for (const purpose of purposes)
        await tables[purpose].updateMany({ where: { kid: { in: kids } }, data: { unpublishedAt: now, privateJwe: "" } });
    },

    /** keyfob_changed (a migration): a NOTIFY, and a version for polling. */
    async announce(channel, payload) {
      await db.$executeRaw`SELECT keyfob_changed(${channel}, ${payload})`;
    },
  };
}
