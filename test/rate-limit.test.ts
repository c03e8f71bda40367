/**
 * Abuse limits on the real route handlers and PostgreSQL: two Keyfob instances (each with its own
 * connection pool, as two processes have) share one budget per address and per authenticated
 * client, a large budget split into shards admits exactly its limit under concurrency, a request
 * that cannot be counted is refused, one caller cannot pile up unused challenges or logins, and
 * guessing user codes from many addresses neither goes unbounded nor locks a person out of /device.
 */
import { randomUUID } from "node:crypto";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { createClient, rotateClientSecret, updateClient } from "@/lib/clients/registry";
import { loadConfig, type Config } from "@/lib/config";
import { migrateDatabase } from "@/lib/db/migrate";
import { confirmUserCode, lookUpUserCode } from "@/lib/device/verification";
import { createStore } from "@/lib/store";
import { CLIENT_IP_HEADER } from "@/lib/http/client-ip";
import { protocolRoute, route, routesOn, serveWith } from "./support/routes";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { enforceRateLimit, leaseSizeFor, secondsUntilAllowed, shardsFor } from "@/lib/rate-limit";
import type { OAuthError } from "@/lib/oauth/errors";
import { challengeParams, ISSUER, registerLicense, submit, type License } from "./support/flow-a";
import { connectionPool, emptyDatabase, tables } from "./support/database";
import { FORM, registerApp } from "./support/flow-b";

const limits = (overrides: Partial<Config["rateLimits"]> = {}): Partial<Config> => ({
  rateLimits: { perIp: { max: 5, windowSeconds: 60 }, perClient: { max: 8, windowSeconds: 60 }, adminSignIn: undefined, ...overrides },
});

function instance(overrides: Partial<Config> = {}, databaseUrl = process.env.DATABASE_URL!): Keyfob {
  return createKeyfob({ ...loadConfig(), databaseUrl, recoveryThreads: 0, ...overrides });
}

const instances: Keyfob[] = [];
let a: Keyfob;
let b: Keyfob;
beforeAll(() => {
  a = instance(limits());
  b = instance(limits());
  instances.push(a, b);
});
afterAll(() => Promise.all(instances.map((k) => k.close())));

/** generate_challenge exactly as the route serves it, on one instance. */
const generateOn = (k: Keyfob) => routesOn(k).generateChallenge;

let nextAddress = 1;
/** A caller address of its own per test (TEST-NET-3), so tests do not share budgets. */
const freshIp = () => `203.0.113.${nextAddress++}`;

/** /token exactly as the route serves it, on one instance. */
const tokenOn = (k: Keyfob) => routesOn(k).token;

/** A code exchange with a code that does not exist (400 invalid_grant once counted), authenticated with `app.secret` when given. */
function tokenRequest(ip: string, app: { clientId: string; secret?: string }) {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", [CLIENT_IP_HEADER]: ip };
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code: "no-such-code",
    redirect_uri: "https://fleet.example.com/cb",
  });
  if (app.secret) headers.authorization = `Basic ${Buffer.from(`${app.clientId}:${app.secret}`).toString("base64")}`;
  else form.set("client_id", app.clientId);
  return new Request(`${ISSUER}/token`, { method: "POST", headers, body: form });
}

function request(ip: string, params: Record<string, string>) {
  return new Request(`${ISSUER}/auth/web3/generate_challenge`, {
    method: "POST",
    body: new URLSearchParams(params).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", [CLIENT_IP_HEADER]: ip },
  });
}

