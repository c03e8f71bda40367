/**
 * The /token yardsticks for `npm run bench`: node-oidc-provider (the `oidc-provider` package, a
 * certified OpenID provider) in a process of its own, one public client using PKCE S256, an RS256
 * ID token, in one of two modes:
 *   - memory (the reference): its store in memory (a Map-backed adapter: its own memory adapter is
 *     an LRU of 1000 entries, too small for a load run) and an opaque access token;
 *   - postgres (Keyfob's work): the PostgreSQL adapter its users write (every model a row of one
 *     JSONB table, plain queries) and an RS256 JWT access token for a default resource (resource
 *     indicators, `accessTokenFormat: "jwt"`).
 *
 * The bench asks it over IPC for authorization codes, which it mints through its own models
 * (one Grant and one AuthorizationCode per login, as its authorization endpoint would), so that
 * both servers are measured on the exchange only:
 *   → { mint: n }        ← { codes: [code, verifier][] }
 *   → { reset: true }    ← { reset: true }   (drops every stored code, grant and token)
 * Once listening it sends { url }.
 *
 * Run on its own (prints the URL):  node --import tsx bench/oidc-provider-peer.ts
 * (PEER_STORE=postgres with PEER_DATABASE_URL for the second mode).
 */
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import pg from "pg";

export const PEER_CLIENT_ID = "bench-public-client";
export const PEER_REDIRECT_URI = "http://localhost:8080/callback";
/** The resource server the JWT access tokens are for (postgres mode). */
const RESOURCE = "https://api.keyfob.bench";
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
      if (!members) {
        members = new Set();
        byGrant.set(payload.grantId, members);
      }
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

