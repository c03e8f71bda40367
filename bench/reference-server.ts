/**
 * The yardstick for `npm run bench`: a bare node:http server speaking Flow A's wire format and doing
 * only its cryptography — EIP-4361 challenge text, EIP-191 signature recovery, two RS256 JWTs signed
 * with jose using a key imported once — with clients, signers and states in memory. No database, no
 * framework. Whatever Keyfob spends beyond this is overhead.
 *
 * Recovery is viem's pure-JS secp256k1 (`recovery: "viem"`, the slower floor) or libsecp256k1
 * (`"libsecp256k1"`, the native floor), both on the event loop, through lib/siwe/recovery.ts.
 *
 * Run on its own:  REF_CLIENT_ID=0x… REF_DOMAIN=http://localhost:8080/callback REF_SIGNERS=0x… \
 *                  REF_RECOVERY=viem|libsecp256k1 node --import tsx bench/reference-server.ts
 * (REF_PORT, default 0 = any free port). It prints one JSON line {"port": N} once listening.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import { pathToFileURL } from "node:url";
import { exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWTPayload } from "jose";
import { getAddress, isAddress, isAddressEqual, isHex, size, type Address, type Hex } from "viem";
import { createChallengeMessage, generateNonce } from "../lib/siwe/challenge";
import { recoverWithLibsecp256k1, recoverWithViem } from "../lib/siwe/recovery";
import { encodeSubject } from "../lib/tokens/sub";

export type ReferenceOptions = {
  port?: number;
  clients: { id: string; domains: string[]; signers: string[] }[];
  chainId?: number;
  accessTokenTtl?: number;
  challengeTtl?: number;
  /** EIP-191 recovery: viem (pure JS, the default) or libsecp256k1 (native). */
  recovery?: "viem" | "libsecp256k1";
};

type Pending = { clientId: string; domain: string; address: Address; scope: string; nonce?: string; message: string; expiresAt: number };

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
const digest = (value: string) => createHash("sha256").update(value).digest("base64url");

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
  const pending = new Map<string, Pending>();
  const native = recoverWithLibsecp256k1;
  if (options.recovery === "libsecp256k1" && !native) throw new Error("libsecp256k1 (the secp256k1 addon) could not be loaded");
  const recover = options.recovery === "libsecp256k1" ? native! : recoverWithViem;

  // The signing key: generated at start, exported and imported once, as Keyfob imports its stored key once.
  const kid = randomBytes(20).toString("hex");
  const generated = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
  const privateKey = (await importJWK(await exportJWK(generated.privateKey), "RS256")) as CryptoKey;
  const sign = (payload: JWTPayload) => new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid }).sign(privateKey);

  let issuer = "";

  function generate(params: URLSearchParams) {
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
    pending.set(digest(state), {
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
    const stateHash = digest(need(params, "state"));
    const domain = need(params, "domain");
    const signature = need(params, "signature");
    const challenge = pending.get(stateHash);
    if (!challenge || challenge.clientId !== clientId || challenge.domain !== domain || challenge.expiresAt <= Date.now()) {
      throw new HttpError(400, "invalid_grant", "unknown, foreign or expired state");
    }
    if (!isHex(signature, { strict: true }) || size(signature as Hex) !== 65) throw new HttpError(400, "invalid_request", "bad signature");
    const recovered = await recover(challenge.message, signature as Hex);
    const client = clients.get(clientId);
    const accepted =
      recovered !== undefined &&
      (isAddressEqual(recovered, challenge.address) ||
        (challenge.address.toLowerCase() === clientId.toLowerCase() && client?.signers.has(recovered) === true));
    if (!accepted) throw new HttpError(400, "invalid_grant", "the signature does not match");
    if (!pending.delete(stateHash)) throw new HttpError(400, "invalid_grant", "the state has already been used");

    const scope = challenge.scope.split(" ");
    const iat = Math.floor(Date.now() / 1000);
    const claims: JWTPayload = {
      iss: issuer,
      sub: encodeSubject({ userId: challenge.address, connector: "web3" }),
      aud: clientId,
      iat,
      exp: iat + accessTokenTtl,
      provider_id: "web3",
      ...(scope.includes("email") && { ethereum_address: challenge.address }),
      email_verified: false,
      ...(challenge.nonce !== undefined && { nonce: challenge.nonce }),
    };
    const accessToken = await sign({ ...claims, jti: randomUUID(), scope: challenge.scope });
    const atHash = createHash("sha256").update(accessToken).digest().subarray(0, 16).toString("base64url");
    const idToken = await sign({ ...claims, jti: randomUUID(), at_hash: atHash });
    return { access_token: accessToken, token_type: "bearer", expires_in: accessTokenTtl, id_token: idToken };
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
        if (request.method === "POST" && url.pathname === "/auth/web3/generate_challenge") body = generate(params);
        else if (request.method === "POST" && url.pathname === "/auth/web3/submit_challenge") body = await submit(params);
        else throw new HttpError(404, "not_found", "no such endpoint");
        response.writeHead(200, NO_STORE).end(JSON.stringify(body));
      } catch (error) {
        const e = error instanceof HttpError ? error : new HttpError(500, "server_error", "the server could not complete the request");
        response.writeHead(e.status, NO_STORE).end(JSON.stringify({ error: e.code, error_description: e.message }));
      }
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "localhost", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  issuer = `http://localhost:${port}`;

  // Expired states are dropped now and then, as a real server would have to.
  setInterval(() => {
    const now = Date.now();
    for (const [key, value] of pending) if (value.expiresAt <= now) pending.delete(key);
  }, 30_000).unref();

  return { server, url: issuer };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const list = (value: string | undefined) => (value ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  const clientId = process.env.REF_CLIENT_ID;
  if (!clientId) {
    console.error("REF_CLIENT_ID (and REF_DOMAIN, REF_SIGNERS) must be set");
    process.exit(2);
  }
  startReferenceServer({
    port: Number(process.env.REF_PORT ?? 0),
    clients: [{ id: clientId, domains: list(process.env.REF_DOMAIN), signers: list(process.env.REF_SIGNERS) }],
    recovery: process.env.REF_RECOVERY === "libsecp256k1" ? "libsecp256k1" : "viem",
  }).then(
    ({ url }) => console.log(JSON.stringify({ port: Number(new URL(url).port), url })),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
  process.on("SIGTERM", () => process.exit(0));
}
