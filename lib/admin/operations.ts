import type { AuditEntry } from "../audit";
import * as registry from "../clients/registry";
import { Prisma } from "../db/client";
import type { Keyfob } from "../keyfob";
import type { KeyRevocation } from "../keys/keystore";
import { revokeRefreshFamilies } from "../tokens/refresh";
import type { Admin } from "./access";

/**
 * What admins can do, for the dashboard and the command line alike. Every change takes the Admin
 * that requireAdmin (or the CLI) vouched for, and is written to the audit log, refused ones too.
 */

export const PAGE_SIZE = 20;
export type Page<T> = { items: T[]; total: number; page: number; pageSize: number };

async function change<T>(
  keyfob: Keyfob,
  admin: Admin,
  action: string,
  target: Pick<AuditEntry, "clientId" | "accountId" | "detail">,
  run: () => Promise<T>,
): Promise<T> {
  const entry = { actor: admin.label, action, ...target };
  try {
    const result = await run();
    await keyfob.audit.write({ ...entry, outcome: "success" });
    return result;
  } catch (error) {
    await keyfob.audit.write({ ...entry, outcome: error instanceof registry.RegistryError ? "rejected" : "error" });
    throw error;
  }
}

// Clients, redirect URIs, signers, secrets.

export const createClient = (k: Keyfob, admin: Admin, input: { id?: string; name: string; logoUrl?: string }) => {
  const id = input.id?.trim() ? registry.normalizeClientId(input.id.trim()) : registry.generateClientId();
  return change(k, admin, "client.created", { clientId: id, detail: input.name }, () => registry.createClient(k.db, { ...input, id }));
};

export const setClientEnabled = (k: Keyfob, admin: Admin, clientId: string, enabled: boolean) =>
  change(k, admin, enabled ? "client.enabled" : "client.disabled", { clientId }, () => registry.setClientEnabled(k.db, clientId, enabled));

export const deleteClient = (k: Keyfob, admin: Admin, clientId: string) =>
  change(k, admin, "client.deleted", { clientId }, () => registry.deleteClient(k.db, clientId));

export const addRedirectUri = (k: Keyfob, admin: Admin, clientId: string, uri: string) =>
  change(k, admin, "redirect_uri.added", { clientId, detail: uri }, () => registry.addRedirectUri(k.db, clientId, uri));

export const removeRedirectUri = (k: Keyfob, admin: Admin, clientId: string, uri: string) =>
  change(k, admin, "redirect_uri.removed", { clientId, detail: uri }, () => registry.removeRedirectUri(k.db, clientId, uri));

/** Changes a client's settings, audited with each changed value before and after. */
export async function updateClient(k: Keyfob, admin: Admin, clientId: string, changes: Partial<registry.ClientSettings>) {
  const entry = { actor: admin.label, action: "client.updated", clientId: registry.normalizeClientId(clientId) };
  try {
    const { before, after } = await registry.updateClient(k.db, clientId, changes);
    const changed = (Object.keys(after) as (keyof registry.ClientSettings)[]).filter((field) => before[field] !== after[field]);
    const detail = changed.map((field) => `${field}: ${JSON.stringify(before[field])} -> ${JSON.stringify(after[field])}`).join("; ");
    await k.audit.write({ ...entry, outcome: "success", detail: detail || "no change" });
    return after;
  } catch (error) {
    await k.audit.write({ ...entry, outcome: error instanceof registry.RegistryError ? "rejected" : "error", detail: error instanceof registry.RegistryError ? `${error.field}: ${error.message}` : undefined });
    throw error;
  }
}

export const addPostLogoutRedirectUri = (k: Keyfob, admin: Admin, clientId: string, uri: string) =>
  change(k, admin, "post_logout_redirect_uri.added", { clientId, detail: uri }, () => registry.addPostLogoutRedirectUri(k.db, clientId, uri));

