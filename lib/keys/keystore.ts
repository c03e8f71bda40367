import { randomBytes } from "node:crypto";
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from "jose";
import { log } from "../log";
import type { ChangeFeed, KeyPurpose, Store } from "../store";
import { SIGNING_ALGS, type SigningAlg } from "../store/contract";
import { KeyDecryptionError, seal, unseal } from "./encryption";

/** Every key set, each with a table and a schedule of its own; sealed with the same secret. */
const KEY_PURPOSES: KeyPurpose[] = ["access", "vehicle"];

/** The alg of every set's default keys: what a client that asks for none gets, and every vehicle token. */
export const SIGNING_ALG: SigningAlg = "RS256";
export { SIGNING_ALGS, type SigningAlg };
/** The algs each set signs with: the access set's clients choose among all (id_token_signed_response_alg). */
const SET_ALGS: Record<KeyPurpose, readonly SigningAlg[]> = { access: SIGNING_ALGS, vehicle: [SIGNING_ALG] };

/**
 * How each alg's keys are made. PS256 gets RSA keys of its own rather than sharing RS256's: a JWK's
 * `alg` binds it to one algorithm (RFC 7517 4.4), and verifiers that honour it would refuse the other.
 */
const KEY_PARAMETERS: Record<SigningAlg, { generate: { modulusLength?: number }; publicMembers: readonly string[] }> = {
  RS256: { generate: { modulusLength: 2048 }, publicMembers: ["kty", "n", "e"] },
  PS256: { generate: { modulusLength: 2048 }, publicMembers: ["kty", "n", "e"] },
  ES256: { generate: {}, publicMembers: ["kty", "crv", "x", "y"] },
};
/** Tolerance for clocks of token verifiers that run a little behind ours. */
const CLOCK_SKEW_MS = 60_000;
/** The NOTIFY channel on which instances announce key changes to each other (payload: KeyChange). */
export const KEY_CHANNEL = "keyfob_signing_keys";
/** A key unknown to the cache reloads the keys at most this often (see reloadForUnknownKey). */
const UNKNOWN_KEY_RELOAD_MS = 10_000;

/**
 * The payload of a NOTIFY on KEY_CHANNEL: the key revoked. (Scheduled keys need no announcement:
 * they are published KEY_PUBLISH_LEAD, much longer than the periodic reload, before they sign.)
 */
type KeyChange = { revoked?: string };

export type KeyPolicy = {
  /** Seconds a key signs before its successor takes over. */
  rotationPeriod: number;
  /** Seconds a new key is published before it signs; longer than any JWKS cache. */
  publishLead: number;
  /** Seconds the longest-lived token stays valid; a retired key stays published that long. */
  tokenTtl: number;
};

export type ScheduledKey = { kid: string; activatesAt: Date };

/** A key of the schedule, with where it stands: signing (current), published ahead (upcoming), or still published after (retired), and its set. */
export type KeyScheduleEntry = ScheduledKey & { status: "upcoming" | "current" | "retired"; purpose: KeyPurpose; alg: SigningAlg };

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
    .filter((_key, i) => {
      const successor = keys[i + 1];
      return successor !== undefined && successor.activatesAt.getTime() + policy.tokenTtl * 1000 + CLOCK_SKEW_MS < now.getTime();
    })
    .map((key) => key.kid);
  return { create, expired };
}

type StoredKey = ScheduledKey & { publicJwk: JWK; privateJwe: string };

/** What an emergency revocation did (KeyStore.revoke). */
export type KeyRevocation =
  | { outcome: "unknown" }
  | { outcome: "already-revoked"; revokedAt: Date; revokedBy: string | null }
  /** Retired and out of the JWKS already (every token it signed has expired): nothing to revoke. */
  | { outcome: "unpublished"; unpublishedAt: Date }
  | { outcome: "revoked"; revokedAt: Date; was: "current" | "upcoming" | "retired"; successor?: string };

/**
 * A rotation or an emergency revocation refused because it would create a key, and this instance's
 * KEYFOB_SECRET does not open the keys already stored: its peers could not open the new one.
 */
export class KeyCreationRefused extends Error {
  override name = "KeyCreationRefused";
  constructor(kid: string) {
    super(
      `this instance's KEYFOB_SECRET cannot decrypt the stored signing key ${kid}, so it creates no key its peers could not use: run it with their KEYFOB_SECRET, or rotate and revoke keys on an instance that has it`,
    );
  }
}

