/**
 * Faults under load, on real parts: a PostgreSQL of the test's own (test/support/postgres-cluster.ts)
 * and two Keyfob instances in processes of their own (test/support/protocol-instance.ts) answer
 * Flow A handshakes, code exchanges and refreshes from concurrent clients while (a) PostgreSQL is
 * restarted with `pg_ctl -m fast restart` and then (b) one instance is killed with SIGKILL. The
 * clients do what a balancer in front of two instances does: a request that cannot reach one
 * instance (nothing sent) goes to the other; one that was sent is never sent again.
 *
 * Afterwards: no answer was a 5xx other than 503 with Retry-After; each instance that was still
 * running answered a success again within 10 s of each fault; every issued token (each that a client
 * received, and each the database holds) has its issued_tokens row and its `token.issued` audit row;
 * no state, code or refresh token was redeemed twice; and the surviving instance's refusals during
 * the restart (503, `token.failed`) were written to the audit log once PostgreSQL was back.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrateDatabase } from "@/lib/db/migrate";
import { startPostgresCluster, type PostgresCluster } from "./support/postgres-cluster";
import type { ProtocolProcess } from "./support/protocol-process";
import { mintCodes, registerLoadClients, startLoadInstances, startTokenLoad } from "./support/token-load";

const DOMAIN = "https://fleet.example.com/callback";
/** Seconds of load before the restart, between the faults, and after the kill. */
const PHASE_MS = 5_000;
const RECOVERY_MS = 10_000;

let cluster: PostgresCluster;
let instances: ProtocolProcess[] = [];
let licenseId: string;
let appId: string;

beforeAll(async () => {
  cluster = await startPostgresCluster();
  await migrateDatabase(cluster.url());
  ({ licenseId, appId } = await registerLoadClients(cluster.url(), DOMAIN));
  instances = await startLoadInstances(cluster.url(), randomBytes(32).toString("base64url"), "http://localhost:3000");
}, 120_000);

afterAll(async () => {
  for (const instance of instances) instance.child.kill("SIGKILL");
  await Promise.all(instances.map((instance) => instance.exited));
  await cluster?.destroy();
});

