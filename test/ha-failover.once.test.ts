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
 * revoked by an admin, as the CLI does it, leaves both instances' JWKS within seconds, not at the
 * periodic reload), and both sign with the successor, without a restart.
 *
 * Right after the switchover, side by side, the background work is shown to have resumed on both
 * instances without a restart (their intervals shortened by settings): a scheduled key rotation
 * (the keys' activation times moved back: a successor created by a reload, published by both, then
 * signing on both); the rate-limit budget of a confidential client, its hits leased in batches,
 * counted across both instances (the budget let through, no more within a window, then 429 from
 * both); a sweep deleting an expired challenge; a back-channel logout token delivered to a relying
 * party on this machine for a session an admin ended; and the chain watcher's lease on
 * chain_cursors taken again, its cursor at blocks mined now (a hardhat node).
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ALL_SCOPES } from "@/lib/admin/access";
import { type AdminChangeName, runAdminChange } from "@/lib/admin/changes";
import { systemClock } from "@/lib/clock";
import { createClient, rotateClientSecret, updateClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { KEY_CHANNEL } from "@/lib/keys/keystore";
import { createStore, rawConnection } from "@/lib/store";
import { BACKCHANNEL_LOGOUT_EVENT, LOGOUT_TOKEN_TYPE } from "@/lib/tokens/logout-token";
import { findHaStack } from "../scripts/patroni";
import { findPostgresql15 } from "../scripts/postgresql";
import { HARDHAT_CHAIN_ID, startLocalChain, type LocalChain } from "./chain/local-chain";
import { within } from "./support/cli";
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
/** What runs in the background resumes within this long, once both instances serve again after the last event. */
const RESUME_MS = 20_000;
/** RATE_LIMIT_PER_CLIENT's count (a minute): the smallest budget whose hits are leased to instances in batches (two shards). */
const CLIENT_BUDGET = 500;
/**
 * Key rotation on a schedule the test can cross: the current key is due for a successor 50 minutes
 * (`due`) after it began to sign, and the successor signs 10 minutes (and a second: `signs`) after that.
 */
const ROTATION = { period: "1h", publishLead: "10m", due: "50 minutes", signs: "10 minutes 1 second" };

/**
 * The instances' settings besides the load's: their background work on short intervals (sweeps,
 * the chain watcher's passes and so its lease), a key schedule the test can cross, a client budget
 * it can use up, back-channel logout delivery to a relying party on this machine, and the chain's
 * vehicle contracts watched (an address without code: no events, but every pass leases the cursor
 * and moves it to the chain's head).
 */
const settings = (rpcUrl: string) => ({
  RATE_LIMIT_PER_CLIENT: `${CLIENT_BUDGET}/1m`,
  KEY_ROTATION_PERIOD: ROTATION.period,
  KEY_PUBLISH_LEAD: ROTATION.publishLead,
  SWEEP_INTERVAL: "2s",
  BACKCHANNEL_LOGOUT_DELIVERY: "true", // off in the suite's environment (test/support/global-setup.ts)
  BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS: "127.0.0.0/8,::1/128",
  RPC_URL: rpcUrl,
  CHAIN_ID: String(HARDHAT_CHAIN_ID),
  VEHICLE_CONTRACTS: privateKeyToAccount(generatePrivateKey()).address,
  VEHICLE_EVENTS_INTERVAL: "1s",
});

let cluster: PatroniCluster;
let chain: LocalChain;
let receiver: LogoutReceiver;
let instances: ProtocolProcess[] = [];
let licenseId: string;
let appId: string;
let resume: ResumeClients;
let env: Record<string, string>;
/** An operator's Keyfob in this process, as the CLI's: it runs admin actions (and delivers nothing: lib/runtime.ts starts delivery in servers). */
let operator: Keyfob;

beforeAll(async () => {
  const tools = findHaStack();
  const bin = findPostgresql15();
  if (!tools || !bin)
    throw new Error("Patroni, etcd, HAProxy and PostgreSQL 15 are needed for this test and could not be found or installed");
  [cluster, chain, receiver] = await Promise.all([startPatroniCluster(tools, bin), startLocalChain(), startLogoutReceiver()]);
  // The guarantee holds once a synchronous standby is in place.
  await cluster.syncStandby();
  await migrateDatabase(cluster.url());
  env = { ...settings(chain.rpcUrl), DATABASE_URL: cluster.url(), KEYFOB_SECRET: SECRET, ISSUER_URL: ISSUER };
  ({ licenseId, appId } = await registerLoadClients(cluster.url(), DOMAIN));
  resume = await registerResumeClients(receiver.url);
  instances = await startLoadInstances(cluster.url(), SECRET, ISSUER, settings(chain.rpcUrl));
  operator = createKeyfob({ ...loadConfig(env), recoveryThreads: 0 });
}, 180_000);

afterAll(async () => {
  for (const instance of instances) instance.child.kill("SIGKILL");
  await Promise.all(instances.map((instance) => instance.exited));
  await operator?.close();
  await Promise.all([cluster?.destroy(), chain?.stop(), receiver?.close()]);
}, 60_000);

/** Runs an admin action as the CLI does, which must succeed. */
async function act(name: AdminChangeName, input: Record<string, unknown>) {
  const operatorAdmin = { accountId: "cli", label: "cli:ha-test", scopes: ALL_SCOPES };
  expect(await runAdminChange(operator, operatorAdmin, name, input)).toMatchObject({ ok: true });
}

/** A relying party's back-channel logout endpoint on this machine: keeps the logout tokens POSTed to it. */
type LogoutReceiver = { url: string; tokens: string[]; close(): Promise<void> };

async function startLogoutReceiver(): Promise<LogoutReceiver> {
  const tokens: string[] = [];
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      const token = new URLSearchParams(body).get("logout_token");
      if (token) tokens.push(token);
      response.writeHead(token ? 200 : 400).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}/logout`,
    tokens,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * For the checks after the failovers: a confidential client (its Basic credentials) that spends
 * RATE_LIMIT_PER_CLIENT, and a relying party with a back-channel logout URI that got tokens in a
 * live login session of `account`.
 */
type ResumeClients = { backend: string; relyingParty: string; account: string };

async function registerResumeClients(logoutUri: string): Promise<ResumeClients> {
  const store = createStore(cluster.url(), 2);
  try {
    const backend = (await createClient(store, { name: "Rate-limited backend" })).id;
    const secret = await rotateClientSecret({ store, clock: systemClock }, backend);
    const relyingParty = (await createClient(store, { name: "Logout receiver" })).id;
    await updateClient(store, relyingParty, { backchannelLogoutUri: logoutUri }, loadConfig(env));
    const account = privateKeyToAccount(generatePrivateKey()).address;
    const session = randomBytes(32).toString("base64url");
    await rawConnection(store).pool.query(
      `WITH a AS (INSERT INTO accounts (id) VALUES ($1)),
            s AS (INSERT INTO login_sessions (id_hash, account_id, connector, subject, amr, auth_time, last_seen_at, expires_at)
                  VALUES ($2, $1, 'web3', $1, 'wallet', now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC', (now() + interval '1 day') AT TIME ZONE 'UTC'))
       INSERT INTO login_session_clients (session_id, client_id) VALUES ($2, $3)`,
      [account, session, relyingParty],
    );
    return { backend: `Basic ${Buffer.from(`${backend}:${secret}`).toString("base64")}`, relyingParty, account };
  } finally {
    await store.close();
  }
}

it("serves on through a killed leader and a switchover: 503 with Retry-After at worst, nothing lost or redeemed twice", {
  timeout: 240_000,
}, async () => {
  const pool = new pg.Pool({ connectionString: cluster.url(), max: 4 });
  pool.on("error", () => undefined); // its idle connections, ended by the failovers
  const codes = await mintCodes(pool, 8_000, appId, DOMAIN);
  const load = startTokenLoad({ instances, licenseId, appId, redirectUri: DOMAIN, codes });
  const { outcomes, received, now } = load;
  const context = async () =>
    `${instances.map((instance, i) => `instance ${i}:\n${instance.stderr().slice(-3000)}`).join("\n")}\n${await cluster.logs()}`;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const lastRedeemed = (kind: "state" | "code", before: number) =>
    received.findLast((token) => token.from.startsWith(`${kind} `) && token.at < before);
  /** Polls `done` every 100 ms (these checks run beside the load) until it holds, for at most RESUME_MS. */
  const resumes = (what: string, done: () => Promise<boolean>) =>
    within(RESUME_MS, done, 100).catch(async () =>
      Promise.reject(new Error(`${what}: not within ${RESUME_MS / 1000} s\n${await context()}`)),
    );
  const jwks = async (instance: number) => (await (await fetch(`${instances[instance].url}/keys`)).json()) as JSONWebKeySet;

  /**
   * Key rotation: the schedule's time is moved on by moving the live keys' activation times back
   * (the instances' clocks are the system's), a change announced as Keyfob announces its key
   * changes (keyfob_changed on keyfob_signing_keys: every instance reloads its keys, as it does every
   * minute anyway, and the reload carries out the schedule). First by the rotation period less the
   * publish lead: the current key is then due for a successor, which one instance creates and both
   * publish; then by the publish lead: the successor's time has come, and both sign with it.
   */
  async function scheduledRotation() {
    const known = new Set((await Promise.all([0, 1].map(jwks))).flatMap((set) => set.keys.map((key) => key.kid)));
    const shift = (by: string) =>
      pool.query(
        `UPDATE signing_keys SET activates_at = activates_at - interval '${by}' WHERE revoked_at IS NULL AND unpublished_at IS NULL;
         SELECT keyfob_changed('${KEY_CHANNEL}', '{}')`,
      );
    await shift(ROTATION.due);
    let successor: string | undefined;
    await resumes("a successor published on both instances", async () => {
      const added = (await Promise.all([0, 1].map(jwks))).map((set) => set.keys.map((key) => key.kid!).filter((kid) => !known.has(kid)));
      successor = added[0][0];
      return added.every((kids) => kids.length === 1 && kids[0] === successor);
    });
    const shiftedAt = now();
    await shift(ROTATION.signs);
    await resumes("both instances signing with the successor", async () =>
      [0, 1].every((instance) =>
        received.some((token) => token.instance === instance && token.sent > shiftedAt && token.kid === successor),
      ),
    );
    return `${successor} published, then signing on both`;
  }

  /**
   * Rate limits: the confidential client's requests, sent to both instances in turn, are counted
   * (their hits leased in batches) in one budget: together the instances let about the budget
   * through, then both refuse with 429 and Retry-After.
   */
  async function sharedClientBudget() {
    const allowed = [0, 0];
    const refused = [0, 0];
    const other: string[] = [];
    let sent = 0;
    const client = async () => {
      while (refused.some((n) => n === 0) && sent < 3 * CLIENT_BUDGET && other.length === 0) {
        const instance = sent++ % 2;
        const answer = await fetch(`${instances[instance].url}/token/revoke`, {
          method: "POST",
          headers: { authorization: resume.backend },
          body: new URLSearchParams({ token: "not-a-token" }),
        });
        await answer.arrayBuffer();
        if (answer.status === 200) allowed[instance]++;
        else if (answer.status === 429 && answer.headers.get("retry-after")) refused[instance]++;
        else other.push(`${answer.status} from instance ${instance}`);
      }
    };
    const window = () => Math.floor(Date.now() / 60_000); // the budget's, on the instances' clock (this machine's)
    const first = window();
    await Promise.all(Array.from({ length: 16 }, client));
    const oneWindow = window() === first;
    expect(other).toEqual([]);
    expect(
      refused.every((n) => n > 0),
      `refusals ${refused}, after ${allowed} let through`,
    ).toBe(true);
    const total = allowed[0] + allowed[1];
    // At most the budget within one window (less what leases left unspent); once a window ends, its count fades (the sliding estimate).
    expect(total, `let through: ${allowed}`).toBeGreaterThanOrEqual(CLIENT_BUDGET - 16);
    expect(total, `let through: ${allowed}`).toBeLessThanOrEqual(oneWindow ? CLIENT_BUDGET : 1.2 * CLIENT_BUDGET);
    return `${allowed.join(" + ")} let through${oneWindow ? "" : " (across a window's end)"}, then ${refused.join(" + ")} refused`;
  }

  /** Housekeeping: a challenge that expired more than a day ago is deleted by a sweep after the failovers. */
  async function sweepAfterFailover() {
    const stateHash = `expired-${randomBytes(8).toString("hex")}`;
    await pool.query(
      `INSERT INTO challenges (state_hash, client_id, domain, address, scope, message, expires_at)
       VALUES ($1, $2, $3, $4, 'openid', 'm', (now() - interval '25 hours') AT TIME ZONE 'UTC')`,
      [stateHash, licenseId, DOMAIN, resume.account],
    );
    const swept = await resumes("the expired challenge swept", async () => {
      return (await pool.query("SELECT 1 FROM challenges WHERE state_hash = $1", [stateHash])).rowCount === 0;
    });
    return `an expired challenge swept after ${Math.round(swept)} ms`;
  }

  /** Back-channel logout: a session ended now (the admin action `sessions revoke` runs) has its logout token delivered by an instance to the relying party. */
  async function logout() {
    await act("session.revoke", { accountId: resume.account });
    await resumes("the logout token delivered", async () => receiver.tokens.length > 0).catch(async (error: Error) => {
      const outbox = await pool.query("SELECT attempts, last_error, next_attempt_at, lease_until FROM backchannel_logouts");
      const audit = await pool.query(
        "SELECT action, outcome, detail FROM audit_events WHERE action LIKE '%logout%' OR action LIKE 'session%'",
      );
      throw new Error(`${error.message}\noutbox: ${JSON.stringify(outbox.rows)}\naudit: ${JSON.stringify(audit.rows)}`);
    });
    const { payload } = await jwtVerify(receiver.tokens[0], createLocalJWKSet(await jwks(0)), {
      issuer: ISSUER,
      audience: resume.relyingParty,
      typ: LOGOUT_TOKEN_TYPE,
    });
    expect(payload).toMatchObject({ sid: expect.any(String), events: { [BACKCHANNEL_LOGOUT_EVENT]: {} } });
    return `${receiver.tokens.length} logout token delivered`;
  }

  /** The chain watcher's lease on chain_cursors: renewed after the failovers, and its passes move the cursor to blocks mined now. */
  async function chainWatcherLease() {
    const cursor = async () =>
      (await pool.query<{ block: string; lease_until: Date }>("SELECT block, lease_until FROM chain_cursors WHERE name = 'vehicle_events'"))
        .rows[0];
    const before = (await cursor()) ?? { lease_until: new Date(0) }; // none: no pass got as far yet
    await chain.publicClient.request({ method: "hardhat_mine" as never, params: ["0x2"] as never });
    const head = await chain.publicClient.getBlockNumber();
    await resumes("the cursor leased again and at the head", async () => {
      const after = await cursor();
      return after.lease_until > before.lease_until && BigInt(after.block) >= head;
    });
    return `leased again, cursor at block ${head}`;
  }

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
    if (event !== events.at(-1)) await cluster.syncStandby();
  }

  // What runs in the background resumed on both instances, without a restart (each check below).
  const checks = { rotation: scheduledRotation, budget: sharedClientBudget, sweep: sweepAfterFailover, logout, watcher: chainWatcherLease };
  const resuming = now();
  const resumed = await Promise.allSettled(
    Object.entries(checks).map(async ([name, check]) => `${name}: ${await check()} (${Math.round(now() - resuming)} ms)`),
  );
  const failed = resumed.filter((result) => result.status === "rejected").map((result) => result.reason as Error);
  if (failed.length > 0) throw new AggregateError(failed, failed.map((error) => error.message.split("\n")[0]).join("; "));
  console.log(
    `resumed after the failovers (checked in ${Math.round(now() - resuming)} ms): ${resumed.map((result) => (result as PromiseFulfilledResult<string>).value).join("; ")}`,
  );

  // The listening connections came back: a key revoked by an admin (the CLI's action; NOTIFY) leaves both instances'
  // JWKS within seconds (the periodic reload is a minute), and both sign with its successor.
  const revoked = received.at(-1)!.kid!;
  await act("key.revoke", { kid: revoked });
  await within(5_000, async () => {
    const sets = await Promise.all(
      instances.map(async ({ url }) => (await (await fetch(`${url}/keys`)).json()) as { keys: { kid: string }[] }),
    );
    return sets.every((set) => !set.keys.some((key) => key.kid === revoked));
  });
  const unpublishedAt = now();
  await pause(PHASE_MS);
  await load.stop();
  // Asked for after the key had left both JWKS (one signed just before its NOTIFY arrived may be answered later).
  const signedSince = received.filter((token) => token.sent > unpublishedAt);
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
