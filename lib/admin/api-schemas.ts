import { z } from "zod";
import { MANAGEMENT_SCOPES, type ManagementScope } from "./scopes";
import { SIGNING_ALGS } from "../store/contract";

/**
 * What the management API answers, as zod schemas: each route of lib/admin/api.ts names its answer
 * here, the answer is encoded through it (times become ISO 8601 strings, and only the fields named
 * here leave Keyfob: no storage internals), and the OpenAPI document describes it from the same
 * schema with z.toJSONSchema, as it describes the request bodies from the actions' zod inputs.
 */

const EXAMPLE_TIME = "2026-11-24T09:30:00.000Z";
const LICENSE = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";
const ACCOUNT = "0x71C7656EC7ab88b098defB751B7401B5f6d8976F";

/** A time: a Date inside Keyfob, ISO 8601 (UTC) on the wire. */
const time = z.codec(z.iso.datetime().meta({ examples: [EXAMPLE_TIME] }), z.date(), {
  decode: (text) => new Date(text),
  encode: (date) => date.toISOString(),
});
const count = (description: string) =>
  z
    .int()
    .min(0)
    .meta({ description, examples: [2] });

const clientId = z.string().meta({ description: "the client_id: a license address or any other id", examples: [LICENSE, "kf_7Hq2mXk9"] });
const accountId = z.string().meta({ description: "an account id (the 0x address of its first wallet, or acct_…)", examples: [ACCOUNT] });
const address = z.string().meta({ description: "an EIP-55 checksummed address", examples: [LICENSE] });

const signer = z.object({
  address,
  enabledAt: time,
  expiresAt: time.nullable().meta({ description: "null: never expires" }),
  revokedAt: time.nullable(),
});

export const clientSchema = z.object({
  id: clientId,
  name: z.string().meta({ examples: ["Fleet dashboard"] }),
  logoUrl: z
    .string()
    .nullable()
    .meta({ examples: ["https://fleet.example.com/logo.png"] }),
  enabled: z.boolean(),
  confidential: z.boolean().meta({ description: "has a secret" }),
  secretOverlapEndsAt: time
    .nullable()
    .meta({ description: "when the secret the last rotation replaced stops working; null: no overlap under way" }),
  requirePkce: z.boolean(),
  resourceServer: z.boolean(),
  refreshTokensAllowed: z.boolean(),
  managementApi: z.boolean(),
  managementScopes: z.array(z.enum(Object.keys(MANAGEMENT_SCOPES) as [ManagementScope, ...ManagementScope[]])),
  requirePushedAuthorizationRequests: z.boolean().meta({ description: "authorization requests only through PAR (RFC 9126)" }),
  requireConsent: z
    .boolean()
    .meta({ description: "a third-party client: the hosted login asks the user's consent to scopes not granted it yet" }),
  backchannelLogoutUri: z
    .string()
    .nullable()
    .meta({
      description: "where logout tokens are POSTed (Back-Channel Logout 1.0); null: none",
      examples: ["https://fleet.example.com/logout"],
    }),
  backchannelLogoutSessionRequired: z.boolean().meta({ description: "the client needs sid in ID and logout tokens" }),
  deviceFlow: z.boolean().meta({ description: "may use the device authorization grant (RFC 8628)" }),
  deviceFlowOfflineAccess: z
    .boolean()
    .meta({ description: "its device grants may carry offline_access (a refresh token), with refreshTokensAllowed too" }),
  tokenExchange: z.boolean().meta({ description: "may exchange its access tokens for vehicle tokens (RFC 8693 token exchange)" }),
  dpopBoundAccessTokens: z.boolean().meta({ description: "token requests must carry a DPoP proof (RFC 9449 5.2)" }),
  resources: z.array(z.string()).meta({
    description: "resource servers it may get access tokens for (RFC 8707 resource indicators); a token asked for one has it as aud",
    examples: [["https://api.fleet.example.com"]],
  }),
  tokenEndpointAuthMethod: z
    .enum(["private_key_jwt", "client_secret_jwt"])
    .nullable()
    .meta({ description: "client assertions (RFC 7523) instead of a secret; null: its secret, or none for a public client" }),
  jwks: z.record(z.string(), z.unknown()).nullable().meta({ description: "private_key_jwt: its public keys (a JWK Set)" }),
  jwksUri: z.string().nullable().meta({ description: "private_key_jwt: where its JWK Set is fetched" }),
  idTokenSignedResponseAlg: z
    .enum(SIGNING_ALGS)
    .meta({ description: "the alg its ID, access and logout tokens are signed with (RFC 7591 id_token_signed_response_alg)" }),
  createdAt: time,
  redirectUris: z.array(z.string()).meta({ examples: [["https://fleet.example.com/callback"]] }),
  postLogoutRedirectUris: z.array(z.string()),
  allowedOrigins: z.array(z.string()),
  signers: z.array(signer),
});

