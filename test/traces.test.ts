/**
 * Traces, end to end: a Keyfob instance in a process of its own (test/support/protocol-instance.ts)
 * with OTEL_EXPORTER_OTLP_ENDPOINT set sends its spans as OTLP/HTTP JSON to a receiver of the
 * test's. A code exchange (/token, authorization_code) and a Flow A handshake (generate_challenge,
 * submit_challenge) each give a server span named by the endpoint with its status (and a refusal's
 * OAuth error code), children for the PostgreSQL statements and the token signing, and a caller's
 * W3C traceparent makes the request's span its child.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startProtocolProcess, type ProtocolProcess } from "./support/protocol-process";
import { mintCodes, registerLoadClients } from "./support/token-load";

type Span = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
};

const REDIRECT = "https://traced.example.com/callback";
const SERVER = 2; // OTLP's SPAN_KIND_SERVER

/** An OTLP/HTTP receiver for JSON trace exports, keeping every span it is sent. */
async function otlpReceiver() {
  const spans: Span[] = [];
  const arrived = new Set<() => void>();
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      expect(request.url).toBe("/v1/traces");
      expect(request.headers["content-type"]).toMatch(/^application\/json/);
      const exported = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] };
      spans.push(...exported.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
      for (const notify of arrived) notify();
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    /** The spans of trace `traceId` once `complete` says they are all there. */
    async trace(traceId: string, complete: (spans: Span[]) => boolean): Promise<Span[]> {
      for (;;) {
        const mine = spans.filter((span) => span.traceId === traceId);
        if (complete(mine)) return mine;
        await new Promise<void>((resolve) => {
          const notify = () => {
            arrived.delete(notify);
            resolve();
          };
          arrived.add(notify);
        });
      }
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

const attribute = (span: Span, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value && (value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined));
};

/** A W3C traceparent of a caller's trace: [header, trace id, parent span id]. */
function traceparent(): [string, string, string] {
  const traceId = randomBytes(16).toString("hex");
  const parent = randomBytes(8).toString("hex");
  return [`00-${traceId}-${parent}-01`, traceId, parent];
}

let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
let keyfob: ProtocolProcess;
let licenseId: string;
let appId: string;
let pool: pg.Pool;

beforeAll(async () => {
  receiver = await otlpReceiver();
  ({ licenseId, appId } = await registerLoadClients(process.env.DATABASE_URL!, REDIRECT));
  pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  keyfob = await startProtocolProcess({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50" });
}, 60_000);

afterAll(async () => {
  await keyfob?.stop();
  await pool?.end();
  await receiver?.close();
});

const post = (path: string, form: Record<string, string>, header: string) =>
  fetch(`${keyfob.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", traceparent: header },
    body: new URLSearchParams(form),
  });

/** The trace's server span for `route`, a child of the caller's span, with its statements and signing below it. */
async function requestTrace(traceId: string, parent: string, route: string, signs: boolean) {
  const spans = await receiver.trace(traceId, (all) => {
    const server = all.find((span) => span.kind === SERVER && attribute(span, "http.route") === route);
    return !!server && (!signs || all.some((span) => span.name.startsWith("sign ")));
  });
  const server = spans.find((span) => span.kind === SERVER && attribute(span, "http.route") === route)!;
  expect(server.parentSpanId).toBe(parent);
  const below = spans.filter((span) => span.parentSpanId === server.spanId);
  return { server, below, spans };
}

it("traces a code exchange: the /token span under the caller's, its statements and signing below", async () => {
  const [[code, verifier]] = await mintCodes(pool, 1, appId, REDIRECT);
  const [header, traceId, parent] = traceparent();
  const response = await post(
    "/token",
    { grant_type: "authorization_code", client_id: appId, code, code_verifier: verifier, redirect_uri: REDIRECT },
    header,
  );
  expect(response.status).toBe(200);
  const { server, below } = await requestTrace(traceId, parent, "token", true);
  expect(server.name).toBe("POST token");
  expect(attribute(server, "http.response.status_code")).toBe(200);
  expect(attribute(server, "oauth.error")).toBeUndefined();
  const statements = below.filter((span) => attribute(span, "db.system.name") === "postgresql");
  expect(statements.length).toBeGreaterThan(0);
  for (const statement of statements) expect(String(attribute(statement, "db.query.text"))).not.toContain(code);
  expect(below.map((span) => span.name)).toEqual(expect.arrayContaining(["sign at+jwt", "sign id_token"]));

  // A refusal: its OAuth error code on the span.
  const [again, againTrace, againParent] = traceparent();
  const refused = await post(
    "/token",
    { grant_type: "authorization_code", client_id: appId, code, code_verifier: verifier, redirect_uri: REDIRECT },
    again,
  );
  expect(refused.status).toBe(400);
  const { server: refusal } = await requestTrace(againTrace, againParent, "token", false);
  expect(attribute(refusal, "http.response.status_code")).toBe(400);
  expect(attribute(refusal, "oauth.error")).toBe("invalid_grant");
});

it("traces a Flow A handshake: generate_challenge and submit_challenge, each under the caller's span", async () => {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const [first, firstTrace, firstParent] = traceparent();
  const challenge = await post(
    "/auth/web3/generate_challenge",
    { client_id: licenseId, domain: REDIRECT, scope: "openid email", response_type: "code", address: wallet.address },
    first,
  );
  expect(challenge.status).toBe(200);
  const { state, challenge: message } = (await challenge.json()) as { state: string; challenge: string };
  const generated = await requestTrace(firstTrace, firstParent, "generate_challenge", false);
  expect(generated.server.name).toBe("POST generate_challenge");
  expect(attribute(generated.server, "http.response.status_code")).toBe(200);
  expect(generated.below.some((span) => attribute(span, "db.system.name") === "postgresql")).toBe(true);

  const [second, secondTrace, secondParent] = traceparent();
  const tokens = await post(
    "/auth/web3/submit_challenge",
    { client_id: licenseId, state, grant_type: "authorization_code", domain: REDIRECT, signature: await wallet.signMessage({ message }) },
    second,
  );
  expect(tokens.status).toBe(200);
  const submitted = await requestTrace(secondTrace, secondParent, "submit_challenge", true);
  expect(attribute(submitted.server, "http.response.status_code")).toBe(200);
  expect(submitted.below.some((span) => attribute(span, "db.system.name") === "postgresql")).toBe(true);
  expect(submitted.below.map((span) => span.name)).toEqual(expect.arrayContaining(["sign at+jwt", "sign id_token"]));
});