/** A rotation started now: the upcoming key before it (null: none) and after it (the one created, or the one already upcoming). */
export type KeyRotation = { before: string | null; after: string | null };

/** Runs in a key change's transaction, with what it did, before the change commits (its audit record). */
export type WithinKeyChange<T> = (tx: Store, change: T) => Promise<unknown>;

export type KeyStoreOptions = {
  /** The key set: access and ID tokens (the default), or vehicle tokens, each with keys and a schedule of its own. */
  purpose?: KeyPurpose;
  /** The instance's listening connection, on which to hear other instances' key changes; none: the periodic reload only. */
  notifications?: ChangeFeed;
  /**
   * The set's other algs (the access set's PS256 and ES256), each a KeyStore of its own with its own
   * schedule that this one publishes and verifies with beside its own keys. Their first key is
   * created when something first signs with them, not before (no key nobody uses).
   */
  algs?: readonly SigningAlg[];
  /** The alg of this store's keys (RS256 unless it is one of another store's `algs`). */
  alg?: SigningAlg;
};

/** What signs a token: the key's kid and private half, and its alg for the JWS header. */
export type SigningKey = { kid: string; alg: SigningAlg; privateKey: CryptoKey };

/**
 * Signing keys, kept in PostgreSQL (private halves encrypted) and cached in memory. The cache is
 * reloaded in the background every `refreshMs`, which also creates successors and drops expired
 * keys, so signing never waits on the database once the first load is done.
 *
 * Instances sharing the database tell each other about key changes with NOTIFY on KEY_CHANNEL,
 * which every KeyStore LISTENs to (on its instance's listening connection, lib/store/changes.ts)
 * once its first load succeeds: a
 * revoked key leaves every instance's cache at once (and signing waits for the reload that brings
 * its replacement), without a query per request. The periodic reload remains the fallback when
 * the listening connection is down.
 */
export class KeyStore {
  private keys?: StoredKey[];
  private loadedAt = 0;
  private loading?: Promise<StoredKey[]>;
  private readonly privateKeys = new Map<string, Promise<CryptoKey>>();
  private verifier?: { keys: StoredKey[][]; set: ReturnType<typeof createLocalJWKSet> };
  /** Bumped by every key change announced on KEY_CHANNEL; the cache is current when it has loaded the latest. */
  private changes = 0;
  private loadedChanges = 0;
  /** Keys announced as revoked: never served from the cache again, whatever a load in flight returns. */
  private readonly revoked = new Set<string>();
  private lastUnknownKeyReload = 0;
  private unsubscribe?: () => void;
  private closed = false;
  private readonly purpose: KeyPurpose;
  readonly alg: SigningAlg;
  /** The set's stores for its other algs (KeyStoreOptions.algs), created with this one. */
  private readonly others: KeyStore[];
  /** Set on the first signing: until then a store of another alg creates no first key. */
  private wanted: boolean;

  constructor(
    private readonly store: Store,
    /** Encrypts private keys at rest (see deriveEncryptionKey). */
    private readonly encryptionKey: Uint8Array,
    private readonly policy: KeyPolicy,
    private readonly clock: () => Date,
    private readonly refreshMs = 60_000,
    private readonly options: KeyStoreOptions = {},
  ) {
    this.purpose = options.purpose ?? "access";
    this.alg = options.alg ?? SIGNING_ALG;
    this.wanted = this.alg === SIGNING_ALG;
    const others = (options.algs ?? []).filter((alg) => alg !== this.alg && SET_ALGS[this.purpose].includes(alg));
    this.others = others.map((alg) => new KeyStore(store, encryptionKey, policy, clock, refreshMs, { ...options, algs: undefined, alg }));
  }

  /** This store and the set's stores of its other algs: every alg's schedule, this one's first. */
  sets(): KeyStore[] {
    return [this, ...this.others];
  }

  /** The set's stores of algs with keys (this one's always, first): what a rotation of the whole set rotates. */
  async used(): Promise<KeyStore[]> {
    const keys = await this.allCachedKeys();
    return this.sets().filter((set, i) => set === this || keys[i].length > 0);
  }

