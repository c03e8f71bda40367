/**
 * The storage contract: what Keyfob promises of its database whatever sits between them, run as
 * ONE suite against each way production reaches PostgreSQL (as Dex runs one suite against every
 * storage backend): (a) directly, hearing changes by LISTEN/NOTIFY, and (b) through PgBouncer in
 * transaction mode with prepared statements off and no direct connection, hearing changes by
 * polling. Each backend gets a database of its own and two Keyfob instances on it, each with its
 * own pool and caches, as two servers behind a balancer.
 *
 * The contract (lib/store/contract.ts declares it operation by operation; here, what concurrency,
 * the pooler and the caches could break): single use under 50-way concurrency across both
 * instances (a Flow A state, an authorization code, a refresh token); revocation seen at once by
 * the other instance (an access token, a signer, a refresh family); a rate limit shared exactly;
 * one `token.issued` audit row per issued token and every refusal recorded; and caches
 * invalidated across instances within seconds (a disabled client, a revoked signing key).
 */
import { randomBytes } from "node:crypto";
import { decodeJwt, decodeProtectedHeader } from "jose";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteClient, revokeSigner, setClientEnabled } from "@/lib/clients/registry";
import { loadConfig, type Config } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { POLL_MS } from "@/lib/store/changes";
import type { Store } from "@/lib/store/contract";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { grantRedemption } from "@/lib/actions/exchange-code";
import { statementBatchSize } from "@/lib/metrics";
import { opaqueDigest } from "@/lib/oauth/opaque";
import { expectedCodeChallenge } from "@/lib/oauth/pkce";
import { enforceRateLimit } from "@/lib/rate-limit";
import { within } from "./support/cli";
import { emptyDatabase, tables } from "./support/database";
import { challengeParams, enableSigner, registerLicense, submitParams, type License } from "./support/flow-a";
import { authorize, basic, google, registerApp, tokenRequest, type App } from "./support/flow-b";
import { startPgbouncer } from "./support/pgbouncer";
import { formPost, routesOn } from "./support/routes";

/**
 * Every direct use of storage in this suite, in one place: the registry's functions take it, and
 * the assertions count rows the protocol gives no other view of.
 */
const storage = {
  of: (k: Keyfob): Store => k.store,
  issuedTokens: (k: Keyfob, clientId: string) => tables(k).issuedToken.count({ where: { clientId } }),
  auditEvents: (k: Keyfob, clientId: string, action: string) => tables(k).auditEvent.count({ where: { clientId, action } }),
  /** The rows that carry a client's id without a foreign key: its token records, session links and challenges. */
  async unlinkedRows(k: Keyfob, clientId: string) {
    const where = { where: { clientId } };
    const counts = await Promise.all([
      tables(k).issuedToken.count(where),
      tables(k).loginSessionClient.count(where),
      tables(k).challenge.count(where),
    ]);
    return counts.reduce((sum, n) => sum + n, 0);
  },
  /** The login sessions a client got tokens in (login_session_clients, no foreign key to the session either). */
  sessionsOfClient: async (k: Keyfob, clientId: string) =>
    (await tables(k).loginSessionClient.findMany({ where: { clientId }, select: { sessionId: true } })).map((l) => l.sessionId),
  /** The account a login session is of. */
  accountOfSession: async (k: Keyfob, idHash: string) => (await tables(k).loginSession.findUniqueOrThrow({ where: { idHash } })).accountId,
  /** Ends a login session's lifetime now, so that the sweep deletes it. */
  expireSession: (k: Keyfob, idHash: string, at: Date) => tables(k).loginSession.update({ where: { idHash }, data: { expiresAt: at } }),
  /** Deletes only the client's row: what an issuance that raced the client's deletion leaves behind. */
  deleteClientRowOnly: (k: Keyfob, clientId: string) => tables(k).$executeRaw`DELETE FROM clients WHERE id = ${clientId}`,
};

type Backend = {
  name: string;
  /** How long another instance may take to hear of a change (the cache entries live 60 s otherwise). */
  hearsWithinMs: number;
  /** What the configuration must say, so that the suite runs on what it claims to. */
  config: Partial<Config>;
  /** A migrated database of its own: the environment to configure Keyfob with, and how to stop what was started. */
  open(): Promise<{ env: Record<string, string>; stop(): Promise<void> }>;
};

