/**
 * The yardstick for `npm run bench`: a bare node:http server speaking Flow A's wire format and doing
 * only its cryptography — EIP-4361 challenge text, EIP-191 signature recovery, two RS256 JWTs signed
 * with jose using a key imported once — with clients, signers and states in memory. No database, no
 * framework. Whatever Keyfob spends beyond this is overhead.
 *
 * Recovery is viem's pure-JS secp256k1 (`recovery: "viem"`, the slower floor) or libsecp256k1
 * (`"libsecp256k1"`, the native floor), both on the event loop, through lib/siwe/recovery.ts.
 *
 * With a database (`databaseUrl`, the durable floors), states are rows of a table of its own: one
 * INSERT on generate, one DELETE … RETURNING on submit. It then also answers POST /token for a
 * public client with PKCE S256 on codes the bench writes into bench_floor_codes: the code taken in
 * one DELETE … RETURNING, client, redirect URI and verifier checked, the two RS256 JWTs Keyfob
 * issues (lib/tokens/issue.ts). Nothing else: no rate limit, no audit, no token records.
 *
 * With a chain (`vehicles`, the vehicle tokens' floor) it answers POST /token's token exchange
 * (RFC 8693) for a license: the vehicle's privileges read on chain as Keyfob reads them
 * (lib/vehicles/access.ts: eth_blockNumber, then ownerOf and hasPrivilege at that block, through
 * viem) and the one RS256 JWT Keyfob signs (lib/vehicles/token.ts). The subject token is taken as
 * given (neither verified nor looked up) and nothing is recorded: what is left is the RPC round trips.
 *
 * Run on its own:  REF_CLIENT_ID=0x… REF_DOMAIN=http://localhost:8080/callback REF_SIGNERS=0x… \
 *                  REF_RECOVERY=viem|libsecp256k1 node --import tsx bench/reference-server.ts
 * (REF_PORT, default 0 = any free port; REF_STATE=postgres with REF_DATABASE_URL for the durable
 * floor, REF_PUBLIC_CLIENT_ID for its /token; REF_RPC_URL, REF_CHAIN_ID and REF_VEHICLE_CONTRACTS for
 * vehicle tokens). It prints one JSON line {"port": N} once listening.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import { pathToFileURL } from "node:url";
import { exportJWK, generateKeyPair, importJWK, type CryptoKey } from "jose";
import pg from "pg";
import { getAddress, isAddress, isAddressEqual, isHex, size, type Address, type Hex } from "viem";
import { OAuthError } from "../lib/oauth/errors";
import { opaqueDigest } from "../lib/oauth/opaque";
import { verifyCodeVerifier } from "../lib/oauth/pkce";
import type { Scope } from "../lib/oauth/scope";
import { createChallengeMessage, generateNonce } from "../lib/siwe/challenge";
import { recoverWithLibsecp256k1, recoverWithViem } from "../lib/siwe/recovery";
import { issueTokens, newAccessTokenId, type Grant } from "../lib/tokens/issue";
import { chainPolicy } from "../lib/vehicles/access";
import { parseVehicleDid } from "../lib/vehicles/asset";
import { privilegesOfPermissions } from "../lib/vehicles/exchange";
import { permissionName } from "../lib/vehicles/privileges";
import { signVehicleToken } from "../lib/vehicles/token";
import { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT } from "./flow";

export type ReferenceOptions = {
  port?: number;
  clients: { id: string; domains: string[]; signers: string[] }[];
  chainId?: number;
  accessTokenTtl?: number;
  challengeTtl?: number;
  /** EIP-191 recovery: viem (pure JS, the default) or libsecp256k1 (native). */
  recovery?: "viem" | "libsecp256k1";
  /** States (and /token's codes) in this PostgreSQL database instead of memory. */
  databaseUrl?: string;
  /** Vehicle tokens for the vehicles of these contracts on `chainId`, their privileges read from this RPC provider. */
  vehicles?: { rpcUrl: string; contracts: string[] };
};

/** Keyfob's defaults for a vehicle token: its lifetime (VEHICLE_TOKEN_TTL) and audience (VEHICLE_TOKEN_AUDIENCE). */
const VEHICLE_TOKEN_TTL = 600;
const VEHICLE_TOKEN_AUDIENCE = ["dimo.zone"];

type Pending = { clientId: string; domain: string; address: Address; scope: string; nonce?: string; message: string; expiresAt: number };

/** Flow A's states: `put` on generate; `take` on submit, once, for its client and domain, unexpired. */
type States = {
  put(stateHash: string, state: Pending): Promise<void>;
  take(stateHash: string, clientId: string, domain: string): Promise<Pending | undefined>;
};

