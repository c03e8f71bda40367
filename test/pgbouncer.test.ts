/**
 * Keyfob behind a real PgBouncer in transaction mode (Debian's 1.18, no prepared-statement
 * support), with only DATABASE_URL pointing at it (DATABASE_POOLED=true, no direct connection):
 * two instances starting together on an empty database migrate once and both serve; Flow A runs on
 * both with no session state on the pooled connections (no named prepared statements); both
 * deliver back-channel logouts from the outbox, each once; and the admin CLI works through it. What storage promises behind the pooler as well as directly (single
 * use, revocation, limits, audit, cache invalidation) is test/store-contract.test.ts.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "@/lib/config";
import { localMigrations, migrateDatabase } from "@/lib/db/migrate";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { updateClient } from "@/lib/clients/registry";
import { endSession } from "@/lib/sessions/login-session";
import { freePort } from "../scripts/free-port";
import { LOOPBACK_NETWORKS, sessionWith, TestRp } from "./support/backchannel";
import { cliOn } from "./support/cli";
import { emptyDatabase } from "./support/database";
import { challengeParams, registerLicense, submitParams } from "./support/flow-a";
import { startPgbouncer, type Pooler } from "./support/pgbouncer";
import { registerApp } from "./support/flow-b";
import { formPost, routesOn } from "./support/routes";

let pooler: Pooler;
let direct: string;
let pooled: string;
let a: Keyfob;
let b: Keyfob;

beforeAll(async () => {
  direct = await emptyDatabase("pooled_test");
  pooler = await startPgbouncer(direct, { poolSize: 3 });
  pooled = pooler.through(direct);
}, 60_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  await pooler?.stop();
});

describe("behind PgBouncer in transaction mode", () => {
  it("two instances starting together on an empty database migrate it once, through the pooler", { timeout: 120_000 }, async () => {
    await Promise.all([migrateDatabase(pooled), migrateDatabase(pooled)]);
    const client = new pg.Client({ connectionString: direct });
    await client.connect();
    const { rows } = await client.query<{ migration_name: string }>(
      "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY started_at",
    );
    await client.end();
    expect(rows.map((row) => row.migration_name)).toEqual(localMigrations());

    const config = {
      ...loadConfig({
        ...process.env,
        DATABASE_URL: pooled,
        DATABASE_POOLED: "true",
        BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS: LOOPBACK_NETWORKS,
      }),
      recoveryThreads: 0,
      dbPoolSize: 8,
    };
    expect(config).toMatchObject({ databasePooled: true, preparedStatements: false, databaseDirectUrl: undefined });
    a = createKeyfob(config);
    b = createKeyfob(config);
  });

  it("serves Flow A on both instances with no named prepared statements: 40 handshakes, each step on either", {
    timeout: 120_000,
  }, async () => {
    const license = await registerLicense({ domain: "https://pooled.example.com/callback", on: a });
    const instances = [routesOn(a), routesOn(b)];
    const handshake = async (i: number) => {
      const generated = await instances[i % 2].generateChallenge(formPost("/auth/web3/generate_challenge", challengeParams(license)));
      expect(generated.status, await generated.clone().text()).toBe(200);
      const { state, challenge } = (await generated.json()) as { state: string; challenge: string };
      const signature = await license.owner.signMessage({ message: challenge });
      return instances[(i + 1) % 2].submitChallenge(formPost("/auth/web3/submit_challenge", submitParams(license, state, signature)));
    };
    // Every statement either instance sends, Prisma's and the hot path's: none may be named.
    const sent = vi.spyOn(pg.Client.prototype, "query");
    const submitted = await Promise.all(Array.from({ length: 40 }, (_, i) => handshake(i)));
    const statements = sent.mock.calls.map(([statement]) => statement as string | { name?: string });
    sent.mockRestore();
    expect(submitted.map((response) => response.status)).toEqual(submitted.map(() => 200));
    // The hot path's statements were seen (one per batch of concurrent requests: lib/store/batch.ts).
    const texts = statements.map((statement) =>
      typeof statement === "string" ? statement : String((statement as { text?: string }).text),
    );
    for (const step of ["INSERT INTO challenges", "UPDATE challenges"])
      expect(
        texts.some((text) => text.includes(step)),
        step,
      ).toBe(true);
    expect(statements.filter((statement) => typeof statement === "object" && statement.name)).toEqual([]);
  });

  it("both instances deliver back-channel logouts through the pooler, each once, with no named statements", {
    timeout: 120_000,
  }, async () => {
    const rp = new TestRp(await freePort(), () => a);
    await rp.start();
    try {
      const app = await registerApp({ on: a });
      await updateClient(a.store, app.clientId, { backchannelLogoutUri: rp.uri(app.clientId) }, a.config);
      const sessions = [];
      for (let i = 0; i < 12; i++) sessions.push(await sessionWith([app], undefined, i % 2 ? a : b));
      for (const [i, session] of sessions.entries()) expect(await endSession(i % 2 ? b : a, session.token)).toBe(true);
      const sent = vi.spyOn(pg.Client.prototype, "query");
      await Promise.all([a.logouts.deliverDue(), b.logouts.deliverDue()]);
      const statements = sent.mock.calls.map(([statement]) => statement as string | { name?: string });
      sent.mockRestore();
      const sids = rp.to(app.clientId).map((claims) => claims.sid);
      expect(sids.toSorted()).toEqual(sessions.map((s) => s.idTokens.get(app.clientId)!.sid).toSorted());
      expect(await a.store.logouts.pending()).toBe(0);
      expect(statements.filter((statement) => typeof statement === "object" && statement.name)).toEqual([]);
    } finally {
      await rp.stop();
    }
  });

  it("runs the admin CLI through the pooler", { timeout: 120_000 }, async () => {
    const cli = cliOn(pooled, { DATABASE_POOLED: "true" });
    const added = await cli("clients", "add", "--name", "From the CLI");
    expect(added, added.stderr).toMatchObject({ code: 0 });
    expect((await cli("clients", "list")).stdout).toContain("From the CLI");
  });
});
