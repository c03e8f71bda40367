import { randomBytes } from "node:crypto";
import { getAddress, isAddress, type Address } from "viem";
import { Prisma, type Database } from "../db/client";
import { clientSecretHash } from "../oauth/client-auth";
import { originProblem, redirectUriProblem } from "./redirect-uri";

/** Bad input to a registry change, naming the field at fault (for the CLI and the dashboard). */
export class RegistryError extends Error {
  override name = "RegistryError";
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Client ids that are addresses (developer licenses) are kept EIP-55 checksummed, so any case matches. */
export function normalizeClientId(clientId: string): string {
  return isAddress(clientId, { strict: false }) ? getAddress(clientId) : clientId;
}

export function parseAddress(value: string, field = "address"): Address {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw new RegistryError(field, "must be a 0x-prefixed 20-byte hex address");
  return getAddress(value);
}

/** What a client id can be: 1 to 128 printable ASCII characters without spaces. */
const CLIENT_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The client a request names before anything is verified (for rate limits, CORS and the audit
 * log), or undefined when the value cannot be a client id: nothing else is counted or looked up.
 */
export function claimedClientId(value: string | undefined | null): string | undefined {
  return value && CLIENT_ID.test(value) ? value : undefined;
}

/** A client id for clients that are not a license address. */
export function generateClientId(): string {
  return `kf_${randomBytes(16).toString("base64url")}`;
}

export async function createClient(db: Database, input: { id?: string; name: string; logoUrl?: string }) {
  const id = input.id?.trim() ? normalizeClientId(input.id.trim()) : generateClientId();
  const name = input.name.trim();
  const logoUrl = input.logoUrl?.trim() || null;
  if (!CLIENT_ID.test(id)) throw new RegistryError("id", "must be 1 to 128 printable characters without spaces");
  if (name.length === 0 || name.length > 200) throw new RegistryError("name", "must be 1 to 200 characters");
  if (logoUrl && !/^https:\/\/[^\s]+$/.test(logoUrl)) throw new RegistryError("logoUrl", "must be an https URL");
  try {
    return await db.client.create({ data: { id, name, logoUrl } });
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
      throw new RegistryError("id", `a client with id ${id} already exists`);
    }
    throw error;
  }
}

export function listClients(db: Database) {
  return db.client.findMany({
    orderBy: { createdAt: "asc" },
    include: {
      redirectUris: { orderBy: { createdAt: "asc" } },
      postLogoutRedirectUris: { orderBy: { createdAt: "asc" } },
      allowedOrigins: { orderBy: { createdAt: "asc" } },
      signers: { orderBy: { enabledAt: "asc" } },
    },
  });
}

export async function setClientEnabled(db: Database, clientId: string, enabled: boolean) {
  return db.client.update({ where: { id: await existingClient(db, clientId) }, data: { enabled } });
}

export async function deleteClient(db: Database, clientId: string) {
  await db.client.delete({ where: { id: await existingClient(db, clientId) } });
}

/** Makes the client confidential with a new secret, replacing any previous one. The secret is returned once and stored hashed. */
export async function rotateClientSecret(db: Database, clientId: string): Promise<string> {
  const secret = randomBytes(32).toString("base64url");
  await db.client.update({ where: { id: await existingClient(db, clientId) }, data: { secretHash: clientSecretHash(secret) } });
  return secret;
}

/** The settings of a client that can change after it is created. */
export type ClientSettings = {
  name: string;
  logoUrl: string | null;
  /** PKCE for a confidential client too (public clients always need it). */
  requirePkce: boolean;
  /** May introspect other clients' tokens. */
  resourceServer: boolean;
  /** May ask for offline_access and get refresh tokens. */
  refreshTokensAllowed: boolean;
  /** Disabled: both flows refuse the client at once. */
  enabled: boolean;
  /** May use the management API: a client_credentials token. Confidential clients only. */
  managementApi: boolean;
  /** The management API scopes it may get (lib/admin/scopes.ts, which the admin actions check). */
  managementScopes: string[];
};

const SETTINGS = { name: true, logoUrl: true, enabled: true, requirePkce: true, resourceServer: true, refreshTokensAllowed: true, managementApi: true, managementScopes: true } as const;

