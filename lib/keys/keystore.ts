import { randomBytes } from "node:crypto";
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from "jose";
import type { Database } from "../db/client";
import { log } from "../log";
import { seal, unseal } from "./encryption";

export const SIGNING_ALG = "RS256";
/** Tolerance for clocks of token verifiers that run a little behind ours. */
const CLOCK_SKEW_MS = 60_000;
/** Serialises key creation among instances sharing one PostgreSQL. */
const KEY_LOCK_ID = 0x6b6579666f62; // "keyfob"

export type KeyPolicy = {
  /** Seconds a key signs before its successor takes over. */
  rotationPeriod: number;
  /** Seconds a new key is published before it signs; longer than any JWKS cache. */
  publishLead: number;
  /** Seconds the longest-lived token stays valid; a retired key stays published that long. */
  tokenTtl: number;
};

export type ScheduledKey = { kid: string; activatesAt: Date };

/** The key that signs at `now`: the newest one whose activation time has come. */
export function currentKey<K extends ScheduledKey>(keys: K[], now: Date): K | undefined {
  return keys.filter((k) => k.activatesAt <= now).at(-1);
}

/**
 * What the schedule needs at `now`, for keys sorted by activation time: the activation time of a
 * key to create (none exists yet, or the newest is due for a successor), and the keys whose tokens
 * have all expired and that can be dropped from the JWKS.
 */
export function planRotation(keys: ScheduledKey[], now: Date, policy: KeyPolicy): { create?: Date; expired: string[] } {
  const latest = keys.at(-1);
  let create: Date | undefined;
  if (!latest) {
    create = now; // first start: no token was ever issued, so nothing needs to see the key first
  } else if (latest.activatesAt <= now) {
    const due = latest.activatesAt.getTime() + policy.rotationPeriod * 1000;
    if (now.getTime() >= due - policy.publishLead * 1000) {
      create = new Date(Math.max(due, now.getTime() + policy.publishLead * 1000));
    }
  }
  const expired = keys
    .filter((key, i) => {
      const successor = keys[i + 1];
      return successor !== undefined && successor.activatesAt.getTime() + policy.tokenTtl * 1000 + CLOCK_SKEW_MS < now.getTime();
    })
    .map((key) => key.kid);
  return { create, expired };
}

type StoredKey = ScheduledKey & { publicJwk: JWK; privateJwe: string };

/**
 * Signing keys, kept in PostgreSQL (private halves encrypted) and cached in memory. The cache is
 * reloaded in the background every `refreshMs`, which also creates successors and drops expired
 * keys, so signing never waits on the database once the first load is done.
 */
export class KeyStore {
  private keys?: StoredKey[];
  private loadedAt = 0;
  private loading?: Promise<StoredKey[]>;
  private readonly privateKeys = new Map<string, Promise<CryptoKey>>();
  private verifier?: { keys: StoredKey[]; set: ReturnType<typeof createLocalJWKSet> };

  constructor(
    private readonly db: Database,
    /** Encrypts private keys at rest (see deriveEncryptionKey). */
    private readonly encryptionKey: Uint8Array,
    private readonly policy: KeyPolicy,
    private readonly clock: () => Date = () => new Date(),
    private readonly refreshMs = 60_000,
  ) {}

  /** The key to sign with now, imported once per key. */
  async signingKey(): Promise<{ kid: string; privateKey: CryptoKey }> {
    const key = currentKey(await this.cachedKeys(), this.clock());
    if (!key) throw new Error("no signing key is active");
    let privateKey = this.privateKeys.get(key.kid);
    if (!privateKey) {
      privateKey = unseal(key.privateJwe, key.kid, this.encryptionKey).then(
        (jwk) => importJWK(JSON.parse(jwk) as JWK, SIGNING_ALG) as Promise<CryptoKey>,
      );
      privateKey.catch(() => this.privateKeys.delete(key.kid));
      this.privateKeys.set(key.kid, privateKey);
    }
    return { kid: key.kid, privateKey: await privateKey };
  }

