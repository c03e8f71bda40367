/**
 * The client cache (lib/clients/cache.ts) across instances, on a real PostgreSQL of its own shared
 * by two Keyfob instances (each with its own pool, cache and listening connection, as two servers
 * behind a balancer). Instance B keeps clients in memory; whatever changes a client (instance A,
 * plain SQL) is effective on B from its next request: the consuming statement checks the client
 * again (lib/store), and B's cache drops the entry when the trigger's NOTIFY arrives
 * (a migration; lib/store/changes.ts). While B's listening connection is down it caches
 * nothing; once it is back, it caches again.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { CLIENT_CHANNEL } from "@/lib/clients/cache";
import { addAllowedOrigin, addRedirectUri, createClient, rotateClientSecret, setClientEnabled, updateClient } from "@/lib/clients/registry";
import { loadConfig, type Config } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { authenticateClient, cachedClients, clientSecretHash } from "@/lib/oauth/client-auth";
import { opaqueDigest } from "@/lib/oauth/opaque";
import { readParams } from "@/lib/oauth/params";
import { within } from "./support/cli";
import { connectionPool, emptyDatabase } from "./support/database";
import { ISSUER } from "./support/flow-a";
import { authorizeQuery, FORM, google, pkce, type App } from "./support/flow-b";
import { route } from "./support/routes";
import { assertionVerifier } from "@/lib/http/routes";

let config: Config;
let a: Keyfob;
let b: Keyfob;
/** A connection of the test's own, for plain SQL. */
let sql: pg.Client;
/** How many times each client id was read from the database by B's cache. */
const loadsOnB = new Map<string, number>();
/** What B's listening connection went through, as one more subscriber sees it. */
const probe = { notified: [] as string[], lost: 0, listening: 0 };

beforeAll(async () => {
  const url = await emptyDatabase("client_cache_test");
  await migrateDatabase(url);
  config = { ...loadConfig(process.env), databaseUrl: url, recoveryThreads: 0 };
  a = createKeyfob(config);
  b = createKeyfob(config);
  sql = new pg.Client({ connectionString: url });
  await sql.connect();
  await Promise.all([a.keys.refresh(), b.keys.refresh()]);

  const query = connectionPool(b).query.bind(connectionPool(b)) as (...args: unknown[]) => unknown;
  vi.spyOn(connectionPool(b), "query").mockImplementation(((...args: unknown[]) => {
    const statement = args[0] as { name?: string; values?: unknown[] } | undefined;
    if (statement?.name === "keyfob_client")
      loadsOnB.set(String(statement.values?.[0]), (loadsOnB.get(String(statement.values?.[0])) ?? 0) + 1);
    return query(...args);
  }) as never);
  b.notifications.subscribe(CLIENT_CHANNEL, {
    notified: (id) => probe.notified.push(id),
    lost: () => probe.lost++,
    listening: () => probe.listening++,
  });
});

afterAll(async () => {
  vi.restoreAllMocks();
  await sql?.end();
  await a?.close();
  await b?.close();
});

/** A confidential client registered through instance A. */
async function register(): Promise<App & { secret: string }> {
  const client = await createClient(a.store, { name: "Cached client" });
  const redirectUri = `https://cache-${client.id.slice(3, 11).toLowerCase()}.example.com/cb`;
  await addRedirectUri(a.store, client.id, redirectUri);
  return { clientId: client.id, redirectUri, secret: await rotateClientSecret(a, client.id), pkce: pkce() };
}

/** An authorization code for `app` (a Google login), from instance A. */
async function code(app: App): Promise<string> {
  const start = await startAuthorization(a, authorizeQuery(app, { state: "s", nonce: "n" }));
  if (start.kind !== "login") throw new Error(`expected the login page, got ${JSON.stringify(start)}`);
  return new URL((await completeAuthorization(a, start.interactionId, { identity: google() })).location).searchParams.get("code")!;
}