/** Changes some of a client's settings; returns them before and after (for the audit log). */
export async function updateClient(db: Database, clientId: string, changes: Partial<ClientSettings>): Promise<{ before: ClientSettings; after: ClientSettings }> {
  if (changes.name !== undefined) {
    changes.name = changes.name.trim();
    if (changes.name.length === 0 || changes.name.length > 200) throw new RegistryError("name", "must be 1 to 200 characters");
  }
  if (changes.logoUrl !== undefined) {
    changes.logoUrl = changes.logoUrl?.trim() || null;
    if (changes.logoUrl && !/^https:\/\/[^\s]+$/.test(changes.logoUrl)) throw new RegistryError("logoUrl", "must be an https URL");
  }
  const id = await existingClient(db, clientId);
  return db.$transaction(async (tx) => {
    const { secretHash, ...before } = await tx.client.findUniqueOrThrow({ where: { id }, select: { ...SETTINGS, secretHash: true } });
    // Only a client that authenticates with a secret may get admin tokens (RFC 6749 4.4: confidential clients).
    if (changes.managementApi && secretHash === null) throw new RegistryError("managementApi", "only a confidential client (with a secret) may use the management API");
    const after = await tx.client.update({ where: { id }, data: changes, select: SETTINGS });
    return { before, after };
  });
}

/** Lets browser pages on `origin` call the token endpoints for the client (CORS), besides its redirect URIs' origins. */
export async function addAllowedOrigin(db: Database, clientId: string, origin: string) {
  const problem = originProblem(origin);
  if (problem) throw new RegistryError("origin", `origin ${problem}`);
  const id = await existingClient(db, clientId);
  return db.allowedOrigin.upsert({ where: { clientId_origin: { clientId: id, origin } }, create: { clientId: id, origin }, update: {} });
}

export async function removeAllowedOrigin(db: Database, clientId: string, origin: string) {
  const { count } = await db.allowedOrigin.deleteMany({ where: { clientId: normalizeClientId(clientId), origin } });
  if (count === 0) throw new RegistryError("origin", "this origin is not allowed for the client");
}

export async function addRedirectUri(db: Database, clientId: string, uri: string) {
  const problem = redirectUriProblem(uri);
  if (problem) throw new RegistryError("uri", `redirect URI ${problem}`);
  const id = await existingClient(db, clientId);
  return db.redirectUri.upsert({ where: { clientId_uri: { clientId: id, uri } }, create: { clientId: id, uri }, update: {} });
}

export async function removeRedirectUri(db: Database, clientId: string, uri: string) {
  const { count } = await db.redirectUri.deleteMany({ where: { clientId: normalizeClientId(clientId), uri } });
  if (count === 0) throw new RegistryError("uri", "this redirect URI is not registered for the client");
}

/** Registers where the client may send the browser after logout (RP-Initiated Logout), matched exactly like redirect URIs. */
export async function addPostLogoutRedirectUri(db: Database, clientId: string, uri: string) {
  const problem = redirectUriProblem(uri);
  if (problem) throw new RegistryError("uri", `post-logout redirect URI ${problem}`);
  const id = await existingClient(db, clientId);
  return db.postLogoutRedirectUri.upsert({ where: { clientId_uri: { clientId: id, uri } }, create: { clientId: id, uri }, update: {} });
}

export async function removePostLogoutRedirectUri(db: Database, clientId: string, uri: string) {
  const { count } = await db.postLogoutRedirectUri.deleteMany({ where: { clientId: normalizeClientId(clientId), uri } });
  if (count === 0) throw new RegistryError("uri", "this post-logout redirect URI is not registered for the client");
}

/** Enables a signer for the client; adding a revoked or expired signer again enables it anew. */
export async function addSigner(db: Database, clientId: string, address: string, expiresAt?: Date) {
  const signer = parseAddress(address);
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw new RegistryError("expiresAt", "must be in the future");
  const id = await existingClient(db, clientId);
  const data = { enabledAt: new Date(), expiresAt: expiresAt ?? null, revokedAt: null };
  return db.signer.upsert({
    where: { clientId_address: { clientId: id, address: signer } },
    create: { clientId: id, address: signer, ...data },
    update: data,
  });
}

export async function revokeSigner(db: Database, clientId: string, address: string) {
  const { count } = await db.signer.updateMany({
    where: { clientId: normalizeClientId(clientId), address: parseAddress(address), revokedAt: null },
    data: { revokedAt: new Date() },
  });
  if (count === 0) throw new RegistryError("address", "no active signer with this address for the client");
}

async function existingClient(db: Database, clientId: string): Promise<string> {
  const id = normalizeClientId(clientId);
  if (!(await db.client.findUnique({ where: { id }, select: { id: true } }))) {
    throw new RegistryError("clientId", `no client with id ${id}`);
  }
  return id;
}