describe("rate limits shared by instances", () => {
  it("refuses an address over its limit on every instance, with 429 and Retry-After", async () => {
    const license = await registerLicense();
    const ip = freshIp();
    const [onA, onB] = [generateOn(a), generateOn(b)];
    for (let i = 0; i < 5; i++) expect((await (i % 2 ? onB : onA)(request(ip, challengeParams(license)))).status).toBe(200);
    for (const handler of [onA, onB]) {
      const refused = await handler(request(ip, challengeParams(license)));
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(120);
      expect(await refused.json()).toEqual({
        error: "temporarily_unavailable",
        error_description: `too many requests from this address; retry after ${retryAfter} seconds`,
        status: 429,
        message: `too many requests from this address; retry after ${retryAfter} seconds`,
      });
    }
    // Another address is not affected.
    expect((await onB(request(freshIp(), challengeParams(license)))).status).toBe(200);
  });

  it("counts bad requests too, so a flood of garbage is limited as well", async () => {
    const ip = freshIp();
    for (let i = 0; i < 5; i++) expect((await generateOn(i % 2 ? b : a)(request(ip, { client_id: "nobody" }))).status).toBe(400);
    expect((await generateOn(a)(request(ip, { client_id: "nobody" }))).status).toBe(429);
  });

  it("counts a client that authenticates against its own budget, whatever its address", async () => {
    const app = await registerApp({ confidential: true });
    const ip = freshIp();
    // One backend exchanging codes for many users from one address: past the address's 5, up to the client's 8.
    for (let i = 0; i < 8; i++) expect((await tokenOn(i % 2 ? b : a)(tokenRequest(ip, app))).status).toBe(400);
    const refused = await tokenOn(b)(tokenRequest(freshIp(), app));
    expect(refused.status).toBe(429);
    expect((await refused.json()).error_description).toMatch(/^too many requests for this client; retry after \d+ seconds$/);
    // The address itself was never spent: anonymous requests from it still pass.
    expect((await generateOn(a)(request(ip, challengeParams(await registerLicense())))).status).toBe(200);
  });

  it("counts every spelling of an authenticated license address as one client", async () => {
    const license = await registerLicense();
    const secret = await rotateClientSecret(a, license.clientId);
    const spellings = [license.clientId, license.clientId.toLowerCase(), `0x${license.clientId.slice(2).toUpperCase()}`];
    for (let i = 0; i < 8; i++) {
      expect((await tokenOn(i % 2 ? b : a)(tokenRequest(freshIp(), { clientId: spellings[i % 3], secret }))).status).toBe(400);
    }
    for (const clientId of spellings) {
      const refused = await tokenOn(a)(tokenRequest(freshIp(), { clientId, secret }));
      expect(refused.status).toBe(429);
      expect((await refused.json()).error_description).toMatch(/^too many requests for this client/);
    }
  });

  it("counts requests that name a client without its secret against their address, never the client", async () => {
    const app = await registerApp({ confidential: true });
    const stranger = freshIp();
    for (const secret of ["wrong", undefined, "wrong", "wrong", undefined]) {
      expect((await tokenOn(a)(tokenRequest(stranger, { ...app, secret }))).status).toBe(401);
    }
    expect((await tokenOn(b)(tokenRequest(stranger, { ...app, secret: "wrong" }))).status).toBe(429);
    // Flow A and /auth are anonymous: naming a license from many addresses spends none of its budget.
    const license = await registerLicense();
    for (let i = 0; i < 10; i++) expect((await generateOn(i % 2 ? b : a)(request(freshIp(), challengeParams(license)))).status).toBe(200);
    for (let i = 0; i < 8; i++) expect((await tokenOn(i % 2 ? b : a)(tokenRequest(freshIp(), app))).status).toBe(400);
  });

  it("splits a large budget into shards and admits exactly its limit from 1,100 concurrent hits on two instances", async () => {
    const limit = { max: 1000, windowSeconds: 60 };
    expect(shardsFor(limit)).toBe(4);
    expect(leaseSizeFor(limit)).toBe(2);
    const key = `client:busy-${randomUUID()}`;
    // At a window's start, so that only this window counts.
    const now = (Math.floor(Date.now() / 60_000) + 1) * 60_000;
    const outcomes = await Promise.all(
      Array.from({ length: 1100 }, (_, i) =>
        enforceRateLimit((i % 2 ? b : a).store, "test", { key, limit, name: "client" }, now).then(
          () => "allowed",
          (error: OAuthError) => error.status,
        ),
      ),
    );
    let allowed = outcomes.filter((o) => o === "allowed").length;
    expect(outcomes.filter((o) => o === 429)).toHaveLength(1100 - allowed);
    // An instance may still hold a leased hit no request took: the rest of the budget, and no more.
    const hit = (k: Keyfob) =>
      enforceRateLimit(k.store, "test", { key, limit, name: "client" }, now).then(
        () => true,
        () => false,
      );
    for (const k of [a, b]) while (await hit(k)) allowed++;
    expect(allowed).toBe(1000);
    const { rows } = await connectionPool(a).query<{ key: string; hits: number }>(
      "SELECT key, hits FROM rate_limits WHERE key LIKE $1 ORDER BY key",
      [`${key}#%`],
    );
    // Each shard gave its share; the refusals were counted on top.
    expect(rows.map((r) => r.key)).toEqual([0, 1, 2, 3].map((i) => `${key}#${i}`));
    for (const row of rows) expect(row.hits).toBeGreaterThanOrEqual(250);
    expect(rows.reduce((sum, r) => sum + r.hits, 0)).toBeGreaterThanOrEqual(1100);
    // A refusal's Retry-After comes from the whole budget: the window's end, give or take a second.
    const refused = await enforceRateLimit(a.store, "test", { key, limit, name: "client" }, now + 1000).catch((error: OAuthError) => error);
    expect(refused).toMatchObject({ status: 429 });
    expect((refused as OAuthError).retryAfter).toBeGreaterThanOrEqual(59);
  });

  it("leases a large budget's hits to each instance for the window, counted when leased", async () => {
    const limit = { max: 100_000, windowSeconds: 60 };
    const size = leaseSizeFor(limit);
    expect(size).toBe(62);
    const key = `client:leased-${randomUUID()}`;
    const now = (Math.floor(Date.now() / 60_000) + 1) * 60_000;
    const counted = async () =>
      (await connectionPool(a).query<{ sum: number }>("SELECT sum(hits)::integer AS sum FROM rate_limits WHERE key LIKE $1", [`${key}#%`]))
        .rows[0].sum;
    // 20 concurrent requests on each instance: one lease each, not a statement per request.
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => enforceRateLimit((i % 2 ? b : a).store, "test", { key, limit, name: "client" }, now)),
    );
    expect(await counted()).toBe(2 * size);
    // Spending the rest of a's lease takes no new one; the next request does.
    for (let i = 0; i < size - 20; i++) await enforceRateLimit(a.store, "test", { key, limit, name: "client" }, now + 1000);
    expect(await counted()).toBe(2 * size);
    await enforceRateLimit(a.store, "test", { key, limit, name: "client" }, now + 1000);
    expect(await counted()).toBe(3 * size);
    // A new window leases anew: what was left of the old one is not carried over.
    await enforceRateLimit(b.store, "test", { key, limit, name: "client" }, now + 60_000);
    const { rows } = await connectionPool(a).query<{ hits: number }>('SELECT hits FROM rate_limits WHERE key LIKE $1 AND "window" = $2', [
      `${key}#%`,
      Math.floor(now / 60_000) + 1,
    ]);
    expect(rows.reduce((sum, r) => sum + r.hits, 0)).toBe(size);
  });

  it("reads a sharded count without counting, as both instances counted it", async () => {
    const limit = { max: 1000, windowSeconds: 60 };
    const key = `client:peeked-${randomUUID()}`;
    const now = (Math.floor(Date.now() / 60_000) + 1) * 60_000;
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? b : a).store.limits.hit(key, limit.max, 60, shardsFor(limit), now / 1000)),
    );
    for (const k of [a, b])
      expect(await k.store.limits.peek(key, 60, shardsFor(limit), now / 1000 + 1)).toEqual({ hits: 30, previousHits: 0 });
    expect(await a.store.limits.peek(key, 60, shardsFor(limit), now / 1000 + 61)).toEqual({ hits: 0, previousHits: 30 });
    expect(await a.store.limits.peek(key, 60, shardsFor(limit), now / 1000 + 121)).toEqual({ hits: 0, previousHits: 0 });
  });

  it("counts IPv6 callers per /64", async () => {
    const license = await registerLicense();
    for (let i = 0; i < 5; i++)
      expect((await generateOn(a)(request(`2001:db8:77:1::${i + 1}`, challengeParams(license)))).status).toBe(200);
    expect((await generateOn(b)(request("2001:db8:77:1:ffff::9", challengeParams(license)))).status).toBe(429);
    expect((await generateOn(b)(request("2001:db8:77:2::1", challengeParams(license)))).status).toBe(200);
  });

  it("is off when configured off", async () => {
    const open = instance({ rateLimits: { perIp: undefined, perClient: undefined, adminSignIn: undefined } });
    instances.push(open);
    const license = await registerLicense();
    const ip = freshIp();
    for (let i = 0; i < 12; i++) expect((await generateOn(open)(request(ip, challengeParams(license)))).status).toBe(200);
  });
});