/** The tables of the durable floors, emptied at start (rows an interrupted run left). The bench writes the codes. */
export const FLOOR_SCHEMA = `
  CREATE TABLE IF NOT EXISTS bench_floor_states (
    state_hash text PRIMARY KEY, client_id text NOT NULL, domain text NOT NULL, address text NOT NULL,
    scope text NOT NULL, nonce text, message text NOT NULL, expires_at timestamptz NOT NULL);
  CREATE TABLE IF NOT EXISTS bench_floor_codes (
    code_hash text PRIMARY KEY, client_id text NOT NULL, redirect_uri text NOT NULL, account_id text NOT NULL,
    connector text NOT NULL, scope text NOT NULL, nonce text, code_challenge text NOT NULL, email text,
    auth_time timestamptz NOT NULL, expires_at timestamptz NOT NULL);
  TRUNCATE bench_floor_states, bench_floor_codes;`;

function memoryStates(): States {
  const pending = new Map<string, Pending>();
  return {
    async put(stateHash, state) {
      pending.set(stateHash, state);
    },
    async take(stateHash, clientId, domain) {
      const state = pending.get(stateHash);
      if (!state || state.clientId !== clientId || state.domain !== domain || state.expiresAt <= Date.now()) return undefined;
      pending.delete(stateHash);
      return state;
    },
  };
}

/** Named statements (prepared once per connection), as Keyfob's hot path runs them. */
function postgresStates(pool: pg.Pool): States {
  setInterval(() => void pool.query("DELETE FROM bench_floor_states WHERE expires_at <= now()").catch(() => undefined), 30_000).unref();
  return {
    async put(stateHash, s) {
      await pool.query({
        name: "floor_put_state",
        text: "INSERT INTO bench_floor_states (state_hash, client_id, domain, address, scope, nonce, message, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        values: [stateHash, s.clientId, s.domain, s.address, s.scope, s.nonce ?? null, s.message, new Date(s.expiresAt)],
      });
    },
    async take(stateHash, clientId, domain) {
      const { rows } = await pool.query<{ address: Address; scope: string; nonce: string | null; message: string; expires_at: Date }>({
        name: "floor_take_state",
        text: "DELETE FROM bench_floor_states WHERE state_hash = $1 AND client_id = $2 AND domain = $3 AND expires_at > now() RETURNING address, scope, nonce, message, expires_at",
        values: [stateHash, clientId, domain],
      });
      const row = rows[0];
      return (
        row && {
          clientId,
          domain,
          address: row.address,
          scope: row.scope,
          nonce: row.nonce ?? undefined,
          message: row.message,
          expiresAt: row.expires_at.getTime(),
        }
      );
    },
  };
}

const NO_STORE = { "Content-Type": "application/json", "Cache-Control": "no-store", Pragma: "no-cache" };
const SCOPES = new Set(["openid", "email", "profile"]);

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    description: string,
  ) {
    super(description);
  }
}

const normalize = (id: string) => (isAddress(id, { strict: false }) ? getAddress(id) : id);

function need(params: URLSearchParams, name: string): string {
  const value = params.get(name);
  if (!value) throw new HttpError(400, "invalid_request", `missing required parameter "${name}"`);
  return value;
}

