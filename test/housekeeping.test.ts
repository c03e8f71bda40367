import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { systemClock } from "@/lib/clock";
import { loadConfig } from "@/lib/config";
import { rawConnection, type Store } from "@/lib/store";
import type { Database } from "@/lib/store/connection";
import { scheduleSweeps, sweepExpired } from "@/lib/housekeeping";
import { isolatedDatabase } from "./support/database";

let storage: Store;

let db: Database;
beforeAll(async () => {
  storage = await isolatedDatabase("housekeeping_test");
  db = rawConnection(storage).db;
  await db.client.create({ data: { id: "c", name: "c" } });
});
afterAll(() => storage.close());

it("deletes single-use rows a day after they expire and audit events past their retention, and keeps the others", async () => {
  const now = new Date("2030-06-01T00:00:00Z");
  const ago = (hours: number) => new Date(now.getTime() - hours * 3600_000);
  const challenge = (stateHash: string, expiresAt: Date) =>
    db.challenge.create({ data: { stateHash, clientId: "c", domain: "d", address: "a", scope: "openid", message: "m", expiresAt } });
  await challenge("old", ago(25));
  await challenge("recent", ago(23));
  await db.issuedToken.create({ data: { jti: "old", clientId: "c", userId: "u", connector: "web3", scope: "openid", expiresAt: ago(48) } });
  await db.issuedToken.create({
    data: { jti: "live", clientId: "c", userId: "u", connector: "web3", scope: "openid", expiresAt: ago(-1) },
  });

  await db.auditEvent.create({ data: { action: "token.issued", outcome: "success", at: ago(24 * 31) } });
  await db.auditEvent.create({ data: { action: "token.issued", outcome: "success", at: ago(24 * 29) } });

  expect(await sweepExpired(storage, { ...loadConfig(), auditRetention: 30 * 86400 }, now)).toBe(3);
  expect((await db.challenge.findMany()).map((c) => c.stateHash)).toEqual(["recent"]);
  expect((await db.issuedToken.findMany()).map((t) => t.jti)).toEqual(["live"]);
  expect((await db.auditEvent.findMany()).map((e) => e.at)).toEqual([ago(24 * 29)]); // AUDIT_RETENTION of 30 days
});

it("keeps the newest PENDING_CHALLENGES_TOTAL unused challenges, and every used one", async () => {
  await db.challenge.deleteMany();
  const now = new Date("2030-06-01T00:00:00Z");
  const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000);
  const challenge = (stateHash: string, expiresAt: Date, usedAt?: Date) =>
    db.challenge.create({
      data: { stateHash, clientId: "c", domain: "d", address: "a", scope: "openid", message: "m", expiresAt, usedAt },
    });
  for (let i = 1; i <= 6; i++) await challenge(`unused-${i}`, at(i - 3)); // two of them expired
  await challenge("used-old", at(-5), at(-15));
  await challenge("used-new", at(9), at(-1));

  const config = loadConfig();
  expect(await sweepExpired(storage, { ...config, pendingCaps: { ...config.pendingCaps, challengesTotal: 3 } }, now)).toBe(3);
  const kept = await db.challenge.findMany({ orderBy: { stateHash: "asc" } });
  expect(kept.map((c) => c.stateHash)).toEqual(["unused-4", "unused-5", "unused-6", "used-new", "used-old"]);
  expect(await sweepExpired(storage, { ...config, pendingCaps: { ...config.pendingCaps, challengesTotal: 3 } }, now)).toBe(0);
});

it("beyond PENDING_CHALLENGES_TOTAL trims the callers holding the most first, never a caller that holds few", async () => {
  await db.challenge.deleteMany();
  const now = new Date("2030-06-01T00:00:00Z");
  const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000);
  const challenge = (stateHash: string, ip: string, expiresAt: Date) =>
    db.challenge.create({
      data: { stateHash, clientId: "c", domain: "d", address: "a", scope: "openid", message: "m", expiresAt, ip },
    });
  // The victim's backend asked first; two flooders asked after it, newer and more.
  await challenge("victim", "198.51.100.1", at(1));
  for (let i = 1; i <= 5; i++) await challenge(`flood-a-${i}`, "198.51.100.2", at(1 + i));
  for (let i = 1; i <= 3; i++) await challenge(`flood-b-${i}`, "198.51.100.3", at(1 + i));

  const config = loadConfig();
  expect(await sweepExpired(storage, { ...config, pendingCaps: { ...config.pendingCaps, challengesTotal: 5 } }, now)).toBe(4);
  const kept = await db.challenge.findMany({ orderBy: { stateHash: "asc" } });
  expect(kept.map((c) => c.stateHash)).toEqual(["flood-a-4", "flood-a-5", "flood-b-2", "flood-b-3", "victim"]);
});

