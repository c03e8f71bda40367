/**
 * Keyfob's HTTP server: a node:http server of our own that answers the protocol routes itself
 * (lib/http/routes.ts, through server/protocol.ts) and hands every other request to Next.js (pages,
 * server actions, the browser's redirect endpoints), in every mode, `npm run dev` included. So the
 * handlers learn the caller's real address (the socket, or X-Forwarded-For through TRUSTED_PROXIES
 * only), metrics can have a port of their own, and SIGTERM drains in-flight requests before the
 * database pool closes. The protocol routes answer as soon as the server listens, while Next.js
 * prepares itself for the pages, which wait for it.
 */
import http from "node:http";
import { type Config, warnUnknownVariables } from "../lib/config";
import { CLIENT_IP_HEADER, clientAddress } from "../lib/http/client-ip";
import { isClientAbort } from "../lib/http/respond";
import { withAccessLog } from "./access-log";
import { protocolRoute, serveProtocol } from "./protocol";
import { startTracing, stopTracing } from "./tracing";
import { isServerAction, loadServerActionScreen, screenServerAction } from "./server-actions";
import { log } from "../lib/log";
import { hasControlCharacter } from "../lib/oauth/params";
import { projectRoot as projectRootOf } from "../lib/project-root";
import { beginDraining, closeKeyfob, isDraining, keyfob } from "../lib/runtime";

const projectRoot = projectRootOf(import.meta.dirname);

/** How long an instance keeps answering after SIGTERM before it stops accepting connections. */
const DRAIN_GRACE_MS = 1_000;

export type RunningServer = { port: number; close(): Promise<void> };

export async function serve(config: Config, options: { dev: boolean }): Promise<RunningServer> {
  // React and Next pick their production or development builds when first loaded.
  (process.env as Record<string, string>).NODE_ENV ??= options.dev ? "development" : "production";
  // stdout carries the JSON log only: human text (Next.js's start-up notes, a library's console.log) goes to stderr.
  console.log = console.info = console.debug = console.error;
  warnUnknownVariables(process.env);
  await startTracing();
  const server = http.createServer();
  const origin = new URL(config.issuerUrl).origin;

  const { default: next } = await import("next");
  const app = next({ dev: options.dev, dir: projectRoot, hostname: "localhost", port: config.port, httpServer: server });
  // Pages wait for Next.js to be prepared (about a second); the protocol endpoints do not.
  const prepared = app
    .prepare()
    .then(() => ({ next: app.getRequestHandler(), actions: loadServerActionScreen(projectRoot, origin, options.dev) }));
  prepared.catch(() => undefined); // reported by `await prepared` below
  const handle = async (request: http.IncomingMessage, response: http.ServerResponse) => {
    const { next, actions } = await prepared;
    if (!isServerAction(request)) return next(request, response);
    // Next answers 500 to a cross-site, oversized or undecodable server action: screened here (server/server-actions.ts).
    const screened = await screenServerAction(actions, request, response);
    if (screened) await next(screened, response);
  };

  server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) =>
    withAccessLog(request, response, () => {
      if (isDraining()) response.setHeader("Connection", "close"); // keep-alive clients move to another instance
      if (!decodablePath(request.url)) {
        // Next.js answers 500 to a path whose percent-encoding is broken (/admin/clients/%E0%A4%A).
        // A path that does not decode, or decodes to a control character, names nothing here.
        response.writeHead(404, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" }).end("Not found");
        return;
      }
      delete request.headers[CLIENT_IP_HEADER];
      const ip = clientAddress(request, config.trustProxy);
      if (ip) request.headers[CLIENT_IP_HEADER] = ip;
      const route = protocolRoute(request);
      (route ? serveProtocol(keyfob(), route, origin, request, response) : handle(request, response)).catch((error: unknown) =>
        requestFailed(error, request, response),
      );
    }),
  );
  await listen(server, config.port, config.host);
  try {
    await prepared;
  } catch (error) {
    await new Promise((resolve) => server.close(resolve));
    throw error;
  }

  const metrics = config.metricsPort ? await serveMetrics(config.metricsPort, config.host) : undefined;

  return {
    port: (server.address() as { port: number }).port,
    async close() {
      beginDraining();
      // Requests sent just before the signal can sit unread in socket buffers while the event loop
      // is busy; closing now would drop them as idle connections. Meanwhile readiness fails.
      await new Promise((resolve) => setTimeout(resolve, Math.min(DRAIN_GRACE_MS, config.shutdownTimeout * 1000)));
      await drain(server, config.shutdownTimeout * 1000);
      if (metrics) await new Promise((resolve) => metrics.close(resolve));
      await app.close();
      await closeKeyfob();
      await stopTracing();
    },
  };
}

/**
 * A request that failed outside its handler (reading its body, Next.js itself): 500 and one error
 * line; but a client that closed the connection mid-request (isClientAbort) is no failure of ours,
 * and is logged at info.
 */
export function requestFailed(error: unknown, request: http.IncomingMessage, response: http.ServerResponse): void {
  const fields = { path: request.url?.split("?")[0], error: error instanceof Error ? error.name : typeof error };
  if (isClientAbort(error)) log.info("request aborted by the client", fields);
  else log.error("request failed", fields);
  if (!response.headersSent) response.writeHead(500, { "Content-Type": "text/plain" });
  response.end();
}

/** Whether a request's path decodes to text without control characters: no route has any other. */
function decodablePath(url: string | undefined): boolean {
  try {
    return !hasControlCharacter(decodeURIComponent((url ?? "/").split("?")[0]));
  } catch {
    return false;
  }
}

/** Stops accepting connections and waits for in-flight requests, closing keep-alive connections as they go idle. */
async function drain(server: http.Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const idle = setInterval(() => server.closeIdleConnections(), 250);
  const deadline = setTimeout(() => {
    log.warn("shutdown timeout: closing the remaining connections", { timeoutSeconds: timeoutMs / 1000 });
    server.closeAllConnections();
  }, timeoutMs);
  await closed;
  clearInterval(idle);
  clearTimeout(deadline);
}

/** Prometheus metrics on a port of their own (METRICS_PORT): GET /metrics, nothing else. */
async function serveMetrics(port: number, host: string | undefined): Promise<http.Server> {
  const { allMetrics } = await import("../lib/http/metrics");
  const server = http.createServer(async (request, response) => {
    if (request.method !== "GET" || request.url?.split("?")[0] !== "/metrics") {
      response.writeHead(404).end();
      return;
    }
    const answer = await allMetrics();
    response.writeHead(answer.status, answer.headers).end(answer.body);
  });
  await listen(server, port, host);
  log.info("metrics listening", { port });
  return server;
}

function listen(server: http.Server, port: number, host: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
