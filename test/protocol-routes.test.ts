/**
 * The protocol routes (lib/http/routes.ts), served by Keyfob's server in every mode:
 * 1. one table lists every protocol path, none of them a route file in app/, and nothing it
 *    reaches is Next.js or app/ (whose request-scoped APIs exist only inside Next's pipeline);
 * 2. findRoute matches exact paths (and the management API's prefix), answers HEAD with a GET
 *    row, and names the methods of a known path for OPTIONS and any other method (405);
 * 3. server/protocol.ts behind a real node:http server: an answer is the one the table gives
 *    (status, headers, body), HEAD has no body, the action gets a plain request with the body as
 *    bytes, and a body over MAX_BODY_BYTES is refused with 413 and the connection closed.
 * The routes use the process-wide Keyfob on the test database, as test/hostile-input.test.ts does.
 */
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpRequest } from "@/lib/http/request";
import { jsonAnswer } from "@/lib/http/respond";
import { findRoute, PROTOCOL_ROUTES, type ProtocolRoute } from "@/lib/http/routes";
import { MAX_BODY_BYTES, readBodyText } from "@/lib/oauth/params";
import { keyfob } from "@/lib/runtime";
import { protocolRoute, serveProtocol } from "@/server/protocol";
import { ISSUER } from "./support/flow-a";
import { FORM } from "./support/flow-b";
import { serveRequest } from "./support/routes";

const ROOT = path.resolve(import.meta.dirname, "..");

/**
 * Every module `file` imports, transitively, within the project (`@/…` and relative specifiers),
 * and the packages they import. Throws on a project import that resolves to no file.
 */
function importGraph(file: string, files = new Set<string>(), packages = new Map<string, string>()) {
  if (files.has(file)) return { files, packages };
  files.add(file);
  if (!/\.tsx?$/.test(file)) return { files, packages };
  for (const { fileName: specifier } of ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles) {
    if (!specifier.startsWith(".") && !specifier.startsWith("@/")) {
      packages.set(specifier, path.relative(ROOT, file));
      continue;
    }
    const base = specifier.startsWith("@/") ? path.join(ROOT, specifier.slice(2)) : path.resolve(path.dirname(file), specifier);
    const resolved = [`${base}.ts`, `${base}.tsx`, path.join(base, "index.ts"), base].find(
      (candidate) => existsSync(candidate) && /\.(tsx?|json|m?js)$/.test(candidate),
    );
    if (!resolved) throw new Error(`${path.relative(ROOT, file)}: cannot resolve ${specifier}`);
    importGraph(resolved, files, packages);
  }
  return { files, packages };
}

describe("the protocol route table", () => {
  it("lists each protocol path once per method, and no app/ route file serves one", () => {
    const seen = PROTOCOL_ROUTES.flatMap((route) => route.methods.map((method) => `${method} ${route.path}`));
    expect(new Set(seen).size).toBe(seen.length);
    for (const route of PROTOCOL_ROUTES) {
      const folder = path.join(ROOT, "app", route.path.replace(/\/\*$/, ""));
      expect(existsSync(path.join(folder, "route.ts")), route.path).toBe(false);
    }
  });

  it("reaches no Next.js API and no module of app/", () => {
    const isNext = (specifier: string) => /^next(-auth|-intl)?($|\/)/.test(specifier);
    const { files, packages } = importGraph(path.join(ROOT, "lib/http/routes.ts"));
    expect([...packages].filter(([specifier]) => isNext(specifier))).toEqual([]);
    expect([...files].filter((file) => file.startsWith(path.join(ROOT, "app")))).toEqual([]);
    // The walk does see what is there: the code exchange's store, and Next.js where it is used (/auth's cookies).
    expect(files).toContain(path.join(ROOT, "lib/store/tokens.ts"));
    expect([...importGraph(path.join(ROOT, "app/auth/route.ts")).packages.keys()].some(isNext)).toBe(true);
  });
});

