import { availableParallelism } from "node:os";
import path from "node:path";
import { z } from "zod";
import { isLoopbackHost } from "./clients/redirect-uri";
import { parseTrustedProxies, type ProxyTrust } from "./http/client-ip";

/** JWKS responses may be cached 5 minutes and instances reload keys every minute: a new key must be out longer. */
const MIN_PUBLISH_LEAD_SECONDS = 600;

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** A duration in seconds, written as a whole number with an optional unit: `600`, `10m`, `14d`. */
const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      const match = /^(\d+)\s*([smhd]?)$/.exec(value.trim());
      const seconds = match ? Number(match[1]) * UNIT_SECONDS[match[2] || "s"] : 0;
      if (!match || seconds <= 0) {
        ctx.addIssue({ code: "custom", message: `expected a positive duration such as 600, 10m, 12h or 14d, got "${value}"` });
        return z.NEVER;
      }
      return seconds;
    });

const positiveInt = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      const n = Number(value);
      if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n <= 0) {
        ctx.addIssue({ code: "custom", message: `expected a positive whole number, got "${value}"` });
        return z.NEVER;
      }
      return n;
    });

const httpUrl = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "http:" || url.protocol === "https:") && !url.search && !url.hash;
    } catch {
      return false;
    }
  }, "expected an http(s) URL without query or fragment");

/**
 * A URL Keyfob trusts for identities (its own issuer, the upstream providers, the chain RPC): https,
 * or http on this machine only, so that nobody on the network can answer in its place.
 */
const secureUrl = httpUrl.refine((value) => {
  const url = URL.parse(value);
  return !url || url.protocol === "https:" || isLoopbackHost(url.hostname); // an unparseable URL is httpUrl's to name
}, "must use https (http only on localhost or a loopback address)");

/** A rate limit: `<count>/<duration>` (e.g. `600/1m`), or `off`. */
export type RateLimit = { max: number; windowSeconds: number } | undefined;

const rateLimit = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx): RateLimit => {
      if (value.trim() === "off") return undefined;
      const match = /^(\d+)\s*\/\s*(\d*)\s*([smhd]?)$/.exec(value.trim());
      const max = match ? Number(match[1]) : 0;
      const windowSeconds = match ? Number(match[2] || 1) * UNIT_SECONDS[match[3] || "s"] : 0;
      if (!match || max <= 0 || windowSeconds <= 0) {
        ctx.addIssue({ code: "custom", message: `expected a limit such as 600/1m or 20/10s, or off, got "${value}"` });
        return z.NEVER;
      }
      return { max, windowSeconds };
    });

const postgresUrl = z.string().regex(/^postgres(ql)?:\/\//, "expected a postgresql:// connection URL");

const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === "" ? undefined : value), schema.optional());