export const removePostLogoutRedirectUri = (k: Keyfob, admin: Admin, clientId: string, uri: string) =>
  change(k, admin, "post_logout_redirect_uri.removed", { clientId, detail: uri }, () => registry.removePostLogoutRedirectUri(k.db, clientId, uri));

export const addAllowedOrigin = (k: Keyfob, admin: Admin, clientId: string, origin: string) =>
  change(k, admin, "allowed_origin.added", { clientId, detail: origin }, () => registry.addAllowedOrigin(k.db, clientId, origin));

export const removeAllowedOrigin = (k: Keyfob, admin: Admin, clientId: string, origin: string) =>
  change(k, admin, "allowed_origin.removed", { clientId, detail: origin }, () => registry.removeAllowedOrigin(k.db, clientId, origin));

export const addSigner = (k: Keyfob, admin: Admin, clientId: string, address: string, expiresAt?: Date) =>
  change(k, admin, "signer.added", { clientId, detail: address }, () => registry.addSigner(k.db, clientId, address, expiresAt));

export const revokeSigner = (k: Keyfob, admin: Admin, clientId: string, address: string) =>
  change(k, admin, "signer.revoked", { clientId, detail: address }, () => registry.revokeSigner(k.db, clientId, address));

/** Generates or rotates the client's secret; the only time it is seen is in the return value. */
export const rotateClientSecret = (k: Keyfob, admin: Admin, clientId: string) =>
  change(k, admin, "client.secret_rotated", { clientId }, () => registry.rotateClientSecret(k.db, clientId));

// Signing keys, tokens, admins.

export const rotateSigningKey = (k: Keyfob, admin: Admin) => change(k, admin, "key.rotated", {}, () => k.keys.rotateNow());

/**
 * Emergency revocation of a signing key (KeyStore.revoke): it leaves the JWKS and never signs
 * again, every token it signed is refused from the next request on every instance, and if it was
 * the current key a new one signs at once. An unknown kid is refused (field `kid`); an already
 * revoked key is left as it is and said so. Audited as `key.revoked` with the kid.
 */
export async function revokeSigningKey(k: Keyfob, admin: Admin, kid: string): Promise<SigningKeyRevocation> {
  kid = kid.trim();
  const entry = { actor: admin.label, action: "key.revoked", detail: kid };
  let result: KeyRevocation;
  try {
    result = await k.keys.revoke(kid, admin.label);
  } catch (error) {
    await k.audit.write({ ...entry, outcome: "error" });
    throw error;
  }
  if (result.outcome === "unknown") {
    await k.audit.write({ ...entry, outcome: "rejected" });
    throw new registry.RegistryError("kid", `no signing key has the kid ${kid}`);
  }
  if (result.outcome === "already-revoked") {
    const message = `signing key ${kid} was already revoked on ${result.revokedAt.toISOString()}${result.revokedBy ? ` by ${result.revokedBy}` : ""}; nothing changed`;
    await k.audit.write({ ...entry, detail: `${kid} (already revoked)`, outcome: "success" });
    return { kid, revoked: false, message };
  }
  await k.audit.write({ ...entry, detail: result.successor ? `${kid} (was current; ${result.successor} signs now)` : `${kid} (was ${result.was})`, outcome: "success" });
  const message = result.successor
    ? `signing key ${kid} revoked; new key ${result.successor} signs from now`
    : `signing key ${kid} (${result.was}) revoked; the current key keeps signing`;
  return { kid, revoked: true, was: result.was, successor: result.successor, message };
}

export type SigningKeyRevocation = { kid: string; revoked: boolean; was?: "current" | "upcoming" | "retired"; successor?: string; message: string };