const BACKENDS: Backend[] = [
  {
    name: "direct PostgreSQL",
    hearsWithinMs: 2_000,
    config: { databasePooled: false, preparedStatements: true },
    async open() {
      const url = await emptyDatabase("store_contract_direct");
      await migrateDatabase(url);
      return { env: { DATABASE_URL: url }, stop: async () => undefined };
    },
  },
  {
    name: "PgBouncer in transaction mode",
    hearsWithinMs: POLL_MS * 3,
    config: { databasePooled: true, preparedStatements: false, databaseDirectUrl: undefined },
    async open() {
      const direct = await emptyDatabase("store_contract_pooled");
      // A small server pool: consecutive transactions of one client connection land on different server connections.
      const pooler = await startPgbouncer(direct, { poolSize: 3 });
      const url = pooler.through(direct);
      await migrateDatabase(url);
      return { env: { DATABASE_URL: url, DATABASE_POOLED: "true" }, stop: () => pooler.stop() };
    },
  },
];

/** The one success among `results`, every other an invalid_grant. */
function onlyWinner(results: { status: number; body: Record<string, string> }[]) {
  const winners = results.filter((r) => r.status === 200);
  expect(winners).toHaveLength(1);
  expect(results.filter((r) => r.status !== 200).map((r) => [r.status, r.body.error])).toEqual(
    Array(results.length - 1).fill([400, "invalid_grant"]),
  );
  return winners[0].body;
}

/** How many times a batched statement ran so far, in this process (lib/store/batch.ts). */
async function batchedStatements(statement: string): Promise<number> {
  const { values } = await statementBatchSize.get();
  return values.find((v) => v.metricName === "keyfob_statement_batch_size_count" && v.labels.statement === statement)?.value ?? 0;
}

/** Runs `n` requests at once, alternating between the instances; their statuses and bodies. */
async function race(instances: Keyfob[], n: number, send: (k: Keyfob) => Promise<Response>) {
  const responses = await Promise.all(Array.from({ length: n }, (_, i) => send(instances[i % instances.length])));
  return Promise.all(responses.map(async (response) => ({ status: response.status, body: await response.json() })));
}