const envSchema = z.object({
  ISSUER_URL: secureUrl.default("http://localhost:3000").transform((url) => url.replace(/\/+$/, "")),
  PORT: positiveInt("3000"),
  DATABASE_URL: optional(postgresUrl),
  DATABASE_DIRECT_URL: optional(postgresUrl),
  DATABASE_POOLED: optional(z.enum(["true", "false"], "expected true or false")),
  DATABASE_PREPARED_STATEMENTS: optional(z.enum(["true", "false"], "expected true or false")),
  DATA_DIR: z.string().default(".data"),
  EMBEDDED_POSTGRES_PORT: positiveInt("54329"),
  KEYFOB_SECRET: optional(z.string().min(32, "must be at least 32 characters (e.g. `openssl rand -base64 32`)")),
  CHAIN_ID: positiveInt("1"),
  RPC_URL: z
    .string()
    .default("")
    .transform((value, ctx) => {
      for (const url of list(value)) {
        const problem = secureUrl.safeParse(url).error?.issues[0]?.message;
        if (problem) ctx.addIssue({ code: "custom", message: `${problem}: "${url}"` });
      }
      return list(value);
    }),
  RPC_QUORUM: optional(positiveInt("1")),
  ACCESS_TOKEN_TTL: duration("14d"),
  ID_TOKEN_TTL: optional(duration("14d")),
  CHALLENGE_TTL: duration("10m"),
  KEY_ROTATION_PERIOD: duration("30d"),
  KEY_PUBLISH_LEAD: duration("1d"),
  DB_POOL_SIZE: positiveInt("10"),
  RECOVERY_THREADS: z
    .string()
    .default(String(Math.max(1, availableParallelism() - 1)))
    .refine((v) => /^\d+$/.test(v.trim()), "expected a whole number (0: recover signatures on the event loop)")
    .transform(Number),
  AUTHORIZATION_CODE_TTL: duration("60s"),
  GOOGLE_CLIENT_ID: optional(z.string()),
  GOOGLE_CLIENT_SECRET: optional(z.string()),
  GOOGLE_ISSUER: secureUrl.default("https://accounts.google.com"),
  APPLE_CLIENT_ID: optional(z.string()),
  APPLE_CLIENT_SECRET: optional(z.string()),
  APPLE_ISSUER: secureUrl.default("https://appleid.apple.com"),
  WALLETCONNECT_PROJECT_ID: optional(z.string()),
  ADMIN_ADDRESSES: z.string().default(""),
  ADMIN_EMAILS: z.string().default(""),
  ADMIN_CONTRACT_SIGNATURES: z.enum(["true", "false"], "expected true or false").default("false"),
  HOST: optional(z.string()),
  TRUSTED_PROXIES: z
    .string()
    .default("")
    .refine((value) => {
      try {
        parseTrustedProxies(value);
        return true;
      } catch {
        return false;
      }
    }, "expected a number of proxy hops, or addresses and CIDR ranges (e.g. loopback, 10.0.0.0/8)"),
  METRICS_PORT: optional(positiveInt("0")),
  METRICS_TOKEN: optional(z.string().min(16, "must be at least 16 characters")),
  SHUTDOWN_TIMEOUT: duration("10s"),
  AUDIT_RETENTION: duration("365d"),
  SESSION_IDLE_TTL: duration("3d"),
  SESSION_MAX_AGE: duration("30d"),
  REFRESH_TOKEN_IDLE_TTL: duration("30d"),
  REFRESH_TOKEN_MAX_AGE: duration("365d"),
  RATE_LIMIT_PER_IP: rateLimit("600/1m"),
  RATE_LIMIT_PER_CLIENT: rateLimit("6000/1m"),
  RATE_LIMIT_ADMIN_SIGNIN: rateLimit("30/1m"),
  PENDING_CHALLENGES_PER_ADDRESS: positiveInt("100"),
  PENDING_CHALLENGES_PER_CLIENT: positiveInt("5000"),
  PENDING_CHALLENGES_PER_IP: positiveInt("1000"),
  PENDING_CHALLENGES_TOTAL: positiveInt("200000"),
  PENDING_LOGINS_PER_IP: positiveInt("200"),
  PROTOCOL_DISPATCH: z.enum(["direct", "next"], "expected direct or next").default("direct"),
});

/** An upstream OpenID provider (Google, Apple); the issuer can point at a stand-in for tests. */
export type UpstreamProvider = { clientId: string; clientSecret: string; issuer: string };

