/**
 * Signing key rotation on a real PostgreSQL, with a controlled clock: a new key is published before
 * it signs, a retired key stays published until its last token has expired, and instances that
 * share the database agree on the keys.
 */
import { randomBytes } from "node:crypto";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { rawConnection, type Store } from "@/lib/store";
import type { Database } from "@/lib/store/connection";
import { deriveEncryptionKey } from "@/lib/keys/encryption";
import { KeyStore, type KeyPolicy } from "@/lib/keys/keystore";
import { issueTokens, newAccessTokenId } from "@/lib/tokens/issue";
import { isolatedDatabase } from "./support/database";

const HOUR = 3600_000;
const policy: KeyPolicy = { rotationPeriod: 24 * 3600, publishLead: 2 * 3600, tokenTtl: 6 * 3600 };
let storage: Store;
let db: Database;
const secret = deriveEncryptionKey(randomBytes(32).toString("base64url"));
let now = new Date("2030-01-01T00:00:00Z");
const clock = () => now;
const advance = (hours: number) => (now = new Date(now.getTime() + hours * HOUR));

beforeAll(async () => {
  storage = await isolatedDatabase("keystore_test");
  db = rawConnection(storage).db;
});
beforeEach(async () => {
  await db.signingKey.deleteMany();
  now = new Date("2030-01-01T00:00:00Z");
});
afterAll(() => storage.close());

const kids = async (store: KeyStore) => (await store.publicKeys()).map((k) => k.kid);
const signingKid = async (store: KeyStore) => (await store.signingKey()).kid;

describe("KeyStore", () => {
  it("creates one key on first start, even when instances start together", async () => {
    const instances = Array.from({ length: 5 }, () => new KeyStore(storage, secret, policy, clock));
    await Promise.all(instances.map((s) => s.refresh()));
    expect(await db.signingKey.count()).toBe(1);
    const kid = await signingKid(instances[0]);
    for (const s of instances) expect(await signingKid(s)).toBe(kid);
  });

  it("stores private keys encrypted and refuses to start with another secret", async () => {
    const store = new KeyStore(storage, secret, policy, clock);
    await store.refresh();
    const row = await db.signingKey.findFirstOrThrow();
    expect(row.privateJwe.split(".")).toHaveLength(5); // compact JWE
    expect(JSON.stringify(row)).not.toMatch(/"d":/);
    const other = new KeyStore(storage, deriveEncryptionKey(randomBytes(32).toString("base64url")), policy, clock);
    await expect(other.signingKey()).rejects.toThrow(/KEYFOB_SECRET/);
  });

  it("an instance with another secret creates no successor its peers could not use, and still publishes the keys", async () => {
    const right = new KeyStore(storage, secret, policy, clock);
    await right.refresh();
    const wrong = new KeyStore(storage, deriveEncryptionKey(randomBytes(32).toString("base64url")), policy, clock);
    advance(23); // the successor is due (rotation period less the publish lead)
    expect(await kids(wrong)).toHaveLength(1); // published, so existing tokens still verify
    await wrong.refresh();
    expect(await db.signingKey.count()).toBe(1);
    await right.refresh();
    expect(await db.signingKey.count()).toBe(2);
  });

  it("publishes the next key before it signs, and keeps the retired key until its tokens expire", async () => {
    const a = new KeyStore(storage, secret, policy, clock);
    const b = new KeyStore(storage, secret, policy, clock); // a second instance on the same database
    await a.refresh();
    const first = await signingKid(a);

    advance(21);
    await Promise.all([a.refresh(), b.refresh()]);
    expect(await kids(a)).toEqual([first]);

    advance(1); // 22h: publishLead (2h) before the period ends
    await Promise.all([a.refresh(), b.refresh()]);
    const published = await kids(a);
    expect(published).toHaveLength(2);
    expect(await kids(b)).toEqual(published);
    const second = published[1];
    expect(await signingKid(a)).toBe(first); // published, not yet signing
    expect(await signingKid(b)).toBe(first);

    // A token signed by the first key just before the switch...
    advance(1.99);
    const { response } = await issueTokens(
      a,
      "https://issuer.example",
      { accessToken: policy.tokenTtl, idToken: policy.tokenTtl },
      {
        clientId: "c",
        userId: "0x98D78d711C0ec544F6fb5d54fcf6559CF41546a9",
        connector: "web3",
        scope: ["openid"],
        ethereumAddress: "0x98D78d711C0ec544F6fb5d54fcf6559CF41546a9",
        emailVerified: false,
      },
      newAccessTokenId({ accessToken: policy.tokenTtl, idToken: policy.tokenTtl }, clock().getTime()),
    );
    expect(decodeProtectedHeader(response.access_token).kid).toBe(first);

    advance(0.01); // 24h: the second key signs
    expect(await signingKid(a)).toBe(second);
    expect(await signingKid(b)).toBe(second);

    // ...stays verifiable while it may be valid (6h), then its key is dropped.
    advance(5.9);
    await a.refresh();
    expect(await kids(a)).toEqual([first, second]);
    const jwks = createLocalJWKSet({ keys: await a.publicKeys() });
    await expect(jwtVerify(response.access_token, jwks)).resolves.toBeDefined();

    advance(0.2);
    await a.refresh();
    expect(await kids(a)).toEqual([second]);
    // Kept as history, unpublished, its private half erased: never loaded again.
    expect(await db.signingKey.findUniqueOrThrow({ where: { kid: first } })).toMatchObject({
      unpublishedAt: now,
      privateJwe: "",
      revokedAt: null,
    });
    expect((await storage.keys.history(10)).map((key) => key.kid)).toEqual([first]);
    const c = new KeyStore(storage, secret, policy, clock); // a fresh instance does not take it back
    expect(await kids(c)).toEqual([second]);
    expect(await signingKid(c)).toBe(second);
  });

  it("after a long downtime keeps signing with the last key until its successor has been published", async () => {
    const store = new KeyStore(storage, secret, policy, clock);
    await store.refresh();
    const first = await signingKid(store);
    advance(100);
    await store.refresh();
    expect(await kids(store)).toHaveLength(2);
    expect(await signingKid(store)).toBe(first);
    advance(2);
    expect(await signingKid(store)).not.toBe(first);
  });

  it("imports each private key once", async () => {
    const store = new KeyStore(storage, secret, policy, clock);
    const [x, y] = await Promise.all([store.signingKey(), store.signingKey()]);
    expect(x.privateKey).toBe(y.privateKey);
    expect((await store.signingKey()).privateKey).toBe(x.privateKey);
  });
});