  /** The key to sign with now with `alg` (this store's unless given), imported once per key. */
  async signingKey(alg?: SigningAlg): Promise<SigningKey> {
    if (alg !== undefined && alg !== this.alg) {
      const other = this.others.find((store) => store.alg === alg);
      if (!other) throw new Error(`no ${alg} signing keys in the ${this.purpose} set`);
      return other.signingKey();
    }
    let key = currentKey(await this.cachedKeys(), this.clock());
    if (!key && !this.wanted) {
      // The first token of this alg: its first key is created now (under the set's lock, as any).
      this.wanted = true;
      key = currentKey(await this.refresh(), this.clock());
      if (!key) await this.mayCreate(this.store); // none was created: say why when it is the secret (503)
    }
    if (!key) throw new Error("no signing key is active");
    let privateKey = this.privateKeys.get(key.kid);
    if (!privateKey) {
      privateKey = unseal(key.privateJwe, key.kid, this.encryptionKey).then(
        (jwk) => importJWK(JSON.parse(jwk) as JWK, this.alg) as Promise<CryptoKey>,
      );
      privateKey.catch((error: unknown) => {
        this.privateKeys.delete(key.kid);
        // Nothing can be signed until the instance runs with the right secret: said on every attempt, and readiness fails.
        if (error instanceof KeyDecryptionError) log.error("signing keys cannot be decrypted with this KEYFOB_SECRET", { kid: key.kid });
      });
      this.privateKeys.set(key.kid, privateKey);
    }
    return { kid: key.kid, alg: this.alg, privateKey: await privateKey };
  }

  /** Every alg's keys as cached, this store's first. */
  private allCachedKeys(): Promise<StoredKey[][]> {
    return this.others.length === 0 ? this.cachedKeys().then((keys) => [keys]) : Promise.all(this.sets().map((set) => set.cachedKeys()));
  }

  /** The public keys to publish, of every alg (RS256's first): upcoming, current, and retired ones whose tokens may still be valid. */
  async publicKeys(): Promise<JWK[]> {
    return (await this.allCachedKeys()).flat().map((key) => key.publicJwk);
  }

  /** The published keys of every alg as a jose key set, rebuilt only when the keys change. */
  async verificationKeys(): Promise<ReturnType<typeof createLocalJWKSet>> {
    const keys = await this.allCachedKeys();
    const known = this.verifier;
    if (known && keys.every((set, i) => set === known.keys[i])) return known.set;
    this.verifier = { keys, set: createLocalJWKSet({ keys: keys.flat().map((k) => k.publicJwk) }) };
    return this.verifier.set;
  }

  /**
   * Called when a token names a key the cache does not know: reloads the keys unless that was
   * done in the last UNKNOWN_KEY_RELOAD_MS (so made-up kids cost at most one query per period),
   * and tells whether the key is now known. Covers a key created on another instance whose
   * announcement did not arrive (the listening connection was down).
   */
  async reloadForUnknownKey(kid: string): Promise<boolean> {
    if (Date.now() - this.lastUnknownKeyReload < UNKNOWN_KEY_RELOAD_MS) return false;
    this.lastUnknownKeyReload = Date.now();
    const sets = await Promise.all(this.sets().map((set) => set.refresh()));
    return sets.some((keys) => keys.some((key) => key.kid === kid));
  }

  /** Every key of every alg with its role at `now`, for operators. */
  async schedule(): Promise<KeyScheduleEntry[]> {
    return (await Promise.all(this.sets().map((set) => set.ownSchedule()))).flat();
  }

  private async ownSchedule(): Promise<KeyScheduleEntry[]> {
    const now = this.clock();
    const keys = await this.cachedKeys();
    const current = currentKey(keys, now);
    return keys.map(({ kid, activatesAt }) => ({
      kid,
      activatesAt,
      status: kid === current?.kid ? "current" : activatesAt > now ? "upcoming" : "retired",
      purpose: this.purpose,
      alg: this.alg,
    }));
  }

  /**
   * Starts a rotation now: a new key, published at once, that signs after KEY_PUBLISH_LEAD (so
   * every verifier's cache knows it first). Nothing is created while a successor is already upcoming.
   * `within` runs in the same transaction (an admin's audit record).
   */
  async rotateNow(within?: WithinKeyChange<KeyRotation>): Promise<KeyRotation> {
    const rotation = await this.store.transaction(async (tx) => {
      await tx.keys.lock(this.purpose);
      const now = this.clock();
      const upcoming = (await this.load(tx)).find((key) => key.activatesAt > now)?.kid ?? null;
      let created: string | undefined;
      if (!upcoming) {
        await this.mayCreate(tx);
        const key = await this.newKey(new Date(now.getTime() + this.policy.publishLead * 1000));
        await tx.keys.create(key);
        created = key.kid;
      }
      const rotation = { before: upcoming, after: upcoming ?? created ?? null };
      await within?.(tx, rotation);
      return rotation;
    });
    await this.refresh();
    return rotation;
  }

