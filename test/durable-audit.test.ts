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
import { createHash, randomBytes } from "node:crypto";
import { decodeJwt } from "jose";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { addRedirectUri, createClient, updateClient } from "@/lib/clients/registry";
import { createStore } from "@/lib/store";
import { migrateDatabase } from "@/lib/db/migrate";
import { opaqueDigest, randomOpaque } from "@/lib/oauth/opaque";
import { startPostgresCluster, type PostgresCluster } from "./support/postgres-cluster";
import { type ProtocolProcess, startProtocolProcess } from "./support/protocol-process";

const DOMAIN = "https://fleet.example.com/callback";
/** Seconds of load before the restart, between the faults, and after the kill. */
const PHASE_MS = 5_000;
const RECOVERY_MS = 10_000;

/** One answer (status) or a request that got none (error: the network error's code). */
type Outcome = { at: number; instance: number; path: string; status: number; retryAfter?: string | null; error?: string };
/** A token a client received, and what it was redeemed from. */
type Received = { jti: string; clientId: string; account: string; from: string };

let cluster: PostgresCluster;
let instances: ProtocolProcess[] = [];
let licenseId: string;
let appId: string;

beforeAll(async () => {
  cluster = await startPostgresCluster();
  await migrateDatabase(cluster.url());
  const store = createStore(cluster.url(), 2);
  try {
    const license = privateKeyToAccount(generatePrivateKey());
    licenseId = (await createClient(store, { id: license.address, name: "Fault test license" })).id;
    await addRedirectUri(store, licenseId, DOMAIN);
    appId = (await createClient(store, { name: "Fault test app" })).id;
    await addRedirectUri(store, appId, DOMAIN);
    await updateClient(store, appId, { refreshTokensAllowed: true });
  } finally {
    await store.close();
  }
  const secret = randomBytes(32).toString("base64url");
  instances = await Promise.all(
    [0, 1].map(() =>
      startProtocolProcess({
        DATABASE_URL: cluster.url(),
        KEYFOB_SECRET: secret,
        ISSUER_URL: "http://localhost:3000",
        RATE_LIMIT_PER_IP: "off",
        RATE_LIMIT_PER_CLIENT: "100000000/1m",
      }),
    ),
  );
}, 120_000);

afterAll(async () => {
  for (const instance of instances) instance.child.kill("SIGKILL");
  await Promise.all(instances.map((instance) => instance.exited));
  await cluster?.destroy();
});

/** Codes as the hosted login leaves them, each for an account of its own, with offline_access: [code, verifier, account]. */
async function mintCodes(pool: pg.Pool, n: number): Promise<[string, string, string][]> {
  const codes: [string, string, string][] = Array.from({ length: n }, () => [
    randomOpaque(),
    randomBytes(32).toString("base64url"),
    `0x${randomBytes(20).toString("hex")}`,
  ]);
  await pool.query(
    `INSERT INTO authorization_codes (code_hash, client_id, redirect_uri, account_id, connector, scope, code_challenge, email, email_verified, auth_time, amr, expires_at)
     SELECT h, $4, $5, a, 'google', 'openid email offline_access', c, 'user@example.com', true, now() AT TIME ZONE 'UTC', 'google', (now() + interval '10 minutes') AT TIME ZONE 'UTC'
     FROM unnest($1::text[], $2::text[], $3::text[]) AS t(h, c, a)`,
    [
      codes.map(([code]) => opaqueDigest(code)),
      codes.map(([, verifier]) => createHash("sha256").update(verifier).digest("base64url")),
      codes.map(([, , account]) => account),
      appId,
      DOMAIN,
    ],
  );
  return codes;
}

