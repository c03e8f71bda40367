/**
 * Keyfob as an operator runs it: several `npm run serve` processes on one PostgreSQL. Three
 * instances start together on an empty database and all serve; a flood from one address is
 * limited on every instance at once; X-Forwarded-For is believed only through TRUSTED_PROXIES;
 * health and Prometheus metrics; stdout is the JSON log alone; SIGTERM finishes in-flight requests and writes their audit events.
 * The instances are real processes of the built server on a database of their own.
 */
import { randomBytes } from "node:crypto";
import { expect, test } from "@playwright/test";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { addRedirectUri, createClient } from "../lib/clients/registry";
import { createStore, rawConnection, type Store } from "../lib/store";
import type { Database } from "../lib/store/connection";
import { freePort } from "../scripts/free-port";
import { type Instance, ready, startInstance as start } from "./support/instances";

test.describe.configure({ mode: "serial" });
test.setTimeout(180_000);

let databaseUrl: string;
let store: Store;
let db: Database;
const running: Instance[] = [];
const secret = randomBytes(32).toString("base64url");
const metricsToken = randomBytes(24).toString("base64url");
let metricsPort: number;

/** Starts `npm run serve` (scripts/start.ts) as its own process on a free port, on this spec's database. */
async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const instance = await start(name, { DATABASE_URL: databaseUrl, KEYFOB_SECRET: secret, ...env });
  running.push(instance);
  return instance;
}

/** A started instance by its name (`running` is in the order their ports were found, not started). */
function instanceNamed(name: string): Instance {
  const found = running.find((i) => i.name === name);
  if (!found) throw new Error(`instance ${name} was not started`);
  return found;
}

test.beforeAll(async () => {
  // An empty database of its own on the e2e PostgreSQL server.
  const url = new URL(process.env.DATABASE_URL!);
  const name = `keyfob_ops_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  url.pathname = `/${name}`;
  databaseUrl = url.toString();
  store = createStore(databaseUrl, 2);
  db = rawConnection(store).db;
  metricsPort = await freePort();
});

test.afterAll(async () => {
  for (const instance of running) instance.process.kill("SIGKILL");
  await store.close();
});

async function license() {
  const owner = privateKeyToAccount(generatePrivateKey());
  const domain = `https://app.example.com/${owner.address.slice(2, 8)}`;
  await createClient(store, { id: owner.address, name: "operations" });
  await addRedirectUri(store, owner.address, domain);
  return { owner, clientId: owner.address, domain };
}

function challengeUrl(base: string, l: { clientId: string; domain: string }) {
  const query = new URLSearchParams({
    client_id: l.clientId,
    domain: l.domain,
    scope: "openid",
    response_type: "code",
    address: l.clientId,
  });
  return `${base}/auth/web3/generate_challenge?${query}`;
}

test("three instances started together on an empty PostgreSQL all come up and serve", async () => {
  const started = performance.now();
  const [a, b, c] = await Promise.all([
    startInstance("a", { RATE_LIMIT_PER_IP: "20/1m", TRUSTED_PROXIES: "loopback", METRICS_PORT: String(metricsPort) }),
    startInstance("b", { RATE_LIMIT_PER_IP: "20/1m" }),
    startInstance("c", { RATE_LIMIT_PER_IP: "off", METRICS_TOKEN: metricsToken }),
  ]);
  await Promise.all([a, b, c].map((instance) => ready(instance)));
  test.info().annotations.push({ type: "startup", description: `three instances ready in ${Math.round(performance.now() - started)} ms` });

  for (const instance of [a, b, c]) {
    const discovery = await fetch(`${instance.url}/.well-known/openid-configuration`);
    expect(discovery.status, instance.name).toBe(200);
    expect((await (await fetch(`${instance.url}/healthz/live`)).json()).status).toBe("ok");
  }
  // One schema, migrated once, and one signing key between them.
  const [{ count }] = await db.$queryRaw<{ count: bigint }[]>`SELECT count(*) FROM _prisma_migrations WHERE finished_at IS NOT NULL`;
  const migrations = await import("node:fs").then(
    (fs) => fs.readdirSync("prisma/migrations", { withFileTypes: true }).filter((e) => e.isDirectory()).length,
  );
  expect(Number(count)).toBe(migrations);
  expect(await db.signingKey.count()).toBe(1);
  const readiness = await fetch(`${a.url}/healthz/ready`);
  expect(await readiness.json()).toEqual({ status: "ok", checks: { database: "ok", signing_keys: "ok", shutting_down: false } });
});

test("a flood from one address is limited on every instance at once", async () => {
  const [a, b] = [instanceNamed("a"), instanceNamed("b")];
  const l = await license();
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) statuses.push((await fetch(challengeUrl((i % 2 ? b : a).api, l), { method: "POST" })).status);
  expect(statuses).toEqual(Array(20).fill(200));
  for (const instance of [a, b]) {
    const refused = await fetch(challengeUrl(instance.api, l), { method: "POST" });
    expect(refused.status, instance.name).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await refused.json()).error).toBe("temporarily_unavailable");
  }
});