  /**
   * Emergency revocation: the key is never published or used to sign again (its private half is
   * erased), on every instance at once (NOTIFY). If it was the current key, a new key signs from
   * now, without the publish lead (verifiers learn it when they next fetch the JWKS); an upcoming
   * key is just dropped, and the schedule plans a successor again. `by` is recorded as revokedBy.
   * Tokens it signed are refused by verifyAccessToken, which checks the key with the token's row.
   * `within` runs in the same transaction when the kid is known (an admin's audit record).
   */
  async revoke(
    kid: string,
    by: string,
    within?: WithinKeyChange<Exclude<KeyRevocation, { outcome: "unknown" | "unpublished" }>>,
  ): Promise<KeyRevocation> {
    const result = await this.store.transaction(async (tx): Promise<KeyRevocation> => {
      await tx.keys.lock(this.purpose);
      const row = await tx.keys.find(kid);
      if (!row || row.purpose !== this.purpose || row.alg !== this.alg) return { outcome: "unknown" };
      if (row.unpublishedAt) return { outcome: "unpublished", unpublishedAt: row.unpublishedAt };
      if (row.revokedAt) {
        const already = { outcome: "already-revoked", revokedAt: row.revokedAt, revokedBy: row.revokedBy } as const;
        await within?.(tx, already);
        return already;
      }
      const now = this.clock();
      const keys = await this.load(tx);
      const key = keys.find((k) => k.kid === kid)!;
      const was = currentKey(keys, now)?.kid === kid ? "current" : key.activatesAt > now ? "upcoming" : "retired";
      if (was === "current") await this.mayCreate(tx); // before anything changes: it needs a replacement
      await tx.keys.revoke(kid, by, now);
      let successor: string | undefined;
      if (was === "current") {
        const replacement = await this.newKey(now);
        await tx.keys.create(replacement);
        successor = replacement.kid;
      }
      // Every instance (this one too) hears of it when the transaction commits.
      await tx.keys.announce(KEY_CHANNEL, JSON.stringify({ revoked: kid } satisfies KeyChange));
      const revoked = { outcome: "revoked", revokedAt: now, was, successor } as const;
      await within?.(tx, revoked);
      return revoked;
    });
    if (result.outcome === "revoked") {
      log.warn("signing key revoked", { kid, by, was: result.was, successor: result.successor });
      this.keyChanged({ revoked: kid });
      await this.refresh();
    }
    return result;
  }

  /** Loads the keys, creating or dropping keys as the schedule requires. Safe to run on every instance. */
  refresh(): Promise<StoredKey[]> {
    this.loading ??= this.reload().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** Stops listening for other instances' key changes (the cache then reloads periodically only). */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    for (const other of this.others) await other.close();
  }

  private async reload(): Promise<StoredKey[]> {
    for (;;) {
      const changes = this.changes;
      const keys = this.withoutRevoked(await this.maintain());
      this.keys = keys;
      this.loadedAt = Date.now();
      for (const kid of this.privateKeys.keys()) if (!keys.some((key) => key.kid === kid)) this.privateKeys.delete(kid);
      this.listen();
      // A change announced while loading may not be in what was read: read again.
      if (changes === this.changes) {
        this.loadedChanges = changes;
        return keys;
      }
    }
  }

  private async cachedKeys(): Promise<StoredKey[]> {
    if (!this.keys) return this.refresh();
    if (this.loadedChanges !== this.changes) {
      // Another instance changed the keys: wait for them (one shared query) rather than sign with
      // what may be gone. If the database cannot answer, serve the cache, revoked keys removed.
      try {
        return await this.refresh();
      } catch (error) {
        log.error("signing key reload failed", { error: String(error) });
        return this.keys;
      }
    }
    if (Date.now() - this.loadedAt > this.refreshMs) {
      this.refresh().catch((error) => log.error("signing key refresh failed", { error: String(error) }));
    }
    return this.keys;
  }

  /** A change announced on KEY_CHANNEL (by another instance, or this one). */
  private keyChanged(change: KeyChange) {
    if (change.revoked) {
      this.revoked.add(change.revoked);
      this.privateKeys.delete(change.revoked);
      if (this.keys) this.keys = this.withoutRevoked(this.keys);
    }
    this.changes++;
    this.refresh().catch((error) => log.error("signing key reload failed", { error: String(error) }));
  }

