/**
 * The protocol endpoints served without Next.js's pipeline (server/protocol-routes.ts):
 * 1. PROTOCOL_ROUTES names the route files in app/ it should, each path loading its own file, and
 *    the dispatch table takes exactly the methods those files export; none of them reaches a
 *    request-scoped Next.js API (which only exists inside Next's pipeline).
 * 2. protocolHandler matches exact paths and methods only; everything else is left to Next.js.
 * 3. dispatch, behind a real node:http server: an answer is the one the route handler gives when
 *    called directly (status, headers, body), Set-Cookie and Vary lines stay separate, and a body
 *    over MAX_BODY_BYTES is refused with 413 and the connection closed.
 * The handlers use the process-wide Keyfob on the test database, as test/hostile-input.test.ts does.
 */
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import path from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as discoveryGet } from "@/app/.well-known/openid-configuration/route";
import { POST as tokenPost } from "@/app/token/route";
import type { HttpRequest } from "@/lib/http/request";
import { jsonAnswer } from "@/lib/http/respond";
import { MAX_BODY_BYTES, readBodyText } from "@/lib/oauth/params";
import { dispatch, loadDispatchTable, PROTOCOL_ROUTES, protocolHandler, type DispatchTable } from "@/server/protocol-routes";
import { ISSUER } from "./support/flow-a";
import { FORM } from "./support/flow-b";

const ROOT = path.resolve(import.meta.dirname, "..");
const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
/** The Vary that Next.js puts on every route handler's answer, which the dispatch copies. */
const NEXT_VARY = "rsc, next-router-state-tree, next-router-prefetch, next-router-segment-prefetch";

/** The protocol endpoints (server/serve.ts) and the methods their route files export. */
const EXPECTED: Record<string, string[]> = {
  "/token": ["POST", "OPTIONS"],
  "/token/revoke": ["POST", "OPTIONS"],
  "/par": ["POST", "OPTIONS"],
  "/token/introspect": ["POST"],
  "/device/authorization": ["POST", "OPTIONS"],
  "/userinfo": ["GET", "POST", "OPTIONS"],
  "/auth/web3/generate_challenge": ["GET", "POST", "OPTIONS"],
  "/auth/web3/submit_challenge": ["POST", "OPTIONS"],
  "/keys": ["GET"],
  "/.well-known/jwks.json": ["GET"],
  "/.well-known/openid-configuration": ["GET"],
  "/healthz/live": ["GET"],
  "/healthz/ready": ["GET"],
};

const routeFile = (urlPath: string) => path.join(ROOT, "app", urlPath, "route.ts");

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

let table: DispatchTable;

beforeAll(async () => {
  table = await loadDispatchTable();
});

describe("PROTOCOL_ROUTES", () => {
  it("lists the protocol endpoints, each an existing app/<path>/route.ts", () => {
    expect(Object.keys(PROTOCOL_ROUTES).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const urlPath of Object.keys(PROTOCOL_ROUTES)) expect(existsSync(routeFile(urlPath)), routeFile(urlPath)).toBe(true);
  });

  it("loads, for each path, the route module of that path", async () => {
    for (const [urlPath, load] of Object.entries(PROTOCOL_ROUTES)) {
      const loaded = await load();
      const direct = (await import(/* @vite-ignore */ routeFile(urlPath))) as Record<string, unknown>;
      expect(Object.keys(loaded).length, urlPath).toBeGreaterThan(0);
      for (const method of HTTP_METHODS) expect(loaded[method as keyof typeof loaded], `${method} ${urlPath}`).toBe(direct[method]);
    }
  });

  it("makes the dispatch table of exactly the methods each route file exports, with the handlers it exports", async () => {
    const expected = Object.entries(EXPECTED).flatMap(([urlPath, methods]) => methods.map((method) => `${method} ${urlPath}`));
    expect([...table.keys()].sort()).toEqual(expected.sort());
    for (const [urlPath, methods] of Object.entries(EXPECTED)) {
      const module = (await import(/* @vite-ignore */ routeFile(urlPath))) as Record<string, unknown>;
      const exported = HTTP_METHODS.filter((method) => typeof module[method] === "function");
      expect(exported, urlPath).toEqual(HTTP_METHODS.filter((method) => methods.includes(method)));
      for (const method of exported) expect(table.get(`${method} ${urlPath}`), `${method} ${urlPath}`).toBe(module[method]);
    }
  });

  it("holds route files that reach no Next.js API, and the route files that do are not in it", () => {
    const isNext = (specifier: string) => /^next(-auth|-intl)?($|\/)/.test(specifier);
    for (const urlPath of Object.keys(PROTOCOL_ROUTES)) {
      const { files, packages } = importGraph(routeFile(urlPath));
      const next = [...packages].filter(([specifier]) => isNext(specifier));
      expect(next, `${urlPath} reaches Next.js`).toEqual([]);
      // Nor a module of app/ other than the route file itself (cookies, pages, server actions).
      expect(
        [...files].filter((file) => file.startsWith(path.join(ROOT, "app")) && file !== routeFile(urlPath)),
        urlPath,
      ).toEqual([]);
    }
    // The walk does see what is there: /token's whole graph, and Next.js where it is used (/auth's cookies).
    expect(importGraph(routeFile("/token")).files).toContain(path.join(ROOT, "lib/store/tokens.ts"));
    expect([...importGraph(routeFile("/auth")).packages.keys()].some(isNext)).toBe(true);
  });
});

