import type { Connection } from "./connection";

/** A wallet's ENS profile as resolved: its primary name and avatar URL, each null when it has none. */
export type EnsProfileRow = { name: string | null; avatar: string | null };

/** Resolved ENS profiles (ens_profiles), keyed by the lowercase address, kept until they expire. */
export function ensProfileStatements({ db }: Connection) {
  return {
    /** The profile resolved for `address`, unless it expired by `now`. */
    async find(address: string, now: Date): Promise<EnsProfileRow | undefined> {
      const row = await db.ensProfile.findUnique({
        where: { address: address.toLowerCase() },
        select: { name: true, avatar: true, expiresAt: true },
      });
      return row && row.expiresAt > now ? { name: row.name, avatar: row.avatar } : undefined;
    },
    /** Records what resolution found for `address` until `expiresAt`, replacing an older result. */
    async save(address: string, profile: EnsProfileRow, expiresAt: Date): Promise<void> {
      const key = address.toLowerCase();
      await db.ensProfile.upsert({
        where: { address: key },
        create: { address: key, ...profile, expiresAt },
        update: { ...profile, expiresAt },
      });
    },
  };
}
