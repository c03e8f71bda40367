import type { JWK } from "jose";
import type { Prisma, SigningKey } from "../db/generated/client";
import type { Connection } from "./connection";
import type { KeyPurpose, SigningAlg, SigningKeyRow, SigningKeyStore } from "./contract";

/** Serialise key creation among instances sharing one PostgreSQL, per key set (the access set's is the one releases before key sets used). */
const KEY_LOCK_IDS: Record<KeyPurpose, bigint> = { access: 0x6b6579666f62n /* "keyfob" */, vehicle: 0x6b6579666f63n };

/**
 * Signing keys: the access set's RS256 keys in signing_keys, its PS256 and ES256 keys in
 * alg_signing_keys, the vehicle tokens' in vehicle_signing_keys (the same columns; tables of their
 * own so that an older release never reads another set's or alg's key as its own RS256 key). A
 * key's row says which set it is in by the table it is in.
 */
export function keyStatements({ db }: Connection): SigningKeyStore {
  // The three tables have the same columns, so their delegates the same methods.
  const tables = [
    { purpose: "access", table: db.signingKey },
    { purpose: "access", table: db.algSigningKey as unknown as typeof db.signingKey },
    { purpose: "vehicle", table: db.vehicleSigningKey as unknown as typeof db.signingKey },
  ] as const;
  /** The table of a set's keys of one alg; the RS256 and vehicle tables hold no other alg. */
  const tableOf = (purpose: KeyPurpose, alg: SigningAlg) =>
    (purpose === "vehicle" ? tables[2] : alg === "RS256" ? tables[0] : tables[1]).table;
  const algWhere = (purpose: KeyPurpose, alg: SigningAlg) => (purpose === "access" && alg !== "RS256" ? { alg } : {});
  /** A key's row, with its set, and its public JWK as the JWK it was stored as (Prisma reads a JSON column as any JSON). */
  const asKey = (row: SigningKey, purpose: KeyPurpose): SigningKeyRow => ({
    ...row,
    alg: row.alg as SigningAlg,
    purpose,
    publicJwk: row.publicJwk as JWK,
  });

  return {
    /** A transaction-level advisory lock: it ends with the transaction. One per set, for all its algs. */
    async lock(purpose) {
      await db.$executeRaw`SELECT pg_advisory_xact_lock(${KEY_LOCK_IDS[purpose]})`;
    },

    async live(purpose, alg = "RS256") {
      const rows = await tableOf(purpose, alg).findMany({
        where: { revokedAt: null, unpublishedAt: null, ...algWhere(purpose, alg) },
        orderBy: { activatesAt: "asc" },
      });
      return rows.map((row) => asKey(row, purpose));
    },

    async history(limit) {
      const select = { kid: true, alg: true, createdAt: true, activatesAt: true, revokedAt: true, revokedBy: true, unpublishedAt: true };
      const sets = await Promise.all(
        tables.map(async ({ purpose, table }) =>
          (
            await table.findMany({
              where: { OR: [{ revokedAt: { not: null } }, { unpublishedAt: { not: null } }] },
              orderBy: { activatesAt: "desc" },
              take: limit,
              select,
            })
          ).map((row) => ({ ...row, alg: row.alg as SigningAlg, purpose })),
        ),
      );
      return sets
        .flat()
        .sort((a, b) => b.activatesAt.getTime() - a.activatesAt.getTime())
        .slice(0, limit);
    },

    async find(kid) {
      for (const { purpose, table } of tables) {
        const row = await table.findUnique({ where: { kid } });
        if (row) return asKey(row, purpose);
      }
      return undefined;
    },

    async create({ purpose, ...key }) {
      await tableOf(purpose, key.alg).create({ data: { ...key, publicJwk: key.publicJwk as Prisma.InputJsonObject } });
    },

    async revoke(kid, by, now) {
      for (const { table } of tables) await table.updateMany({ where: { kid }, data: { revokedAt: now, revokedBy: by, privateJwe: "" } });
    },

    async unpublish(kids, now) {
      for (const { table } of tables)
        await table.updateMany({ where: { kid: { in: kids } }, data: { unpublishedAt: now, privateJwe: "" } });
    },

    /** keyfob_changed (a migration): a NOTIFY, and a version for polling. */
    async announce(channel, payload) {
      await db.$executeRaw`SELECT keyfob_changed(${channel}, ${payload})`;
    },
  };
}