describe("protocolHandler", () => {
  const request = (method: string | undefined, url: string | undefined) => ({ method, url }) as http.IncomingMessage;

  it("finds the handler of an exact path and an exported method, ignoring the query string", () => {
    expect(protocolHandler(table, request("POST", "/token"))).toBe(tokenPost);
    expect(protocolHandler(table, request("POST", "/token?grant_type=x&a=/b"))).toBe(tokenPost);
    expect(protocolHandler(table, request("POST", "/token?"))).toBe(tokenPost);
    expect(protocolHandler(table, request("GET", "/.well-known/openid-configuration"))).toBe(discoveryGet);
    expect(protocolHandler(table, request("GET", "/userinfo?access_token=x"))).toBe(table.get("GET /userinfo"));
    expect(protocolHandler(table, request("OPTIONS", "/token"))).toBe(table.get("OPTIONS /token"));
  });

  it.each([
    ["a trailing slash", "POST", "/token/"],
    ["a trailing slash before the query", "GET", "/keys/?x=1"],
    ["HEAD", "HEAD", "/keys"],
    ["a method the route does not export", "GET", "/token"],
    ["another unexported method", "DELETE", "/userinfo"],
    ["a lowercase method", "post", "/token"],
    ["another case", "POST", "/TOKEN"],
    ["a longer path", "POST", "/token/other"],
    ["a prefix", "POST", "/tok"],
    ["a double slash", "POST", "//token"],
    ["an encoded path", "POST", "/%74oken"],
    ["a fragment", "POST", "/token#x"],
    ["a page", "GET", "/admin"],
    ["/auth (cookies: Next.js)", "GET", "/auth"],
    ["the root", "GET", "/"],
    ["no method", undefined, "/token"],
    ["no URL", "GET", undefined],
  ])("leaves %s to Next.js", (_, method, url) => {
    expect(protocolHandler(table, request(method, url))).toBeUndefined();
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
/** The server's table: the real one and two handlers of this test. */
let serverTable: DispatchTable;
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
/** What the last dispatched handler received. */
let received: Request | undefined;
/** What the last dispatched JSON endpoint received (JsonHandler.answer). */
let receivedPlain: HttpRequest | undefined;

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

/** A handler's answer, as the dispatch should write it: its headers plus Next's Vary, as lines. */
async function expected(response: Response) {
  const headerLines: [string, string][] = [["vary", NEXT_VARY]];
  for (const [name, value] of response.headers) if (name !== "set-cookie") headerLines.push([name, value]);
  for (const cookie of response.headers.getSetCookie()) headerLines.push(["set-cookie", cookie]);
  return { status: response.status, headers: headerLines.sort(), body: Buffer.from(await response.arrayBuffer()) };
}
const served = (answer: Answer) => ({
  status: answer.status,
  headers: answer.rawHeaders.filter(([name]) => !TRANSPORT.has(name)).sort(),
  body: answer.body,
});

beforeAll(async () => {
  // Handlers of this test beside the real table: what the dispatch hands a handler (which reads its body as every
  // protocol handler does, through readBodyText), and headers it must keep apart.
  serverTable = new Map(await loadDispatchTable());
  serverTable.set("POST /echo", async (request) => {
    received = request;
    return Response.json({ url: request.url, method: request.method, body: await readBodyText(request) });
  });
  serverTable.set(
    "POST /echo-json",
    Object.assign(async () => new Response("the dispatch answers a JSON endpoint through answer()", { status: 500 }), {
      answer: async (request: HttpRequest) => {
        receivedPlain = request;
        return jsonAnswer({ url: request.url, method: request.method, body: await readBodyText(request) }, 201, { Vary: "Origin" });
      },
    }),
  );
  serverTable.set("GET /cookies", async () => {
    const headers = new Headers({ "content-type": "text/plain", vary: "Origin" });
    headers.append("set-cookie", "a=1; Path=/; HttpOnly");
    headers.append("set-cookie", "b=2, with a comma; Expires=Wed, 21 Oct 2099 07:28:00 GMT");
    headers.append("set-cookie", "c=3");
    return new Response("three cookies", { status: 201, headers });
  });
  server = http.createServer((request, response) => {
    const handler = protocolHandler(serverTable, request);
    if (!handler) {
      response.writeHead(404, { "content-type": "text/plain" }).end("left to Next.js");
      return;
    }
    dispatch(handler, ISSUER, request, response).catch(() => {
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

describe("dispatch", () => {
  it("answers GET /.well-known/openid-configuration as the route handler does", async () => {
    const answer = await send({ path: "/.well-known/openid-configuration?ignored=1" });
    const direct = await discoveryGet(new Request("http://localhost/.well-known/openid-configuration"));
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe(direct.headers.get("content-type"));
    expect(answer.headers["cache-control"]).toBe("public, max-age=3600");
    expect(answer.headers["access-control-allow-origin"]).toBe("*");
    expect(lines(answer, "vary")).toEqual([NEXT_VARY]);
    expect(JSON.parse(answer.body.toString()).issuer).toBe(ISSUER);
    expect(served(answer)).toEqual(await expected(direct));
  });

  it("answers a bad POST /token as the route handler does (status, headers, body)", async () => {
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
      const direct = await tokenPost(new Request(`${ISSUER}/token${query}`, { method: "POST", headers: { "content-type": type }, body }));
      expect(answer.status, what).toBeGreaterThanOrEqual(400);
      expect(answer.headers["content-type"], what).toBe("application/json");
      expect(answer.headers["cache-control"], what).toBe("no-store");
      // Next's Vary and the handler's, on lines of their own.
      expect(lines(answer, "vary"), what).toEqual([NEXT_VARY, "Origin"]);
      expect(JSON.parse(answer.body.toString()), what).toMatchObject({ error: expect.any(String), status: answer.status });
      expect(served(answer), what).toEqual(await expected(direct));
      expect(answer.headers.connection, what).toBe("keep-alive");
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([401, 400, 415, 400]);
  });

  it("hands the handler the request: the issuer's origin with the path and query, method, headers and body", async () => {
    const body = `x=${"é".repeat(100)}&y=2`;
    const answer = await send({
      method: "POST",
      path: "/echo?q=1&q=2",
      headers: { "content-type": FORM["content-type"], "x-test": "one" },
      body,
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString())).toEqual({ url: `${ISSUER}/echo?q=1&q=2`, method: "POST", body });
    expect(received!.headers.get("x-test")).toBe("one");
    expect(received!.headers.get("content-type")).toBe(FORM["content-type"]);
  });

  it("hands a JSON endpoint a plain request, no web Request, and writes its answer framed by its length", async () => {
    const body = `x=${"é".repeat(100)}&y=2`;
    const answer = await send({
      method: "POST",
      path: "/echo-json?q=1",
      headers: { "content-type": FORM["content-type"], "x-test": "one" },
      body,
    });
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body.toString())).toEqual({ url: `${ISSUER}/echo-json?q=1`, method: "POST", body });
    expect(receivedPlain).not.toBeInstanceOf(Request);
    expect([receivedPlain!.headers.get("X-Test"), receivedPlain!.headers.has("x-test"), receivedPlain!.headers.get("x-absent")]).toEqual([
      "one",
      true,
      null,
    ]);
    expect(answer.headers["content-length"]).toBe(String(answer.body.length));
    expect(answer.headers["transfer-encoding"]).toBeUndefined();
    expect(answer.headers["content-type"]).toBe("application/json");
    expect(lines(answer, "vary")).toEqual([NEXT_VARY, "Origin"]);
  });

  it("keeps every Set-Cookie (and Vary) of an answer on a line of its own", async () => {
    const answer = await send({ path: "/cookies" });
    expect(answer.status).toBe(201);
    expect(lines(answer, "set-cookie")).toEqual([
      "a=1; Path=/; HttpOnly",
      "b=2, with a comma; Expires=Wed, 21 Oct 2099 07:28:00 GMT",
      "c=3",
    ]);
    expect(lines(answer, "vary")).toEqual([NEXT_VARY, "Origin"]);
    expect(answer.body.toString()).toBe("three cookies");
  });

  it("leaves any other request to the fall-through (Next.js)", async () => {
    for (const [method, urlPath] of [
      ["GET", "/token"],
      ["POST", "/token/"],
      ["HEAD", "/keys"],
      ["GET", "/admin"],
    ]) {
      const answer = await send({ method, path: urlPath });
      expect(answer.status, `${method} ${urlPath}`).toBe(404);
    }
  });

  describe("a body over MAX_BODY_BYTES", () => {
    const tooLarge = async () => {
      const direct = await tokenPost(
        new Request(`${ISSUER}/token`, { method: "POST", headers: FORM, body: `a=${"x".repeat(MAX_BODY_BYTES)}` }),
      );
      expect(direct.status).toBe(413);
      return expected(direct);
    };

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
        const direct = await tokenPost(new Request(`${ISSUER}/token`, { method: "POST", headers: FORM, body }));
        expect(served(answer)).toEqual(await expected(direct));
      }
    });
  });
});