/** Revokes one token, or every active token of a client or an account. Returns how many were revoked. */
export async function revokeTokens(k: Keyfob, admin: Admin, target: { jti?: string; clientId?: string; accountId?: string }) {
  // A single token is audited under its own client and account, so filtering the log by either finds it.
  const token = target.jti ? await k.db.issuedToken.findUnique({ where: { jti: target.jti }, select: { clientId: true, userId: true } }) : null;
  const clientId = target.clientId ? registry.normalizeClientId(target.clientId) : token?.clientId;
  const accountId = target.accountId ? normalizeAccountId(target.accountId) : token?.userId;
  return change(k, admin, "token.revoked", { clientId, accountId, detail: target.jti }, async () => {
    if (!target.jti && !clientId && !accountId) throw new registry.RegistryError("target", "name a token, a client or an account");
    const { count } = await k.db.issuedToken.updateMany({
      where: { jti: target.jti, clientId, userId: accountId, revokedAt: null, expiresAt: { gt: new Date() } },
      data: { revokedAt: new Date() },
    });
    return count;
  });
}

/**
 * Revokes one refresh-token grant (a family: every rotation of one login's refresh token), or
 * every grant of a client or an account, with every access token issued from them. Audited as
 * `refresh_token.revoked` under the grant's client and account. Returns how many grants that could
 * still be used were revoked.
 */
export async function revokeRefreshGrants(k: Keyfob, admin: Admin, target: { familyId?: string; clientId?: string; accountId?: string }) {
  const family = target.familyId ? await k.db.refreshToken.findFirst({ where: { familyId: target.familyId }, select: { clientId: true, accountId: true } }) : null;
  const clientId = target.clientId ? registry.normalizeClientId(target.clientId) : family?.clientId;
  const accountId = target.accountId ? normalizeAccountId(target.accountId) : family?.accountId;
  return change(k, admin, "refresh_token.revoked", { clientId, accountId, detail: target.familyId }, async () => {
    if (!target.familyId && !clientId && !accountId) throw new registry.RegistryError("target", "name a refresh grant, a client or an account");
    if (target.familyId && !family) throw new registry.RegistryError("familyId", "no refresh grant has this id");
    const { families } = await revokeRefreshFamilies(k.db, { familyId: target.familyId, clientId, accountId });
    return families;
  });
}

/** Account ids are EIP-55 addresses; any case is accepted from admins. */
function normalizeAccountId(accountId: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(accountId) ? registry.parseAddress(accountId, "accountId") : accountId;
}

export const grantAdmin = (k: Keyfob, admin: Admin, accountId: string) =>
  change(k, admin, "admin.granted", { accountId: normalizeAccountId(accountId) }, async () => {
    const id = registry.parseAddress(accountId, "accountId");
    await k.db.adminRole.upsert({ where: { accountId: id }, create: { accountId: id, grantedBy: admin.label }, update: {} });
  });

export const revokeAdmin = (k: Keyfob, admin: Admin, accountId: string) =>
  change(k, admin, "admin.revoked", { accountId: normalizeAccountId(accountId) }, async () => {
    const { count } = await k.db.adminRole.deleteMany({ where: { accountId: normalizeAccountId(accountId) } });
    if (count === 0) throw new registry.RegistryError("accountId", "this account has no admin role");
  });

// Reads.

export async function listClients(k: Keyfob, _admin: Admin, query: { search?: string; page?: number } = {}): Promise<Page<Awaited<ReturnType<typeof clientSummaries>>[number]>> {
  const page = Math.max(1, Math.floor(query.page ?? 1));
  const search = query.search?.trim();
  const where: Prisma.ClientWhereInput = search
    ? { OR: [{ id: { contains: search, mode: "insensitive" } }, { name: { contains: search, mode: "insensitive" } }] }
    : {};
  const [items, total] = await Promise.all([clientSummaries(k, where, page), k.db.client.count({ where })]);
  return { items, total, page, pageSize: PAGE_SIZE };
}

