/**
 * Hostile input to the management API's lists (/api/admin/v1, through its real route handler and a
 * real PostgreSQL): every query parameter of every route in lib/admin/api.ts's ROUTES, and every
 * path parameter of its reads, with NUL and the other control characters, overlong text, days out
 * of range and broken percent-encoding. Nothing answers 5xx; a filter that cannot be used is 400
 * invalid_request naming the field in field_errors; what can be used sensibly (a day in year 9999,
 * a page number that is no number) is. PostgreSQL refuses NUL in text and year 0000 dates, and
 * these answered 500 before lib/admin/filters.ts.
 */
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { ROUTES } from "@/lib/admin/api";
import { parseAuditQuery } from "@/lib/admin/audit-filter";
import { parseDay, parseHolderQuery, parseSearch } from "@/lib/admin/filters";
import { addRedirectUri, createClient, rotateClientSecret, updateClient } from "@/lib/clients/registry";
import { keyfob } from "@/lib/runtime";
import { ISSUER } from "./support/flow-a";
import { tables } from "./support/database";
import { route } from "./support/routes";

const DELETE = route("/api/admin/v1");
const GET = route("/api/admin/v1");
const tokenRoute = route("/token");

const CONTROLS = ["\x00", "\x01", "\t", "\n", "\r", "\x1b", "\x1f", "\x7f"];
const enc = encodeURIComponent;

let token: string;
let clientId: string;
let accountId: string;

