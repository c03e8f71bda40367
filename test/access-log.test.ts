/**
 * The log as an operator reads it, from a Keyfob instance in a process of its own (its stdout):
 * JSON lines only, one access line per request (method, route, status, duration; never the query),
 * the request's id taken from a valid X-Request-Id or made up, echoed in the answer and carried by
 * every line the request writes; LOG_LEVEL leaves the info lines out. Secrets under known field
 * names are redacted whoever logs them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { log, logInto } from "@/lib/log";
import { startProtocolProcess, type ProtocolProcess } from "./support/protocol-process";

type Line = Record<string, unknown>;

/** An instance whose stdout lines are collected from now on (the start-up lines before are not). */
async function instance(env: Record<string, string>) {
  const started = await startProtocolProcess(env);
  let stdout = "";
  started.child.stdout!.on("data", (chunk) => (stdout += chunk));
  return { ...started, stdout: () => stdout };
}

/** The JSON lines written so far (each must parse); waits until `until` finds one. */
async function linesOf(stdout: () => string, until: (line: Line) => boolean): Promise<Line[]> {
  for (;;) {
    const lines = stdout()
      .split("\n")
      .filter(Boolean)
      .map((text) => JSON.parse(text) as Line);
    if (lines.some(until)) return lines;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the access log", () => {
  let keyfob: ProtocolProcess & { stdout: () => string };
  beforeAll(async () => {
    keyfob = await instance({ KEYFOB_LOG: "", LOG_LEVEL: "info" });
  }, 60_000);
  afterAll(() => keyfob?.stop());

  it("writes one line per request with its id, route and status, never the query", async () => {
    const response = await fetch(`${keyfob.url}/.well-known/openid-configuration?code=query-secret`, {
      headers: { "X-Request-Id": "edge-7f3a.1" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBe("edge-7f3a.1");
    const lines = await linesOf(keyfob.stdout, (line) => line.request_id === "edge-7f3a.1");
    expect(lines.filter((line) => line.request_id === "edge-7f3a.1")).toEqual([
      {
        level: "info",
        time: expect.any(String),
        request_id: "edge-7f3a.1",
        method: "GET",
        route: "discovery",
        status: 200,
        ms: expect.any(Number),
        msg: "request",
      },
    ]);
    expect(keyfob.stdout()).not.toContain("query-secret");
  });

  it("makes up an id when the caller's is missing or not plain, and every line of the request carries it", async () => {
    const ids: string[] = [];
    for (const given of [undefined, "x".repeat(65), "id with spaces", "<script>"]) {
      const response = await fetch(`${keyfob.url}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...(given ? { "X-Request-Id": given } : {}) },
        body: "grant_type=unknown_grant&client_id=nobody",
      });
      expect(response.status).toBe(400);
      const id = response.headers.get("x-request-id")!;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      ids.push(id);
    }
    expect(new Set(ids).size).toBe(4);
    const lines = await linesOf(keyfob.stdout, (line) => line.request_id === ids[3] && line.msg === "request");
    for (const id of ids) {
      const own = lines.filter((line) => line.request_id === id);
      expect(own.map((line) => line.msg)).toEqual(["request refused", "request"]);
      expect(own[1]).toMatchObject({ method: "POST", route: "token", status: 400 });
    }
  });

  it("leaves out info lines below LOG_LEVEL", async () => {
    const quiet = await instance({ KEYFOB_LOG: "", LOG_LEVEL: "warn" });
    const response = await fetch(`${quiet.url}/.well-known/openid-configuration`, { headers: { "X-Request-Id": "quiet-1" } });
    expect(response.headers.get("x-request-id")).toBe("quiet-1");
    await response.text();
    // Whatever it had queued is written at exit.
    const ended = new Promise((resolve) => quiet.child.stdout!.once("close", resolve));
    await quiet.stop();
    await ended;
    expect(quiet.stdout()).toBe("");
  }, 60_000);
});

describe("redaction", () => {
  it("censors values under a secret's field name, whoever logs them", () => {
    let written = "";
    const restore = logInto((line) => (written += line));
    try {
      log.info("careless", { access_token: "eyJ.secret", client_secret: "s3cret", headers: { authorization: "Bearer t0ken" }, kid: "k1" });
    } finally {
      restore();
    }
    expect(JSON.parse(written)).toMatchObject({ access_token: "[redacted]", client_secret: "[redacted]", kid: "k1" });
    expect(written).not.toMatch(/eyJ|s3cret|t0ken/);
  });
});