const clientSummary = z.object({
  id: clientId,
  name: z.string().meta({ examples: ["Fleet dashboard"] }),
  logoUrl: z.string().nullable(),
  enabled: z.boolean(),
  createdAt: time,
  redirectUriCount: count("its redirect URIs"),
  activeSignerCount: count("its signers not revoked"),
});

/** A page of a list: 20 items, newest first. */
const page = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    total: count("items on every page"),
    page: z
      .int()
      .min(1)
      .meta({ examples: [1] }),
    pageSize: z
      .int()
      .min(1)
      .meta({ examples: [20] }),
  });

const items = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item) });

const identity = z.object({
  provider: z.string().meta({ examples: ["web3", "google", "apple", "passkey"] }),
  subject: z.string(),
  email: z.string().nullable(),
  emailVerified: z.boolean(),
  createdAt: time,
  lastLoginAt: time.nullable(),
});

const accountSummary = z.object({ id: accountId, createdAt: time, blockedAt: time.nullable(), identities: z.array(identity) });

const session = z.object({
  id: z.string().meta({ description: "the session's id (a digest; the cookie's value is never shown)" }),
  connector: z.string().meta({ examples: ["web3", "google"] }),
  subject: z.string(),
  email: z.string().nullable(),
  amr: z.string().meta({ description: "authentication methods, space-separated", examples: ["hwk"] }),
  authTime: time,
  lastSeenAt: time,
  expiresAt: time,
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
});

const consent = z.object({
  clientId: z.string(),
  clientName: z.string(),
  scope: z.array(z.string()).meta({ examples: [["email", "openid"]] }),
  grantedAt: time.meta({ description: "when the user last consented" }),
});

const account = accountSummary.extend({
  wallets: z.array(z.object({ address, own: z.boolean().meta({ description: "the account's own address" }), linkedAt: time })),
  sessions: z.array(session),
  consents: z.array(consent).meta({ description: "what the account allowed third-party clients (those that require consent)" }),
  holdings: z.object({ accessTokens: count("active access tokens"), refreshGrants: count("live refresh grants") }),
  adminRole: z.object({ grantedBy: z.string(), grantedAt: time }).nullable(),
  configuredAdmin: z.boolean().meta({ description: "an admin by ADMIN_ADDRESSES" }),
});

const accessToken = z.object({
  jti: z.string(),
  clientId,
  userId: z.string().meta({ description: "the account (or, in Flow A, the wallet or license) the token is for" }),
  connector: z.string().meta({ examples: ["web3", "google", "client_credentials"] }),
  scope: z.string().meta({ examples: ["openid email"] }),
  refreshFamily: z.string().nullable(),
  vehicle: z
    .string()
    .nullable()
    .meta({
      description: "a vehicle token's vehicle, its asset DID (did:erc721:<chainId>:<contract>:<tokenId>); null for other tokens",
      examples: ["did:erc721:137:0xbA5738a18d83D41847dfFbDC6101d37C69c9B0cF:1234"],
    }),
  privileges: z
    .array(
      z.object({
        id: z.int().meta({ description: "the privilege's id on chain", examples: [1] }),
        name: z.string().meta({ examples: ["GetNonLocationHistory"] }),
      }),
    )
    .meta({ description: "a vehicle token's privileges; empty for other tokens" }),
  issuedAt: time,
  expiresAt: time,
  revokedAt: time.nullable(),
});