  /** The public keys to publish: upcoming, current, and retired ones whose tokens may still be valid. */
  async publicKeys(): Promise<JWK[]> {
    return (await this.cachedKeys()).map((key) => key.publicJwk);
  }

  /** The published keys as a jose key set, rebuilt only when the keys change. */
  async verificationKeys(): Promise<ReturnType<typeof createLocalJWKSet>> {
    const keys = await this.cachedKeys();
    if (this.verifier?.keys !== keys) this.verifier = { keys, set: createLocalJWKSet({ keys: keys.map((k) => k.publicJwk) }) };
    return this.verifier.set;
  }

  /** Every key with its role at `now`, for operators. */
  async schedule(): Promise<(ScheduledKey & { status: "upcoming" | "current" | "retired" })[]> {
    const now = this.clock();
    const keys = await this.cachedKeys();
    const current = currentKey(keys, now);
    return keys.map(({ kid, activatesAt }) => ({
      kid,
      activatesAt,
      status: kid === current?.kid ? "current" : activatesAt > now ? "upcoming" : "retired",
    }));
  }

  /**
   * Starts a rotation now: a new key, published at once, that signs after KEY_PUBLISH_LEAD (so
   * every verifier's cache knows it first). Nothing is created while a successor is already upcoming.
   */
  async rotateNow(): Promise<void> {
    await this.db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${KEY_LOCK_ID})`;
      const now = this.clock();
      if ((await this.load(tx)).some((key) => key.activatesAt > now)) return;
      await tx.signingKey.create({ data: await this.newKey(new Date(now.getTime() + this.policy.publishLead * 1000)) });
    });
    await this.refresh();
  }

  /** Loads the keys, creating or dropping keys as the schedule requires. Safe to run on every instance. */
  refresh(): Promise<StoredKey[]> {
    this.loading ??= this.maintain()
      .then((keys) => {
        this.keys = keys;
        this.loadedAt = Date.now();
        return keys;
      })
      .finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async cachedKeys(): Promise<StoredKey[]> {
    if (!this.keys) return this.refresh();
    if (Date.now() - this.loadedAt > this.refreshMs) {
      this.refresh().catch((error) => log.error("signing key refresh failed", { error: String(error) }));
    }
    return this.keys;
  }

  private async maintain(): Promise<StoredKey[]> {
    const keys = await this.load(this.db);
    const plan = planRotation(keys, this.clock(), this.policy);
    if (!plan.create && plan.expired.length === 0) return keys;
    return this.db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${KEY_LOCK_ID})`;
      const locked = await this.load(tx);
      const { create, expired } = planRotation(locked, this.clock(), this.policy);
      if (expired.length > 0) await tx.signingKey.deleteMany({ where: { kid: { in: expired } } });
      if (create) await tx.signingKey.create({ data: await this.newKey(create) });
      return create || expired.length > 0 ? this.load(tx) : locked;
    });
  }

  private async load(db: Pick<Database, "signingKey">): Promise<StoredKey[]> {
    const rows = await db.signingKey.findMany({ orderBy: { activatesAt: "asc" } });
    return rows.map((row) => ({
      kid: row.kid,
      activatesAt: row.activatesAt,
      publicJwk: row.publicJwk as JWK,
      privateJwe: row.privateJwe,
    }));
  }

  private async newKey(activatesAt: Date) {
    const kid = randomBytes(20).toString("hex");
    const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true, modulusLength: 2048 });
    const { kty, n, e } = await exportJWK(publicKey);
    log.info("signing key created", { kid, activatesAt: activatesAt.toISOString() });
    return {
      kid,
      alg: SIGNING_ALG,
      activatesAt,
      publicJwk: { kty, n, e, kid, alg: SIGNING_ALG, use: "sig" },
      privateJwe: await seal(JSON.stringify(await exportJWK(privateKey)), kid, this.encryptionKey),
    };
  }
}
