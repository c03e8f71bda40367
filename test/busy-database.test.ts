/**
 * Transactions (admin changes, key rotations, an account's own changes) on a busy pool, on the real
 * PostgreSQL: one waits for a connection as long as a statement does, and one that cannot have a
 * connection in that time answers 503 like any outage, never 500.
 */
import { expect, it } from "vitest";
import { loadConfig } from "@/lib/config";
import { toOAuthError } from "@/lib/http/respond";
import { createKeyfob } from "@/lib/keyfob";
import { createStore, rawConnection, type Store } from "@/lib/store";
import { CONNECTION_WAIT_MS } from "@/lib/store/connection";
import { tables } from "./support/database";

/** A store whose one connection is taken by someone else for `ms`. */
async function busyFor(ms: number): Promise<Store> {
  const store = createStore(process.env.DATABASE_URL!, 1);
  const held = await rawConnection(store).pool.connect();
  setTimeout(() => held.release(), ms);
  return store;
}

const selectOne = (store: Store) => store.transaction((tx) => tables({ store: tx }).$queryRaw`SELECT 1 AS one`);

it("waits for a connection taken for 3 s, longer than Prisma's own 2 s", { timeout: 20_000 }, async () => {
  const store = await busyFor(3_000);
  try {
    expect(await selectOne(store)).toEqual([{ one: 1 }]);
  } finally {
    await store.close();
  }
});

it("answers 503 when no connection comes in a statement's wait", { timeout: 20_000 }, async () => {
  const store = await busyFor(CONNECTION_WAIT_MS + 3_000);
  try {
    const failed = await selectOne(store).catch((error: unknown) => error);
    expect(toOAuthError(failed)).toMatchObject({ code: "temporarily_unavailable", status: 503 });
  } finally {
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    await store.close();
  }
});

it("answers 503 when a transaction outlives its 15 s, and keeps nothing of it", { timeout: 40_000 }, async () => {
  const store = createStore(process.env.DATABASE_URL!, 2);
  try {
    const failed = await store
      .transaction(async (tx) => {
        await tables({ store: tx }).$executeRaw`CREATE TABLE outlived_transaction (id int)`;
        await tables({ store: tx }).$executeRaw`SELECT pg_sleep(16)`;
      })
      .catch((error: unknown) => error);
    expect(toOAuthError(failed)).toMatchObject({ code: "temporarily_unavailable", status: 503 });
    expect(await tables({ store }).$queryRaw`SELECT to_regclass('outlived_transaction')::text AS found`).toEqual([{ found: null }]);
  } finally {
    await store.close();
  }
});

it("cancels a statement past DATABASE_STATEMENT_TIMEOUT and answers 503; the connection stays usable", { timeout: 20_000 }, async () => {
  // Security review, third round, item 9: no statement_timeout was set anywhere.
  const k = createKeyfob({ ...loadConfig(), statementTimeout: 1, recoveryThreads: 0 });
  try {
    for (const statement of [
      () => tables(k).$queryRaw`SELECT pg_sleep(3)`,
      () => rawConnection(k.store).pool.query("SELECT pg_sleep(3)"),
    ]) {
      const failed = await statement().catch((error: unknown) => error);
      expect(toOAuthError(failed)).toMatchObject({ code: "temporarily_unavailable", status: 503 });
    }
    expect(await tables(k).$queryRaw`SELECT 1 AS one`).toEqual([{ one: 1 }]);
  } finally {
    await k.close();
  }
});