describe("failing closed", () => {
  it("refuses with 503 when the limiter's store cannot be reached, and does nothing else", async () => {
    const unreachable = "postgresql://keyfob:keyfob@localhost:1/keyfob";
    const down = createKeyfob({ ...loadConfig(), ...limits(), databaseUrl: unreachable, recoveryThreads: 0 }, createStore(unreachable, 1));
    instances.push(down);
    let ran = false;
    const handler = serveWith({ ...protocolRoute("/auth/web3/generate_challenge"), action: async () => (ran = true) }, down);
    const response = await handler(request(freshIp(), { client_id: "anything" }));
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect((await response.json()).error).toBe("temporarily_unavailable");
    expect(ran).toBe(false);
  });

  it("refuses with 503 when the database answers but the count fails", async () => {
    const url = await emptyDatabase("keyfob_ratelimit_broken");
    const broken = instance(limits(), url); // no schema: the counters' table does not exist
    instances.push(broken);
    let ran = false;
    const response = await serveWith(
      {
        ...protocolRoute("/token"),
        action: async () => {
          ran = true;
          throw new Error("the action ran");
        },
      },
      broken,
    )(request(freshIp(), { client_id: "anything" }));
    expect(response.status).toBe(503);
    expect(ran).toBe(false);
  });
});

