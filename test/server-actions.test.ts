/**
 * server/server-actions.ts behind a real node:http server, with a stand-in for Next.js that reads
 * the body it is handed: server actions Next would answer with 500 (a foreign Origin, a body over
 * the limit, an undecodable body) or 4xx with a logged stack (an unknown id) are answered first;
 * the others reach "Next" with their body intact, on a connection that stays usable. What the real
 * Next.js build does with them is e2e/server-actions.spec.ts.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isServerAction, loadServerActionScreen, screenServerAction, type ServerActionScreen } from "@/server/server-actions";

const ORIGIN = "http://localhost:3000";
const ID = `40${"ab".repeat(20)}`; // 42 characters, as Next's ids
const screen: ServerActionScreen = { origin: ORIGIN, bodyLimit: 1024, actionIds: new Set([ID]) };

let server: http.Server;
let base: string;
/** What the stand-in for Next.js received: the body it read from the request it was handed. */
const reached: { url?: string; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer(async (request, response) => {
    const next = async (req: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      reached.push({ url: req.url, body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(200, { "Content-Type": "text/x-component" }).end("ok");
    };
    if (!isServerAction(request)) return next(request);
    const screened = await screenServerAction(screen, request, response);
    if (screened) await next(screened);
  });
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  base = `http://localhost:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

/** A raw request (node:http, so Origin, Content-Type and chunking are exactly as given). */
function post(
  headers: Record<string, string | undefined>,
  body: string | Buffer = "[]",
  options: { chunked?: boolean; agent?: http.Agent } = {},
) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
    const all = Object.entries({ "next-action": ID, origin: ORIGIN, "content-type": "text/plain;charset=UTF-8", ...headers }).filter(
      ([, value]) => value !== undefined,
    ) as [string, string][];
    const request = http.request(
      `${base}/admin/clients`,
      { method: "POST", headers: Object.fromEntries(all), agent: options.agent },
      (response) => {
        const chunks: Buffer[] = [];
        response
          .on("data", (c) => chunks.push(c))
          .on("end", () => resolve({ status: response.statusCode!, headers: response.headers, text: Buffer.concat(chunks).toString() }));
      },
    );
    request.on("error", reject);
    if (options.chunked) {
      for (let i = 0; i < body.length; i += 100) request.write(body.slice(i, i + 100));
      request.end();
    } else {
      request.setHeader("content-length", Buffer.byteLength(body));
      request.end(body);
    }
  });
}

const multipart = (root: string, boundary = "----b0undary") => ({
  type: `multipart/form-data; boundary=${boundary}`,
  body: `--${boundary}\r\nContent-Disposition: form-data; name="0"\r\n\r\n${root}\r\n--${boundary}--\r\n`,
});

describe("server actions screened before Next.js", () => {
  it("hands a well-formed action to Next with its body intact: text, multipart, url-encoded, and without an Origin", async () => {
    reached.length = 0;
    const mp = multipart('["$K1"]');
    expect((await post({}, '["x",{"a":1}]')).status).toBe(200);
    expect((await post({ "content-type": mp.type }, mp.body)).status).toBe(200);
    expect((await post({ "content-type": "application/x-www-form-urlencoded" }, "a=b")).status).toBe(200);
    expect((await post({ origin: undefined })).status).toBe(200); // not a browser's: Next lets it through too
    expect(reached.map((r) => r.body)).toEqual(['["x",{"a":1}]', mp.body, "a=b", "[]"]);
  });

  it("refuses a foreign Origin, and `null`, with 403", async () => {
    for (const origin of ["https://evil.example", "null", "http://localhost:3001", `${ORIGIN}/`]) {
      const answer = await post({ origin });
      expect([origin, answer.status, answer.headers["content-type"]]).toEqual([origin, 403, "text/plain"]);
    }
  });

  it("refuses a Content-Type Next's action client never sends with 415", async () => {
    for (const type of ["application/json", "", "text/html", "multipart/mixed; boundary=x"]) {
      expect((await post({ "content-type": type })).status, type).toBe(415);
    }
  });

  it("answers an id the build does not know as Next does (409, or 400 when malformed), with the header its router reads", async () => {
    const unknown = await post({ "next-action": `40${"cd".repeat(20)}` });
    expect([unknown.status, unknown.headers["x-nextjs-action-not-found"], unknown.text]).toEqual([409, "1", "Server Action unavailable."]);
    for (const id of ["x", "toString", "__proto__", ""]) {
      const answer = await post({ "next-action": id });
      expect([id, answer.status, answer.headers["x-nextjs-action-not-found"]]).toEqual([id, 400, "1"]);
    }
  });

  it("refuses a body over the limit with 413, declared or streamed, and closes the connection", async () => {
    const large = `[${'"x",'.repeat(300)}"x"]`;
    const declared = await post({}, large);
    expect([declared.status, declared.headers.connection]).toEqual([413, "close"]);
    const streamed = await post({}, large, { chunked: true });
    expect([streamed.status, streamed.headers.connection]).toEqual([413, "close"]);
    expect((await post({}, `[${'"x",'.repeat(200)}"x"]`, { chunked: true })).status).toBe(200); // 1005 bytes, streamed
  });

  it("refuses with 400 a body whose root is not the arguments' JSON array", async () => {
    const mpGarbage = multipart("garbage{");
    for (const [type, body] of [
      ["text/plain", "garbage{{"],
      ["text/plain", '{"a":1}'],
      ["text/plain", ""],
      ["text/plain", "\u0000"],
      ["multipart/form-data; boundary=xyz", "garbage"],
      ["multipart/form-data", "--x\r\n"],
      [mpGarbage.type, mpGarbage.body],
      [multipart("[]", "one").type, multipart("[]", "other").body],
    ]) {
      const answer = await post({ "content-type": type }, body);
      expect([type, body, answer.status, answer.text]).toEqual([type, body, 400, "Invalid Server Action request."]);
    }
  });

  it("keeps a connection usable after a screened action and after a refusal", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set();
      agent.on("free", (socket) => sockets.add(socket));
      expect((await post({}, "[]", { agent })).status).toBe(200);
      expect((await post({ origin: "https://evil.example" }, "[]", { agent })).status).toBe(403);
      expect((await post({}, "[]", { agent })).status).toBe(200);
      expect(sockets.size).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it("leaves every other request alone, a GET with a Next-Action header included", async () => {
    const answer = await fetch(`${base}/admin`, { headers: { "next-action": ID, origin: "https://evil.example" } });
    expect(answer.status).toBe(200);
  });
});

describe("what the build says", () => {
  it("reads the action ids and Next's body limit from the build, Next's default 1 MB when none is set", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "keyfob-actions-"));
    mkdirSync(path.join(root, ".next", "server"), { recursive: true });
    writeFileSync(
      path.join(root, ".next", "server", "server-reference-manifest.json"),
      JSON.stringify({ node: { [ID]: {} }, edge: {}, encryptionKey: "k" }),
    );
    writeFileSync(path.join(root, ".next", "required-server-files.json"), JSON.stringify({ config: { experimental: {} } }));
    expect(loadServerActionScreen(root, ORIGIN, false)).toEqual({ origin: ORIGIN, bodyLimit: 1024 * 1024, actionIds: new Set([ID]) });
    writeFileSync(
      path.join(root, ".next", "required-server-files.json"),
      JSON.stringify({ config: { experimental: { serverActions: { bodySizeLimit: "2mb" } } } }),
    );
    expect(loadServerActionScreen(root, ORIGIN, false).bodyLimit).toBe(2 * 1024 * 1024);
    // Under `next dev` the ids change as files do: none are checked.
    expect(loadServerActionScreen(path.join(root, "nowhere"), ORIGIN, true)).toEqual({ origin: ORIGIN, bodyLimit: 1024 * 1024 });
  });
});
