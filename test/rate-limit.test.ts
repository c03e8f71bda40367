/**
 * Abuse limits on the real route handlers and PostgreSQL: two Keyfob instances (each with its own
 * connection pool, as two processes have) share one budget per address and per client, a request
 * that cannot be counted is refused, and one caller cannot pile up unused challenges or logins.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateChallenge } from "@/lib/actions/generate-challenge";
import { startAuthorization } from "@/lib/actions/authorize";
import { loadConfig, type Config } from "@/lib/config";
import { createStorage } from "@/lib/db/client";
import { CLIENT_IP_HEADER } from "@/lib/http/client-ip";
import { endpoint } from "@/lib/http/endpoint";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { secondsUntilAllowed } from "@/lib/rate-limit";
import { challengeParams, ISSUER, registerLicense, submit } from "./support/flow-a";
import { emptyDatabase } from "./support/database";

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
const generateOn = (k: Keyfob) => endpoint("generate_challenge", (on, _, params) => generateChallenge(on, params), () => k);

let nextAddress = 1;
/** A caller address of its own per test (TEST-NET-3), so tests do not share budgets. */
const freshIp = () => `203.0.113.${nextAddress++}`;

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

  it("limits a client across addresses and instances", async () => {
    const license = await registerLicense();
    for (let i = 0; i < 8; i++) expect((await generateOn(i % 2 ? b : a)(request(freshIp(), challengeParams(license)))).status).toBe(200);
    const refused = await generateOn(b)(request(freshIp(), challengeParams(license)));
    expect(refused.status).toBe(429);
    expect((await refused.json()).error_description).toMatch(/^too many requests for this client; retry after \d+ seconds$/);
  });

  it("counts every spelling of a license address as one client", async () => {
    const license = await registerLicense();
    const spellings = [license.clientId, license.clientId.toLowerCase(), `0x${license.clientId.slice(2).toUpperCase()}`];
    for (let i = 0; i < 8; i++) {
      const params = challengeParams(license, { client_id: spellings[i % 3] });
      expect((await generateOn(i % 2 ? b : a)(request(freshIp(), params))).status).toBe(200);
    }
    for (const clientId of spellings) {
      const refused = await generateOn(a)(request(freshIp(), challengeParams(license, { client_id: clientId })));
      expect(refused.status).toBe(429);
      expect((await refused.json()).error_description).toMatch(/^too many requests for this client/);
    }
  });

  it("counts IPv6 callers per /64", async () => {
    const license = await registerLicense();
    for (let i = 0; i < 5; i++) expect((await generateOn(a)(request(`2001:db8:77:1::${i + 1}`, challengeParams(license)))).status).toBe(200);
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
    const down = createKeyfob({ ...loadConfig(), ...limits(), databaseUrl: unreachable, recoveryThreads: 0 }, createStorage(unreachable, 1));
    instances.push(down);
    let ran = false;
    const handler = endpoint("generate_challenge", async () => (ran = true), () => down);
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
    const response = await endpoint("token", async () => (ran = true), () => broken)(request(freshIp(), { client_id: "anything" }));
    expect(response.status).toBe(503);
    expect(ran).toBe(false);
  });
});

describe("caps on what one caller can leave waiting", () => {
  it("caps unused challenges per address, and frees a slot when one is used", async () => {
    const capped = instance({ ...limits({ perIp: undefined, perClient: undefined }), pendingCaps: { challengesPerAddress: 3, challengesPerClient: 1000, loginsPerIp: 1000 } });
    instances.push(capped);
    const license = await registerLicense();
    const generate = () => generateChallenge(capped, new Map(Object.entries(challengeParams(license))));
    const issued = [await generate(), await generate(), await generate()];
    await expect(generate()).rejects.toMatchObject({ status: 429, code: "temporarily_unavailable" });
    const [first] = issued;
    expect((await submit(license, first.state, await license.owner.signMessage({ message: first.challenge }))).status).toBe(200);
    expect((await generate()).state).toMatch(/^[\w-]{43}$/);
    await expect(generate()).rejects.toMatchObject({ status: 429 });
  });

  it("caps unused challenges per client, whatever the address", async () => {
    const capped = instance({ ...limits({ perIp: undefined, perClient: undefined }), pendingCaps: { challengesPerAddress: 1000, challengesPerClient: 2, loginsPerIp: 1000 } });
    instances.push(capped);
    const license = await registerLicense();
    const other = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
    await generateChallenge(capped, new Map(Object.entries(challengeParams(license, { address: other(1) }))));
    await generateChallenge(capped, new Map(Object.entries(challengeParams(license, { address: other(2) }))));
    await expect(generateChallenge(capped, new Map(Object.entries(challengeParams(license, { address: other(3) }))))).rejects.toMatchObject({ status: 429 });
  });

  it("caps unfinished logins per address: the application gets temporarily_unavailable", async () => {
    const capped = instance({ pendingCaps: { challengesPerAddress: 100, challengesPerClient: 100, loginsPerIp: 2 } });
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