const refreshGrant = z.object({
  familyId: z.string(),
  clientId,
  accountId,
  connector: z.string(),
  scope: z.string().meta({ examples: ["openid email offline_access"] }),
  expiresAt: time.meta({ description: "ends unused (idle)" }),
  familyExpiresAt: time.meta({ description: "ends at the latest" }),
  grantedAt: time,
  lastUsedAt: time.nullable(),
  rotations: count("refreshes so far"),
});

const auditEvent = z.object({
  id: z.string().meta({ description: "a decimal number, increasing", examples: ["1042"] }),
  at: time,
  actor: z
    .string()
    .nullable()
    .meta({ examples: ["0x71C7656EC7ab88b098defB751B7401B5f6d8976F", "api:kf_ops", "cli:alice"] }),
  action: z.string().meta({ examples: ["token.issued", "client.updated"] }),
  clientId: z.string().nullable(),
  accountId: z.string().nullable(),
  ip: z.string().nullable(),
  outcome: z.string().meta({ examples: ["success", "invalid_grant"] }),
  detail: z.string().nullable(),
});

const key = z.object({
  kid: z.string(),
  activatesAt: time,
  status: z.enum(["upcoming", "current", "retired"]),
  purpose: z
    .enum(["access", "vehicle"])
    .meta({ description: "The key set: access and ID tokens (/keys), or vehicle tokens (/keys/vehicle)" }),
  alg: z.enum(SIGNING_ALGS).meta({ description: "The alg it signs with; each alg has a schedule of its own" }),
});

const revoked = z.object({ revoked: count("how many were revoked") });

/** The answers, by name; lib/admin/api.ts gives each route one. */
export const RESPONSES = {
  client: clientSchema,
  clients: page(clientSummary),
  secret: z.object({
    clientId,
    secret: z.string().meta({ description: "shown this once; Keyfob keeps only its hash", examples: ["kfs_Xq2…"] }),
    previousSecretExpiresAt: time
      .nullable()
      .meta({ description: "when the replaced secret stops working (overlapSeconds); null: it stopped at once" }),
  }),
  values: items(z.string()).meta({ examples: [{ items: ["https://fleet.example.com/callback"] }] }),
  signers: items(signer),
  signerAdded: z.object({ signer: signer.omit({ revokedAt: true }) }),
  keys: items(key),
  keyRevocation: z.object({
    kid: z.string(),
    revoked: z.boolean(),
    was: z.enum(["current", "upcoming", "retired"]).optional(),
    successor: z.string().optional().meta({ description: "the key that signs instead" }),
    message: z.string(),
  }),
  accounts: page(accountSummary),
  account,
  blocked: z.object({ revokedTokens: count("access tokens revoked"), revokedSessions: count("login sessions revoked") }),
  accountDeleted: z.object({ revokedTokens: count("access tokens revoked"), endedSessions: count("login sessions ended") }),
  sessions: items(session),
  consents: items(consent),
  revoked,
  tokens: page(accessToken),
  refreshGrants: page(refreshGrant),
  audit: page(auditEvent),
  admins: items(z.object({ accountId, grantedBy: z.string(), grantedAt: time })),
  done: z.object({}),
} satisfies Record<string, z.ZodType>;

export type ResponseName = keyof typeof RESPONSES;

/** Keyfob's error shape (lib/admin/api.ts apiError). */
export const ERROR = z
  .object({
    error: z.string().meta({ examples: ["invalid_request", "invalid_token", "insufficient_scope", "access_denied", "not_found"] }),
    error_description: z.string(),
    status: z.int().meta({ examples: [400] }),
    message: z.string().meta({ description: "the same text as error_description (the platform SDKs read it)" }),
    field_errors: z.record(z.string(), z.string()).optional().meta({ description: "invalid input: the problem of each field" }),
  })
  .meta({
    examples: [
      {
        error: "invalid_request",
        error_description: "name: required",
        status: 400,
        message: "name: required",
        field_errors: { name: "required" },
      },
    ],
  });
