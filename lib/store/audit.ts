import type { Prisma } from "../db/generated/client";
import { utc, type Connection } from "./connection";
import type { AuditEventInput, AuditFilter, AuditStore, Caller } from "./contract";

/** Audit events: AuditLog's batches, an admin change's record in its transaction, and the dashboard's reads. */
export function auditStatements({ db, pool }: Connection): AuditStore {
  return {
    /**
     * A prepared statement, a column per array, not Prisma's createMany: see
     * docs/decisions/2026-11-23-audit-events-in-one-statement.md
     */
    async insertBatch(events) {
      const column = (field: keyof AuditEventInput) => events.map((event) => event[field] ?? null);
      await pool.query({
        name: "keyfob_insert_audit_events",
        text: `INSERT INTO audit_events (at, actor, action, client_id, account_id, ip, outcome, detail)
               SELECT * FROM unnest($1::timestamp[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])`,
        values: [
          events.map((event) => utc(event.at)),
          column("actor"),
          column("action"),
          column("clientId"),
          column("accountId"),
          column("ip"),
          column("outcome"),
          column("detail"),
        ],
      });
    },

    /** Through Prisma, whose statements a transaction's store runs in its transaction. */
    async insert(event) {
      await db.auditEvent.create({ data: event });
    },

    page(filter, skip, take) {
      return db.auditEvent.findMany({ where: auditWhere(filter), orderBy: [{ at: "desc" }, { id: "desc" }], skip, take });
    },

    count(filter) {
      return db.auditEvent.count({ where: auditWhere(filter) });
    },

    tokenEventsPerDay(since) {
      return db.$queryRaw<{ day: Date; action: string; count: bigint }[]>`
        SELECT date_trunc('day', at) AS day, action, count(*) AS count FROM audit_events
        WHERE at >= ${since} AND action IN ('token.issued', 'token.failed')
        GROUP BY 1, 2 ORDER BY 1`;
    },
  };
}

function auditWhere(filter: AuditFilter): Prisma.AuditEventWhereInput {
  return {
    action: filter.action ? { startsWith: filter.action } : undefined,
    clientId: filter.clientId || undefined,
    accountId: filter.accountId || undefined,
    outcome: filter.outcome || undefined,
    at: filter.from || filter.to ? { gte: filter.from, lt: filter.to } : undefined,
  };
}

/**
 * The end of every statement that issues an access token: `insertToken`, its INSERT INTO
 * issued_tokens, as the CTE `issued`, then the token's `token.issued` audit event from the row it
 * inserted (its client and user), at `event.at`, with the endpoint and the caller's address as
 * `event.endpoint` and `event.ip` (SQL expressions: parameters from callerValues, or columns of the
 * rows `event.from` joins to `issued` in a statement over many requests). The token and its audit
 * record commit together or not at all (a buffered record was lost when the instance died or
 * PostgreSQL restarted), in the same round trip. The statement's row count is the audit insert's:
 * 1 when a token was issued.
 */
export function issuedWithEvent(insertToken: string, event: TokenIssuedEvent): string {
  return `issued AS (${insertToken} RETURNING jti, client_id, user_id)
    ${tokenIssuedEvent(event)}`;
}

/** issuedWithEvent as two CTEs (`issued`, `issued_event`), for a statement that goes on to return what it read. */
export function issuedWithEventCtes(insertToken: string, event: TokenIssuedEvent): string {
  return `issued AS (${insertToken} RETURNING jti, client_id, user_id), issued_event AS (${tokenIssuedEvent(event)})`;
}

/** Where a token.issued event's time, endpoint and address come from: SQL expressions over `from` (default: `issued`). */
export type TokenIssuedEvent = { at: string; endpoint: string; ip: string; from?: string };

const tokenIssuedEvent = ({ at, endpoint, ip, from = "issued" }: TokenIssuedEvent) =>
  `INSERT INTO audit_events (at, action, outcome, client_id, account_id, ip, detail)
    SELECT ${at}, 'token.issued', 'success', issued.client_id, issued.user_id, ${ip}, ${endpoint} FROM ${from}`;

/** The endpoint and the caller's address as issuedWithEvent's parameters, stored as the audit log stores values. */
export function callerValues(caller: Caller): [string, string | null] {
  return [storableText(caller.endpoint), storableText(caller.ip) ?? null];
}

/** Longest value kept per field: a request cannot grow the log by sending long values. */
const MAX_FIELD = 2000;

/** A value as the audit log stores it: control characters replaced, bounded in length. */
export function storableText<T extends string | undefined>(value: T): T {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point
  return (typeof value === "string" ? value.replace(/[\x00-\x1f\x7f]/g, "\uFFFD").slice(0, MAX_FIELD) : value) as T;
}
