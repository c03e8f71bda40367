/**
 * A client that closes the connection in the middle of its request is logged at info, never as an
 * error (nor answered as an outage: Node fails the request's stream with Error "aborted", code
 * ECONNRESET, which read as a database reset made it a 503 "dependency unavailable"). Both ways a
 * body is read, behind real node:http servers, with a raw socket that sends half a body and closes:
 * 1. by a page endpoint's wrapper (lib/http/endpoint.ts), from the node request itself, as
 *    Next.js hands it over (app-route's NextRequest takes the IncomingMessage as its body);
 * 2. by Keyfob's server before a protocol route (server/protocol.ts), whose failures
 *    server/serve.ts's requestFailed logs.
 */
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isClientAbort, toOAuthError } from "@/lib/http/respond";
import { log } from "@/lib/log";
import { keyfob } from "@/lib/runtime";
import { protocolRoute, serveProtocol } from "@/server/protocol";
import { requestFailed } from "@/server/serve";
import { POST as authorizePost } from "@/app/auth/route";
import { ISSUER } from "./support/flow-a";

afterEach(() => vi.restoreAllMocks());

/** A server on a free port, answering with `listener`; resolves once its answer to one request is over. */
async function serverWith(listener: (request: http.IncomingMessage, response: http.ServerResponse) => Promise<void>) {
  let settle!: () => void;
  const handled = new Promise<void>((resolve) => (settle = resolve));
  const server = http.createServer((request, response) => void listener(request, response).finally(settle));
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  return { port: (server.address() as AddressInfo).port, handled, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Sends a form POST announcing 1000 bytes, sends 20, and closes the connection. */
async function abortMidBody(port: number, path: string) {
  const socket = net.connect(port, "localhost");
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.on("error", () => {});
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ngrant_type=client_cr`,
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.destroy();
}

function spyOnLog() {
  return { error: vi.spyOn(log, "error").mockImplementation(() => {}), info: vi.spyOn(log, "info").mockImplementation(() => {}) };
}

describe("a client that closes the connection mid-request", () => {
  it("is a 4xx logged at info by a page endpoint reading the body (as under Next.js)", async () => {
    const logged = spyOnLog();
    let status = 0;
    const server = await serverWith(async (request, response) => {
      const web = new Request(`${ISSUER}${request.url}`, {
        method: request.method,
        headers: request.headers as Record<string, string>,
        body: request as unknown as BodyInit,
        duplex: "half",
      } as RequestInit);
      const answer = await authorizePost(web);
      status = answer.status;
      response.writeHead(answer.status).end(await answer.text());
    });
    try {
      await abortMidBody(server.port, "/auth");
      await server.handled;
    } finally {
      await server.close();
    }
    expect(logged.error).not.toHaveBeenCalled();
    expect(logged.info).toHaveBeenCalledWith(
      "request refused",
      expect.objectContaining({ endpoint: "authorize", status: 400, error: "invalid_request" }),
    );
    expect(status).toBe(400);
  });

  it("is logged at info by Keyfob's server when it reads the body for a protocol endpoint", async () => {
    const logged = spyOnLog();
    const server = await serverWith((request, response) =>
      serveProtocol(keyfob(), protocolRoute(request)!, ISSUER, request, response).catch((error: unknown) =>
        requestFailed(error, request, response),
      ),
    );
    try {
      await abortMidBody(server.port, "/token");
      await server.handled;
    } finally {
      await server.close();
    }
    // The route never ran: nothing was counted or refused.
    expect(logged.info).not.toHaveBeenCalledWith("request refused", expect.anything());
    expect(logged.error).not.toHaveBeenCalled();
    expect(logged.info).toHaveBeenCalledWith("request aborted by the client", { path: "/token", error: "Error" });
  });

  it("is told apart from a reset by the database, which stays an outage", () => {
    const aborted = Object.assign(new Error("aborted"), { code: "ECONNRESET" });
    const databaseReset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    expect(isClientAbort(aborted)).toBe(true);
    expect(isClientAbort(new TypeError("terminated", { cause: aborted }))).toBe(true);
    expect(isClientAbort(databaseReset)).toBe(false);
    expect(toOAuthError(aborted)).toMatchObject({ code: "invalid_request", status: 400 });
    expect(toOAuthError(databaseReset)).toMatchObject({ code: "temporarily_unavailable", status: 503 });
    // node-postgres's error when PostgreSQL closes a connection mid-query (a restart).
    expect(toOAuthError(new Error("Connection terminated unexpectedly"))).toMatchObject({ code: "temporarily_unavailable", status: 503 });
  });

  it("logs any other failure of the server as an error, with a 500", async () => {
    const logged = spyOnLog();
    const server = await serverWith(async (request, response) => requestFailed(new TypeError("boom"), request, response));
    try {
      const answer = await fetch(`http://localhost:${server.port}/admin`);
      expect(answer.status).toBe(500);
    } finally {
      await server.close();
    }
    expect(logged.error).toHaveBeenCalledWith("request failed", { path: "/admin", error: "TypeError" });
  });
});
