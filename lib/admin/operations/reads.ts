import * as directory from "../../accounts/directory";
import { normalizeClientId } from "../../clients/client-id";
import type { Keyfob } from "../../keyfob";
import type {
  AccountView,
  AdminRoleRow,
  AuditFilter,
  ClientDetailRow,
  ClientSummaryRow,
  IssuedTokenRow,
  KeyHistoryRow,
  LiveGrantRow,
  LiveSessionRow,
} from "../../store/contract";
import type { KeyScheduleEntry } from "../../keys/keystore";
import { accountConsents } from "../../consent/grants";
import { liveSessions } from "../../sessions/login-session";
import type { Admin } from "../access";
import { vehiclePrivilege, type VehiclePrivilege } from "../../vehicles/privileges";
import { normalizeAccountId } from "./accounts";
import { tokenHolders } from "./tokens";

/** What the dashboard, CLI and API read: clients, accounts, admins, keys, tokens, grants, the audit log and the overview. */

const PAGE_SIZE = 20;
export type Page<T> = { items: T[]; total: number; page: number; pageSize: number };

export async function listClients(
  k: Pick<Keyfob, "store">,
  _admin: Admin,
  query: { search?: string; page?: number } = {},
): Promise<Page<ClientSummaryRow>> {
  const page = Math.max(1, Math.floor(query.page ?? 1));
  const search = query.search?.trim() || undefined;
  const [items, total] = await Promise.all([
    k.store.clients.summaryPage(search, (page - 1) * PAGE_SIZE, PAGE_SIZE),
    k.store.clients.count(search),
  ]);
  return { items, total, page, pageSize: PAGE_SIZE };
}

/** A client as the dashboard and the management API show it: its settings and lists, whether it has a secret, never the secret's hash or sealed secret. */
export type AdminClient = Omit<ClientDetailRow, "secretHash" | "previousSecretHash" | "previousSecretExpiresAt" | "secretSealed"> & {
  confidential: boolean;
  /** When the secret a rotation replaced stops working, while it still works; null: no overlap under way. */
  secretOverlapEndsAt: Date | null;
};

export async function getClient(k: Pick<Keyfob, "clock" | "store">, _admin: Admin, clientId: string): Promise<AdminClient | undefined> {
  const client = await k.store.clients.detail(normalizeClientId(clientId));
  return client && toAdminClient(client, k.clock.now());
}

/** A client's row as admins see it: whether it has a secret, never the secret's hash or its sealed copy (client_secret_jwt). */
export function toAdminClient(client: ClientDetailRow, now: Date): AdminClient {
  const { secretHash, previousSecretHash, previousSecretExpiresAt, secretSealed: _, ...rest } = client;
  // When the secret a rotation replaced stops working, while it still works (never its hash).
  const secretOverlapEndsAt =
    previousSecretHash && previousSecretExpiresAt && previousSecretExpiresAt > now ? previousSecretExpiresAt : null;
  return { ...rest, confidential: secretHash !== null, secretOverlapEndsAt };
}

/** Accounts found by address, email or id (lib/accounts/directory.ts), 20 to a page. */
export async function listAccounts(
  k: Pick<Keyfob, "store">,
  _admin: Admin,
  query: { search?: string; page?: number } = {},
): Promise<Page<AccountView>> {
  const page = Math.max(1, Math.floor(query.page ?? 1));
  const { items, total } = await directory.searchAccounts(k.store, query.search, page, PAGE_SIZE);
  return { items, total, page, pageSize: PAGE_SIZE };
}

/** The account an admin names by id, wallet address or email; undefined when none (or several) match. */
export async function resolveAccountReference(k: Pick<Keyfob, "store">, _admin: Admin, reference: string) {
  return directory.findAccount(k.store, reference);
}

/**
 * One account for the dashboard: identities (wallets, Google, Apple, passkeys), live login
 * sessions, consent grants, what it holds (active tokens, refresh grants), and whether it is an admin.
 */
