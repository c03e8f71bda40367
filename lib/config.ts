import { availableParallelism } from "node:os";
import path from "node:path";
import { z } from "zod";
import { isLoopbackHost } from "./clients/redirect-uri";
import { parseTrustedProxies, type ProxyTrust } from "./http/client-ip";
import { type Network, parseNetworks } from "./http/outbound";
import { LOG_LEVELS, log } from "./log";
import { parseVehicleDid, type StaticVehicleGrant } from "./vehicles/asset";
import { isPrivilegeId } from "./vehicles/privileges";
import type { Address } from "viem";

/** JWKS responses may be cached 5 minutes and instances reload keys every minute: a new key must be out longer. */
const MIN_PUBLISH_LEAD_SECONDS = 600;

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** A duration in seconds, written as a whole number with an optional unit: `600`, `10m`, `14d`; 0 only where `zero` allows none. */
const durationOf = (zero: "none" | "refused") =>
  z.string().transform((value, ctx) => {
    const match = /^(\d+)\s*([smhd]?)$/.exec(value.trim());
    const seconds = match ? Number(match[1]) * UNIT_SECONDS[match[2] || "s"] : -1;
    if (seconds < 0 || (seconds === 0 && zero === "refused")) {
      const expected = zero === "none" ? "a duration such as 0, 5 or 10s" : "a positive duration such as 600, 10m, 12h or 14d";
      ctx.addIssue({ code: "custom", message: `expected ${expected}, got "${value}"` });
      return z.NEVER;
    }
    return seconds;
  });
const duration = durationOf("refused");

const positiveInt = z.string().transform((value, ctx) => {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n <= 0) {
    ctx.addIssue({ code: "custom", message: `expected a positive whole number, got "${value}"` });
    return z.NEVER;
  }
  return n;
});