describe.each(BACKENDS)("storage contract: $name", (backend) => {
  let stop: () => Promise<void>;
  /** How the instances reach the database (through PgBouncer for the pooled backend). */
  let databaseUrl: string;
  let a: Keyfob;
  let b: Keyfob;
  /** A resource server: may introspect every client's tokens. */
  let resourceServer: App;
  /** What the concurrency cases issued and refused, per client, for the audit case. */
  const outcomes: { clientId: string; issued: number; refused: number }[] = [];

  beforeAll(async () => {
    const opened = await backend.open();
    stop = opened.stop;
    databaseUrl = opened.env.DATABASE_URL;
    const config = { ...loadConfig({ ...process.env, ...opened.env }), recoveryThreads: 0 };
    expect(config).toMatchObject(backend.config);
    a = createKeyfob(config);
    b = createKeyfob(config);
    await Promise.all([a.keys.signingKey(), b.keys.signingKey()]);
    resourceServer = await registerApp({ confidential: true, settings: { resourceServer: true }, on: a });
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await stop?.();
  });

  /** Flow A on `k` for `license`, signed by `signer` (default: its owner): the response. */
  async function flowA(k: Keyfob, license: License, signer = license.owner) {
    const { state, challenge } = await challengeOn(k, license);
    return routesOn(k).submitChallenge(
      formPost("/auth/web3/submit_challenge", submitParams(license, state, await signer.signMessage({ message: challenge }))),
    );
  }
  /** generate_challenge on `k` for `license`, for its owner's address. */
  async function challengeOn(k: Keyfob, license: License): Promise<{ state: string; challenge: string }> {
    const response = await routesOn(k).generateChallenge(formPost("/auth/web3/generate_challenge", challengeParams(license)));
    expect(response.status, await response.clone().text()).toBe(200);
    return response.json();
  }
  /** An authorization code for `app` from a Google login on `k`. */
  const codeFor = async (k: Keyfob, app: App, scope = "openid email") =>
    (await authorize(app, google(), { scope }, k)).searchParams.get("code")!;
  const exchange = (k: Keyfob, app: App, code: string) => routesOn(k).token(tokenRequest(app, { code }));
  const refresh = (k: Keyfob, app: App, refreshToken: string) =>
    routesOn(k).token(tokenRequest(app, { grant_type: "refresh_token", refresh_token: refreshToken }));
  /** Introspection of `token` on `k`, by the resource server: whether it is active. */
  async function active(k: Keyfob, token: string): Promise<boolean> {
    const response = await routesOn(k).introspect(formPost("/token/introspect", { token }, { authorization: basic(resourceServer) }));
    expect(response.status).toBe(200);
    return (await response.json()).active;
  }

  describe("single use under 50-way concurrency across both instances", () => {
    it("redeems a Flow A state once of 50 submissions, 25 on each instance", async () => {
      const license = await registerLicense({ on: a });
      const { state, challenge } = await challengeOn(a, license);
      const params = submitParams(license, state, await license.owner.signMessage({ message: challenge }));
      const results = await race([a, b], 50, (k) => routesOn(k).submitChallenge(formPost("/auth/web3/submit_challenge", params)));
      const winner = onlyWinner(results);
      expect(await storage.issuedTokens(a, license.clientId)).toBe(1);
      // Flow A has no reuse revocation: the winner's token stays good on both instances.
      expect([await active(a, winner.access_token), await active(b, winner.access_token)]).toEqual([true, true]);
      outcomes.push({ clientId: license.clientId, issued: 1, refused: 49 });
    });

    it("exchanges an authorization code once of 50 concurrent exchanges; the reuse revokes what it gave", async () => {
      const app = await registerApp({ on: a });
      const code = await codeFor(a, app);
      const results = await race([a, b], 50, (k) => exchange(k, app, code));
      const winner = onlyWinner(results);
      expect(await storage.issuedTokens(a, app.clientId)).toBe(1);
      // A code presented again revokes the tokens issued from it (RFC 6749 4.1.2), on either instance.
      expect([await active(a, winner.access_token), await active(b, winner.access_token)]).toEqual([false, false]);
      outcomes.push({ clientId: app.clientId, issued: 1, refused: 49 });
    });

    it("rotates a refresh token once of 50 concurrent uses; the others are reuse and revoke the family", async () => {
      const app = await registerApp({ settings: { refreshTokensAllowed: true }, on: a });
      const first = await exchange(a, app, await codeFor(a, app, "openid email offline_access"));
      expect(first.status).toBe(200);
      const { refresh_token: refreshToken } = await first.json();
      const results = await race([a, b], 50, (k) => refresh(k, app, refreshToken));
      const winner = onlyWinner(results);
      expect(await storage.issuedTokens(a, app.clientId)).toBe(2); // the exchange's and the winner's
      // A client must not send one refresh token twice: the winner's tokens went with the family.
      expect((await refresh(b, app, winner.refresh_token)).status).toBe(400);
      expect([await active(a, winner.access_token), await active(b, winner.access_token)]).toEqual([false, false]);
      expect(await storage.auditEvents(a, app.clientId, "refresh_token.reused")).toBe(49);
      outcomes.push({ clientId: app.clientId, issued: 2, refused: 50 }); // the 49 losers, and the winner's token after them
    });
    it("with REFRESH_TOKEN_REUSE_GRACE, rotates a refresh token once of 50 concurrent uses and answers each with its one successor", async () => {
      const graced = [a, b].map((k) => createKeyfob({ ...k.config, refreshTokenReuseGrace: 10 }));
      try {
        await Promise.all(graced.map((k) => k.keys.signingKey()));
        const app = await registerApp({ settings: { refreshTokensAllowed: true }, on: a });
        const first = await exchange(a, app, await codeFor(a, app, "openid email offline_access"));
        const { refresh_token: refreshToken } = await first.json();
        const results = await race(graced, 50, (k) => refresh(k, app, refreshToken));
        expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
        const successors = new Set(results.map((r) => r.body.refresh_token));
        expect(successors.size).toBe(1);
        expect(await tables(a).refreshToken.count({ where: { clientId: app.clientId } })).toBe(2);
        expect(await storage.issuedTokens(a, app.clientId)).toBe(51); // the exchange's and one per use
        const [successor] = successors;
        expect([await active(a, successor), await active(b, results[49].body.access_token)]).toEqual([true, true]);
        outcomes.push({ clientId: app.clientId, issued: 51, refused: 0 });
      } finally {
        await Promise.all(graced.map((k) => k.close()));
      }
    });
  });

  describe("group commit: concurrent requests in one statement, each with its own outcome", () => {
    it("exchanges 20 codes of 20 logins at once in fewer statements, each for its own login; a wrong verifier refuses only its own", async () => {
      const app = await registerApp({ on: a });
      const subjects = Array.from({ length: 20 }, (_, n) => `batched-${n}-${randomBytes(4).toString("hex")}`);
      const codes = await Promise.all(
        subjects.map(async (subject) => (await authorize(app, google(subject), { scope: "openid email" }, a)).searchParams.get("code")!),
      );
      const wrongVerifier = await codeFor(a, app);
      const statements = await batchedStatements("redeem_codes");
      const responses = await Promise.all([
        ...codes.map((code) => exchange(a, app, code)),
        routesOn(a).token(tokenRequest(app, { code: wrongVerifier, code_verifier: randomBytes(32).toString("base64url") })),
      ]);
      expect(await batchedStatements("redeem_codes")).toBeLessThan(statements + responses.length);
      const bodies = await Promise.all(responses.map((response) => response.json()));
      expect(responses.map((response) => response.status)).toEqual([...codes.map(() => 200), 400]);
      expect(bodies.slice(0, -1).map((body) => decodeJwt(body.id_token).email)).toEqual(
        subjects.map((subject) => `${subject}@example.com`),
      );
      expect(bodies.at(-1)).toMatchObject({ error: "invalid_grant" });
      expect(await storage.issuedTokens(a, app.clientId)).toBe(codes.length);
      expect(await storage.auditEvents(a, app.clientId, "token.issued")).toBe(codes.length);
    });

    it("stores and consumes the challenges of 10 licenses at once, in fewer statements: each token is its own license's", async () => {
      const licenses = await Promise.all(Array.from({ length: 10 }, () => registerLicense({ on: a })));
      const [stored, consumed] = [await batchedStatements("insert_challenges"), await batchedStatements("consume_challenges")];
      const responses = await Promise.all(licenses.map((license) => flowA(a, license)));
      expect(await batchedStatements("insert_challenges")).toBeLessThan(stored + licenses.length);
      expect(await batchedStatements("consume_challenges")).toBeLessThan(consumed + licenses.length);
      expect(responses.map((response) => response.status)).toEqual(licenses.map(() => 200));
      const audiences = await Promise.all(responses.map(async (response) => decodeJwt((await response.json()).access_token).aud));
      expect(audiences).toEqual(licenses.map((license) => license.clientId));
    });

    it("a value PostgreSQL refuses fails only its own redemption, not the others of its batch", async () => {
      const app = await registerApp({ on: a });
      const codes = await Promise.all(Array.from({ length: 6 }, () => codeFor(a, app)));
      const redeem = (code: string, redirectUri = app.redirectUri) => {
        const redemption = grantRedemption(a, { id: app.clientId, confidential: false }, undefined);
        return storage.of(a).authorizationCodes.redeem(
          {
            ...redemption,
            codeHash: opaqueDigest(code),
            redirectUri,
            verifierChallenge: expectedCodeChallenge(app.pkce.verifier),
            confidential: false,
            proofJkt: null,
            resource: null,
          },
          { endpoint: "token" },
          redemption.now,
        );
      };
      // The first runs alone; the rest wait for it and go as one batch, which PostgreSQL refuses for the NUL.
      const outcomes = await Promise.allSettled([...codes.slice(0, 5).map((code) => redeem(code)), redeem(codes[5], "https://x\u0000")]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "fulfilled",
        "fulfilled",
        "fulfilled",
        "rejected",
      ]);
      for (const outcome of outcomes.slice(0, 5)) expect(outcome).toMatchObject({ value: { accountId: expect.any(String) } });
      expect(await storage.issuedTokens(a, app.clientId)).toBe(5);
    });
  });

  describe("a row locked elsewhere", () => {
    it("delays only the redemption whose login session it is, not the others of its batch", { timeout: 30_000 }, async () => {
      // Security review, third round, item 9: one login session locked by a revocation under way
      // held its whole batch for as long as the lock.
      const app = await registerApp({ on: a });
      const codes = await Promise.all(Array.from({ length: 6 }, () => codeFor(a, app)));
      const lockedSession = (await tables(a).authorizationCode.findUniqueOrThrow({ where: { codeHash: opaqueDigest(codes[5]) } }))
        .sessionId!;
      const holder = new pg.Client({ connectionString: databaseUrl });
      await holder.connect();
      try {
        await holder.query("BEGIN");
        await holder.query("SELECT 1 FROM login_sessions WHERE id_hash = $1 FOR UPDATE", [lockedSession]);
        let lockedDone = false;
        // The first runs alone; the other five, the locked one among them, go as one batch.
        const [first, ...rest] = codes.map((code) => exchange(a, app, code));
        const locked = rest.pop()!.then((response) => {
          lockedDone = true;
          return response;
        });
        const others = await Promise.all([first, ...rest]);
        expect(others.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
        expect(lockedDone).toBe(false);
        await holder.query("COMMIT");
        expect((await locked).status).toBe(200);
      } finally {
        await holder.end();
      }
      expect(await storage.issuedTokens(a, app.clientId)).toBe(6);
    });
  });

  describe("revocation, seen at once by the other instance", () => {
    it("an access token revoked on one instance is inactive on the other", async () => {
      const app = await registerApp({ on: a });
      const issued = await exchange(b, app, await codeFor(b, app));
      const { access_token: accessToken } = await issued.json();
      expect(await active(b, accessToken)).toBe(true);
      expect((await routesOn(a).revoke(formPost("/token/revoke", { client_id: app.clientId, token: accessToken }))).status).toBe(200);
      expect(await active(b, accessToken)).toBe(false);
      expect(
        (await routesOn(b).userinfo(new Request("http://localhost:3000/userinfo", { headers: { authorization: `Bearer ${accessToken}` } })))
          .status,
      ).toBe(401);
    });

    it("a client deleted on one instance takes its tokens, session links and challenges with it", async () => {
      const app = await registerApp({ on: a });
      const { access_token: accessToken } = await (await exchange(b, app, await codeFor(b, app))).json();
      const license = await registerLicense({ on: a });
      expect((await flowA(b, license)).status).toBe(200);
      await challengeOn(b, license); // left unused
      for (const clientId of [app.clientId, license.clientId]) expect(await storage.unlinkedRows(a, clientId)).toBeGreaterThan(1);
      await deleteClient(storage.of(a), app.clientId);
      await deleteClient(storage.of(a), license.clientId);
      expect(await active(b, accessToken)).toBe(false);
      for (const clientId of [app.clientId, license.clientId]) expect(await storage.unlinkedRows(a, clientId)).toBe(0);
    });

    it("a login session swept, or deleted with its account, takes the clients recorded in it with it", async () => {
      const swept = await registerApp({ on: a });
      const withAccount = await registerApp({ on: a });
      for (const app of [swept, withAccount]) expect((await exchange(b, app, await codeFor(b, app))).status).toBe(200);
      const [sweptSession] = await storage.sessionsOfClient(a, swept.clientId);
      const [accountSession] = await storage.sessionsOfClient(a, withAccount.clientId);
      expect(sweptSession).not.toBe(accountSession);

      const now = new Date();
      await storage.expireSession(a, sweptSession, new Date(now.getTime() - 1_000));
      await storage.of(a).sweep({ now, cutoff: now, idleSince: new Date(0), auditBefore: new Date(0), challengesTotal: 1_000_000 });
      expect(await storage.sessionsOfClient(a, swept.clientId)).toEqual([]);
      expect(await storage.sessionsOfClient(a, withAccount.clientId)).toEqual([accountSession]);

      expect(await storage.of(b).accounts.delete(await storage.accountOfSession(a, accountSession), new Date())).toBeDefined();
      expect(await storage.sessionsOfClient(a, withAccount.clientId)).toEqual([]);
    });

    it("a token whose client is gone is inactive, as one issued while its client was being deleted", async () => {
      const app = await registerApp({ on: a });
      const { access_token: accessToken } = await (await exchange(a, app, await codeFor(a, app))).json();
      expect(await active(b, accessToken)).toBe(true);
      await storage.deleteClientRowOnly(a, app.clientId);
      expect(await storage.issuedTokens(a, app.clientId)).toBe(1);
      expect(await active(b, accessToken)).toBe(false);
    });

    it("a signer revoked on one instance is refused by the other", async () => {
      const license = await registerLicense({ on: a });
      const signer = await enableSigner(license, undefined, a);
      expect((await flowA(b, license, signer)).status).toBe(200);
      const { state, challenge } = await challengeOn(b, license); // read before the revocation
      await revokeSigner(a, license.clientId, signer.address);
      const refused = await routesOn(b).submitChallenge(
        formPost("/auth/web3/submit_challenge", submitParams(license, state, await signer.signMessage({ message: challenge }))),
      );
      expect(refused.status).toBe(400);
    });

    it("a refresh family revoked on one instance cannot be used on the other", async () => {
      const app = await registerApp({ settings: { refreshTokensAllowed: true }, on: a });
      const first = await (await exchange(a, app, await codeFor(a, app, "openid email offline_access"))).json();
      const rotated = await refresh(b, app, first.refresh_token);
      expect(rotated.status).toBe(200);
      const second = await rotated.json();
      expect(await active(a, second.refresh_token)).toBe(true);
      expect((await routesOn(a).revoke(formPost("/token/revoke", { client_id: app.clientId, token: second.refresh_token }))).status).toBe(
        200,
      );
      expect(await active(b, second.refresh_token)).toBe(false);
      expect(await active(b, second.access_token)).toBe(false);
      const refused = await refresh(b, app, second.refresh_token);
      expect([refused.status, (await refused.json()).error]).toEqual([400, "invalid_grant"]);
    });
  });

  it.each([
    { budget: "one row", max: 7, hits: 20 },
    { budget: "two shards", max: 500, hits: 530 },
  ])("counts a rate limit shared by both instances exactly ($budget: $max of $hits concurrent hits pass)", async ({ max, hits }) => {
    const key = `ip:contract-${crypto.randomUUID()}`;
    const limit = { max, windowSeconds: 60 };
    // One moment for every hit, mid-window: the count is the whole estimate, with no window rolling over.
    const now = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
    const hit = (k: Keyfob, checked = key) => enforceRateLimit(k.store, "contract", { key: checked, limit, name: "ip" }, now);
    const settled = await Promise.allSettled(Array.from({ length: hits }, (_, i) => hit(i % 2 ? b : a)));
    for (const refused of settled.filter((s) => s.status === "rejected"))
      expect((refused as PromiseRejectedResult).reason).toMatchObject({ status: 429 });
    // An instance may still hold leased hits no request took (lib/rate-limit.ts): they are the rest of the budget.
    let allowed = settled.filter((s) => s.status === "fulfilled").length;
    for (const k of [a, b])
      while (
        await hit(k).then(
          () => true,
          () => false,
        )
      )
        allowed++;
    expect(allowed).toBe(max);
    await expect(hit(a)).rejects.toMatchObject({ status: 429 });
    await expect(hit(b, `${key}-other`)).resolves.toBeUndefined();
  });

  it("records one token.issued row per token issued under concurrency, and every refusal", async () => {
    expect(outcomes).toHaveLength(4); // the concurrency cases ran
    await Promise.all([a.audit.flush(), b.audit.flush()]);
    for (const { clientId, issued, refused } of outcomes) {
      expect(await storage.issuedTokens(a, clientId), clientId).toBe(issued);
      expect(await storage.auditEvents(a, clientId, "token.issued"), clientId).toBe(issued);
      expect(await storage.auditEvents(a, clientId, "token.failed"), clientId).toBe(refused);
    }
  });

  describe("caches invalidated across instances", () => {
    it("a client disabled on one instance is refused by the other within seconds", async () => {
      const license = await registerLicense({ on: a });
      // B serves the client from its cache (the same entry twice) once its change feed is heard.
      // biome-ignore lint/suspicious/noSelfCompare: two lookups, the same object only when served from the cache
      const cached = async () => (await b.clients.get(license.clientId)) === (await b.clients.get(license.clientId));
      await within(backend.hearsWithinMs * 2, cached);
      expect((await b.clients.get(license.clientId))?.enabled).toBe(true);
      await setClientEnabled(storage.of(a), license.clientId, false);
      const took = await within(backend.hearsWithinMs, async () => (await b.clients.get(license.clientId))?.enabled === false);
      expect(took).toBeLessThan(backend.hearsWithinMs);
      const refused = await routesOn(b).generateChallenge(formPost("/auth/web3/generate_challenge", challengeParams(license)));
      expect([refused.status, (await refused.json()).error]).toEqual([401, "invalid_client"]);
    });

    it("a signing key revoked on one instance is distrusted by the other at once and no longer used by it within seconds", async () => {
      const license = await registerLicense({ on: a });
      const before = (await (await flowA(b, license)).json()).access_token;
      const kid = decodeProtectedHeader(before).kid!;
      expect((await b.keys.signingKey()).kid).toBe(kid);
      expect(await a.keys.revoke(kid, "store-contract")).toMatchObject({ outcome: "revoked" });
      expect(await active(b, before)).toBe(false);
      await within(backend.hearsWithinMs, async () => (await b.keys.signingKey()).kid !== kid);
      const after = (await (await flowA(b, license)).json()).access_token;
      expect(decodeProtectedHeader(after).kid).not.toBe(kid);
      expect([await active(a, after), await active(b, after)]).toEqual([true, true]);
    });
  });
});