export type AdminAccount = AccountView & {
  /** Its own wallet (its id) and the wallets linked to it. */
  wallets: { address: string; own: boolean; linkedAt: Date }[];
  sessions: (Omit<LiveSessionRow, "idHash"> & { id: string })[];
  /** Its consent grants to third-party clients. */
  consents: { clientId: string; clientName: string; scope: string[]; grantedAt: Date }[];
  holdings: directory.AccountHoldings;
  /** The role granted in the dashboard, if any. */
  adminRole: Pick<AdminRoleRow, "grantedBy" | "grantedAt"> | null;
  /** An admin by the configuration (ADMIN_ADDRESSES). */
  configuredAdmin: boolean;
};

export async function getAccount(
  k: Pick<Keyfob, "config" | "clock" | "store">,
  _admin: Admin,
  accountId: string,
): Promise<AdminAccount | undefined> {
  const id = normalizeAccountId(accountId);
  const account = await k.store.accounts.view(id);
  if (!account) return undefined;
  const [sessions, consents, holdings, role] = await Promise.all([
    liveSessions(k, id),
    accountConsents(k, id),
    directory.accountHoldings(k.store, id, k.clock.now()),
    k.store.accounts.findAdminRole(id),
  ]);
  return {
    ...account,
    wallets: account.identities
      .filter((i) => i.provider === "web3")
      .map((i) => ({ address: i.subject, own: i.subject === id, linkedAt: i.createdAt })),
    sessions: sessions.map(({ idHash, ...session }) => ({ id: idHash, ...session })),
    consents: consents.map(({ clientLogoUrl, ...consent }) => consent),
    holdings,
    adminRole: role ? { grantedBy: role.grantedBy, grantedAt: role.grantedAt } : null,
    configuredAdmin: k.config.adminAddresses.includes(id.toLowerCase()),
  };
}

/** The accounts granted the admin role in the dashboard (the configured ones are in k.config). */
export function listAdmins(k: Pick<Keyfob, "store">, _admin: Admin): Promise<AdminRoleRow[]> {
  return k.store.accounts.adminRoles();
}

/** Both key sets' schedules: the access and ID tokens' keys, then the vehicle tokens'. */
export async function keySchedule(k: Pick<Keyfob, "keys" | "vehicleKeys">, _admin: Admin): Promise<KeyScheduleEntry[]> {
  return [...(await k.keys.schedule()), ...(await k.vehicleKeys.schedule())];
}

/** Signing keys out of use for good, newest first (the latest 100): revoked ones, and retired ones no longer published. */
export function keyHistory(k: Pick<Keyfob, "store">, _admin: Admin): Promise<KeyHistoryRow[]> {
  return k.store.keys.history(100);
}

/** An active token as the admin lists show it: a vehicle token's privileges with their names (none for other tokens). */
export type AdminToken = IssuedTokenRow & { privileges: VehiclePrivilege[] };

/** Active (unexpired, unrevoked) tokens of a client or an account (its linked wallets' Flow A tokens too), newest first; vehicle tokens only with `vehicle`. */
export async function listActiveTokens(
  k: Pick<Keyfob, "clock" | "store">,
  _admin: Admin,
  query: { clientId?: string; accountId?: string; vehicle?: boolean; page?: number },
): Promise<Page<AdminToken>> {
  const page = Math.max(1, Math.floor(query.page ?? 1));
  const selector = {
    clientId: query.clientId ? normalizeClientId(query.clientId) : undefined,
    userIds: await tokenHolders(k, query.accountId ? normalizeAccountId(query.accountId) : undefined),
    vehicle: query.vehicle,
  };
  const now = k.clock.now();
  const [rows, total] = await Promise.all([
    k.store.tokens.activePage(selector, (page - 1) * PAGE_SIZE, PAGE_SIZE, now),
    k.store.tokens.countActive(selector, now),
  ]);
  const items = rows.map((row) => ({ ...row, privileges: row.vehiclePrivileges.map(vehiclePrivilege) }));
  return { items, total, page, pageSize: PAGE_SIZE };
}

/** A live refresh grant: its usable token, when the grant began, when it was last used (its latest rotation; null if never) and how often. */
export type LiveRefreshGrant = Omit<LiveGrantRow, "issuedAt"> & { grantedAt: Date; lastUsedAt: Date | null; rotations: number };

/**
 * Live refresh-token grants of a client or an account, newest rotation first: one row per family
 * (its usable token), with when the grant began, when it was last used (its latest rotation; null
 * if never), how often, and when it ends unused (idle) and at the latest (the family's end).
 */