test("X-Forwarded-For is believed only from trusted proxies", async () => {
  const [a, b] = [instanceNamed("a"), instanceNamed("b")];
  const l = await license();
  // a trusts loopback proxies: a forwarded address has a budget (and an audit trail) of its own.
  const viaProxy = await fetch(challengeUrl(a.api, l), { method: "POST", headers: { "X-Forwarded-For": "198.51.100.7" } });
  expect(viaProxy.status).toBe(200);
  // b trusts no proxy: the header is ignored, and the caller's own (exhausted) budget applies.
  const spoofed = await fetch(challengeUrl(b.api, l), { method: "POST", headers: { "X-Forwarded-For": "198.51.100.8" } });
  expect(spoofed.status).toBe(429);

  for (const [instance, forwarded] of [
    [a, "198.51.100.9"],
    [b, "198.51.100.10"],
  ] as const) {
    await fetch(`${instance.api}/auth/web3/submit_challenge`, {
      method: "POST",
      headers: { "X-Forwarded-For": forwarded, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        client_id: l.clientId,
        grant_type: "authorization_code",
        state: "unknown",
        domain: l.domain,
        signature: "0x00",
      }),
    });
  }
  await expect
    .poll(async () => (await db.auditEvent.findMany({ where: { clientId: l.clientId, action: "token.failed" } })).map((e) => e.ip).sort())
    .toHaveLength(2);
  const ips = (await db.auditEvent.findMany({ where: { clientId: l.clientId, action: "token.failed" } })).map((e) => e.ip);
  expect(ips).toContain("198.51.100.9");
  expect(ips).not.toContain("198.51.100.10");
});

