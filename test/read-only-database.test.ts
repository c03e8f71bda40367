/**
 * A database that answers read-only, as a standby does, or a node mid-promotion in a failover
 * (Patroni's /primary answers 200 once the node holds the leader lock, before its promotion ends):
 * Keyfob's writes fail with PostgreSQL's 25006. Reproduced on the real PostgreSQL with
 * default_transaction_read_only set on a database of the test's own (PostgreSQL's own answer, no
 * standby needed). Every write is 503 with Retry-After, never 500; the connections that answered
 * so leave the pool, so writes succeed again as soon as the database takes them.
 */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { addRedirectUri, createClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { toOAuthError } from "@/lib/http/respond";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { createStore } from "@/lib/store";
import { emptyDatabase } from "./support/database";
import { formPost, serveRequest } from "./support/routes";

const NAME = "keyfob_read_only";
let url: string;
let k: Keyfob;
const clientId = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const domain = "https://read-only.example.com/callback";

async function onServer(sql: string) {
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

beforeAll(async () => {
  url = await emptyDatabase(NAME);
  await migrateDatabase(url);
  const setup = createStore(url, 1);
  await createClient(setup, { id: clientId, name: "Read-only test" });
  await addRedirectUri(setup, clientId, domain);
  await setup.close();
  await onServer(`ALTER DATABASE ${NAME} SET default_transaction_read_only = on`);
  k = createKeyfob(loadConfig({ ...process.env, DATABASE_URL: url, DATABASE_DIRECT_URL: url, RECOVERY_THREADS: "0" }));
});

afterAll(() => k?.close());

const challenge = () =>
  serveRequest(
    formPost("/auth/web3/generate_challenge", { client_id: clientId, domain, scope: "openid", response_type: "code", address: clientId }),
    k,
  );

it("answers 503 with Retry-After to writes on a read-only database, and serves again once it takes writes", async () => {
  const refused = await challenge();
  expect(refused.status).toBe(503);
  expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
  expect(await refused.json()).toMatchObject({ error: "temporarily_unavailable" });
  // A transaction (a key rotation, an admin change) too.
  const rotation = await k.keys.rotateNow().catch((error: unknown) => error);
  expect(toOAuthError(rotation)).toMatchObject({ code: "temporarily_unavailable", status: 503 });

  await onServer(`ALTER DATABASE ${NAME} RESET default_transaction_read_only`);
  // The connections that were read-only left the pool: the next ones take writes.
  const served = await challenge();
  expect(served.status, await served.clone().text()).toBe(200);
  expect((await k.keys.rotateNow()).after).toMatch(/^[0-9a-f]{40}$/);
});