function clientSummaries(k: Keyfob, where: Prisma.ClientWhereInput, page: number) {
  return k.db.client.findMany({
    where,
    orderBy: { createdAt: "desc" },
    skip: (page - 1) * PAGE_SIZE,
    take: PAGE_SIZE,
    select: {
      id: true,
      name: true,
      logoUrl: true,
      enabled: true,
      createdAt: true,
      _count: { select: { redirectUris: true, signers: { where: { revokedAt: null } } } },
    },
  });
}

export async function getClient(k: Keyfob, _admin: Admin, clientId: string) {
  const client = await k.db.client.findUnique({
    where: { id: registry.normalizeClientId(clientId) },
    include: {
      redirectUris: { orderBy: { createdAt: "asc" } },
      postLogoutRedirectUris: { orderBy: { createdAt: "asc" } },
      allowedOrigins: { orderBy: { createdAt: "asc" } },
      signers: { orderBy: { enabledAt: "desc" } },
    },
  });
  if (!client) return undefined;
  const { secretHash, ...rest } = client;
  return { ...rest, confidential: secretHash !== null };
}

/** The accounts granted the admin role in the dashboard (the configured ones are in k.config). */
export function listAdmins(k: Keyfob, _admin: Admin) {
  return k.db.adminRole.findMany({ orderBy: { grantedAt: "asc" } });
}

export function keySchedule(k: Keyfob, _admin: Admin) {
  return k.keys.schedule();
}

/** Active (unexpired, unrevoked) tokens of a client or an account, newest first. */
export async function listActiveTokens(k: Keyfob, _admin: Admin, query: { clientId?: string; accountId?: string; page?: number }) {
  const page = Math.max(1, Math.floor(query.page ?? 1));
  const where = {
    clientId: query.clientId ? registry.normalizeClientId(query.clientId) : undefined,
    userId: query.accountId ? normalizeAccountId(query.accountId) : undefined,
    revokedAt: null,
    expiresAt: { gt: new Date() },
  };
  const [items, total] = await Promise.all([
    k.db.issuedToken.findMany({ where, orderBy: { issuedAt: "desc" }, skip: (page - 1) * PAGE_SIZE, take: PAGE_SIZE, omit: { codeHash: true } }),
    k.db.issuedToken.count({ where }),
  ]);
  return { items, total, page, pageSize: PAGE_SIZE };
}

/**
 * Live refresh-token grants of a client or an account, newest rotation first: one row per family
 * (its usable token), with when the grant began, when it was last used (its latest rotation; null
 * if never), how often, and when it ends unused (idle) and at the latest (the family's end).
 */
export async function listRefreshGrants(k: Keyfob, _admin: Admin, query: { clientId?: string; accountId?: string; page?: number }) {
  const page = Math.max(1, Math.floor(query.page ?? 1));
  const now = new Date();
  const where = {
    clientId: query.clientId ? registry.normalizeClientId(query.clientId) : undefined,
    accountId: query.accountId ? normalizeAccountId(query.accountId) : undefined,
    usedAt: null,
    revokedAt: null,
    expiresAt: { gt: now },
    familyExpiresAt: { gt: now },
  };
  const [live, total] = await Promise.all([
    k.db.refreshToken.findMany({
      where,
      orderBy: { issuedAt: "desc" },
      skip: (page - 1) * PAGE_SIZE,
      take: PAGE_SIZE,
      select: { familyId: true, clientId: true, accountId: true, connector: true, scope: true, issuedAt: true, expiresAt: true, familyExpiresAt: true },
    }),
    k.db.refreshToken.count({ where }),
  ]);
  const families = live.length
    ? await k.db.refreshToken.groupBy({ by: ["familyId"], where: { familyId: { in: live.map((t) => t.familyId) } }, _min: { issuedAt: true }, _count: { _all: true } })
    : [];
  const byFamily = new Map(families.map((f) => [f.familyId, f]));
  const items = live.map(({ issuedAt, ...token }) => {
    const family = byFamily.get(token.familyId);
    const rotations = (family?._count._all ?? 1) - 1;
    return { ...token, grantedAt: family?._min.issuedAt ?? issuedAt, lastUsedAt: rotations > 0 ? issuedAt : null, rotations };
  });
  return { items, total, page, pageSize: PAGE_SIZE };
}