test("metrics in the Prometheus format, on their own port or behind a token", async () => {
  const [a, c] = [instanceNamed("a"), instanceNamed("c")];
  const l = await license();
  const { state, challenge } = await (await fetch(challengeUrl(c.url, l), { method: "POST" })).json();
  const signature = await l.owner.signMessage({ message: challenge });
  const submitted = await fetch(`${c.url}/auth/web3/submit_challenge`, {
    method: "POST",
    body: new URLSearchParams({ client_id: l.clientId, state, grant_type: "authorization_code", domain: l.domain, signature }),
  });
  expect(submitted.status).toBe(200);

  // c: /metrics on the main port, only with METRICS_TOKEN.
  expect((await fetch(`${c.url}/metrics`)).status).toBe(401);
  expect((await fetch(`${c.url}/metrics`, { headers: { Authorization: "Bearer wrong-token-of-some-length" } })).status).toBe(401);
  const scraped = await fetch(`${c.url}/metrics`, { headers: { Authorization: `Bearer ${metricsToken}` } });
  expect(scraped.status).toBe(200);
  expect(scraped.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await scraped.text();
  expect(text).toMatch(/^keyfob_requests_total\{endpoint="submit_challenge",outcome="success"\} [1-9]/m);
  expect(text).toMatch(/^keyfob_request_duration_seconds_bucket\{le="0\.5",endpoint="generate_challenge"\} [1-9]/m);
  expect(text).toMatch(/^keyfob_tokens_issued_total\{flow="wallet_signature",connector="web3"\} [1-9]/m);
  expect(text).toMatch(/^keyfob_signature_checks_total\{kind="wallet",result="valid"\} [1-9]/m);
  expect(text).toMatch(/^keyfob_db_pool_connections\{state="total"\} \d+/m);
  expect(text).toMatch(/^keyfob_signing_key_age_seconds\{kid="[0-9a-f]{40}",status="current"\} \d+/m);
  expect(text).toMatch(/^process_resident_memory_bytes \d+/m);

  // a: a metrics port of its own; the main port has no /metrics without a token.
  expect((await fetch(`${a.url}/metrics`)).status).toBe(404);
  const own = await (await fetch(`http://localhost:${metricsPort}/metrics`)).text();
  expect(own).toMatch(/^keyfob_rate_limited_total\{endpoint="generate_challenge",limit="ip"\} [1-9]/m);
  expect((await fetch(`http://localhost:${metricsPort}/anything-else`)).status).toBe(404);
});

test("stdout is the JSON log alone: an access line per request under its X-Request-Id, a page's lines too", async () => {
  const logged = await startInstance("logs", { RATE_LIMIT_PER_IP: "off" });
  await ready(logged);
  const page = await fetch(`${logged.url}/auth?client_id=nobody&response_type=code&state=query-secret`, {
    headers: { "X-Request-Id": "ops-page-1" },
  });
  expect(page.headers.get("x-request-id")).toBe("ops-page-1");
  const discovery = await fetch(`${logged.url}/.well-known/openid-configuration`, { headers: { "X-Request-Id": "ops-discovery-1" } });
  expect(discovery.headers.get("x-request-id")).toBe("ops-discovery-1");
  logged.process.kill("SIGTERM");
  expect(await logged.exited).toBe(0);
  const lines = logged.stdout
    .join("")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines.filter((line) => line.request_id === "ops-page-1")).toEqual([
    expect.objectContaining({ msg: "request refused", endpoint: "authorize" }),
    expect.objectContaining({ msg: "request", method: "GET", route: "authorize", status: page.status }),
  ]);
  expect(lines.filter((line) => line.request_id === "ops-discovery-1")).toEqual([
    expect.objectContaining({ msg: "request", route: "discovery", status: 200 }),
  ]);
  expect(logged.stdout.join("")).not.toContain("query-secret");
  // The banner is for people, on stderr.
  expect(logged.output.join("")).toContain(`Keyfob: ${logged.url}`);
});

test("SIGTERM finishes the requests in flight, writes their audit events, and exits 0", async () => {
  const c = instanceNamed("c");
  const l = await license();
  const handshakes = await Promise.all(
    Array.from({ length: 20 }, async () => {
      const { state, challenge } = await (await fetch(challengeUrl(c.url, l), { method: "POST" })).json();
      return { state, signature: await l.owner.signMessage({ message: challenge }) };
    }),
  );
  const inFlight = handshakes.map(({ state, signature }) =>
    fetch(`${c.url}/auth/web3/submit_challenge`, {
      method: "POST",
      body: new URLSearchParams({ client_id: l.clientId, state, grant_type: "authorization_code", domain: l.domain, signature }),
    }).then(
      (r) => r.status,
      (error: Error) => `failed: ${error.message}`,
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 50)); // the requests are on the wire
  c.process.kill("SIGTERM");
  expect(await Promise.all(inFlight)).toEqual(Array(20).fill(200));
  expect(await c.exited).toBe(0);
  expect(c.output.join("")).toContain('"msg":"shutting down"');
  // Every token issued before the exit is in the audit log: the buffer was written on the way out.
  expect(await db.auditEvent.count({ where: { clientId: l.clientId, action: "token.issued" } })).toBe(20);
  // And it no longer accepts connections.
  expect(
    await fetch(`${c.url}/healthz/live`).then(
      () => "answered",
      () => "refused",
    ),
  ).toBe("refused");
});