const basic = (app: App, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`;

/** POST /token on instance `k`: the code exchange, authenticated with Basic credentials. */
async function exchange(k: Keyfob, app: App, authorizationCode: string, secret = app.secret!) {
  const request = new Request(`${ISSUER}/token`, {
    method: "POST",
    headers: { ...FORM, authorization: basic(app, secret) },
    body: new URLSearchParams({ grant_type: "authorization_code", code: authorizationCode, redirect_uri: app.redirectUri }),
  });
  const response = await route("/token", () => k)(request);
  const body = await response.json();
  return {
    status: response.status,
    error: body.error as string | undefined,
    description: body.error_description as string | undefined,
    accessToken: body.access_token as string | undefined,
  };
}

/** POST /token with grant_type=client_credentials on instance `k`, as /token dispatches it. */
async function adminToken(k: Keyfob, app: App) {
  const request = new Request(`${ISSUER}/token`, {
    method: "POST",
    headers: { ...FORM, authorization: basic(app, app.secret!) },
    body: "grant_type=client_credentials",
  });
  const response = await route("/token", () => k)(request);
  const body = await response.json();
  return { status: response.status, error: body.error as string | undefined, description: body.error_description as string | undefined };
}

/** Whether instance `k` authenticates `app` with `secret`, the way /token does (its client cache). */
async function authenticates(k: Keyfob, app: App, secret = app.secret!): Promise<boolean> {
  const request = new Request(`${ISSUER}/token`, {
    method: "POST",
    headers: { ...FORM, authorization: basic(app, secret) },
    body: "grant_type=authorization_code",
  });
  return authenticateClient(cachedClients(k.clients), request, await readParams(request), k.clock.now(), assertionVerifier(k)).then(
    () => true,
    (error: { code?: string }) => {
      if (error.code !== "invalid_client") throw error;
      return false;
    },
  );
}

const loads = (app: App) => loadsOnB.get(app.clientId) ?? 0;

/** How many times B's cache reads the client from the database for `lookups` lookups in a row. */
async function queriesFor(app: App, lookups = 3): Promise<number> {
  const before = loads(app);
  for (let i = 0; i < lookups; i++) await b.clients.get(app.clientId);
  return loads(app) - before;
}

/**
 * Until B serves `app` from its cache (its listening connection up, the entry loaded), after B
 * heard every change made so far: PostgreSQL delivers notifications in commit order, so once B
 * hears a marker sent now, no earlier change can still drop the entry.
 */
async function cachedOnB(app: App) {
  // Sent again until heard: a marker sent before B's LISTEN took effect is never delivered.
  const marker = `marker-${randomUUID()}`;
  await within(5_000, async () => {
    if (probe.notified.includes(marker)) return true;
    await sql.query("SELECT pg_notify($1, $2)", [CLIENT_CHANNEL, marker]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    return probe.notified.includes(marker);
  });
  await within(5_000, async () => (await queriesFor(app, 2)) === 0);
}

/** Whether a token was recorded for the code, and whether the code is spent. */
async function codeState(authorizationCode: string) {
  const codeHash = opaqueDigest(authorizationCode);
  const { rows } = await sql.query<{ tokens: number; used: boolean }>(
    "SELECT (SELECT count(*)::int FROM issued_tokens WHERE code_hash = $1) AS tokens, (SELECT used_at IS NOT NULL FROM authorization_codes WHERE code_hash = $1) AS used",
    [codeHash],
  );
  return rows[0];
}

/** Plain SQL that fires no trigger (a replica's session): a change B cannot hear of. */
async function unheard(statement: string, values: unknown[]) {
  await sql.query("SET session_replication_role = replica");
  try {
    await sql.query(statement, values);
  } finally {
    await sql.query("SET session_replication_role = DEFAULT");
  }
}

describe("the client cache across two instances", () => {
  it("B reads a client once, then serves /token and lookups from memory", async () => {
    const app = await register();
    await cachedOnB(app);
    const authorizationCode = await code(app);
    const before = loads(app);
    expect(await exchange(b, app, authorizationCode)).toMatchObject({ status: 200, accessToken: expect.any(String) });
    expect(await queriesFor(app, 5)).toBe(0);
    expect(loads(app)).toBe(before);
    // An unknown id is cached too: a burst naming it costs one query.
    const unknown = { ...app, clientId: "kf_unknown_client_for_the_cache" };
    expect(await queriesFor(unknown, 3)).toBe(1);
  });

  it("A disables the client: B refuses it on the very next /token request, drops the entry, and takes it again once re-enabled", async () => {
    const app = await register();
    await cachedOnB(app);
    const pending = await code(app);

    await setClientEnabled(a.store, app.clientId, false);
    expect(await exchange(b, app, pending)).toMatchObject({
      status: 401,
      error: "invalid_client",
      description: "unknown or disabled client",
    });
    expect(await codeState(pending)).toEqual({ tokens: 0, used: false });
    await within(2_000, async () => !(await authenticates(b, app)));
    expect(probe.notified).toContain(app.clientId);

    await setClientEnabled(a.store, app.clientId, true);
    await within(2_000, () => authenticates(b, app));
    expect(await exchange(b, app, pending)).toMatchObject({ status: 200, accessToken: expect.any(String) });
    expect(await codeState(pending)).toEqual({ tokens: 1, used: true });
    await cachedOnB(app);
  });

  it("A rotates the secret: B refuses the old one on the very next /token request and takes the new one once it has heard", async () => {
    const app = await register();
    await cachedOnB(app);
    const pending = await code(app);

    const secret = await rotateClientSecret(a, app.clientId);
    expect(await exchange(b, app, pending)).toMatchObject({ status: 401, error: "invalid_client" });
    expect(await codeState(pending)).toEqual({ tokens: 0, used: false });
    await within(2_000, () => authenticates(b, app, secret));
    expect(await authenticates(b, app)).toBe(false);
    expect(await exchange(b, app, pending, app.secret)).toMatchObject({
      status: 401,
      error: "invalid_client",
      description: expect.stringMatching(/^client authentication failed: wrong client_secret \(client_secret_/),
    });
    expect(await exchange(b, app, pending, secret)).toMatchObject({ status: 200, accessToken: expect.any(String) });
  });

  it("a change B has not heard of (no NOTIFY) is still refused by the statement that consumes the code", async () => {
    const app = await register();
    await cachedOnB(app);
    const pending = await code(app);

    // Disabled behind B's back: its cache still says enabled, the consuming statement does not.
    await unheard("UPDATE clients SET enabled = false WHERE id = $1", [app.clientId]);
    expect(await authenticates(b, app)).toBe(true);
    expect(await exchange(b, app, pending)).toMatchObject({
      status: 401,
      error: "invalid_client",
      description: "unknown or disabled client",
    });
    expect(await codeState(pending)).toEqual({ tokens: 0, used: false });

    // A secret replaced behind B's back: the old secret passes the cache, not the statement.
    await unheard("UPDATE clients SET enabled = true, secret_hash = $2 WHERE id = $1", [app.clientId, clientSecretHash("a-new-secret")]);
    expect(await authenticates(b, app)).toBe(true);
    expect(await exchange(b, app, pending)).toMatchObject({
      status: 401,
      error: "invalid_client",
      description: "client authentication failed: the client's secret was replaced while the request was handled",
    });
    expect(await codeState(pending)).toEqual({ tokens: 0, used: false });
    expect(await authenticates(b, app, "a-new-secret")).toBe(false); // the stale entry

    // The announcement alone (what the trigger sends) makes B read the client again.
    await sql.query("SELECT pg_notify($1, $2)", [CLIENT_CHANNEL, app.clientId]);
    await within(2_000, () => authenticates(b, app, "a-new-secret"));
    expect(await exchange(b, app, pending, "a-new-secret")).toMatchObject({ status: 200 });
  });

  it("client_credentials: a management API withdrawn unheard is refused by the statement that records the token", async () => {
    const app = await register();
    await updateClient(a.store, app.clientId, { managementApi: true, managementScopes: ["keyfob:admin"] });
    await cachedOnB(app);
    expect((await adminToken(b, app)).status).toBe(200);

    await unheard("UPDATE clients SET management_api = false WHERE id = $1", [app.clientId]);
    expect((await b.clients.get(app.clientId))?.managementScopes).toEqual(["keyfob:admin"]); // the stale entry
    const refused = await adminToken(b, app);
    expect(refused).toMatchObject({
      status: 400,
      error: "unauthorized_client",
      description: expect.stringMatching(/not allowed the management API/),
    });
    const { rows } = await sql.query("SELECT count(*)::int AS n FROM issued_tokens WHERE client_id = $1", [app.clientId]);
    expect(rows[0].n).toBe(1); // only the token issued before
  });

  it("hears plain SQL changes to clients, redirect_uris and allowed_origins (the migration's trigger)", async () => {
    const app = await register();
    await cachedOnB(app);

    await sql.query("UPDATE clients SET enabled = false WHERE id = $1", [app.clientId]);
    await within(2_000, async () => (await b.clients.get(app.clientId))?.enabled === false);
    expect(await authenticates(b, app)).toBe(false);
    await sql.query("UPDATE clients SET enabled = true WHERE id = $1", [app.clientId]);
    await within(2_000, () => authenticates(b, app));
    await cachedOnB(app);

    await sql.query("INSERT INTO redirect_uris (client_id, uri) VALUES ($1, 'https://added-by-sql.example.org/cb')", [app.clientId]);
    await within(2_000, async () => (await b.clients.get(app.clientId))!.origins.has("https://added-by-sql.example.org"));
    await cachedOnB(app);

    await addAllowedOrigin(a.store, app.clientId, "https://spa.example.net");
    await within(2_000, async () => (await b.clients.get(app.clientId))!.origins.has("https://spa.example.net"));
    await sql.query("DELETE FROM allowed_origins WHERE client_id = $1", [app.clientId]);
    await within(2_000, async () => !(await b.clients.get(app.clientId))!.origins.has("https://spa.example.net"));

    await sql.query("DELETE FROM clients WHERE id = $1", [app.clientId]);
    await within(2_000, async () => (await b.clients.get(app.clientId)) === undefined);
  });

  it("caches nothing while the listening connection is down, so a change by SQL meanwhile is effective; caches again once it is back", async () => {
    const app = await register();
    await cachedOnB(app);
    const pending = await code(app);
    const { lost, listening } = probe;

    // Both instances' LISTEN connections end, as in a database failover or a network cut.
    const { rows } = await sql.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()",
    );
    expect(rows.length).toBeGreaterThanOrEqual(2); // A's and B's
    await sql.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [rows.map((row) => row.pid)]);
    await within(5_000, async () => probe.lost > lost);

    // Every lookup queries; a change nobody can hear of is seen at once.
    expect(await queriesFor(app, 3)).toBe(3);
    await sql.query("UPDATE clients SET enabled = false WHERE id = $1", [app.clientId]);
    expect(await authenticates(b, app)).toBe(false);
    expect(await exchange(b, app, pending)).toMatchObject({
      status: 401,
      error: "invalid_client",
      description: "unknown or disabled client",
    });
    await sql.query("UPDATE clients SET enabled = true WHERE id = $1", [app.clientId]);
    expect(await authenticates(b, app)).toBe(true);
    // All of that while B was still deaf (it reconnects after a second).
    expect(probe.listening).toBe(listening);

    // Reconnected: B caches again, and hears changes on its new connection.
    await within(10_000, async () => probe.listening > listening);
    await cachedOnB(app);
    expect(await queriesFor(app, 3)).toBe(0);
    const { rows: after } = await sql.query(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> ALL($1::int[])",
      [rows.map((row) => row.pid)],
    );
    expect(after.length).toBeGreaterThanOrEqual(1);
    await sql.query("UPDATE clients SET enabled = false WHERE id = $1", [app.clientId]);
    await within(2_000, async () => !(await authenticates(b, app)));
    await sql.query("UPDATE clients SET enabled = true WHERE id = $1", [app.clientId]);
    await within(2_000, () => authenticates(b, app));
    expect(await exchange(b, app, pending)).toMatchObject({ status: 200 });
  });
});