describe("user codes guessed from many addresses", () => {
  // Wrong codes from everyone: 20 an hour (an hour, so that no window ends during the test); entries
  // per address: 5 a minute.
  const userCodeLimits = { perIp: { max: 5, windowSeconds: 60 }, total: { max: 20, windowSeconds: 3600 } };
  /** What /device makes of a typed code: found, unknown, or refused (429) with its description. */
  const entered = (k: Keyfob, code: string, ip: string) =>
    lookUpUserCode(k, code, ip).then(
      () => "found",
      (error: OAuthError) => (error.status === 429 ? `refused: ${error.message}` : error.why?.code),
    );

  it("refuses addresses that guessed wrong once the wrong-code budget is spent, never a right code from another address", async () => {
    // A database of their own: the overall count is one counter for every instance.
    const url = await emptyDatabase("keyfob_user_code_guessing");
    await migrateDatabase(url);
    const [first, second] = [instance({ userCodeLimits }, url), instance({ userCodeLimits }, url)];
    instances.push(first, second);
    const device = await createClient(first.store, { name: "Car display" });
    await updateClient(first.store, device.id, { deviceFlow: true });
    const response = await route(
      "/device/authorization",
      () => first,
    )(
      new Request(`${ISSUER}/device/authorization`, {
        method: "POST",
        headers: { ...FORM, [CLIENT_IP_HEADER]: "198.51.100.250" },
        body: new URLSearchParams({ client_id: device.id, scope: "openid" }),
      }),
    );
    const { user_code: userCode } = (await response.json()) as { user_code: string };

    // Ten addresses guess twice each, on both instances, within their own budgets: 20 wrong codes.
    const attackers = Array.from({ length: 10 }, (_, i) => `198.51.100.${i + 1}`);
    for (let round = 0; round < 2; round++)
      for (const [i, ip] of attackers.entries()) expect(await entered(i % 2 ? second : first, "BCDF-GHJK", ip)).toBe("user_code_unknown");
    // The budget is spent: an address that guessed wrong may not guess again, on either instance,
    for (const [i, ip] of attackers.entries())
      expect(await entered(i % 2 ? first : second, "BCDF-GHJK", ip)).toMatch(/^refused: too many wrong codes just now/);
    // an address new to the attack gets one guess, and no second,
    for (let i = 0; i < 4; i++) {
      const newcomer = `198.51.100.${50 + i}`;
      expect(await entered(first, "BCDF-GHJK", newcomer)).toBe("user_code_unknown");
      expect(await entered(second, "BCDF-GHJK", newcomer)).toMatch(/^refused: too many wrong codes/);
    }
    // not even with its guesses sent at once,
    const burst = await Promise.all(Array.from({ length: 5 }, (_, i) => entered(i % 2 ? second : first, "BCDF-GHJK", "198.51.100.60")));
    expect(burst.filter((answer) => answer === "user_code_unknown")).toHaveLength(1);
    expect(burst.filter((answer) => answer?.startsWith("refused: too many wrong codes"))).toHaveLength(4);
    // and a person typing the code on their device, from their own address, is let through on either
    // instance: looked up, then confirmed (a right code is not counted as the address's wrong one).
    const person = "198.51.100.200";
    expect(await entered(second, userCode, person)).toBe("found");
    expect(await confirmUserCode(first, userCode, { ip: person })).toEqual(expect.any(String));
  });
});

