/**
 * For back-channel logout tests: a small relying party whose logout endpoint verifies each logout
 * token against Keyfob's JWKS (Back-Channel Logout 1.0 2.6) and records it, and login sessions in
 * which clients got tokens.
 */
import http from "node:http";
import { createLocalJWKSet, decodeJwt, jwtVerify, type JWTPayload } from "jose";
import type { LoginIdentity } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { jwksAnswer } from "@/lib/http/metadata";
import { completeAuthorization } from "@/lib/interactions/interactions";
import type { Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { findSession } from "@/lib/sessions/login-session";
import { LOGOUT_TOKEN_TYPE } from "@/lib/tokens/logout-token";
import { ISSUER } from "./flow-a";
import { authorizeQuery, google, tokenRequest, type App } from "./flow-b";
import { route } from "./routes";

/**
 * BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS for these tests' relying parties, which listen on this machine:
 * without it, Keyfob neither registers nor delivers to loopback (lib/http/outbound.ts).
 */
export const LOOPBACK_NETWORKS = "127.0.0.0/8,::1/128";

/**
 * The security review's examples of back-channel logout URIs that reached Keyfob's machine, network
 * or a metadata service and were accepted (round 3, item 6): loopback, link-local (the metadata
 * address), private, unique-local, a metadata name.
 */
export const INTERNAL_URIS = [
  "http://127.0.0.1:8080/logout",
  "http://[::1]:8080/logout",
  "https://169.254.169.254/latest/meta-data/",
  "https://10.0.0.1:8443/logout",
  "https://[fd00::1]/logout",
  "https://metadata.google.internal/computeMetadata/v1/",
];

/** What the RP does with a request: answer with a status, or hold it unanswered (a hung delivery). */
export type Behaviour = number | "hang";

/** A relying party's back-channel logout endpoint: verifies every token it gets and records it. */
export class TestRp {
  readonly received: { clientId: string; claims: JWTPayload }[] = [];
  /** Requests seen, verified or not (a hung one too). */
  requests = 0;
  behaviour: Behaviour = 200;
  private server?: http.Server;
  private readonly hung: http.ServerResponse[] = [];

  constructor(
    readonly port: number,
    private readonly keys: () => Keyfob,
  ) {}

  uri(clientId: string) {
    return `http://localhost:${this.port}/logout/${encodeURIComponent(clientId)}`;
  }

  async start(): Promise<void> {
    this.server = http.createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", async () => {
        this.requests++;
        if (this.behaviour === "hang") return void this.hung.push(response);
        const clientId = decodeURIComponent(request.url!.split("/").pop()!);
        try {
          if (request.method !== "POST" || request.headers["content-type"]?.split(";")[0] !== "application/x-www-form-urlencoded")
            throw new Error(`bad request ${request.method} ${request.headers["content-type"]}`);
          const token = new URLSearchParams(body).get("logout_token")!;
          const jwks = createLocalJWKSet(JSON.parse(String((await jwksAnswer(this.keys().keys)).body)));
          const { payload } = await jwtVerify(token, jwks, {
            issuer: ISSUER,
            audience: clientId,
            typ: LOGOUT_TOKEN_TYPE,
            maxTokenAge: 120,
          });
          this.received.push({ clientId, claims: payload });
          response.writeHead(this.behaviour).end();
        } catch (error) {
          this.received.push({ clientId, claims: { error: String(error) } });
          response.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, "localhost", resolve));
  }

  async stop(): Promise<void> {
    for (const response of this.hung.splice(0)) response.destroy();
    this.server?.closeAllConnections();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
    this.server = undefined;
  }

  to(clientId: string) {
    return this.received.filter((r) => r.clientId === clientId).map((r) => r.claims);
  }
}

/**
 * One browser's login session in which each of `apps` redeemed a code (the first logs in, the
 * others continue the session); the session's token and each app's ID token claims.
 */
export async function sessionWith(apps: App[], identity: LoginIdentity = google(), on: Keyfob = keyfob()) {
  let token: string | undefined;
  const idTokens = new Map<string, JWTPayload>();
  for (const app of apps) {
    const start = await startAuthorization(on, authorizeQuery(app));
    if (start.kind !== "login") throw new Error("expected the login page");
    const session = token ? await findSession(on, token) : undefined;
    const completion = await completeAuthorization(on, start.interactionId, session ? { session } : { identity });
    token ??= completion.newSession!.token;
    const code = new URL(completion.location).searchParams.get("code")!;
    const request = tokenRequest(app, { code });
    const response = await (await route("/token", () => on)(request)).json();
    idTokens.set(app.clientId, decodeJwt(response.id_token));
  }
  const session = (await findSession(on, token))!;
  return { token: token!, session, idTokens, accountId: session.accountId };
}

export async function until(condition: () => boolean | Promise<boolean>, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
