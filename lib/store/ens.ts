import type { Connection } from "./connection";
import type { EnsProfileStore } from "./contract";

/** Resolved ENS profiles (ens_profiles), keyed by the lowercase address, kept until they expire. */
export function ensProfileStatements({ db }: Connection): EnsProfileStore {
  return {
    async find(address, now) {
      const row = await db.ensProfile.findUnique({
        where: { address: address.toLowerCase() },
        select: { name: true, avatar: true, expiresAt: true },
      });
      return row && row.expiresAt > now ? { name: row.name, avatar: row.avatar } : undefined;
    },
    async save(address, profile, expiresAt) {
      const key = address.toLowerCase();
      await db.ensProfile.upsert({
        where: { address: key },
        create: { address: key, ...profile, expiresAt },
        update: { ...profile, expiresAt },
      });
    },
  };
}