describe("caps on what one caller can leave waiting", () => {
  /** An instance with only these caps on unused challenges binding (the rate limits off). */
  function capped(caps: Partial<Config["pendingCaps"]>): Keyfob {
    const k = instance({ ...limits({ perIp: undefined, perClient: undefined }), pendingCaps: { ...loadConfig().pendingCaps, ...caps } });
    instances.push(k);
    return k;
  }
  const pending = (where: { address?: string; clientId?: string }) =>
    tables(a).challenge.count({ where: { ...where, usedAt: null, expiresAt: { gt: new Date() } } });
  const generated = async (response: Response): Promise<{ state: string; challenge: string }> => {
    expect(response.status).toBe(200);
    return response.json();
  };
  const signed = async (license: License, { state, challenge }: { state: string; challenge: string }) =>
    submit(license, state, await license.owner.signMessage({ message: challenge }));
  const otherAddress = () => privateKeyToAccount(generatePrivateKey()).address;

  it("never lets strangers push out a caller's challenge, naming its address or its client, from one address or many", async () => {
    // Security review, third round, item 4: 100 requests naming the victim's license address
    // through another client used to evict the challenge the victim's backend had just signed.
    // The flood goes to another instance than the victim's backend: the rows are shared.
    const k = capped({});
    const [victim, stranger] = [await registerLicense(), await registerLicense()];
    const own = await generated(await generateOn(a)(request(freshIp(), challengeParams(victim))));
    const signature = await victim.owner.signMessage({ message: own.challenge });
    const flooders = [freshIp(), freshIp(), freshIp()];
    for (let round = 0; round < 12; round++)
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          generateOn(k)(request(flooders[i % 3], challengeParams(i % 2 ? stranger : victim, { address: victim.clientId }))).then(generated),
        ),
      );
    for (let i = 0; i < 20; i++)
      await generated(await generateOn(k)(request(freshIp(), challengeParams(victim, { address: otherAddress() }))));
    expect(await pending({ address: victim.clientId })).toBe(121);
    expect((await submit(victim, own.state, signature)).status).toBe(200);
  });

  it("refuses a caller over its own cap, and nobody else", async () => {
    const k = capped({ challengesPerIp: 3 });
    const victim = await registerLicense();
    const flooder = freshIp();
    const flood = () => generateOn(k)(request(flooder, challengeParams(victim, { address: otherAddress() })));
    for (let i = 0; i < 3; i++) await generated(await flood());
    const refused = await flood();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect((await refused.json()).error_description).toBe(
      "too many unused challenges from this address; use or let them expire; retry after 60 seconds",
    );
    expect((await generateOn(k)(request(flooder, challengeParams(victim)))).status).toBe(429);
    const own = await generated(await generateOn(k)(request(freshIp(), challengeParams(victim))));
    expect((await signed(victim, own)).status).toBe(200);
  });

  it("counts a caller's unused challenges per IPv6 /64, and frees a slot when one is used", async () => {
    const k = capped({ challengesPerIp: 2 });
    const license = await registerLicense();
    const from = (ip: string) => generateOn(k)(request(ip, challengeParams(license)));
    const first = await generated(await from("2001:db8:99:1::1"));
    await generated(await from("2001:db8:99:1:ffff::2"));
    expect((await from("2001:db8:99:1:1:2:3:4")).status).toBe(429);
    expect((await from("2001:db8:99:2::1")).status).toBe(200);
    expect((await signed(license, first)).status).toBe(200);
    expect((await from("2001:db8:99:1::3")).status).toBe(200);
  });

  it("caps unfinished logins per address: the application gets temporarily_unavailable", async () => {
    const capped = instance({ pendingCaps: { ...loadConfig().pendingCaps, loginsPerIp: 2 } });
    instances.push(capped);
    const license = await registerLicense();
    const query = () =>
      new URLSearchParams({
        client_id: license.clientId,
        redirect_uri: license.domain,
        response_type: "code",
        scope: "openid",
        state: "st",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
      });
    const ip = freshIp();
    expect((await startAuthorization(capped, query(), { ip })).kind).toBe("login");
    expect((await startAuthorization(a, query(), { ip })).kind).toBe("login"); // another instance counts the same rows
    const refused = await startAuthorization(capped, query(), { ip });
    if (refused.kind !== "redirect") throw new Error(`expected a redirect, got ${refused.kind}`);
    const params = new URL(refused.location).searchParams;
    expect([params.get("error"), params.get("state")]).toEqual(["temporarily_unavailable", "st"]);
    expect((await startAuthorization(capped, query(), { ip: freshIp() })).kind).toBe("login");
    // IPv6 callers count per /64: two more addresses of one block are the same caller.
    expect((await startAuthorization(capped, query(), { ip: "2001:db8:77:1::1" })).kind).toBe("login");
    expect((await startAuthorization(capped, query(), { ip: "2001:db8:77:1::2" })).kind).toBe("login");
    expect((await startAuthorization(capped, query(), { ip: "2001:db8:77:1:ffff::3" })).kind).toBe("redirect");
    expect((await startAuthorization(capped, query(), { ip: "2001:db8:77:2::1" })).kind).toBe("login");
  });
});

describe("secondsUntilAllowed (sliding window)", () => {
  const limit = { max: 10, windowSeconds: 60 };
  const at = (secondsIntoWindow: number) => (1_000_000 * 60 + secondsIntoWindow) * 1000;

  it("allows up to the limit", () => {
    expect(secondsUntilAllowed(limit, 10, 0, at(0))).toBe(0);
    expect(secondsUntilAllowed(limit, 11, 0, at(30))).toBe(30 + 6); // next window, then this window's excess fades
  });

  it("weighs the previous window by how much of it still overlaps", () => {
    // Halfway through: 10 previous hits count as 5, so 5 more are allowed.
    expect(secondsUntilAllowed(limit, 5, 10, at(30))).toBe(0);
    // One over: 6 seconds until the previous window's weight has fallen by one hit.
    expect(secondsUntilAllowed(limit, 6, 10, at(30))).toBe(6);
  });
});