export async function listRefreshGrants(
  k: Pick<Keyfob, "clock" | "store">,
  _admin: Admin,
  query: { clientId?: string; accountId?: string; page?: number },
): Promise<Page<LiveRefreshGrant>> {
  const page = Math.max(1, Math.floor(query.page ?? 1));
  const now = k.clock.now();
  const selector = {
    clientId: query.clientId ? normalizeClientId(query.clientId) : undefined,
    accountId: query.accountId ? normalizeAccountId(query.accountId) : undefined,
  };
  const [live, total] = await Promise.all([
    k.store.tokens.liveGrantPage(selector, (page - 1) * PAGE_SIZE, PAGE_SIZE, now),
    k.store.tokens.countLiveGrants(selector, now),
  ]);
  const families = live.length ? await k.store.tokens.familyHistories(live.map((t) => t.familyId)) : [];
  const byFamily = new Map(families.map((f) => [f.familyId, f]));
  const items = live.map(({ issuedAt, ...token }) => {
    const family = byFamily.get(token.familyId);
    const rotations = (family?.tokens ?? 1) - 1;
    return { ...token, grantedAt: family?.grantedAt ?? issuedAt, lastUsedAt: rotations > 0 ? issuedAt : null, rotations };
  });
  return { items, total, page, pageSize: PAGE_SIZE };
}

export type { AuditFilter };

/** Events newest first by when they happened: a queued event (lib/audit.ts) may be written after later ones. */
export async function auditEvents(k: Pick<Keyfob, "store">, _admin: Admin, filter: AuditFilter & { page?: number }) {
  const page = Math.max(1, Math.floor(filter.page ?? 1));
  const [items, total] = await Promise.all([k.store.audit.page(filter, (page - 1) * PAGE_SIZE, PAGE_SIZE), k.store.audit.count(filter)]);
  return { items: items.map((e) => ({ ...e, id: e.id.toString() })), total, page, pageSize: PAGE_SIZE };
}

const CSV_COLUMNS = ["at", "actor", "action", "clientId", "accountId", "ip", "outcome", "detail"] as const;

/** The filtered audit log as CSV (RFC 4180), newest first, at most 100 000 rows; times in UTC (ISO 8601, `Z`). */
export async function auditCsv(k: Pick<Keyfob, "store">, _admin: Admin, filter: AuditFilter): Promise<string> {
  const rows = await k.store.audit.page(filter, 0, 100_000);
  const cell = (value: unknown) => {
    const text = value instanceof Date ? value.toISOString() : value == null ? "" : String(value);
    // Quote always; neutralise what a spreadsheet would run: a formula character first, or after
    // leading whitespace, and a leading tab or carriage return (OWASP CSV injection).
    return `"${(/^(?:[=+\-@\t\r]|\s+[=+\-@])/.test(text) ? `'${text}` : text).replace(/"/g, '""')}"`;
  };
  return `${[CSV_COLUMNS.join(","), ...rows.map((row) => CSV_COLUMNS.map((c) => cell(row[c])).join(","))].join("\r\n")}\r\n`;
}

/** Counts for the overview, and token issuances and failures per UTC day for the last `days` days. */
export async function overview(k: Pick<Keyfob, "clock" | "store">, _admin: Admin, days = 14) {
  const now = k.clock.now().getTime();
  const since = new Date(now - days * 86400_000);
  const [clients, accounts, activeTokens, perDay] = await Promise.all([
    k.store.clients.count(),
    k.store.accounts.count(),
    k.store.tokens.countActive({}, new Date(now)),
    k.store.audit.tokenEventsPerDay(since),
  ]);
  const series = new Map<string, { day: string; issued: number; failed: number }>();
  for (let i = days - 1; i >= 0; i--) {
    const day = new Date(now - i * 86400_000).toISOString().slice(0, 10);
    series.set(day, { day, issued: 0, failed: 0 });
  }
  for (const row of perDay) {
    const point = series.get(row.day.toISOString().slice(0, 10));
    if (point) point[row.action === "token.issued" ? "issued" : "failed"] = Number(row.count);
  }
  return { clients, accounts, activeTokens, perDay: [...series.values()] };
}
