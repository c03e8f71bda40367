/**
 * The /token yardstick for `npm run bench`: node-oidc-provider (the `oidc-provider` package, a
 * certified OpenID provider) in a process of its own, with its store in memory (a Map-backed
 * adapter: its own memory adapter is an LRU of 1000 entries, too small for a load run), one public
 * client using PKCE S256, an RS256 ID token and an opaque access token.
 *
 * The bench asks it over IPC for authorization codes, which it mints through its own models
 * (one Grant and one AuthorizationCode per login, as its authorization endpoint would), so that
 * both servers are measured on the exchange only:
 *   → { mint: n }        ← { codes: [code, verifier][] }
 *   → { reset: true }    ← { reset: true }   (drops every stored code, grant and token)
 * Once listening it sends { url }.
 *
 * Run on its own (prints the URL):  node --import tsx bench/oidc-provider-peer.ts
 */
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

export const PEER_CLIENT_ID = "bench-public-client";
export const PEER_REDIRECT_URI = "http://localhost:8080/callback";
const ACCOUNT = "0x98D78d711C0ec544F6fb5d54fcf6559CF41546a9";

type Payload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number };

/** oidc-provider's adapter interface over plain Maps: no LRU, no expiry sweeps (a run lasts minutes). */
const store = new Map<string, Payload>();
const byGrant = new Map<string, Set<string>>();
const byUid = new Map<string, string>();
const byUserCode = new Map<string, string>();

class MapAdapter {
  constructor(private readonly model: string) {}
  private key(id: string) {
    return `${this.model}:${id}`;
  }
  async upsert(id: string, payload: Payload) {
    const key = this.key(id);
    store.set(key, payload);
    if (payload.grantId) {
      let members = byGrant.get(payload.grantId);
      if (!members) byGrant.set(payload.grantId, (members = new Set()));
      members.add(key);
    }
    if (payload.uid) byUid.set(payload.uid, id);
    if (payload.userCode) byUserCode.set(payload.userCode, id);
  }
  async find(id: string) {
    return store.get(this.key(id));
  }
  async findByUid(uid: string) {
    const id = byUid.get(uid);
    return id === undefined ? undefined : this.find(id);
  }
  async findByUserCode(userCode: string) {
    const id = byUserCode.get(userCode);
    return id === undefined ? undefined : this.find(id);
  }
  async consume(id: string) {
    const payload = store.get(this.key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    store.delete(this.key(id));
  }
  async revokeByGrantId(grantId: string) {
    for (const key of byGrant.get(grantId) ?? []) store.delete(key);
    byGrant.delete(grantId);
  }
}

type Models = {
  Client: { find(id: string): Promise<unknown> };
  Grant: new (init: { accountId: string; clientId: string }) => { addOIDCScope(scope: string): void; save(): Promise<string> };
  AuthorizationCode: new (init: Record<string, unknown>) => { save(): Promise<string> };
};

export async function startPeer(port = 0): Promise<{ url: string; mint(n: number): Promise<[string, string][]>; reset(): void; close(): Promise<void> }> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
  const jwk = { ...(await exportJWK(privateKey)), alg: "RS256", use: "sig", kid: randomBytes(20).toString("hex") };
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(port, "localhost", resolve));
  const url = `http://localhost:${(server.address() as { port: number }).port}`;

  const provider = new Provider(url, {
    adapter: MapAdapter,
    clients: [
      {
        client_id: PEER_CLIENT_ID,
        token_endpoint_auth_method: "none",
        redirect_uris: [PEER_REDIRECT_URI],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        id_token_signed_response_alg: "RS256",
      },
    ],
    jwks: { keys: [jwk] },
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id, email: `${id.slice(2, 10)}@example.com`, email_verified: true }) }),
    pkce: { required: () => true },
    ttl: { AuthorizationCode: 1800, AccessToken: 14 * 86400, IdToken: 14 * 86400, Grant: 14 * 86400 },
    features: { devInteractions: { enabled: false } },
  }) as unknown as Models & { callback(): http.RequestListener; on(event: string, listener: (...args: unknown[]) => void): void };
  provider.on("server_error", (_ctx: unknown, error: unknown) => console.error("oidc-provider server_error:", error));
  server.on("request", provider.callback());
  server.keepAliveTimeout = 65_000;

  const client = await provider.Client.find(PEER_CLIENT_ID);
  async function mint(n: number): Promise<[string, string][]> {
    const codes: [string, string][] = [];
    for (let i = 0; i < n; i++) {
      const verifier = randomBytes(32).toString("base64url");
      const grant = new provider.Grant({ accountId: ACCOUNT, clientId: PEER_CLIENT_ID });
      grant.addOIDCScope("openid email");
      const grantId = await grant.save();
      const code = await new provider.AuthorizationCode({
        accountId: ACCOUNT,
        client,
        grantId,
        redirectUri: PEER_REDIRECT_URI,
        scope: "openid email",
        codeChallenge: createHash("sha256").update(verifier).digest("base64url"),
        codeChallengeMethod: "S256",
        nonce: "bench-nonce",
        authTime: Math.floor(Date.now() / 1000),
      }).save();
      codes.push([code, verifier]);
    }
    return codes;
  }
  return {
    url,
    mint,
    reset: () => [store, byGrant, byUid, byUserCode].forEach((map) => map.clear()),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const peer = await startPeer(Number(process.env.PEER_PORT ?? 0));
  if (process.send) {
    process.on("message", async (message: { mint?: number; reset?: boolean }) => {
      if (message.mint !== undefined) process.send!({ codes: await peer.mint(message.mint) });
      if (message.reset) {
        peer.reset();
        process.send!({ reset: true });
      }
    });
    process.on("disconnect", () => process.exit(0));
    process.send({ url: peer.url });
  } else {
    console.log(JSON.stringify({ url: peer.url }));
  }
  process.on("SIGTERM", () => process.exit(0));
}