beforeAll(async () => {
  const db = tables(keyfob());
  await keyfob().keys.refresh();
  const client = await createClient(keyfob().store, { name: "Filter walk" });
  const secret = await rotateClientSecret(keyfob(), client.id);
  await updateClient(keyfob().store, client.id, { managementApi: true, managementScopes: ["keyfob:admin"] });
  await addRedirectUri(keyfob().store, client.id, "https://filters.example.com/cb");
  clientId = client.id;
  accountId = privateKeyToAccount(generatePrivateKey()).address;
  await db.account.create({ data: { id: accountId } });
  const response = await tokenRoute(
    new Request(`${ISSUER}/token`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${Buffer.from(`${client.id}:${secret}`).toString("base64")}`,
      },
      body: new URLSearchParams({ grant_type: "client_credentials" }),
    }),
  );
  expect(response.status).toBe(200);
  token = (await response.json()).access_token;
});

const handlers = { GET, DELETE } as Record<string, (request: Request) => Promise<Response>>;

/** A request with the query string exactly as given (already percent-encoded, or deliberately not). */
async function call(method: string, pathAndQuery: string) {
  const response = await handlers[method](
    new Request(`${ISSUER}/api/admin/v1${pathAndQuery}`, { method, headers: { authorization: `Bearer ${token}` } }),
  );
  const text = await response.text();
  const json = response.headers.get("content-type")?.startsWith("application/json") && text ? JSON.parse(text) : undefined;
  return { status: response.status, json, text };
}

/** Keyfob's error shape, with field_errors when it names fields; never a stack trace. */
function expectDocumentedError(answer: Awaited<ReturnType<typeof call>>, context: string) {
  expect(answer.status, context).toBeGreaterThanOrEqual(400);
  expect(answer.status, context).toBeLessThan(500);
  expect(answer.json, context).toMatchObject({ error: expect.any(String), error_description: expect.any(String), status: answer.status });
  expect(answer.json.message, context).toBe(answer.json.error_description);
  expect(answer.json.error_description, context).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]+$/);
  expect(answer.text, context).not.toMatch(/\bat .+\.(ts|js):\d+/);
}

/** A route's path with its parameters filled with things that exist. */
const concrete = (path: string) =>
  path
    .replace("{clientId}", enc(clientId))
    .replace("{accountId}", accountId)
    .replace("{address}", accountId)
    .replace("{kid}", "kid")
    .replace("{sessionId}", "s");

describe("the brief's cases", () => {
  it.each([
    ["/clients?search=%00", "search"],
    ["/tokens?client=%00", "client"],
    ["/refresh-grants?client=%00", "client"],
    ["/accounts?search=%00x", "search"],
    ["/audit?from=0000-01-01", "from"],
    ["/audit.csv?from=0000-01-01", "from"],
    ["/audit?action=token.%00", "action"],
    ["/audit?outcome=%00", "outcome"],
    ["/audit?client=%00", "client"],
  ])("GET %s is 400 invalid_request with a field error", async (path, field) => {
    const answer = await call("GET", path);
    expectDocumentedError(answer, path);
    expect(answer.json, path).toMatchObject({ error: "invalid_request", status: 400, field_errors: { [field]: expect.any(String) } });
  });

  it("takes the days at both ends of years 0001-9999", async () => {
    for (const query of ["from=0001-01-01", "to=9999-12-31", "from=9999-12-31&to=9999-12-31", "from=0001-01-01&to=0001-01-01"]) {
      expect((await call("GET", `/audit?${query}`)).status, query).toBe(200);
      expect((await call("GET", `/audit.csv?${query}`)).status, query).toBe(200);
    }
  });
});

describe("every query parameter of every route", () => {
  /** [label, the raw query value (percent-encoded as sent)] */
  const hostile: [string, string][] = [
    ...CONTROLS.flatMap((c): [string, string][] => [
      [`${enc(c)} alone`, enc(c)],
      [`${enc(c)} inside`, `a${enc(c)}b`],
    ]),
    ["10 000 characters", "x".repeat(10_000)],
    ["300 emoji", enc("😀".repeat(300))],
    ["year 0000", "0000-01-01"],
    ["year 0000, last day", "0000-12-31"],
    ["year 9999", "9999-12-31"],
    ["year 10000", "10000-01-01"],
    ["expanded year", enc("+010000-01-01")],
    ["negative year", enc("-000001-01-01")],
    ["30 February", "2026-02-30"],
    ["a lone %", "%"],
    ["%zz", "%zz"],
    ["cut UTF-8", "%E0%A4%A"],
    ["an encoded surrogate", "%ED%A0%80"],
    ["overlong NUL", "%C0%80"],
    ["right-to-left override", enc("\u202e")],
    ["huge number", "1e400"],
    ["negative number", "-1"],
  ];
  /**
   * Values nobody can filter by: each is refused with a field error (page numbers aside). A tab, CR
   * or LF alone is whitespace around nothing, trimmed as a form's text is: no filter.
   */
  const refused = new Set([
    ...CONTROLS.map((c) => `${enc(c)} inside`),
    ...CONTROLS.filter((c) => c.trim() !== "").map((c) => `${enc(c)} alone`),
    "10 000 characters",
  ]);
  /** And for the days (from, to): year 0000, which PostgreSQL refused (500). */
  const refusedDays = new Set(["year 0000", "year 0000, last day"]);
  const days = new Set(["from", "to"]);
  const lenient = new Set(["page"]);

  const routes = ROUTES.filter((route) => route.query);
  it("covers every route that takes a query", () => {
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        "GET /clients",
        "GET /accounts",
        "GET /tokens",
        "GET /refresh-grants",
        "GET /audit",
        "GET /audit.csv",
        "DELETE /clients/{clientId}/redirect-uris",
      ]),
    );
  });

  for (const route of routes) {
    it(`${route.method} ${route.path}: never 5xx; unusable filters are 400 with field_errors`, async () => {
      const seen = new Set<number>();
      for (const name of Object.keys(route.query!)) {
        for (const [label, raw] of hostile) {
          const context = `${route.method} ${route.path}?${name}= ${label}`;
          const answer = await call(route.method, `${concrete(route.path)}?${name}=${raw}`);
          seen.add(answer.status);
          expect(answer.status, `${context}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
          if (answer.status >= 400) expectDocumentedError(answer, context);
          if (route.method !== "GET") continue; // a DELETE's value is the thing to remove: the admin action's own validation
          if (lenient.has(name)) {
            expect(answer.status, context).toBe(200);
          } else if (refused.has(label) || (days.has(name) && refusedDays.has(label))) {
            expect(answer.json, context).toMatchObject({
              error: "invalid_request",
              status: 400,
              field_errors: { [name]: expect.any(String) },
            });
          } else if (answer.status !== 200) {
            expect(answer.json, context).toMatchObject({
              error: "invalid_request",
              status: 400,
              field_errors: { [name]: expect.any(String) },
            });
          }
        }
      }
      if (route.method === "GET")
        expect(seen, `${route.path} answered both`).toEqual(
          new Set(Object.keys(route.query!).every((n) => lenient.has(n)) ? [200] : [200, 400]),
        );
    });
  }
});