export type Config = {
  /** The issuer URL, without a trailing slash; also the SIWE `URI`. */
  issuerUrl: string;
  port: number;
  /** Unset: Keyfob runs an embedded PostgreSQL under `dataDir`. May be a transaction pooler (`databasePooled`). */
  databaseUrl?: string;
  /** A direct connection (never a pooler) for migrations and LISTEN, when it is not databaseUrl (see directDatabaseUrl). */
  databaseDirectUrl?: string;
  /** databaseUrl goes through a transaction-mode pooler (PgBouncer): nothing on it may rely on session state. */
  databasePooled: boolean;
  /** Named (server-side) prepared statements on databaseUrl: off through a pooler unless it keeps them. */
  preparedStatements: boolean;
  /** Absolute path of the local data folder (embedded database, development secret). */
  dataDir: string;
  embeddedPostgresPort: number;
  secret?: string;
  chainId: number;
  /** JSON-RPC providers for ERC-1271/6492 checks; `rpcQuorum` of them must find a signature valid and none invalid. */
  rpcUrls: string[];
  rpcQuorum: number;
  /** Lifetimes, in seconds. */
  accessTokenTtl: number;
  /** ID token lifetime in seconds; the access token's unless ID_TOKEN_TTL is set. */
  idTokenTtl: number;
  challengeTtl: number;
  keyRotationPeriod: number;
  /** How long a new signing key is published before it signs. */
  keyPublishLead: number;
  dbPoolSize: number;
  /** Worker threads for EIP-191 signature recovery; 0 runs it on the event loop. */
  recoveryThreads: number;
  authorizationCodeTtl: number;
  /** Configured only when both client id and secret are set. */
  google?: UpstreamProvider;
  apple?: UpstreamProvider;
  walletConnectProjectId?: string;
  /** Bootstrap admins: account addresses and verified emails, lower case. */
  adminAddresses: string[];
  adminEmails: string[];
  /** Whether admins may sign in with smart-account (ERC-1271/6492) signatures, which the RPC provider vouches for. */
  adminContractSignatures: boolean;
  /** Interface to listen on; unset: every interface. */
  host?: string;
  /** Which X-Forwarded-For entries to believe (TRUSTED_PROXIES). */
  trustProxy: ProxyTrust;
  /** Metrics on a port of their own, and/or on /metrics behind this bearer token. */
  metricsPort?: number;
  metricsToken?: string;
  /** Seconds in-flight requests get to finish after SIGTERM. */
  shutdownTimeout: number;
  /** Seconds audit events are kept. */
  auditRetention: number;
  /** Login sessions end after this many seconds without use, and at the latest this long after the login. */
  sessionIdleTtl: number;
  sessionMaxAge: number;
  /** A refresh token ends unused after its idle lifetime; its family (all its rotations) at the maximum age. */
  refreshTokenIdleTtl: number;
  refreshTokenMaxAge: number;
  rateLimits: { perIp: RateLimit; perClient: RateLimit; adminSignIn: RateLimit };
  /**
   * Caps on rows left waiting: unused Flow A challenges (a caller over its cap is refused, an address
   * or client over its own loses its oldest, housekeeping trims them all to the total) and
   * unfinished logins.
   */
  pendingCaps: { challengesPerAddress: number; challengesPerClient: number; challengesPerIp: number; challengesTotal: number; loginsPerIp: number };
  /**
   * Who answers the protocol endpoints in production: `direct`, their route handlers called by
   * Keyfob's server without Next.js's request pipeline (server/protocol-routes.ts), or `next`.
   */
  protocolDispatch: "direct" | "next";
};