describe("findRoute", () => {
  const row = (method: string, urlPath: string) => {
    const found = findRoute(method, urlPath);
    return found && "endpoint" in found ? `${found.endpoint} ${found.methods.join(",")}` : found;
  };

  it("finds the row of an exact path and one of its methods; HEAD finds the GET row", () => {
    expect(row("POST", "/token")).toBe("token POST");
    expect(row("GET", "/.well-known/openid-configuration")).toBe("discovery GET");
    expect(row("HEAD", "/keys")).toBe("jwks GET");
    expect(row("GET", "/userinfo")).toBe("userinfo GET,POST");
    expect(row("POST", "/auth/web3/generate_challenge")).toBe("generate_challenge GET,POST");
    expect(row("PATCH", "/api/admin/v1/clients/kf_x")).toBe("admin_api GET,POST,PATCH,DELETE");
    expect(row("GET", "/api/admin/v1")).toBe("admin_api GET,POST,PATCH,DELETE");
  });

  it("names a known path's methods for OPTIONS and for any other method", () => {
    expect(findRoute("OPTIONS", "/token")).toEqual({ allowed: ["POST", "OPTIONS"] });
    expect(findRoute("GET", "/token")).toEqual({ allowed: ["POST", "OPTIONS"] });
    expect(findRoute("DELETE", "/userinfo")).toEqual({ allowed: ["GET", "POST", "HEAD", "OPTIONS"] });
    expect(findRoute("PUT", "/api/admin/v1/clients")).toEqual({ allowed: ["GET", "POST", "PATCH", "DELETE", "HEAD", "OPTIONS"] });
    expect(findRoute("post", "/token")).toEqual({ allowed: ["POST", "OPTIONS"] });
  });

  it.each([
    ["a trailing slash", "/token/"],
    ["another case", "/TOKEN"],
    ["a longer path", "/token/other"],
    ["a prefix", "/tok"],
    ["a double slash", "//token"],
    ["an encoded path", "/%74oken"],
    ["a path beside the API's prefix", "/api/admin/v1x"],
    ["a page", "/admin"],
    ["/auth (cookies: Next.js)", "/auth"],
    ["the root", "/"],
  ])("leaves %s to Next.js", (_, urlPath) => {
    expect(findRoute("POST", urlPath)).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// dispatch behind a real server

type Answer = { status: number; headers: http.IncomingHttpHeaders; rawHeaders: [string, string][]; body: Buffer; socket: Socket };
type Send = {
  method?: string;
  path: string;
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  chunks?: Buffer[];
  noBody?: boolean;
};

let server: http.Server;
let origin: string;
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

/** What the server answers: its status, headers (also as the lines sent) and body. */
function send({ method = "GET", path: urlPath, headers = {}, body, chunks, noBody }: Send): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = http.request(`${origin}${urlPath}`, { method, headers, agent }, (response) => {
      answered = true;
      const parts: Buffer[] = [];
      response.on("data", (chunk: Buffer) => parts.push(chunk));
      response.on("end", () => {
        const raw: [string, string][] = [];
        for (let i = 0; i < response.rawHeaders.length; i += 2)
          raw.push([response.rawHeaders[i].toLowerCase(), response.rawHeaders[i + 1]]);
        resolve({
          status: response.statusCode!,
          headers: response.headers,
          rawHeaders: raw,
          body: Buffer.concat(parts),
          socket: response.socket,
        });
        if (noBody) request.destroy();
      });
      response.on("error", reject);
    });
    // The server may close the connection while an oversized body is still being written.
    request.on("error", (error) => (answered ? undefined : reject(error)));
    if (noBody) {
      request.flushHeaders();
      return;
    }
    for (const chunk of chunks ?? []) request.write(chunk);
    request.end(body);
  });
}

/** Resolves when the server has ended the connection the answer came on (the test times out otherwise). */
const closed = ({ socket }: Answer) => new Promise<void>((done) => (socket.destroyed ? done() : socket.once("close", () => done())));
const lines = (answer: Answer, name: string) => answer.rawHeaders.filter(([header]) => header === name).map(([, value]) => value);
/** Headers node's server writes whatever the answer (framing, date): not the handler's. */
const TRANSPORT = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"]);

/** What the last echo action received. */
let received: HttpRequest | undefined;
/** A route of this test: it answers what it received, as the table's actions read it. */
const echo: ProtocolRoute = {
  methods: ["POST"],
  path: "/echo",
  endpoint: "echo",
  resource: {
    answer: async (_, request) => {
      received = request;
      return jsonAnswer({ url: request.url, method: request.method, body: await readBodyText(request) }, 201, { Vary: "Origin" });
    },
  },
};

/** What the table answers for `request`, as the server should write it: status, headers as lines, body. */
async function expected(request: Request) {
  const response = await serveRequest(request);
  const headerLines: [string, string][] = [...response.headers].map(([name, value]) => [name, value]);
  return { status: response.status, headers: headerLines.sort(), body: Buffer.from(await response.arrayBuffer()) };
}
const served = (answer: Answer) => ({
  status: answer.status,
  headers: answer.rawHeaders.filter(([name]) => !TRANSPORT.has(name)).sort(),
  body: answer.body,
});

beforeAll(async () => {
  server = http.createServer((request, response) => {
    const found = request.url?.startsWith("/echo") ? echo : protocolRoute(request);
    if (!found) {
      response.writeHead(404, { "content-type": "text/plain" }).end("left to Next.js");
      return;
    }
    serveProtocol(keyfob(), found, ISSUER, request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  agent.destroy();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe("Keyfob's server", () => {
  it("answers GET /.well-known/openid-configuration as the table does; HEAD with no body", async () => {
    const answer = await send({ path: "/.well-known/openid-configuration?ignored=1" });
    expect(answer.status).toBe(200);
    expect(answer.headers["cache-control"]).toBe("public, max-age=3600");
    expect(answer.headers["access-control-allow-origin"]).toBe("*");
    expect(JSON.parse(answer.body.toString()).issuer).toBe(ISSUER);
    expect(served(answer)).toEqual(await expected(new Request(`${ISSUER}/.well-known/openid-configuration`)));
    const head = await send({ method: "HEAD", path: "/.well-known/openid-configuration" });
    expect([head.status, head.body.length, head.headers["content-type"]]).toEqual([200, 0, "application/json"]);
  });

  it("answers a bad POST /token as the table does (status, headers, body)", async () => {
    const requests = [
      {
        what: "unknown client",
        body: "grant_type=authorization_code&client_id=kf_nobody&code=abc&redirect_uri=https%3A%2F%2Fa.example%2Fcb",
        type: FORM["content-type"],
      },
      { what: "unsupported grant", body: "grant_type=password&client_id=kf_nobody", type: FORM["content-type"] },
      { what: "not a form", body: '{"grant_type":"authorization_code"}', type: "application/json" },
      { what: "code in the query", body: "grant_type=authorization_code", type: FORM["content-type"], query: "?code=abc" },
    ];
    const statuses: number[] = [];
    for (const { what, body, type, query = "" } of requests) {
      const answer = await send({ method: "POST", path: `/token${query}`, headers: { "content-type": type }, body });
      expect(answer.status, what).toBeGreaterThanOrEqual(400);
      expect(answer.headers["content-type"], what).toBe("application/json");
      expect(answer.headers["cache-control"], what).toBe("no-store");
      expect(lines(answer, "vary"), what).toEqual(["Origin"]);
      expect(JSON.parse(answer.body.toString()), what).toMatchObject({ error: expect.any(String), status: answer.status });
      const direct = new Request(`${ISSUER}/token${query}`, { method: "POST", headers: { "content-type": type }, body });
      expect(served(answer), what).toEqual(await expected(direct));
      expect(answer.headers.connection, what).toBe("keep-alive");
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([401, 400, 415, 400]);
  });

  it("answers another method of a known path 405 with Allow, and OPTIONS with a preflight or the methods", async () => {
    const wrong = await send({ method: "GET", path: "/token" });
    expect([wrong.status, wrong.headers.allow, wrong.body.length]).toEqual([405, "POST, OPTIONS", 0]);
    const preflight = await send({
      method: "OPTIONS",
      path: "/token",
      headers: { origin: "https://spa.example.com", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-methods"]).toBe("POST");
    expect(preflight.headers["access-control-allow-origin"]).toBe("https://spa.example.com");
    // Introspection is for servers: no CORS, just its methods.
    const introspect = await send({ method: "OPTIONS", path: "/token/introspect", headers: { origin: "https://spa.example.com" } });
    expect([introspect.status, introspect.headers.allow, introspect.headers["access-control-allow-origin"]]).toEqual([
      204,
      "POST, OPTIONS",
      undefined,
    ]);
  });

  it("hands the route a plain request: the issuer's origin with the path and query, method, headers and the body's bytes", async () => {
    const body = `x=${"é".repeat(100)}&y=2`;
    const answer = await send({
      method: "POST",
      path: "/echo?q=1&q=2",
      headers: { "content-type": FORM["content-type"], "x-test": "one" },
      body,
    });
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body.toString())).toEqual({ url: `${ISSUER}/echo?q=1&q=2`, method: "POST", body });
    expect(received).not.toBeInstanceOf(Request);
    expect(received!.body).toBeInstanceOf(Uint8Array);
    expect([received!.headers.get("X-Test"), received!.headers.has("x-test"), received!.headers.get("x-absent")]).toEqual([
      "one",
      true,
      null,
    ]);
    expect(answer.headers["content-length"]).toBe(String(answer.body.length));
    expect(answer.headers["transfer-encoding"]).toBeUndefined();
    expect(lines(answer, "vary")).toEqual(["Origin"]);
  });

  it("leaves any other path to the fall-through (Next.js)", async () => {
    for (const [method, urlPath] of [
      ["POST", "/token/"],
      ["GET", "/admin"],
    ]) {
      const answer = await send({ method, path: urlPath });
      expect(answer.status, `${method} ${urlPath}`).toBe(404);
    }
  });

  describe("a body over MAX_BODY_BYTES", () => {
    const tooLarge = () =>
      expected(new Request(`${ISSUER}/token`, { method: "POST", headers: FORM, body: `a=${"x".repeat(MAX_BODY_BYTES)}` }));

    it("is refused with 413 and Connection: close when its Content-Length says so, without waiting for it", async () => {
      // The headers alone: the body never comes, and the answer does not wait for it.
      const answer = await send({
        method: "POST",
        path: "/token",
        headers: { ...FORM, "content-length": MAX_BODY_BYTES + 1 },
        noBody: true,
      });
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe("close");
      expect(served(answer)).toEqual(await tooLarge());
      await closed(answer); // the server ends the connection

      const whole = await send({ method: "POST", path: "/token", headers: FORM, body: `a=${"x".repeat(MAX_BODY_BYTES + 100)}` });
      expect([whole.status, whole.headers.connection]).toEqual([413, "close"]);
      expect(served(whole)).toEqual(await tooLarge());
    });

    it("is refused with 413 and Connection: close when it comes chunked, with no Content-Length", async () => {
      const chunks = Array.from({ length: 5 }, (_, i) => Buffer.from(`${i === 0 ? "a=" : ""}${"x".repeat(MAX_BODY_BYTES / 4)}`));
      const answer = await send({ method: "POST", path: "/token", headers: { ...FORM, "transfer-encoding": "chunked" }, chunks });
      expect(answer.status).toBe(413);
      expect(answer.headers.connection).toBe("close");
      expect(served(answer)).toEqual(await tooLarge());
      await closed(answer);
    });

    it("is only what passes the limit: a body of exactly MAX_BODY_BYTES is read, and the connection stays open", async () => {
      const prefix = "grant_type=password&pad=";
      const body = `${prefix}${"x".repeat(MAX_BODY_BYTES - prefix.length)}`;
      expect(Buffer.byteLength(body)).toBe(MAX_BODY_BYTES);
      for (const headers of [FORM, { ...FORM, "transfer-encoding": "chunked" }]) {
        const answer = await send({ method: "POST", path: "/token", headers, body });
        expect(answer.status).not.toBe(413);
        expect(answer.headers.connection).toBe("keep-alive");
        expect(served(answer)).toEqual(await expected(new Request(`${ISSUER}/token`, { method: "POST", headers: FORM, body })));
      }
    });
  });
});