describe("every path parameter of the reads", () => {
  const reads = ROUTES.filter((route) => route.method === "GET" && route.path.includes("{"));
  for (const route of reads) {
    it(`GET ${route.path}: a control character or broken encoding in a segment is 404, never 5xx`, async () => {
      for (const segment of [...CONTROLS.map(enc), `a${enc("\0")}b`, "%E0%A4%A", "%zz", "x".repeat(5000)]) {
        const path = route.path.replace(/\{[^}]+\}/g, segment);
        const answer = await call("GET", path);
        expect(answer.status, `${path}: ${answer.text.slice(0, 200)}`).toBeLessThan(500);
        expectDocumentedError(answer, path);
      }
    });
  }
});

describe("the shared parsing (lib/admin/filters.ts) the dashboard reads too", () => {
  const from = (query: Record<string, string>) => (name: string) => query[name] ?? "";

  it("refuses control characters and overlong text, and names the field", () => {
    for (const c of CONTROLS) {
      expect(parseSearch(from({ q: `a${c}b` }), "q").errors).toEqual({ search: "Must not contain control characters." });
      expect(parseHolderQuery(from({ client: `x${c}x`, account: `0x${c}1` })).errors).toEqual({
        client: "Must not contain control characters.",
        account: "Must not contain control characters.",
      });
      expect(
        Object.keys(
          parseAuditQuery(from({ action: `a${c}b`, outcome: `a${c}b`, client: `a${c}b`, account: `a${c}b`, from: `a${c}b`, to: `a${c}b` }))
            .errors,
        ).sort(),
      ).toEqual(["account", "action", "client", "from", "outcome", "to"]);
    }
    expect(parseSearch(from({ search: "x".repeat(201) })).errors.search).toBe("Must be at most 200 characters.");
    // Whitespace around the text is trimmed, as a form's is.
    expect(parseSearch(from({ search: "\t acme \r\n" }))).toMatchObject({ search: "acme", errors: {} });
    expect(parseHolderQuery(from({ account: "0x12" })).errors.account).toBe("Must be a 0x-prefixed 20-byte hex address.");
  });

  it("reads days of years 0001 to 9999 only, in the calendar", () => {
    expect(parseDay("0000-01-01")).toEqual({ error: "Must be a day from 0001-01-01 to 9999-12-31." });
    expect(parseDay("0001-01-01")).toEqual({ day: new Date("0001-01-01T00:00:00Z") });
    expect(parseDay("0099-03-01")).toEqual({ day: new Date("0099-03-01T00:00:00Z") });
    expect(parseDay("9999-12-31")).toEqual({ day: new Date("9999-12-31T00:00:00Z") });
    for (const bad of ["10000-01-01", "+010000-01-01", "2026-02-30", "2026-13-01", "2026-1-01", "", "1e400"])
      expect(parseDay(bad)).toEqual({ error: "Must be a date (YYYY-MM-DD)." });
    // The last day has no next day to end at: the filter then has no end.
    expect(parseAuditQuery(from({ to: "9999-12-31" })).filter.to).toBeUndefined();
    expect(parseAuditQuery(from({ to: "2026-02-01" })).filter.to).toEqual(new Date("2026-02-02T00:00:00Z"));
  });
});