it("deletes login sessions a day after they ended: expired, revoked or idle too long", async () => {
  const now = new Date("2030-06-01T00:00:00Z");
  const ago = (hours: number) => new Date(now.getTime() - hours * 3600_000);
  const config = { ...loadConfig(), sessionIdleTtl: 3 * 86400 };
  await db.account.create({ data: { id: "acct" } });
  const session = (idHash: string, times: { lastSeenAt: Date; expiresAt: Date; revokedAt?: Date }) =>
    db.loginSession.create({
      data: {
        idHash,
        accountId: "acct",
        connector: "web3",
        subject: "0xabc",
        amr: "wallet",
        authTime: ago(24 * 10),
        ip: "203.0.113.9",
        userAgent: "test",
        ...times,
      },
    });
  await session("expired-long-ago", { lastSeenAt: ago(26), expiresAt: ago(25) });
  await session("expired-recently", { lastSeenAt: ago(24), expiresAt: ago(23) });
  await session("revoked-long-ago", { lastSeenAt: ago(26), expiresAt: ago(-24 * 20), revokedAt: ago(25) });
  await session("revoked-recently", { lastSeenAt: ago(26), expiresAt: ago(-24 * 20), revokedAt: ago(23) });
  await session("idle-long-ago", { lastSeenAt: ago(24 * 3 + 25), expiresAt: ago(-24 * 20) });
  await session("idle-recently", { lastSeenAt: ago(24 * 3 + 23), expiresAt: ago(-24 * 20) });
  await session("live", { lastSeenAt: ago(1), expiresAt: ago(-24 * 20) });

  expect(await sweepExpired(storage, config, now)).toBe(3);
  const kept = await db.loginSession.findMany({ orderBy: { idHash: "asc" } });
  expect(kept.map((s) => s.idHash)).toEqual(["expired-recently", "idle-recently", "live", "revoked-recently"]);
});

it("deletes admin set-up codes a day after they expire, used or not", async () => {
  const now = new Date("2030-06-01T00:00:00Z");
  const ago = (hours: number) => new Date(now.getTime() - hours * 3600_000);
  await db.adminSetupCode.createMany({
    data: [
      { codeHash: "expired-long-ago", expiresAt: ago(25) },
      { codeHash: "used-long-ago", expiresAt: ago(25), usedAt: ago(25.5), usedBy: "acct" },
      { codeHash: "expired-recently", expiresAt: ago(23) },
      { codeHash: "live", expiresAt: ago(-1) },
    ],
  });

  expect(await sweepExpired(storage, loadConfig(), now)).toBe(2);
  const kept = await db.adminSetupCode.findMany({ orderBy: { codeHash: "asc" } });
  expect(kept.map((c) => c.codeHash)).toEqual(["expired-recently", "live"]);
});

it("sweeps every SWEEP_INTERVAL, one sweep at a time, and again after one that failed", async () => {
  // The store's sweep stands in for a database that does not answer, then fails: what is tested is when sweeps start.
  const sweeps: ((failure?: Error) => void)[] = [];
  const store = {
    accounts: { endRunOutSessions: async () => 0 },
    sweep: () => new Promise<number>((resolve, reject) => sweeps.push((failure) => (failure ? reject(failure) : resolve(0)))),
  } as unknown as Store;
  const interval = 600_000;
  vi.useFakeTimers();
  try {
    scheduleSweeps({ store, clock: systemClock }, { ...loadConfig(), sweepInterval: interval / 1000 });
    await vi.advanceTimersByTimeAsync(interval);
    expect(sweeps).toHaveLength(1);
    // Still running: no second sweep piles up on the pool.
    await vi.advanceTimersByTimeAsync(5 * interval);
    expect(sweeps).toHaveLength(1);
    sweeps[0](new Error("Connection terminated unexpectedly"));
    await vi.advanceTimersByTimeAsync(interval);
    expect(sweeps).toHaveLength(2);
    sweeps[1]();
    await vi.advanceTimersByTimeAsync(interval);
    expect(sweeps).toHaveLength(3);
  } finally {
    vi.useRealTimers();
  }
});