/** The direct connection: DATABASE_DIRECT_URL, else DATABASE_URL unless that goes through a pooler (then none). */
export const directDatabaseUrl = (config: Pick<Config, "databaseUrl" | "databaseDirectUrl" | "databasePooled">): string | undefined =>
  config.databaseDirectUrl ?? (config.databasePooled ? undefined : config.databaseUrl);

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Reads and validates Keyfob's configuration; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  const badAddress = list(e.ADMIN_ADDRESSES).find((a) => !/^0x[0-9a-fA-F]{40}$/.test(a));
  if (badAddress) throw new ConfigError(`Invalid configuration:\n  ADMIN_ADDRESSES: "${badAddress}" is not a 0x address`);
  if (e.KEY_PUBLISH_LEAD < MIN_PUBLISH_LEAD_SECONDS) {
    throw new ConfigError(
      `Invalid configuration:\n  KEY_PUBLISH_LEAD: must be at least ${MIN_PUBLISH_LEAD_SECONDS / 60} minutes, longer than verifiers cache the JWKS`,
    );
  }
  if (e.KEY_PUBLISH_LEAD >= e.KEY_ROTATION_PERIOD) {
    throw new ConfigError("Invalid configuration:\n  KEY_PUBLISH_LEAD: must be shorter than KEY_ROTATION_PERIOD");
  }
  if (e.RPC_QUORUM !== undefined && e.RPC_QUORUM > e.RPC_URL.length) {
    throw new ConfigError(`Invalid configuration:\n  RPC_QUORUM: ${e.RPC_QUORUM} is more than the ${e.RPC_URL.length} providers in RPC_URL`);
  }
  if (e.DATABASE_DIRECT_URL && !e.DATABASE_URL) {
    throw new ConfigError("Invalid configuration:\n  DATABASE_DIRECT_URL: set DATABASE_URL too (the connection requests use)");
  }
  if (e.DATABASE_URL && !e.KEYFOB_SECRET) {
    throw new ConfigError(
      "Invalid configuration:\n  KEYFOB_SECRET: required with DATABASE_URL, so that every instance can decrypt the shared signing keys",
    );
  }
  // A separate direct URL says that DATABASE_URL is the pooled one, unless DATABASE_POOLED says otherwise.
  const pooled = e.DATABASE_POOLED ? e.DATABASE_POOLED === "true" : e.DATABASE_DIRECT_URL !== undefined;
  return {
    issuerUrl: e.ISSUER_URL,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    databaseDirectUrl: e.DATABASE_DIRECT_URL,
    databasePooled: pooled,
    preparedStatements: e.DATABASE_PREPARED_STATEMENTS ? e.DATABASE_PREPARED_STATEMENTS === "true" : !pooled,
    dataDir: path.resolve(e.DATA_DIR),
    embeddedPostgresPort: e.EMBEDDED_POSTGRES_PORT,
    secret: e.KEYFOB_SECRET,
    chainId: e.CHAIN_ID,
    rpcUrls: e.RPC_URL,
    rpcQuorum: e.RPC_QUORUM ?? e.RPC_URL.length,
    accessTokenTtl: e.ACCESS_TOKEN_TTL,
    idTokenTtl: e.ID_TOKEN_TTL ?? e.ACCESS_TOKEN_TTL,
    challengeTtl: e.CHALLENGE_TTL,
    keyRotationPeriod: e.KEY_ROTATION_PERIOD,
    keyPublishLead: e.KEY_PUBLISH_LEAD,
    dbPoolSize: e.DB_POOL_SIZE,
    recoveryThreads: e.RECOVERY_THREADS,
    authorizationCodeTtl: e.AUTHORIZATION_CODE_TTL,
    google: upstream(e.GOOGLE_CLIENT_ID, e.GOOGLE_CLIENT_SECRET, e.GOOGLE_ISSUER),
    apple: upstream(e.APPLE_CLIENT_ID, e.APPLE_CLIENT_SECRET, e.APPLE_ISSUER),
    walletConnectProjectId: e.WALLETCONNECT_PROJECT_ID,
    adminAddresses: list(e.ADMIN_ADDRESSES).map((a) => a.toLowerCase()),
    adminEmails: list(e.ADMIN_EMAILS).map((a) => a.toLowerCase()),
    adminContractSignatures: e.ADMIN_CONTRACT_SIGNATURES === "true",
    host: e.HOST,
    trustProxy: parseTrustedProxies(e.TRUSTED_PROXIES),
    metricsPort: e.METRICS_PORT,
    metricsToken: e.METRICS_TOKEN,
    shutdownTimeout: e.SHUTDOWN_TIMEOUT,
    auditRetention: e.AUDIT_RETENTION,
    sessionIdleTtl: e.SESSION_IDLE_TTL,
    sessionMaxAge: e.SESSION_MAX_AGE,
    refreshTokenIdleTtl: e.REFRESH_TOKEN_IDLE_TTL,
    refreshTokenMaxAge: e.REFRESH_TOKEN_MAX_AGE,
    rateLimits: { perIp: e.RATE_LIMIT_PER_IP, perClient: e.RATE_LIMIT_PER_CLIENT, adminSignIn: e.RATE_LIMIT_ADMIN_SIGNIN },
    pendingCaps: {
      challengesPerAddress: e.PENDING_CHALLENGES_PER_ADDRESS,
      challengesPerClient: e.PENDING_CHALLENGES_PER_CLIENT,
      challengesPerIp: e.PENDING_CHALLENGES_PER_IP,
      challengesTotal: e.PENDING_CHALLENGES_TOTAL,
      loginsPerIp: e.PENDING_LOGINS_PER_IP,
    },
    protocolDispatch: e.PROTOCOL_DISPATCH,
  };
}

function list(value: string): string[] {
  return value.split(/[\s,]+/).filter(Boolean);
}

function upstream(clientId: string | undefined, clientSecret: string | undefined, issuer: string): UpstreamProvider | undefined {
  return clientId && clientSecret ? { clientId, clientSecret, issuer: issuer.replace(/\/+$/, "") } : undefined;
}