  private withoutRevoked(keys: StoredKey[]): StoredKey[] {
    return this.revoked.size === 0 ? keys : keys.filter((key) => !this.revoked.has(key.kid));
  }

  /**
   * LISTENs on KEY_CHANNEL, once. After a reconnection of the listening connection the keys are
   * reloaded, since announcements may have been missed.
   */
  private listen() {
    const notifications = this.options.notifications;
    if (this.closed || this.unsubscribe || !notifications) return; // without: the periodic reload alone (tools, tests)
    this.unsubscribe = notifications.subscribe(KEY_CHANNEL, {
      notified: (payload) => {
        let change: KeyChange = {};
        try {
          change = JSON.parse(payload || "{}") as KeyChange;
        } catch {
          // Not ours to understand: reload anyway.
        }
        this.keyChanged(typeof change.revoked === "string" ? { revoked: change.revoked } : {});
      },
      listening: (first) => {
        if (!first) this.keyChanged({}); // announcements may have been missed meanwhile
      },
    });
  }

  private async maintain(): Promise<StoredKey[]> {
    const keys = await this.load(this.store);
    const plan = planRotation(keys, this.clock(), this.policy);
    if (!this.wanted && keys.length === 0) return keys; // nothing signs with this alg yet: no key
    if (!plan.create && plan.expired.length === 0) return keys;
    return this.store.transaction(async (tx) => {
      await tx.keys.lock(this.purpose);
      const locked = await this.load(tx);
      const planned = planRotation(locked, this.clock(), this.policy);
      const { expired } = planned;
      const create = planned.create && !(await this.unopenedKey(tx)) ? planned.create : undefined;
      if (expired.length > 0) await tx.keys.unpublish(expired, this.clock());
      if (create) await tx.keys.create(await this.newKey(create));
      return create || expired.length > 0 ? this.load(tx) : locked;
    });
  }

  /**
   * Checked before any key is created (the schedule's, a rotation's, a revoked current key's
   * replacement): the kid of a stored key this instance's secret cannot open, logged, or undefined.
   * Such a key means the instance runs with another KEYFOB_SECRET than its peers (a restore without
   * the secret, a typo), and a key it made would be one they cannot use. The newest key of every
   * set and alg is tried, so that an empty one (the vehicle tokens', an alg's before their first key)
   * is no way round.
   */
  private async unopenedKey(store: Store): Promise<string | undefined> {
    for (const [purpose, alg] of KEY_PURPOSES.flatMap((purpose) => SET_ALGS[purpose].map((alg) => [purpose, alg] as const))) {
      const newest = (await store.keys.live(purpose, alg)).at(-1);
      if (!newest) continue;
      try {
        await unseal(newest.privateJwe, newest.kid, this.encryptionKey);
      } catch (error) {
        if (!(error instanceof KeyDecryptionError)) throw error;
        log.error("signing keys cannot be decrypted with this KEYFOB_SECRET: no new key is created", {
          kid: newest.kid,
          set: this.purpose,
          alg: this.alg,
        });
        return newest.kid;
      }
    }
    return undefined;
  }

  /** Throws KeyCreationRefused when this instance may not create a key (unopenedKey). */
  private async mayCreate(store: Store): Promise<void> {
    const unopened = await this.unopenedKey(store);
    if (unopened) throw new KeyCreationRefused(unopened);
  }

  /** The keys in use (revoked and unpublished ones never are), by activation time. */
  private async load(store: Store): Promise<StoredKey[]> {
    const rows = await store.keys.live(this.purpose, this.alg);
    return rows.map((row) => ({ kid: row.kid, activatesAt: row.activatesAt, publicJwk: row.publicJwk, privateJwe: row.privateJwe }));
  }

  private async newKey(activatesAt: Date) {
    const kid = randomBytes(20).toString("hex");
    const { generate, publicMembers } = KEY_PARAMETERS[this.alg];
    const { publicKey, privateKey } = await generateKeyPair(this.alg, { extractable: true, ...generate });
    const exported = await exportJWK(publicKey);
    const members = Object.fromEntries(publicMembers.map((name) => [name, exported[name as keyof JWK]]));
    log.info("signing key created", { kid, alg: this.alg, activatesAt: activatesAt.toISOString() });
    return {
      kid,
      alg: this.alg,
      purpose: this.purpose,
      activatesAt,
      publicJwk: { ...members, kid, alg: this.alg, use: "sig" },
      privateJwe: await seal(JSON.stringify(await exportJWK(privateKey)), kid, this.encryptionKey),
    };
  }
}
