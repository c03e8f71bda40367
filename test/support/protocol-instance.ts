/**
 * One Keyfob instance in a process of its own, for tests that kill it: the protocol routes served as
 * `npm run serve` serves them (server/protocol.ts), behind a node:http server that hands them the
 * caller's address, but without Next.js, so no build is needed. Configured from the environment like the server (PORT,
 * DATABASE_URL, KEYFOB_SECRET, ...) on a migrated database, with its access log and traces. Prints `listening` once a signing key is
 * loaded; SIGTERM closes it as the server does (in-flight requests, buffered audit events, pool).
 *
 *   node --import tsx test/support/protocol-instance.ts
 */
import http from "node:http";
import { loadConfig } from "../../lib/config";
import { CLIENT_IP_HEADER, clientAddress } from "../../lib/http/client-ip";
import { closeKeyfob, keyfob } from "../../lib/runtime";
import { withAccessLog } from "../../server/access-log";
import { protocolRoute, serveProtocol } from "../../server/protocol";
import { startTracing, stopTracing } from "../../server/tracing";

await startTracing();
const config = loadConfig();
const origin = new URL(config.issuerUrl).origin;
await keyfob().keys.signingKey();

const server = http.createServer((request, response) =>
  withAccessLog(request, response, () => {
    delete request.headers[CLIENT_IP_HEADER];
    const ip = clientAddress(request, config.trustProxy);
    if (ip) request.headers[CLIENT_IP_HEADER] = ip;
    const route = protocolRoute(request);
    if (!route) return void response.writeHead(404).end();
    serveProtocol(keyfob(), route, origin, request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  }),
);
server.listen(config.port, "localhost", () => console.log("listening"));

process.once("SIGTERM", () => {
  server.close(async () => {
    await closeKeyfob();
    await stopTracing();
    process.exit(0);
  });
  server.closeIdleConnections();
});
