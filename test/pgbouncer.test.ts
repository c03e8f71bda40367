/**
 * Keyfob behind a real PgBouncer in transaction mode (Debian's 1.18, no prepared-statement
 * support), with only DATABASE_URL pointing at it (DATABASE_POOLED=true, no direct connection):
 * two instances starting together on an empty database migrate once and both serve; Flow A and the
 * token endpoint run on both with no session state on the pooled connections (no named prepared
 * statements); a state is redeemed once of 50 concurrent submissions across both; every issued
 * token is audited; a revoked signer is refused at once on the other instance; a disabled client
 * leaves the other instance's cache within seconds (polling, since LISTEN cannot work through the
 * pooler); and the admin CLI works through it.
 */
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { generateChallenge } from "@/lib/actions/generate-challenge";
import { submitChallenge } from "@/lib/actions/submit-challenge";
import { addRedirectUri, addSigner, createClient, revokeSigner, setClientEnabled } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { localMigrations, migrateDatabase } from "@/lib/db/migrate";
import { POLL_MS } from "@/lib/store/changes";
import { endpoint } from "@/lib/http/endpoint";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { cliOn, within } from "./support/cli";
import { connectionPool, emptyDatabase, tables } from "./support/database";
import { startPgbouncer, type Pooler } from "./support/pgbouncer";

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

const handlers = (k: Keyfob) => ({
  generate: endpoint("generate_challenge", (keyfob, _, params) => generateChallenge(keyfob, params), () => k),
  submit: endpoint("submit_challenge", (keyfob, _, params, caller) => submitChallenge(keyfob, params, caller), () => k),
});
const form = (path: string, params: Record<string, string>) =>
  new Request(`http://localhost:3000${path}`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(params) });

describe("behind PgBouncer in transaction mode", () => {
  it("two instances starting together on an empty database migrate it once, through the pooler", { timeout: 120_000 }, async () => {
    await Promise.all([migrateDatabase(pooled), migrateDatabase(pooled)]);
    const client = new pg.Client({ connectionString: direct });
    await client.connect();
    const { rows } = await client.query<{ migration_name: string }>("SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY started_at");
    await client.end();
    expect(rows.map((row) => row.migration_name)).toEqual(localMigrations());

    const config = { ...loadConfig({ ...process.env, DATABASE_URL: pooled, DATABASE_POOLED: "true" }), recoveryThreads: 0, dbPoolSize: 8 };
    expect(config).toMatchObject({ databasePooled: true, preparedStatements: false, databaseDirectUrl: undefined });
    a = createKeyfob(config);
    b = createKeyfob(config);
  });

  it("serves Flow A on both instances: no prepared-statement errors, one winner of 50 submissions, every token audited", { timeout: 120_000 }, async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const domain = "https://pooled.example.com/callback";
    await createClient(a.store, { id: owner.address, name: "Pooled license" });
    await addRedirectUri(a.store, owner.address, domain);
    const instances = [handlers(a), handlers(b)];
    const handshake = async (i: number) => {
      const generated = await instances[i % 2].generate(form("/auth/web3/generate_challenge", { client_id: owner.address, domain, scope: "openid", response_type: "code", address: owner.address }));
      expect(generated.status, await generated.clone().text()).toBe(200);
      const { state, challenge } = (await generated.json()) as { state: string; challenge: string };
      const params = { client_id: owner.address, state, grant_type: "authorization_code", domain, signature: await owner.signMessage({ message: challenge }) };
      return { state, params, submitted: await instances[(i + 1) % 2].submit(form("/auth/web3/submit_challenge", params)) };
    };
    const runs = await Promise.all(Array.from({ length: 40 }, (_, i) => handshake(i)));
    expect(runs.map((run) => run.submitted.status)).toEqual(runs.map(() => 200));

    // One state, 50 submissions at once over both instances: exactly one gets tokens.
    const { params } = runs[0];
    const fresh = await instances[0].generate(form("/auth/web3/generate_challenge", { client_id: owner.address, domain, scope: "openid", response_type: "code", address: owner.address }));
    const { state, challenge } = (await fresh.json()) as { state: string; challenge: string };
    const race = { ...params, state, signature: await owner.signMessage({ message: challenge }) };
    const statuses = await Promise.all(Array.from({ length: 50 }, (_, i) => instances[i % 2].submit(form("/auth/web3/submit_challenge", race)).then((r) => r.status)));
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status !== 200 && status !== 400)).toEqual([]);

    await a.audit.flush();
    await b.audit.flush();
    const [tokens, audited] = await Promise.all([
      tables(a).issuedToken.count({ where: { clientId: owner.address } }),
      tables(a).auditEvent.count({ where: { clientId: owner.address, action: "token.issued" } }),
    ]);
    expect(tokens).toBe(41);
    expect(audited).toBe(41);
  });

  it("refuses a signer revoked on one instance at once on the other", { timeout: 60_000 }, async () => {
    const license = privateKeyToAccount(generatePrivateKey());
    const signer = privateKeyToAccount(generatePrivateKey());
    const domain = "https://pooled-signer.example.com/callback";
    await createClient(a.store, { id: license.address, name: "Signer license" });
    await addRedirectUri(a.store, license.address, domain);
    await addSigner(a.store, license.address, signer.address);
    const generated = await handlers(b).generate(form("/auth/web3/generate_challenge", { client_id: license.address, domain, scope: "openid", response_type: "code", address: license.address }));
    const { state, challenge } = (await generated.json()) as { state: string; challenge: string };
    await revokeSigner(a.store, license.address, signer.address);
    const refused = await handlers(b).submit(form("/auth/web3/submit_challenge", { client_id: license.address, state, grant_type: "authorization_code", domain, signature: await signer.signMessage({ message: challenge }) }));
    expect(refused.status).toBe(400);
  });

  it("without a direct connection, hears a client change by polling: the other instance drops it within seconds", { timeout: 60_000 }, async () => {
    const client = await createClient(a.store, { name: "Polled" });
    // B caches the client (its feed is trusted once it has polled): a second lookup asks nothing.
    const lookups = vi.spyOn(connectionPool(b), "query");
    await within(POLL_MS * 3, async () => {
      await b.clients.get(client.id);
      const before = lookups.mock.calls.length;
      await b.clients.get(client.id);
      return lookups.mock.calls.length === before;
    });
    lookups.mockRestore();
    await setClientEnabled(a.store, client.id, false);
    const took = await within(POLL_MS * 3, async () => (await b.clients.get(client.id))?.enabled === false);
    expect(took).toBeLessThan(POLL_MS * 3);
  });

  it("runs the admin CLI through the pooler", { timeout: 120_000 }, async () => {
    const cli = cliOn(pooled, { DATABASE_POOLED: "true" });
    const added = await cli("clients", "add", "--name", "From the CLI");
    expect(added, added.stderr).toMatchObject({ code: 0 });
    expect((await cli("clients", "list")).stdout).toContain("From the CLI");
  });
});
