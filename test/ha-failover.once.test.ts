/**
 * Keyfob on a highly available PostgreSQL (docs/deployment.md): three Patroni nodes on PostgreSQL 15
 * with synchronous replication, etcd, and HAProxy routing to the leader (test/support/patroni-cluster.ts);
 * two Keyfob instances in processes of their own reach the database only through HAProxy. Under
 * Flow A and /token load (test/support/token-load.ts) the leader's postmaster is killed (SIGKILL),
 * and later a switchover is requested.
 *
 * Each time: no answer but 200 or 503 with Retry-After (a write on a node mid-promotion gets 25006:
 * 503 too, never a 500; the summary line counts those the nodes logged, often none, and
 * test/read-only-database.test.ts forces the case); both instances answer a success again within
 * 30 s; a Flow A state and a code redeemed before the event are refused after it. Afterwards: every
 * access token a client received is in issued_tokens on the final leader with its `token.issued`
 * audit row, no jti twice, no code twice; and the instances' listening connections came back (a key
 * revoked through the CLI leaves both instances' JWKS within seconds, not at the minute's reload),
 * and both sign with the successor, without a restart.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrateDatabase } from "@/lib/db/migrate";
import { findHaStack } from "../scripts/patroni";
import { findPostgresql15 } from "../scripts/postgresql";
import { cliOn, within } from "./support/cli";
import { startPatroniCluster, type PatroniCluster } from "./support/patroni-cluster";
import type { ProtocolProcess } from "./support/protocol-process";
import { mintCodes, registerLoadClients, startLoadInstances, type Received, startTokenLoad } from "./support/token-load";

const DOMAIN = "https://fleet.example.com/callback";
const SECRET = randomBytes(32).toString("base64url");
const ISSUER = "http://localhost:3000";
/** Load before the first event, and after the last. */
const PHASE_MS = 3_000;
/** Both instances answer a success again within this long of each event. */
const RECOVERY_MS = 30_000;

let cluster: PatroniCluster;
let instances: ProtocolProcess[] = [];
let licenseId: string;
let appId: string;

beforeAll(async () => {
  const tools = findHaStack();
  const bin = findPostgresql15();
  if (!tools || !bin)
    throw new Error("Patroni, etcd, HAProxy and PostgreSQL 15 are needed for this test and could not be found or installed");
  cluster = await startPatroniCluster(tools, bin);
  // The guarantee holds once a synchronous standby is in place.
  await cluster.syncStandby();
  await migrateDatabase(cluster.url());
  ({ licenseId, appId } = await registerLoadClients(cluster.url(), DOMAIN));
  instances = await startLoadInstances(cluster.url(), SECRET, ISSUER);
}, 180_000);

afterAll(async () => {
  for (const instance of instances) instance.child.kill("SIGKILL");
  await Promise.all(instances.map((instance) => instance.exited));
  await cluster?.destroy();
}, 60_000);