it("loses no token.issued record and redeems nothing twice through a PostgreSQL restart and a killed instance", {
  timeout: 180_000,
}, async () => {
  const pool = new pg.Pool({ connectionString: cluster.url(), max: 2 });
  pool.on("error", () => undefined); // its idle connections, ended by the restart
  const codes = await mintCodes(pool, 6_000, appId, DOMAIN);
  const load = startTokenLoad({ instances, licenseId, appId, redirectUri: DOMAIN, codes });
  const { outcomes, received, now } = load;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  await pause(PHASE_MS);
  const restartedAt = now();
  await cluster.restart("fast");
  const restartReturned = now();
  await pause(PHASE_MS);
  const killedAt = now();
  instances[1].child.kill("SIGKILL");
  await pause(PHASE_MS);
  await load.stop();
  // The survivor stops as a server does on SIGTERM, writing what it still buffers.
  instances[0].child.kill("SIGTERM");
  expect(await instances[0].exited, instances[0].stderr()).toBe(0);

  const context = () => `instance 0:\n${instances[0].stderr().slice(-3000)}\ninstance 1:\n${instances[1].stderr().slice(-3000)}`;
  // The load got through: successes before, between and after the faults.
  expect(received.length, context()).toBeGreaterThan(100);
  // Of every kind: Flow A states, codes and refresh tokens.
  expect(new Set(received.map((token) => token.from.split(" ")[0]))).toEqual(new Set(["state", "code", "refresh"]));

  // No 5xx other than 503 with Retry-After, and no answer missing but the killed instance's.
  const badFailures = outcomes.filter((o) => o.status >= 500 && (o.status !== 503 || !o.retryAfter));
  expect(badFailures, context()).toEqual([]);
  expect(outcomes.filter((o) => o.error && !(o.instance === 1 && o.at >= killedAt))).toEqual([]);

  // Success again within 10 s of each fault (once PostgreSQL is back), on every instance still running.
  const recovered = (instance: number, after: number) =>
    outcomes.find((o) => o.instance === instance && o.status === 200 && o.at > after)?.at;
  for (const instance of [0, 1])
    expect(recovered(instance, restartReturned), `instance ${instance} after the restart`).toBeLessThan(restartedAt + RECOVERY_MS);
  expect(recovered(0, killedAt), "instance 0 after the kill").toBeLessThan(killedAt + RECOVERY_MS);
  // The restart was felt (its refusals are checked below), and the kill too.
  expect(
    outcomes.some((o) => o.status === 503 && o.at > restartedAt && o.at < killedAt),
    "503s during the restart",
  ).toBe(true);
  expect(
    outcomes.some((o) => o.instance === 1 && o.error === "ECONNREFUSED"),
    "the killed instance refused connections",
  ).toBe(true);

  const clientIds = [licenseId, appId];
  const rows = async <T>(text: string, values: unknown[] = [clientIds]) => (await pool.query(text, values)).rows as T[];
  const issued = await rows<{ jti: string; user_id: string; client_id: string }>(
    "SELECT jti, user_id, client_id FROM issued_tokens WHERE client_id = ANY ($1)",
  );
  const audited = await rows<{ account_id: string; client_id: string; ip: string; outcome: string; detail: string }>(
    "SELECT account_id, client_id, ip, outcome, detail FROM audit_events WHERE action = 'token.issued' AND client_id = ANY ($1)",
  );

  // Every token a client received is recorded...
  const jtis = new Set(issued.map((token) => token.jti));
  expect(received.filter((token) => !jtis.has(token.jti))).toEqual([]);
  // ...and every recorded token, received or not (an answer lost with the killed instance), is audited: as many
  // token.issued rows per client and account as issued tokens, each as the endpoint recorded it before.
  const count = (keys: string[]) => keys.reduce((counts, key) => counts.set(key, (counts.get(key) ?? 0) + 1), new Map<string, number>());
  const perParty = (list: { client_id: string; account: string }[]) => count(list.map((row) => `${row.client_id} ${row.account}`));
  const issuedPerParty = perParty(issued.map((token) => ({ client_id: token.client_id, account: token.user_id })));
  const auditedPerParty = perParty(audited.map((event) => ({ client_id: event.client_id, account: event.account_id })));
  const unaudited = [...issuedPerParty].filter(([party, n]) => (auditedPerParty.get(party) ?? 0) !== n);
  expect(
    unaudited,
    `${unaudited.length} of ${issuedPerParty.size} parties' tokens differ from their token.issued rows (${issued.length} tokens, ${audited.length} rows)`,
  ).toEqual([]);
  expect(audited.length).toBe(issued.length);
  for (const event of audited) {
    expect(event).toMatchObject({ outcome: "success", ip: "127.0.0.1" });
    expect(event.detail).toBe(event.client_id === licenseId ? "submit_challenge" : "token");
  }

  // Nothing redeemed twice: one token per Flow A wallet (a state each) and per code; a refresh
  // family holds as many access tokens as refresh tokens (each rotation stores one of each).
  const flowAAccounts = count(issued.filter((token) => token.client_id === licenseId).map((token) => token.user_id));
  expect([...flowAAccounts].filter(([, n]) => n > 1)).toEqual([]);
  expect(
    await rows(
      "SELECT code_hash FROM issued_tokens WHERE client_id = ANY ($1) AND code_hash IS NOT NULL GROUP BY code_hash HAVING count(*) > 1",
    ),
  ).toEqual([]);
  expect(
    await rows(`SELECT family_id FROM refresh_tokens r WHERE client_id = ANY ($1) GROUP BY family_id
                HAVING count(*) <> (SELECT count(*) FROM issued_tokens i WHERE i.refresh_family = r.family_id)`),
  ).toEqual([]);

  // The survivor's refusals during the restart reached the audit log once PostgreSQL was back.
  const refusedBySurvivor = outcomes.filter(
    (o) => o.instance === 0 && o.status === 503 && o.path !== "/auth/web3/generate_challenge",
  ).length;
  const [{ n: failedRows }] = await rows<{ n: number }>(
    "SELECT count(*)::int AS n FROM audit_events WHERE action = 'token.failed' AND outcome = 'temporarily_unavailable'",
    [],
  );
  expect(failedRows, `${refusedBySurvivor} refusals by the surviving instance`).toBeGreaterThanOrEqual(refusedBySurvivor);
  await pool.end();
});