const httpUrl = z.string().refine((value) => {
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

/** A duration of at most `max` seconds (`written` in words). */
const atMost = (type: typeof duration, max: number, written: string) =>
  type.refine((seconds) => seconds <= max, `must be at most ${written}`);

/** A rate limit: `<count>/<duration>` (e.g. `600/1m`), or `off`. */
export type RateLimit = { max: number; windowSeconds: number } | undefined;

const rateLimit = z.string().transform((value, ctx): RateLimit => {
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

const bool = z.enum(["true", "false"], "expected true or false").transform((value) => value === "true");

/** An issuer URL, compared with the tokens' `iss` claims: without a trailing slash. */
const issuerUrl = secureUrl.transform((url) => url.replace(/\/+$/, ""));

/** Space or comma separated values. */
const list = z.string().transform((value) => value.split(/[\s,]+/).filter(Boolean));

const rpcUrls = list.transform((urls, ctx) => {
  for (const url of urls) {
    const problem = secureUrl.safeParse(url).error?.issues[0]?.message;
    if (problem) ctx.addIssue({ code: "custom", message: `${problem}: "${url}"` });
  }
  return urls;
});

const addresses = list.transform((values, ctx) => {
  const bad = values.find((a) => !/^0x[0-9a-fA-F]{40}$/.test(a));
  if (bad) ctx.addIssue({ code: "custom", message: `"${bad}" is not a 0x address` });
  return values.map((a) => a.toLowerCase());
});

/** VEHICLE_GRANTS: `<vehicle DID>=<address>:<id>+<id>; …`, the development access policy's grants. */
const vehicleGrants = z.string().transform((value, ctx): StaticVehicleGrant[] => {
  const grants: StaticVehicleGrant[] = [];
  for (const entry of value
    .split(";")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const match = /^(\S+)=(0x[0-9a-fA-F]{40}):([0-9+]+)$/.exec(entry);
    const vehicle = match && parseVehicleDid(match[1]);
    const privileges = match?.[3].split("+").map(Number) ?? [];
    if (!match || !vehicle || privileges.length === 0 || !privileges.every(isPrivilegeId)) {
      ctx.addIssue({ code: "custom", message: `expected <vehicle DID>=<address>:<privilege id>+<privilege id>, got "${entry}"` });
      return z.NEVER;
    }
    grants.push({ vehicle, grantee: match[2].toLowerCase() as Address, privileges });
  }
  return grants;
});

const trustedProxies = z.string().transform((value, ctx): ProxyTrust => {
  try {
    return parseTrustedProxies(value);
  } catch {
    ctx.addIssue({ code: "custom", message: "expected a number of proxy hops, or addresses and CIDR ranges (e.g. loopback, 10.0.0.0/8)" });
    return z.NEVER;
  }
});

const networks = z.string().transform((value, ctx): Network[] => {
  try {
    return parseNetworks(value);
  } catch (error) {
    ctx.addIssue({ code: "custom", message: (error as Error).message });
    return z.NEVER;
  }
});

/**
 * The configuration's sections, in the order docs/configuration.md and .env.example show them, each with an
 * optional introduction (Markdown).
 */
export const configGroups = {
  Server: "",
  Database: "",
  "Sign-in":
    "Passkeys need nothing more: their RP ID is `ISSUER_URL`'s host name. The login page's language (English, German) is chosen per request from `ui_locales`, then `Accept-Language`.",
  "Tokens and keys": "",
  "Vehicle tokens":
    "Vehicle tokens are exchanged for a client's access token (RFC 8693, `POST /token`, or the platform's `POST /v1/tokens/exchange`) when the vehicle's owner granted the client's address the privileges on chain. See [Vehicle tokens](vehicle-tokens.md).",
  Admin: "",
  Limits:
    "Rate limits are shared by every instance: `<count>/<duration>`, or `off`. Caps on what is left waiting: a caller address (IPv6 per /64) is refused over its own caps; nobody's waiting challenges are pushed out by another caller's requests.",
  Operations: "",
} as const;

export type ConfigGroup = keyof typeof configGroups;

/** How values are written, for the documentation (Markdown). */
export const configFormats =
  "Durations are whole seconds or a number with a unit, `s`, `m`, `h` or `d` (`600`, `10m`, `14d`). Lists are comma or space separated.";

type SettingSpec<T> = {
  group: ConfigGroup;
  /** Checks and converts the variable's text. */
  type: z.ZodType<T, string>;
  /** The value when the variable is unset; without one, the setting is optional and empty counts as unset. */
  default?: string;
  /** The Default column, when the default is not a plain value (computed, or another setting's). */
  shown?: string;
  /** A value for .env.example, for a setting without a plain default. */
  example?: string;
  /** The Meaning column (Markdown); .env.example gets it as plain text. */
  doc: string;
};

/** One environment variable: `Optional` when it has no default. */
export class Setting<T = unknown, Optional extends boolean = boolean> {
  readonly schema: z.ZodType<T | (Optional extends true ? undefined : never)>;
  readonly group: ConfigGroup;
  readonly default?: string;
  readonly shown?: string;
  readonly example?: string;
  readonly doc: string;

  constructor(
    readonly env: string,
    spec: SettingSpec<T>,
  ) {
    ({ group: this.group, default: this.default, shown: this.shown, example: this.example, doc: this.doc } = spec);
    this.schema = (
      spec.default === undefined
        ? z.preprocess((value) => (value === "" ? undefined : value), spec.type.optional())
        : spec.type.prefault(spec.default)
    ) as this["schema"];
  }
}

function setting<T>(env: string, spec: SettingSpec<T> & { default: string }): Setting<T, false>;
function setting<T>(env: string, spec: SettingSpec<T> & { default?: undefined }): Setting<T, true>;
function setting<T>(env: string, spec: SettingSpec<T>): Setting<T> {
  return new Setting(env, spec);
}

/** One Config property made of several variables. */
class Combined<Parts, T> {
  constructor(
    readonly parts: Parts,
    readonly combine: (parts: Shape<Parts>) => T,
  ) {}
}

/** What a table node reads as: a setting its value, a Combined its result, an object its own shape. */
type Shape<Node> =
  Node extends Setting<infer T, infer Optional>
    ? T | (Optional extends true ? undefined : never)
    : Node extends Combined<infer _Parts, infer T>
      ? T
      : Simplify<
          { [K in keyof Node as IsOptional<Node[K]> extends true ? never : K]: Shape<Node[K]> } & {
            [K in keyof Node as IsOptional<Node[K]> extends true ? K : never]?: Shape<Node[K]>;
          }
        >;

type IsOptional<Node> =
  Node extends Setting<unknown, infer Optional>
    ? Optional
    : Node extends Combined<infer _Parts, infer T>
      ? undefined extends T
        ? true
        : false
      : false;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

// biome-ignore lint/suspicious/noExplicitAny: Parts is both read (parts) and written (combine's argument), so only any admits every Combined.
type AnyCombined = Combined<any, unknown>;

type Table = { [key: string]: Setting | AnyCombined | Table };

function settingsIn(node: Table | Setting | AnyCombined): Setting[] {
  if (node instanceof Setting) return [node];
  return Object.values<Table[string]>(node instanceof Combined ? node.parts : node).flatMap(settingsIn);
}

/** The table's shape filled with the parsed variables. */
function read(node: Table | Setting | AnyCombined, values: Record<string, unknown>): unknown {
  if (node instanceof Setting) return values[node.env];
  if (node instanceof Combined) return node.combine(read(node.parts, values) as never);
  return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, read(child, values)]));
}

/** An upstream OpenID provider (Google, Apple); the issuer can point at a stand-in for tests. */
export type UpstreamProvider = { clientId: string; clientSecret: string; issuer: string };

/** Configured only when both client id and secret are set. */
const upstream = ({ clientId, clientSecret, issuer }: { clientId?: string; clientSecret?: string; issuer: string }) =>
  clientId && clientSecret ? ({ clientId, clientSecret, issuer } satisfies UpstreamProvider) : undefined;

const databaseExample = "postgresql://keyfob:password@db.internal:5432/keyfob";

/**
 * Every setting, once: its variable, type and checks, default and documentation, under the Config
 * property it fills. docs/configuration.md's tables and .env.example are made from it (npm run docs:config).
 */
const table = {
  issuerUrl: setting("ISSUER_URL", {
    group: "Server",
    type: issuerUrl,
    default: "http://localhost:3000",
    doc: "Public URL: the tokens' `iss` and the challenge's `URI`. https (http only on localhost); no trailing slash (one is removed). Its host name is also the passkeys' RP ID: passkeys made under one `ISSUER_URL` do not work under another.",
  }),
  port: setting("PORT", { group: "Server", type: positiveInt, default: "3000", doc: "HTTP port." }),
  host: setting("HOST", {
    group: "Server",
    type: z.string(),
    shown: "all interfaces",
    example: "127.0.0.1",
    doc: "Interface to listen on.",
  }),
  trustProxy: setting("TRUSTED_PROXIES", {
    group: "Server",
    type: trustedProxies,
    default: "",
    example: "10.0.0.0/8",
    doc: "Which proxies' `X-Forwarded-For` to believe (rate limits, audit log): a hop count (`1`), or addresses and CIDR ranges and the names `loopback`, `linklocal`, `uniquelocal`. Empty: the socket's address is the caller's.",
  }),
  recoveryThreads: setting("RECOVERY_THREADS", {
    group: "Server",
    type: z
      .string()
      .refine((v) => /^\d+$/.test(v.trim()), "expected a whole number (0: recover signatures on the event loop)")
      .transform(Number),
    default: String(Math.max(1, availableParallelism() - 1)),
    shown: "cores − 1 (at least 1)",
    example: "1",
    doc: "Worker threads for EIP-191 signature recovery (CPU-bound); `0` runs it on the event loop.",
  }),

  databaseUrl: setting("DATABASE_URL", {
    group: "Database",
    type: postgresUrl,
    example: databaseExample,
    doc: "PostgreSQL URL for requests: the server, or a transaction pooler in front of it (PgBouncer; see [Several instances](deployment.md#several-instances-on-one-postgresql)). Unset: embedded PostgreSQL under `DATA_DIR`.",
  }),
  databaseDirectUrl: setting("DATABASE_DIRECT_URL", {
    group: "Database",
    type: postgresUrl,
    example: databaseExample,
    doc: "A direct connection to the same database (never through a pooler), for migrations and `LISTEN`. Set, it says that `DATABASE_URL` is pooled.",
  }),
  databasePooled: setting("DATABASE_POOLED", {
    group: "Database",
    type: bool,
    shown: "`true` when `DATABASE_DIRECT_URL` is set",
    example: "true",
    doc: "`DATABASE_URL` goes through a transaction-mode pooler: nothing on it relies on session state. Set it to `true` for a pooler without a direct URL.",
  }),
  preparedStatements: setting("DATABASE_PREPARED_STATEMENTS", {
    group: "Database",
    type: bool,
    shown: "`false` when pooled, else `true`",
    example: "false",
    doc: "The hot-path statements as named prepared statements on `DATABASE_URL` (parsed once per connection). `true` behind a pooler that keeps them per client (PgBouncer 1.21+ with `max_prepared_statements`).",
  }),
  dbPoolSize: setting("DB_POOL_SIZE", { group: "Database", type: positiveInt, default: "10", doc: "Connections per instance." }),
  statementTimeout: setting("DATABASE_STATEMENT_TIMEOUT", {
    group: "Database",
    type: atMost(duration, 3600, "1 hour"),
    default: "30s",
    doc: "The longest one statement may run (PostgreSQL's `statement_timeout` on Keyfob's connections): past it the statement is cancelled and the request answered 503, and the locks it held are freed. Not sent through a pooler (`DATABASE_POOLED`), which refuses it at connection: set PgBouncer's `query_timeout`, or the role's `statement_timeout`, there.",
  }),
  dataDir: setting("DATA_DIR", {
    group: "Database",
    type: z.string().transform((dir) => path.resolve(dir)),
    default: ".data",
    doc: "Embedded database and development secret (ignored by git).",
  }),
  embeddedPostgresPort: setting("EMBEDDED_POSTGRES_PORT", {
    group: "Database",
    type: positiveInt,
    default: "54329",
    doc: "Port of the embedded PostgreSQL (localhost only).",
  }),

  chainId: setting("CHAIN_ID", {
    group: "Sign-in",
    type: positiveInt,
    default: "1",
    doc: "Chain ID written in challenges and used for contract signatures.",
  }),
  rpcUrls: setting("RPC_URL", {
    group: "Sign-in",
    type: rpcUrls,
    default: "",
    example: "https://rpc.one.example.com,https://rpc.two.example.com",
    doc: "JSON-RPC endpoints for ERC-1271/6492 checks and ENS profiles (https, or http on loopback), comma separated: independent providers that must agree on a contract signature (see `RPC_QUORUM` and [Security](security.md)). Empty: contract accounts are refused, and no ENS claims.",
  }),
  rpcQuorum: setting("RPC_QUORUM", {
    group: "Sign-in",
    type: positiveInt,
    shown: "every `RPC_URL`",
    example: "2",
    doc: "How many providers must find a contract signature valid (none may find it invalid); fewer answers is 503. Lower it to tolerate a provider being down.",
  }),
  ensUniversalResolver: setting("ENS_UNIVERSAL_RESOLVER", {
    group: "Sign-in",
    type: z
      .string()
      .trim()
      .regex(/^0x[0-9a-fA-F]{40}$/, "expected a 0x address")
      .transform((value) => value.toLowerCase() as `0x${string}`),
    default: "0xeeeeeeee14d718c2b47d9923deab1335e144eeee",
    doc: "The ENS Universal Resolver asked (through the first `RPC_URL` that answers) for a wallet's primary name and avatar, the `profile` scope's claims; the default is mainnet's. ENS is display data: no quorum (see [Security](security.md)).",
  }),
  ensTimeout: setting("ENS_TIMEOUT", {
    group: "Sign-in",
    type: duration,
    default: "3s",
    doc: "How long a wallet login waits for ENS at most; then it goes on without the ENS claims (and keeps nothing, so the next login asks again).",
  }),
  ensCacheTtl: setting("ENS_CACHE_TTL", {
    group: "Sign-in",
    type: duration,
    default: "1h",
    doc: "How long a wallet's resolved ENS name and avatar (or their absence) are kept in PostgreSQL, for every instance: logins within it ask no RPC, and tokens carry the claims while it lasts.",
  }),
  challengeTtl: setting("CHALLENGE_TTL", { group: "Sign-in", type: duration, default: "10m", doc: "Lifetime of a Flow A state." }),
  walletConnectProjectId: setting("WALLETCONNECT_PROJECT_ID", {
    group: "Sign-in",
    type: z.string(),
    doc: "Phone wallets through WalletConnect on the login page (QR code, or the wallet app on a phone); a project id from [cloud.reown.com](https://cloud.reown.com). Set, the CSP also allows its relay (`wss://relay.walletconnect.org`, `.com`) and Verify frame. Unset: browser wallets only.",
  }),
  google: new Combined(
    {
      clientId: setting("GOOGLE_CLIENT_ID", {
        group: "Sign-in",
        type: z.string(),
        doc: "Google login on `/auth`, shown only when `GOOGLE_CLIENT_SECRET` is set too. Redirect URI at Google: `<ISSUER_URL>/api/auth/callback/google`.",
      }),
      clientSecret: setting("GOOGLE_CLIENT_SECRET", {
        group: "Sign-in",
        type: z.string(),
        doc: "The client secret of `GOOGLE_CLIENT_ID`.",
      }),
      issuer: setting("GOOGLE_ISSUER", {
        group: "Sign-in",
        type: issuerUrl,
        default: "https://accounts.google.com",
        doc: "Google's OpenID issuer (https, or http on localhost: tests point it at a local provider).",
      }),
    },
    upstream,
  ),
  apple: new Combined(
    {
      clientId: setting("APPLE_CLIENT_ID", {
        group: "Sign-in",
        type: z.string(),
        doc: "Sign in with Apple, shown only when `APPLE_CLIENT_SECRET` is set too. Callback: `<ISSUER_URL>/api/auth/callback/apple`.",
      }),
      clientSecret: setting("APPLE_CLIENT_SECRET", {
        group: "Sign-in",
        type: z.string(),
        doc: "Apple's client-secret JWT for `APPLE_CLIENT_ID`.",
      }),
      issuer: setting("APPLE_ISSUER", {
        group: "Sign-in",
        type: issuerUrl,
        default: "https://appleid.apple.com",
        doc: "Apple's OpenID issuer (https, or http on localhost).",
      }),
    },
    upstream,
  ),
  sessionIdleTtl: setting("SESSION_IDLE_TTL", {
    group: "Sign-in",
    type: duration,
    default: "3d",
    doc: "A login session ends this long after its last use. Ended and revoked sessions (with their IP address and user agent) are deleted a day later.",
  }),
  sessionMaxAge: setting("SESSION_MAX_AGE", {
    group: "Sign-in",
    type: duration,
    default: "30d",
    doc: "A login session ends this long after the login at the latest.",
  }),

  secret: setting("KEYFOB_SECRET", {
    group: "Tokens and keys",
    type: z.string().min(32, "must be at least 32 characters (e.g. `openssl rand -base64 32`)"),
    shown: "generated in `DATA_DIR`",
    doc: "Encrypts signing keys at rest (32+ characters, e.g. `openssl rand -base64 32`). **Required with `DATABASE_URL`**, the same on every instance.",
  }),
  keyRotationPeriod: setting("KEY_ROTATION_PERIOD", {
    group: "Tokens and keys",
    type: duration,
    default: "30d",
    doc: "How long a signing key signs before its successor takes over.",
  }),
  keyPublishLead: setting("KEY_PUBLISH_LEAD", {
    group: "Tokens and keys",
    type: duration.refine(
      (seconds) => seconds >= MIN_PUBLISH_LEAD_SECONDS,
      `must be at least ${MIN_PUBLISH_LEAD_SECONDS / 60} minutes, longer than verifiers cache the JWKS`,
    ),
    default: "1d",
    doc: "How long a new key is published before it signs (at least 10 min, more than JWKS caching; less than `KEY_ROTATION_PERIOD`).",
  }),
  accessTokenTtl: setting("ACCESS_TOKEN_TTL", {
    group: "Tokens and keys",
    type: duration,
    default: "14d",
    doc: "Token lifetime (`expires_in`).",
  }),
  idTokenTtl: setting("ID_TOKEN_TTL", {
    group: "Tokens and keys",
    type: duration,
    shown: "`ACCESS_TOKEN_TTL`",
    example: "1h",
    doc: "Lifetime of ID tokens, when it should differ from the access token's (`expires_in`).",
  }),
  authorizationCodeTtl: setting("AUTHORIZATION_CODE_TTL", {
    group: "Tokens and keys",
    type: duration,
    default: "60s",
    doc: "Lifetime of a Flow B authorization code.",
  }),
  deviceCodeTtl: setting("DEVICE_CODE_TTL", {
    group: "Tokens and keys",
    type: duration,
    default: "10m",
    doc: "Lifetime of a device code and its user code (device authorization grant, RFC 8628).",
  }),
  devicePollInterval: setting("DEVICE_POLL_INTERVAL", {
    group: "Tokens and keys",
    type: duration,
    default: "5s",
    doc: "Seconds a device waits between polls of `/token` (RFC 8628 `interval`); each `slow_down` adds 5.",
  }),
  refreshTokenIdleTtl: setting("REFRESH_TOKEN_IDLE_TTL", {
    group: "Tokens and keys",
    type: duration,
    default: "30d",
    doc: "A refresh token ends this long unused.",
  }),
  refreshTokenMaxAge: setting("REFRESH_TOKEN_MAX_AGE", {
    group: "Tokens and keys",
    type: duration,
    default: "365d",
    doc: "The refresh tokens of one login (all its rotations) end this long after it.",
  }),
  refreshTokenReuseGrace: setting("REFRESH_TOKEN_REUSE_GRACE", {
    group: "Tokens and keys",
    type: atMost(durationOf("none"), 60, "1 minute"),
    default: "0",
    doc: "How long after its use a refresh token may be used again, by an app that refreshed twice at once (foreground and background): answered with the same new refresh token as the first use, a DPoP-bound one only with a proof of the same key. Reuse after it revokes every token of the grant; with 0 (the default) any reuse does. At most 1 minute.",
  }),
  dpopNonceRequired: setting("DPOP_NONCE_REQUIRED", {
    group: "Tokens and keys",
    type: bool,
    default: "false",
    doc: "DPoP proofs must carry a server nonce (RFC 9449 8): without one, `use_dpop_nonce` with a fresh nonce in `DPoP-Nonce` (every answer of `/token`, `/par`, `submit_challenge` and `/userinfo` to a request with a proof carries one). A nonce a proof carries is checked either way: one Keyfob did not issue, or an expired one, is `use_dpop_nonce`. Nonces change every 5 min and need no shared state.",
  }),

  vehicleContracts: setting("VEHICLE_CONTRACTS", {
    group: "Vehicle tokens",
    type: addresses,
    default: "",
    doc: "The vehicle contracts (ERC-721 with the platform's privileges) on `CHAIN_ID`'s chain whose vehicles tokens are exchanged for; none: the grant is refused as `invalid_target`. Their privileges are read from every `RPC_URL` under `RPC_QUORUM`, unless `VEHICLE_GRANTS` is set.",
  }),
  vehicleGrants: setting("VEHICLE_GRANTS", {
    group: "Vehicle tokens",
    type: vehicleGrants,
    example: "did:erc721:31337:0x5fbdb2315678afecb367f032d93f642f64180aa3:1=0x70997970c51812dc3a010c7d01b50e0d17dc79c8:1+4",
    doc: "For development without a chain: the privileges granted, as `<vehicle DID>=<address>:<id>+<id>`, entries separated by `;`. When set, the chain is not asked (and no events are watched).",
  }),
  vehicleTokenIssuer: setting("VEHICLE_TOKEN_ISSUER", {
    group: "Vehicle tokens",
    type: issuerUrl,
    shown: "`ISSUER_URL`",
    doc: "The `iss` of vehicle tokens; their keys are published at `/keys/vehicle`, apart from the access tokens' keys.",
  }),
  vehicleTokenAudience: setting("VEHICLE_TOKEN_AUDIENCE", {
    group: "Vehicle tokens",
    type: list,
    default: "dimo.zone",
    doc: "The `aud` of a vehicle token when the request names no `audience` (the platform's APIs expect `dimo.zone`).",
  }),
  vehicleTokenTtl: setting("VEHICLE_TOKEN_TTL", {
    group: "Vehicle tokens",
    type: atMost(duration, 3600, "1h"),
    default: "10m",
    doc: "Vehicle token lifetime. Short: a privilege that expires by time, without an event, ends with the tokens issued under it.",
  }),
  vehicleEventsInterval: setting("VEHICLE_EVENTS_INTERVAL", {
    group: "Vehicle tokens",
    type: duration,
    default: "2s",
    doc: "How often the vehicle contracts' `Transfer` and `PrivilegeSet` events are read (by one instance at a time): the longest a sold car's tokens stay active, plus one RPC round trip.",
  }),

  adminAddresses: setting("ADMIN_ADDRESSES", {
    group: "Admin",
    type: addresses,
    default: "",
    example: "0x0000000000000000000000000000000000000001",
    doc: "Bootstrap admins' account addresses. More admins are granted in the dashboard or with `keyfob admins grant`; while there is no admin at all, each start prints a one-time set-up link for the first.",
  }),
  adminEmails: setting("ADMIN_EMAILS", {
    group: "Admin",
    type: list.transform((emails) => emails.map((email) => email.toLowerCase())),
    default: "",
    example: "admin@example.com",
    doc: "Bootstrap admins' emails, as verified by Google or Apple.",
  }),
  adminContractSignatures: setting("ADMIN_CONTRACT_SIGNATURES", {
    group: "Admin",
    type: bool,
    default: "false",
    doc: "Let admins sign in with smart-account (ERC-1271/6492) signatures, which the RPC providers vouch for: a fresh login, and a login session that used one (`amr` `contract`).",
  }),

  rateLimits: {
    perIp: setting("RATE_LIMIT_PER_IP", {
      group: "Limits",
      type: rateLimit,
      default: "600/1m",
      doc: "Anonymous requests per caller address to the protocol endpoints together.",
    }),
    perClient: setting("RATE_LIMIT_PER_CLIENT", {
      group: "Limits",
      type: rateLimit,
      default: "6000/1m",
      doc: "Requests of a client that authenticates with its secret (`/par`, `/token`, `/token/revoke`, `/token/introspect`), from any address.",
    }),
    adminSignIn: setting("RATE_LIMIT_ADMIN_SIGNIN", {
      group: "Limits",
      type: rateLimit,
      default: "30/1m",
      doc: "Admin sign-in steps per address.",
    }),
  },
  /**
   * Guessing user codes on /device (RFC 8628 5.1), limited apart from the protocol's budget. The
   * overall budget counts wrong codes only, so that many addresses guessing cannot lock out a person
   * entering a right one (lib/rate-limit.ts limitUserCodeEntry).
   */
  userCodeLimits: {
    perIp: setting("RATE_LIMIT_USER_CODE_PER_IP", {
      group: "Limits",
      type: rateLimit,
      default: "10/1m",
      doc: "User codes entered on `/device` per address, right or wrong (against guessing).",
    }),
    total: setting("RATE_LIMIT_USER_CODE_TOTAL", {
      group: "Limits",
      type: rateLimit,
      default: "600/1m",
      doc: "Wrong user codes entered on `/device` from all addresses together (against guessing from many). Once they reach it, an address that entered a wrong code itself within the window gets 429 until that code fades (one wrong code per address and window while it lasts); an address without one is still answered, so a right code is never refused for others' guesses.",
    }),
  },
  pendingCaps: {
    challengesPerIp: setting("PENDING_CHALLENGES_PER_IP", {
      group: "Limits",
      type: positiveInt,
      default: "1000",
      doc: "Unused, unexpired Flow A challenges one caller address may hold (IPv6 per /64); over it that caller gets 429.",
    }),
    challengesTotal: setting("PENDING_CHALLENGES_TOTAL", {
      group: "Limits",
      type: positiveInt,
      default: "200000",
      doc: "Unused Flow A challenges kept in all (about 1 KB each): every 10 minutes those beyond it are deleted, the callers holding the most first, so a flood from some addresses trims their own.",
    }),
    loginsPerIp: setting("PENDING_LOGINS_PER_IP", {
      group: "Limits",
      type: positiveInt,
      default: "200",
      doc: "Unfinished hosted logins one address may hold.",
    }),
  },

  backchannelLogoutDelivery: setting("BACKCHANNEL_LOGOUT_DELIVERY", {
    group: "Operations",
    type: bool,
    default: "true",
    doc: "This instance delivers queued back-channel logout tokens (a loop per instance; any instance may deliver any token, each claimed by one). Off for an instance that must not make outgoing requests; at least one instance must deliver.",
  }),
  /** When an undelivered back-channel logout token is tried again (seconds); bounded so the outbox drains. */
  backchannelLogoutRetry: {
    firstDelay: setting("BACKCHANNEL_LOGOUT_RETRY_FIRST", {
      group: "Operations",
      type: atMost(duration, 3600, "1 hour"),
      default: "2s",
      doc: "The wait before a back-channel logout token's second attempt, after a failed first; each further wait doubles (at most 1h).",
    }),
    maxDelay: setting("BACKCHANNEL_LOGOUT_RETRY_MAX", {
      group: "Operations",
      type: atMost(duration, 86400, "1 day"),
      default: "10m",
      doc: "The longest wait between two attempts (at least `BACKCHANNEL_LOGOUT_RETRY_FIRST`, at most 1d).",
    }),
    giveUpAfter: setting("BACKCHANNEL_LOGOUT_RETRY_FOR", {
      group: "Operations",
      type: atMost(duration, 30 * 86400, "30 days"),
      default: "24h",
      doc: "How long after the session ended a token is still tried; then it is given up, audited (longer than `BACKCHANNEL_LOGOUT_RETRY_FIRST`, at most 30d).",
    }),
  },
  backchannelLogoutAllowedNetworks: setting("BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS", {
    group: "Operations",
    type: networks,
    default: "",
    example: "127.0.0.0/8,::1/128",
    doc: "Networks besides the public internet that back-channel logout URIs may point at: addresses and CIDR ranges (`10.20.0.0/16`, `fd12:3456::/48`). Empty: public unicast addresses only, never loopback, private, link-local, shared (CGNAT), unique-local or metadata ones (see [Back-channel logout](endpoints.md#back-channel-logout-openid-connect-back-channel-logout-10)). `127.0.0.0/8,::1/128` allows relying parties on this machine, for development.",
  }),
  logLevel: setting("LOG_LEVEL", {
    group: "Operations",
    type: z.enum(LOG_LEVELS, `expected one of ${LOG_LEVELS.join(", ")}`),
    default: "info",
    doc: "The least severe log lines written: `trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent` (JSON, one per line: up to `info` on stdout, `warn` and up on stderr). `info` includes one access line per request.",
  }),
  logOverride: setting("KEYFOB_LOG", {
    group: "Operations",
    type: z.enum(LOG_LEVELS, `expected one of ${LOG_LEVELS.join(", ")}`),
    example: "silent",
    doc: "Overrides `LOG_LEVEL` (the test suite sets `silent`: no log lines at all).",
  }),
  metricsPort: setting("METRICS_PORT", {
    group: "Operations",
    type: positiveInt,
    example: "9464",
    doc: "Serves Prometheus metrics on this port (`GET /metrics`, nothing else).",
  }),
  metricsToken: setting("METRICS_TOKEN", {
    group: "Operations",
    type: z.string().min(16, "must be at least 16 characters"),
    doc: "Serves `GET /metrics` on the main port to this bearer token (16+ characters). Neither set: no metrics.",
  }),
  shutdownTimeout: setting("SHUTDOWN_TIMEOUT", {
    group: "Operations",
    type: duration,
    default: "10s",
    doc: "How long in-flight requests get after SIGTERM.",
  }),
  sweepInterval: setting("SWEEP_INTERVAL", {
    group: "Operations",
    type: duration,
    default: "10m",
    doc: "How often each instance ends the login sessions that ran out (idle or past `SESSION_MAX_AGE`; their back-channel logouts are sent then) and deletes expired rows (challenges, codes, token records and login sessions a day after they ended, spent rate-limit counters, audit events past `AUDIT_RETENTION`).",
  }),
  auditRetention: setting("AUDIT_RETENTION", {
    group: "Operations",
    type: duration,
    default: "365d",
    doc: "How long audit events are kept.",
  }),
} satisfies Table;

/** Every setting, in the table's order. */
export const configSettings: readonly Setting[] = settingsIn(table);

const envSchema = z.object(Object.fromEntries(configSettings.map((s) => [s.env, s.schema])));

/** Settings whose default is another setting's value. */
type Fallbacks = {
  databasePooled: boolean;
  preparedStatements: boolean;
  rpcQuorum: number;
  idTokenTtl: number;
  vehicleTokenIssuer: string;
};

type Parsed = Shape<typeof table>;

export type Config = Simplify<Omit<Parsed, keyof Fallbacks> & Fallbacks>;

/** The direct connection: DATABASE_DIRECT_URL, else DATABASE_URL unless that goes through a pooler (then none). */
export const directDatabaseUrl = (config: Pick<Config, "databaseUrl" | "databaseDirectUrl" | "databasePooled">): string | undefined =>
  config.databaseDirectUrl ?? (config.databasePooled ? undefined : config.databaseUrl);

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Variables Keyfob's tools read that are no settings of the server's: the CLIs', the build's, the tests'. */
const TOOL_VARIABLES = new Set([
  "KEYFOB_URL",
  "KEYFOB_CLIENT_ID",
  "KEYFOB_CLIENT_SECRET",
  "KEYFOB_PRIVATE_KEY",
  "KEYFOB_DIST_DIR",
  "KEYFOB_COMMIT",
  "KEYFOB_CHAIN_PARENT_PID",
]);

/** Prefixes only Keyfob's settings use: an unknown variable under one is a setting misspelt or gone. */
const SETTING_PREFIXES = ["KEYFOB_", "RATE_LIMIT_", "BACKCHANNEL_LOGOUT_", "PENDING_", "VEHICLE_", "ADMIN_", "ENS_"];

/** Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`, up to `max` + 1. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const rows = [...Array(a.length + 1)].map((_, i) => [i, ...Array(b.length).fill(0)] as number[]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  return rows[a.length][b.length];
}

/**
 * Environment variables that look like Keyfob settings but are none (a typo such as
 * `ADMIN_ADRESSES`, or a setting that no longer exists), with the setting meant when one is close:
 * such a variable is silently ignored, and its setting keeps its default.
 */
export function unknownVariables(env: Record<string, string | undefined>): { variable: string; meant?: string }[] {
  const known = new Set(configSettings.map((s) => s.env));
  return Object.keys(env)
    .filter((name) => !known.has(name) && !TOOL_VARIABLES.has(name))
    .flatMap((variable) => {
      const max = variable.length >= 10 ? 2 : 1;
      const meant = [...known].find((name) => editDistance(variable, name, max) <= max);
      if (meant) return [{ variable, meant }];
      return SETTING_PREFIXES.some((prefix) => variable.startsWith(prefix)) ? [{ variable }] : [];
    });
}

/** One warning line per unknown variable (its name, never its value), at start-up. */
export function warnUnknownVariables(env: Record<string, string | undefined>): void {
  for (const { variable, meant } of unknownVariables(env))
    log.warn(meant ? `unknown setting ${variable} ignored: did you mean ${meant}?` : `unknown setting ${variable} ignored`, {
      variable,
      meant,
    });
}

/** Reads and validates Keyfob's configuration; throws a ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const c = read(table, parsed.data) as Parsed;
  // The rules between settings.
  if (c.keyPublishLead >= c.keyRotationPeriod) {
    throw new ConfigError("Invalid configuration:\n  KEY_PUBLISH_LEAD: must be shorter than KEY_ROTATION_PERIOD");
  }
  const retry = c.backchannelLogoutRetry;
  if (retry.maxDelay < retry.firstDelay) {
    throw new ConfigError("Invalid configuration:\n  BACKCHANNEL_LOGOUT_RETRY_MAX: must be at least BACKCHANNEL_LOGOUT_RETRY_FIRST");
  }
  if (retry.giveUpAfter <= retry.firstDelay) {
    throw new ConfigError("Invalid configuration:\n  BACKCHANNEL_LOGOUT_RETRY_FOR: must be longer than BACKCHANNEL_LOGOUT_RETRY_FIRST");
  }
  if (c.rpcQuorum !== undefined && c.rpcQuorum > c.rpcUrls.length) {
    throw new ConfigError(`Invalid configuration:\n  RPC_QUORUM: ${c.rpcQuorum} is more than the ${c.rpcUrls.length} providers in RPC_URL`);
  }
  if (c.vehicleContracts.length > 0 && c.rpcUrls.length === 0 && c.vehicleGrants === undefined) {
    throw new ConfigError(
      "Invalid configuration:\n  VEHICLE_CONTRACTS: set RPC_URL too (the chain the privileges are read from), or VEHICLE_GRANTS",
    );
  }
  if (c.databaseDirectUrl && !c.databaseUrl) {
    throw new ConfigError("Invalid configuration:\n  DATABASE_DIRECT_URL: set DATABASE_URL too (the connection requests use)");
  }
  if (c.databaseUrl && !c.secret) {
    throw new ConfigError(
      "Invalid configuration:\n  KEYFOB_SECRET: required with DATABASE_URL, so that every instance can decrypt the shared signing keys",
    );
  }
  // A separate direct URL says that DATABASE_URL is the pooled one, unless DATABASE_POOLED says otherwise.
  const databasePooled = c.databasePooled ?? c.databaseDirectUrl !== undefined;
  return {
    ...c,
    databasePooled,
    preparedStatements: c.preparedStatements ?? !databasePooled,
    rpcQuorum: c.rpcQuorum ?? c.rpcUrls.length,
    idTokenTtl: c.idTokenTtl ?? c.accessTokenTtl,
    vehicleTokenIssuer: c.vehicleTokenIssuer ?? c.issuerUrl,
  };
}