it("loses no token.issued record and redeems nothing twice through a PostgreSQL restart and a killed instance", {
  timeout: 180_000,
}, async () => {
  const pool = new pg.Pool({ connectionString: cluster.url(), max: 2 });
  pool.on("error", () => undefined); // its idle connections, ended by the restart
  const codes = await mintCodes(pool, 6_000);
  const outcomes: Outcome[] = [];
  const received: Received[] = [];
  const started = performance.now();
  const now = () => performance.now() - started;
  let stopped = false;
  let turn = 0;

  /** POSTs a form to one instance, or to the other when the first cannot be reached; undefined when no answer came. */
  async function post(
    pathname: string,
    form: Record<string, string>,
  ): Promise<{ status: number; body: Record<string, string> } | undefined> {
    const first = turn++ % 2;
    for (const index of [first, 1 - first]) {
      try {
        const response = await fetch(`${instances[index].url}${pathname}`, { method: "POST", body: new URLSearchParams(form) });
        const body = (await response.json()) as Record<string, string>;
        outcomes.push({
          at: now(),
          instance: index,
          path: pathname,
          status: response.status,
          retryAfter: response.headers.get("retry-after"),
        });
        return { status: response.status, body };
      } catch (error) {
        const code = String((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name);
        outcomes.push({ at: now(), instance: index, path: pathname, status: 0, error: code });
        if (code !== "ECONNREFUSED") return undefined; // it may have been handled: never sent twice
      }
    }
    return undefined;
  }
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const keep = (body: Record<string, string>, clientId: string, account: string, from: string) =>
    received.push({ jti: decodeJwt(body.access_token).jti!, clientId, account, from });

  async function flowA() {
    while (!stopped) {
      const wallet = privateKeyToAccount(generatePrivateKey());
      const challenge = await post("/auth/web3/generate_challenge", {
        client_id: licenseId,
        domain: DOMAIN,
        scope: "openid email",
        response_type: "code",
        address: wallet.address,
      });
      if (challenge?.status !== 200) {
        await pause(100);
        continue;
      }
      const signature = await wallet.signMessage({ message: challenge.body.challenge });
      const tokens = await post("/auth/web3/submit_challenge", {
        client_id: licenseId,
        state: challenge.body.state,
        grant_type: "authorization_code",
        domain: DOMAIN,
        signature,
      });
      if (tokens?.status === 200) keep(tokens.body, licenseId, wallet.address, `state ${challenge.body.state}`);
      else await pause(100);
    }
  }

  async function codeExchanges() {
    while (!stopped) {
      const [code, verifier, account] = codes.pop()!;
      const tokens = await post("/token", {
        grant_type: "authorization_code",
        client_id: appId,
        code,
        code_verifier: verifier,
        redirect_uri: DOMAIN,
      });
      if (tokens?.status !== 200) {
        await pause(100);
        continue;
      }
      keep(tokens.body, appId, account, `code ${code}`);
      let refreshToken = tokens.body.refresh_token;
      for (let i = 0; i < 2 && !stopped; i++) {
        const refreshed = await post("/token", { grant_type: "refresh_token", client_id: appId, refresh_token: refreshToken });
        if (refreshed?.status !== 200) break;
        keep(refreshed.body, appId, account, `refresh token ${refreshToken}`);
        refreshToken = refreshed.body.refresh_token;
      }
    }
  }

  const clients = [...Array.from({ length: 6 }, flowA), ...Array.from({ length: 6 }, codeExchanges)];
  await pause(PHASE_MS);
  const restartedAt = now();
  await cluster.restart("fast");
  const restartReturned = now();
  await pause(PHASE_MS);
  const killedAt = now();
  instances[1].child.kill("SIGKILL");
  await pause(PHASE_MS);
  stopped = true;
  await Promise.all(clients);
  // The survivor stops as a server does on SIGTERM, writing what it still buffers.
  instances[0].child.kill("SIGTERM");
  expect(await instances[0].exited, instances[0].stderr()).toBe(0);

  const context = () => `instance 0:\n${instances[0].stderr().slice(-3000)}\ninstance 1:\n${instances[1].stderr().slice(-3000)}`;
  // The load got through: successes before, between and after the faults.
  expect(received.length, context()).toBeGreaterThan(100);

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