/** Every model in one table, as node-oidc-provider's users write their SQL adapters. Emptied at start. */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS bench_oidc_payloads (
    id text NOT NULL, kind text NOT NULL, payload jsonb NOT NULL,
    grant_id text, user_code text, uid text, expires_at timestamptz,
    PRIMARY KEY (id, kind));
  CREATE INDEX IF NOT EXISTS bench_oidc_payloads_grant_id ON bench_oidc_payloads (grant_id);
  CREATE INDEX IF NOT EXISTS bench_oidc_payloads_user_code ON bench_oidc_payloads (user_code);
  CREATE INDEX IF NOT EXISTS bench_oidc_payloads_uid ON bench_oidc_payloads (uid);
  TRUNCATE bench_oidc_payloads;`;

type Row = [
  id: string,
  kind: string,
  payload: string,
  grantId: string | null,
  userCode: string | null,
  uid: string | null,
  expiresAt: Date | null,
];

/** oidc-provider's adapter interface on PostgreSQL, with plain (unprepared) queries as such adapters have. */
class PgAdapter {
  static pool: pg.Pool;
  /** While minting: rows gathered for bulk INSERTs, not one statement a model (only the exchange is measured). */
  static batch: Row[] | undefined;
  constructor(private readonly kind: string) {}
  async upsert(id: string, payload: Payload, expiresIn?: number) {
    const row: Row = [
      id,
      this.kind,
      JSON.stringify(payload),
      payload.grantId ?? null,
      payload.userCode ?? null,
      payload.uid ?? null,
      expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
    ];
    if (PgAdapter.batch) return void PgAdapter.batch.push(row);
    await PgAdapter.pool.query(
      `INSERT INTO bench_oidc_payloads (id, kind, payload, grant_id, user_code, uid, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (id, kind) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id, user_code = excluded.user_code, uid = excluded.uid, expires_at = excluded.expires_at`,
      row,
    );
  }
  private async findBy(column: "id" | "uid" | "user_code", value: string) {
    const { rows } = await PgAdapter.pool.query<{ payload: Payload }>(
      `SELECT payload FROM bench_oidc_payloads WHERE ${column} = $1 AND kind = $2 AND (expires_at IS NULL OR expires_at > now())`,
      [value, this.kind],
    );
    return rows[0]?.payload;
  }
  find(id: string) {
    return this.findBy("id", id);
  }
  findByUid(uid: string) {
    return this.findBy("uid", uid);
  }
  findByUserCode(userCode: string) {
    return this.findBy("user_code", userCode);
  }
  async consume(id: string) {
    await PgAdapter.pool.query(
      `UPDATE bench_oidc_payloads SET payload = payload || jsonb_build_object('consumed', floor(extract(epoch FROM now()))::int) WHERE id = $1 AND kind = $2`,
      [id, this.kind],
    );
  }
  async destroy(id: string) {
    await PgAdapter.pool.query("DELETE FROM bench_oidc_payloads WHERE id = $1 AND kind = $2", [id, this.kind]);
  }
  async revokeByGrantId(grantId: string) {
    await PgAdapter.pool.query("DELETE FROM bench_oidc_payloads WHERE grant_id = $1", [grantId]);
  }
  /** Writes the gathered rows, 10,000 a statement. */
  static async flush() {
    const rows = PgAdapter.batch ?? [];
    PgAdapter.batch = undefined;
    for (let i = 0; i < rows.length; i += 10_000) {
      const chunk = rows.slice(i, i + 10_000);
      await PgAdapter.pool.query(
        `INSERT INTO bench_oidc_payloads (id, kind, payload, grant_id, user_code, uid, expires_at)
         SELECT id, kind, payload::jsonb, grant_id, user_code, uid, expires_at
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[]) AS t(id, kind, payload, grant_id, user_code, uid, expires_at)`,
        chunk[0].map((_, column) => chunk.map((row) => row[column])),
      );
    }
    await PgAdapter.pool.query("ANALYZE bench_oidc_payloads");
  }
}

type Models = {
  Client: { find(id: string): Promise<unknown> };
  Grant: new (init: {
    accountId: string;
    clientId: string;
  }) => { addOIDCScope(scope: string): void; addResourceScope(resource: string, scope: string): void; save(): Promise<string> };
  AuthorizationCode: new (init: Record<string, unknown>) => { save(): Promise<string> };
};

export type PeerOptions = {
  port?: number /** The PostgreSQL adapter and JWT access tokens instead of memory and opaque ones. */;
  databaseUrl?: string;
};

export async function startPeer({ port = 0, databaseUrl }: PeerOptions = {}): Promise<{
  url: string;
  mint(n: number): Promise<[string, string][]>;
  reset(): Promise<void>;
  close(): Promise<void>;
}> {
  if (databaseUrl) {
    PgAdapter.pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    PgAdapter.pool.on("error", () => undefined); // a dropped idle connection must not end the peer
    await PgAdapter.pool.query(SCHEMA);
  }
  const { privateKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
  const jwk = { ...(await exportJWK(privateKey)), alg: "RS256", use: "sig", kid: randomBytes(20).toString("hex") };
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(port, "localhost", resolve));
  const url = `http://localhost:${(server.address() as { port: number }).port}`;

  const provider = new Provider(url, {
    adapter: databaseUrl ? PgAdapter : MapAdapter,
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
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id, email: `${id.slice(2, 10)}@example.com`, email_verified: true }),
    }),
    pkce: { required: () => true },
    ttl: { AuthorizationCode: 1800, AccessToken: 14 * 86400, IdToken: 14 * 86400, Grant: 14 * 86400 },
    features: {
      devInteractions: { enabled: false },
      ...(databaseUrl && {
        // One audience by default, so that every exchange gets an RS256 JWT access token as Keyfob's.
        resourceIndicators: {
          enabled: true,
          defaultResource: () => RESOURCE,
          useGrantedResource: () => true,
          getResourceServerInfo: () => ({
            scope: "openid email",
            accessTokenFormat: "jwt",
            accessTokenTTL: 14 * 86400,
            jwt: { sign: { alg: "RS256" } },
          }),
        },
      }),
    },
  }) as unknown as Models & { callback(): http.RequestListener; on(event: string, listener: (...args: unknown[]) => void): void };
  provider.on("server_error", (_ctx: unknown, error: unknown) => console.error("oidc-provider server_error:", error));
  server.on("request", provider.callback());
  server.keepAliveTimeout = 65_000;

  const client = await provider.Client.find(PEER_CLIENT_ID);
  async function mint(n: number): Promise<[string, string][]> {
    const codes: [string, string][] = [];
    if (databaseUrl) PgAdapter.batch = [];
    for (let i = 0; i < n; i++) {
      const verifier = randomBytes(32).toString("base64url");
      const grant = new provider.Grant({ accountId: ACCOUNT, clientId: PEER_CLIENT_ID });
      grant.addOIDCScope("openid email");
      if (databaseUrl) grant.addResourceScope(RESOURCE, "openid email");
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
        ...(databaseUrl && { resource: RESOURCE }),
      }).save();
      codes.push([code, verifier]);
    }
    if (databaseUrl) await PgAdapter.flush();
    return codes;
  }
  return {
    url,
    mint,
    reset: async () => {
      if (databaseUrl) await PgAdapter.pool.query("TRUNCATE bench_oidc_payloads");
      else for (const map of [store, byGrant, byUid, byUserCode]) map.clear();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const databaseUrl = process.env.PEER_STORE === "postgres" ? process.env.PEER_DATABASE_URL : undefined;
  if (process.env.PEER_STORE === "postgres" && !databaseUrl) {
    console.error("PEER_STORE=postgres needs PEER_DATABASE_URL");
    process.exit(2);
  }
  const peer = await startPeer({ port: Number(process.env.PEER_PORT ?? 0), databaseUrl });
  if (process.send) {
    process.on("message", async (message: { mint?: number; reset?: boolean }) => {
      if (message.mint !== undefined) process.send!({ codes: await peer.mint(message.mint) });
      if (message.reset) {
        await peer.reset();
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