export type AuditFilter = { action?: string; clientId?: string; accountId?: string; outcome?: string; from?: Date; to?: Date };

function auditWhere(filter: AuditFilter): Prisma.AuditEventWhereInput {
  return {
    action: filter.action ? { startsWith: filter.action } : undefined,
    clientId: filter.clientId || undefined,
    accountId: filter.accountId || undefined,
    outcome: filter.outcome || undefined,
    at: filter.from || filter.to ? { gte: filter.from, lt: filter.to } : undefined,
  };
}

export async function auditEvents(k: Keyfob, _admin: Admin, filter: AuditFilter & { page?: number }) {
  const page = Math.max(1, Math.floor(filter.page ?? 1));
  const where = auditWhere(filter);
  const [items, total] = await Promise.all([
    k.db.auditEvent.findMany({ where, orderBy: { id: "desc" }, skip: (page - 1) * PAGE_SIZE, take: PAGE_SIZE }),
    k.db.auditEvent.count({ where }),
  ]);
  return { items: items.map((e) => ({ ...e, id: e.id.toString() })), total, page, pageSize: PAGE_SIZE };
}

const CSV_COLUMNS = ["at", "actor", "action", "clientId", "accountId", "ip", "outcome", "detail"] as const;

/** The filtered audit log as CSV (RFC 4180), newest first, at most 100 000 rows. */
export async function auditCsv(k: Keyfob, _admin: Admin, filter: AuditFilter): Promise<string> {
  const rows = await k.db.auditEvent.findMany({ where: auditWhere(filter), orderBy: { id: "desc" }, take: 100_000 });
  const cell = (value: unknown) => {
    const text = value instanceof Date ? value.toISOString() : value == null ? "" : String(value);
    // Quote always; neutralise what a spreadsheet would run: a formula character first, or after
    // leading whitespace, and a leading tab or carriage return (OWASP CSV injection).
    return `"${(/^(?:[=+\-@\t\r]|\s+[=+\-@])/.test(text) ? `'${text}` : text).replace(/"/g, '""')}"`;
  };
  return [CSV_COLUMNS.join(","), ...rows.map((row) => CSV_COLUMNS.map((c) => cell(row[c])).join(","))].join("\r\n") + "\r\n";
}

/** Counts for the overview, and token issuances and failures per day for the last `days` days. */
export async function overview(k: Keyfob, _admin: Admin, days = 14) {
  const since = new Date(Date.now() - days * 86400_000);
  const [clients, accounts, activeTokens, perDay] = await Promise.all([
    k.db.client.count(),
    k.db.account.count(),
    k.db.issuedToken.count({ where: { revokedAt: null, expiresAt: { gt: new Date() } } }),
    k.db.$queryRaw<{ day: Date; action: string; count: bigint }[]>`
      SELECT date_trunc('day', at) AS day, action, count(*) AS count FROM audit_events
      WHERE at >= ${since} AND action IN ('token.issued', 'token.failed')
      GROUP BY 1, 2 ORDER BY 1`,
  ]);
  const series = new Map<string, { day: string; issued: number; failed: number }>();
  for (let i = days - 1; i >= 0; i--) {
    const day = new Date(Date.now() - i * 86400_000).toISOString().slice(0, 10);
    series.set(day, { day, issued: 0, failed: 0 });
  }
  for (const row of perDay) {
    const point = series.get(row.day.toISOString().slice(0, 10));
    if (point) point[row.action === "token.issued" ? "issued" : "failed"] = Number(row.count);
  }
  return { clients, accounts, activeTokens, perDay: [...series.values()] };
}