export async function startReferenceServer(options: ReferenceOptions): Promise<{ server: http.Server; url: string }> {
  const chainId = options.chainId ?? 1;
  const accessTokenTtl = options.accessTokenTtl ?? 14 * 86400;
  const challengeTtl = options.challengeTtl ?? 600;
  const clients = new Map(
    options.clients.map((c) => [normalize(c.id), { domains: new Set(c.domains), signers: new Set(c.signers.map((s) => getAddress(s))) }]),
  );
  const pool = options.databaseUrl ? new pg.Pool({ connectionString: options.databaseUrl, max: 10 }) : undefined;
  pool?.on("error", () => undefined); // a dropped idle connection must not end the floor
  if (pool) await pool.query(FLOOR_SCHEMA);
  const states = pool ? postgresStates(pool) : memoryStates();
  const native = recoverWithLibsecp256k1;
  if (options.recovery === "libsecp256k1" && !native) throw new Error("libsecp256k1 (the secp256k1 addon) could not be loaded");
  const recover = options.recovery === "libsecp256k1" ? native! : recoverWithViem;

  // The signing key: generated at start, exported and imported once, as Keyfob imports its stored key once.
  const kid = randomBytes(20).toString("hex");
  const generated = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
  const privateKey = (await importJWK(await exportJWK(generated.privateKey), "RS256")) as CryptoKey;
  const signer = { signingKey: async () => ({ kid, alg: "RS256" as const, privateKey }) };
  const lifetimes = { accessToken: accessTokenTtl, idToken: accessTokenTtl };
  // The access and ID token Keyfob signs, with its claims.
  const tokens = async (grant: Grant) =>
    (await issueTokens(signer, issuer, lifetimes, grant, newAccessTokenId(lifetimes, Date.now()))).response;

  let issuer = "";
  const vehicles = options.vehicles && {
    policy: chainPolicy([options.vehicles.rpcUrl], chainId),
    contracts: new Set(options.vehicles.contracts.map((c) => c.toLowerCase())),
  };

  async function generate(params: URLSearchParams) {
    const clientId = normalize(need(params, "client_id"));
    const domain = need(params, "domain");
    const scope = need(params, "scope").split(" ").filter(Boolean);
    if (!scope.includes("openid") || scope.some((s) => !SCOPES.has(s))) throw new HttpError(400, "invalid_scope", "bad scope");
    if (need(params, "response_type") !== "code") throw new HttpError(400, "unsupported_response_type", 'response_type must be "code"');
    const rawAddress = need(params, "address");
    if (!/^0x[0-9a-fA-F]{40}$/.test(rawAddress)) throw new HttpError(400, "invalid_request", "bad address");
    const address = getAddress(rawAddress);
    const client = clients.get(clientId);
    if (!client) throw new HttpError(401, "invalid_client", "unknown or disabled client");
    if (!client.domains.has(domain)) throw new HttpError(400, "invalid_request", "domain is not a registered redirect URI");
    const state = randomBytes(32).toString("base64url");
    const now = new Date();
    const message = createChallengeMessage({ issuerUrl: issuer, domain, address, chainId, nonce: generateNonce(), issuedAt: now });
    await states.put(opaqueDigest(state), {
      clientId,
      domain,
      address,
      scope: scope.join(" "),
      nonce: params.get("nonce") || undefined,
      message,
      expiresAt: now.getTime() + challengeTtl * 1000,
    });
    return { state, challenge: message };
  }

  async function submit(params: URLSearchParams) {
    if (need(params, "grant_type") !== "authorization_code") throw new HttpError(400, "unsupported_grant_type", "bad grant_type");
    const clientId = normalize(need(params, "client_id"));
    const stateHash = opaqueDigest(need(params, "state"));
    const domain = need(params, "domain");
    const signature = need(params, "signature");
    if (!isHex(signature, { strict: true }) || size(signature as Hex) !== 65) throw new HttpError(400, "invalid_request", "bad signature");
    // Taken before the signature is checked: one statement, and a state is tried once.
    const challenge = await states.take(stateHash, clientId, domain);
    if (!challenge) throw new HttpError(400, "invalid_grant", "unknown, foreign, expired or used state");
    const recovered = await recover(challenge.message, signature as Hex);
    const client = clients.get(clientId);
    const accepted =
      recovered !== undefined &&
      (isAddressEqual(recovered, challenge.address) ||
        (challenge.address.toLowerCase() === clientId.toLowerCase() && client?.signers.has(recovered) === true));
    if (!accepted) throw new HttpError(400, "invalid_grant", "the signature does not match");
    return tokens({
      clientId,
      userId: challenge.address,
      connector: "web3",
      scope: challenge.scope.split(" ") as Scope[],
      ethereumAddress: challenge.address,
      nonce: challenge.nonce,
      emailVerified: false,
    });
  }

  type CodeRow = {
    client_id: string;
    redirect_uri: string;
    account_id: string;
    connector: string;
    scope: string;
    nonce: string | null;
    code_challenge: string;
    email: string | null;
    auth_time: Date;
    expires_at: Date;
  };

  /** The code exchange of a public client (PKCE S256), on codes in bench_floor_codes. */
  async function token(params: URLSearchParams, pool: pg.Pool) {
    if (need(params, "grant_type") !== "authorization_code") throw new HttpError(400, "unsupported_grant_type", "bad grant_type");
    const clientId = normalize(need(params, "client_id"));
    if (!clients.has(clientId)) throw new HttpError(401, "invalid_client", "unknown client");
    const redirectUri = need(params, "redirect_uri");
    const { rows } = await pool.query<CodeRow>({
      name: "floor_take_code",
      text: `DELETE FROM bench_floor_codes WHERE code_hash = $1
             RETURNING client_id, redirect_uri, account_id, connector, scope, nonce, code_challenge, email, auth_time, expires_at`,
      values: [opaqueDigest(need(params, "code"))],
    });
    const code = rows[0];
    if (!code || code.client_id !== clientId || code.expires_at.getTime() <= Date.now())
      throw new HttpError(400, "invalid_grant", "unknown, foreign, expired or used code");
    if (code.redirect_uri !== redirectUri) throw new HttpError(400, "invalid_grant", "redirect_uri does not match");
    verifyCodeVerifier(code.code_challenge, params.get("code_verifier") ?? undefined);
    return tokens({
      clientId,
      userId: code.account_id,
      connector: code.connector,
      scope: code.scope.split(" ") as Scope[],
      ethereumAddress: code.account_id,
      nonce: code.nonce ?? undefined,
      email: code.email ?? undefined,
      emailVerified: true,
      authTime: code.auth_time,
      amr: [code.connector],
    });
  }

  /** A vehicle token for a license's access token (RFC 8693): the chain's answer and one RS256 JWT. */
  async function vehicleToken(params: URLSearchParams, chain: NonNullable<typeof vehicles>) {
    const clientId = normalize(need(params, "client_id"));
    if (!clients.has(clientId) || !isAddress(clientId)) throw new HttpError(401, "invalid_client", "unknown client or not a license");
    need(params, "subject_token");
    if (need(params, "subject_token_type") !== ACCESS_TOKEN_TYPE) throw new HttpError(400, "invalid_request", "bad subject_token_type");
    const vehicle = parseVehicleDid(need(params, "resource"));
    if (!vehicle || vehicle.chainId !== chainId || !chain.contracts.has(vehicle.contract.toLowerCase()))
      throw new HttpError(400, "invalid_target", "not a vehicle known here");
    const privileges = privilegesOfPermissions(need(params, "scope").split(" ").filter(Boolean));
    const decision = await chain.policy.decide(vehicle, clientId, privileges);
    if (!decision.exists || decision.granted.length !== privileges.length) throw new HttpError(400, "invalid_scope", "not granted");
    const { token } = await signVehicleToken(signer, {
      issuer,
      clientId,
      vehicle,
      privileges,
      audience: VEHICLE_TOKEN_AUDIENCE,
      lifetime: VEHICLE_TOKEN_TTL,
      now: new Date(),
    });
    return {
      access_token: token,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: "Bearer",
      expires_in: VEHICLE_TOKEN_TTL,
      scope: privileges.map(permissionName).join(" "),
    };
  }

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
      try {
        const url = new URL(request.url ?? "/", issuer);
        const params = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
        for (const [name, value] of url.searchParams) if (!params.has(name)) params.set(name, value);
        let body: unknown;
        if (request.method === "POST" && url.pathname === "/auth/web3/generate_challenge") body = await generate(params);
        else if (request.method === "POST" && url.pathname === "/auth/web3/submit_challenge") body = await submit(params);
        else if (request.method === "POST" && url.pathname === "/token" && vehicles && params.get("grant_type") === TOKEN_EXCHANGE_GRANT)
          body = await vehicleToken(params, vehicles);
        else if (request.method === "POST" && url.pathname === "/token" && pool) body = await token(params, pool);
        else throw new HttpError(404, "not_found", "no such endpoint");
        response.writeHead(200, NO_STORE).end(JSON.stringify(body));
      } catch (error) {
        const e =
          error instanceof HttpError || error instanceof OAuthError
            ? error
            : new HttpError(500, "server_error", "the server could not complete the request");
        response.writeHead(e.status, NO_STORE).end(JSON.stringify({ error: e.code, error_description: e.message }));
      }
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "localhost", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  issuer = `http://localhost:${port}`;

  return { server, url: issuer };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const list = (value: string | undefined) =>
    (value ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  const clientId = process.env.REF_CLIENT_ID;
  if (!clientId) {
    console.error("REF_CLIENT_ID (and REF_DOMAIN, REF_SIGNERS) must be set");
    process.exit(2);
  }
  const databaseUrl = process.env.REF_STATE === "postgres" ? process.env.REF_DATABASE_URL : undefined;
  if (process.env.REF_STATE === "postgres" && !databaseUrl) {
    console.error("REF_STATE=postgres needs REF_DATABASE_URL");
    process.exit(2);
  }
  const publicClient = process.env.REF_PUBLIC_CLIENT_ID;
  const rpcUrl = process.env.REF_RPC_URL;
  startReferenceServer({
    port: Number(process.env.REF_PORT ?? 0),
    clients: [
      { id: clientId, domains: list(process.env.REF_DOMAIN), signers: list(process.env.REF_SIGNERS) },
      ...(publicClient ? [{ id: publicClient, domains: list(process.env.REF_DOMAIN), signers: [] }] : []),
    ],
    recovery: process.env.REF_RECOVERY === "libsecp256k1" ? "libsecp256k1" : "viem",
    databaseUrl,
    chainId: process.env.REF_CHAIN_ID ? Number(process.env.REF_CHAIN_ID) : undefined,
    vehicles: rpcUrl ? { rpcUrl, contracts: list(process.env.REF_VEHICLE_CONTRACTS) } : undefined,
  }).then(
    ({ url }) => console.log(JSON.stringify({ port: Number(new URL(url).port), url })),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
  process.on("SIGTERM", () => process.exit(0));
}