it("serves on through a killed leader and a switchover: 503 with Retry-After at worst, nothing lost or redeemed twice", {
  timeout: 240_000,
}, async () => {
  const pool = new pg.Pool({ connectionString: cluster.url(), max: 2 });
  pool.on("error", () => undefined); // its idle connections, ended by the failovers
  const codes = await mintCodes(pool, 8_000, appId, DOMAIN);
  const load = startTokenLoad({ instances, licenseId, appId, redirectUri: DOMAIN, codes });
  const { outcomes, received, now } = load;
  const context = async () =>
    `${instances.map((instance, i) => `instance ${i}:\n${instance.stderr().slice(-3000)}`).join("\n")}\n${await cluster.logs()}`;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const lastRedeemed = (kind: "state" | "code", before: number) =>
    received.findLast((token) => token.from.startsWith(`${kind} `) && token.at < before);

  await pause(PHASE_MS);
  const events = [
    { name: "kill -9 of the leader's postmaster", act: () => cluster.killLeaderPostmaster() },
    { name: "switchover", act: () => cluster.switchover() },
  ];
  for (const event of events) {
    const at = now();
    const redeemed = [lastRedeemed("state", at), lastRedeemed("code", at)] as Received[];
    expect(
      redeemed.every(Boolean),
      `a state and a code redeemed before the ${event.name}: ${received.length} tokens, ${JSON.stringify(outcomes.filter((o) => o.path === "/token").slice(-3))}`,
    ).toBe(true);
    const oldLeader = await event.act();

    // A new leader, and then a success on both instances (answered after it was elected: written there), within 30 s.
    const failure = async (what: string) => new Error(`${what} within ${RECOVERY_MS / 1000} s of the ${event.name}\n${await context()}`);
    await within(RECOVERY_MS, async () => (await cluster.leader()) !== oldLeader).catch(async () =>
      Promise.reject(await failure("no new leader")),
    );
    const elected = now();
    const recovered = (instance: number) => outcomes.some((o) => o.instance === instance && o.status === 200 && o.at > elected);
    await within(at + RECOVERY_MS - now(), async () => recovered(0) && recovered(1)).catch(async () =>
      Promise.reject(await failure("no success on both instances")),
    );
    console.log(
      `${event.name}: ${oldLeader} to ${await cluster.leader()}, elected after ${Math.round(elected - at)} ms, both serving after ${Math.round(now() - at)} ms; ${outcomes.filter((o) => o.status === 503 && o.at > at).length} answers 503`,
    );

    // What was redeemed before the event stays redeemed after it, on either instance.
    for (const [i, token] of redeemed.entries()) {
      // A 503 (with Retry-After) means "later", as for any client: sent again until answered.
      let replay = await load.send(i % 2, token.request);
      for (const deadline = now() + RECOVERY_MS; replay.status === 503 && replay.retryAfter && now() < deadline; ) {
        await pause(200);
        replay = await load.send(i % 2, token.request);
      }
      expect({ from: token.from, status: replay.status, error: replay.body.error }).toEqual({
        from: token.from,
        status: 400,
        error: "invalid_grant",
      });
    }
    // The next event only once the guarantee holds again.
    await cluster.syncStandby();
  }

  // The listening connections came back: a key revoked through the CLI (NOTIFY) leaves both instances'
  // JWKS within seconds (the periodic reload is a minute), and both sign with its successor.
  const revoked = received.at(-1)!.kid!;
  const revocation = await cliOn(cluster.url(), { KEYFOB_SECRET: SECRET, ISSUER_URL: ISSUER })("keys", "revoke", revoked);
  expect(revocation, revocation.stderr).toMatchObject({ code: 0 });
  await within(5_000, async () => {
    const sets = await Promise.all(
      instances.map(async ({ url }) => (await (await fetch(`${url}/keys`)).json()) as { keys: { kid: string }[] }),
    );
    return sets.every((set) => !set.keys.some((key) => key.kid === revoked));
  });
  const unpublishedAt = now();
  await pause(PHASE_MS);
  await load.stop();
  const signedSince = received.filter((token) => token.at > unpublishedAt);
  expect(signedSince.length, "tokens issued after the revocation").toBeGreaterThan(0);
  expect(signedSince.filter((token) => token.kid === revoked)).toEqual([]);
  // Both stop as a server does on SIGTERM, writing what they still buffer.
  for (const instance of instances) {
    instance.child.kill("SIGTERM");
    expect(await instance.exited, instance.stderr()).toBe(0);
  }

  // Every answer was a 200 or a 503 with Retry-After (the refused replays above are not in `outcomes`), and every request got one.
  const statuses = outcomes.reduce((counts, o) => counts.set(o.status, (counts.get(o.status) ?? 0) + 1), new Map<number, number>());
  console.log(
    `answers: ${JSON.stringify(Object.fromEntries(statuses))} (503s after the revocation: ${outcomes.filter((o) => o.status === 503 && o.at > unpublishedAt).length}); ` +
      `${received.length} tokens received; ${await cluster.readOnlyRefusals()} statements refused as read-only (25006) by a node`,
  );
  expect(
    outcomes.filter((o) => o.status !== 200 && (o.status !== 503 || !o.retryAfter)),
    await context(),
  ).toEqual([]);
  expect(received.length).toBeGreaterThan(100);
  // Of every kind: Flow A states, codes and refresh tokens.
  expect(new Set(received.map((token) => token.from.split(" ")[0]))).toEqual(new Set(["state", "code", "refresh"]));

  // Every token a client received is stored on the final leader, once, with its token.issued audit row.
  const clientIds = [licenseId, appId];
  const rows = async <T>(text: string) => (await pool.query(text, [clientIds])).rows as T[];
  const issued = new Set((await rows<{ jti: string }>("SELECT jti FROM issued_tokens WHERE client_id = ANY ($1)")).map((row) => row.jti));
  expect(received.filter((token) => !issued.has(token.jti))).toEqual([]);
  expect(new Set(received.map((token) => token.jti)).size).toBe(received.length);
  expect(await rows("SELECT jti FROM issued_tokens WHERE client_id = ANY ($1) GROUP BY jti HAVING count(*) > 1")).toEqual([]);
  expect(
    await rows(
      "SELECT code_hash FROM issued_tokens WHERE client_id = ANY ($1) AND code_hash IS NOT NULL GROUP BY code_hash HAVING count(*) > 1",
    ),
  ).toEqual([]);
  // As many token.issued rows per client and account as tokens issued to them, received or not.
  expect(
    await rows(`(SELECT client_id, user_id AS account, count(*) FROM issued_tokens WHERE client_id = ANY ($1) GROUP BY 1, 2
                 EXCEPT SELECT client_id, account_id, count(*) FROM audit_events
                 WHERE action = 'token.issued' AND outcome = 'success' AND client_id = ANY ($1) GROUP BY 1, 2)
                UNION ALL
                (SELECT client_id, account_id, count(*) FROM audit_events
                 WHERE action = 'token.issued' AND outcome = 'success' AND client_id = ANY ($1) GROUP BY 1, 2
                 EXCEPT SELECT client_id, user_id, count(*) FROM issued_tokens WHERE client_id = ANY ($1) GROUP BY 1, 2)`),
  ).toEqual([]);
  await pool.end();
});
