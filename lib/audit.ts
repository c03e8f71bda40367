import type pg from "pg";
import { utc } from "./db/client";
import { log } from "./log";

export type AuditEntry = {
  action: string;
  /** "success", or the OAuth error code. */
  outcome: string;
  actor?: string;
  clientId?: string;
  accountId?: string;
  ip?: string;
  detail?: string;
};

/** Where a protocol request came from, for its audit events: the endpoint it called and the caller's address (when known). */
export type Caller = { endpoint: string; ip?: string };

/**
 * The audit log. Protocol events (token issuance and failures) are buffered and written in batches
 * every `flushMs`, so a token request does not pay for its own insert; admin changes are written
 * at once with `write`.
 */
export class AuditLog {
  private buffer: StoredEntry[] = [];
  private timer?: NodeJS.Timeout;
  /** Batches being written: a flush waits for them too, so nothing queued before it is still unwritten after. */
  private readonly writing = new Set<Promise<void>>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly flushMs = 250,
  ) {}

  /** Queues a protocol event. */
  record(entry: AuditEntry): void {
    this.buffer.push({ ...storable(entry), at: new Date() });
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    this.timer.unref?.();
  }

  /** Writes an event now (admin changes). */
  async write(entry: AuditEntry): Promise<void> {
    await insertEvents(this.pool, [{ ...storable(entry), at: new Date() }]);
  }

  /** Writes what is queued, and waits for batches already being written; called on a timer and before the process exits. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length > 0) {
      const write = this.writeBatch(batch).finally(() => this.writing.delete(write));
      this.writing.add(write);
    }
    await Promise.all(this.writing);
  }

  private async writeBatch(batch: StoredEntry[]): Promise<void> {
    try {
      await insertEvents(this.pool, batch);
    } catch {
      // One bad row must not take the others with it: write them one by one, in order.
      const failed: unknown[] = [];
      for (const event of batch) await insertEvents(this.pool, [event]).catch((error: unknown) => failed.push(error));
      if (failed.length > 0) log.error("audit events could not be written", { count: failed.length, of: batch.length, error: String(failed[0]).slice(0, 200) });
    }
  }
}

type StoredEntry = AuditEntry & { at: Date };

/**
 * Events in one prepared statement, a column per array: Prisma's createMany of a 60-event batch (a
 * quarter second of /token at 250/s) cost 13.9 ms of CPU against 0.84 ms for this (bench/README.md).
 */
function insertEvents(pool: pg.Pool, events: StoredEntry[]) {
  const column = (field: keyof StoredEntry) => events.map((event) => event[field] ?? null);
  return pool.query({
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
}

/**
 * The end of every statement that issues an access token: `insertToken`, its INSERT INTO
 * issued_tokens, as the CTE `issued`, then the token's `token.issued` audit event from the row it
 * inserted (its client and user), at `$<at>`, with the endpoint and the caller's address as
 * `$<endpoint>` and `$<ip>` (callerValues). The token and its audit record commit together or not
 * at all (a buffered record was lost when the instance died or PostgreSQL restarted), in the same
 * round trip. The statement's row count is the audit insert's: 1 when a token was issued.
 */
export function issuedWithEvent(insertToken: string, params: { at: number; endpoint: number; ip: number }): string {
  return `issued AS (${insertToken} RETURNING client_id, user_id)
    INSERT INTO audit_events (at, action, outcome, client_id, account_id, ip, detail)
    SELECT $${params.at}, 'token.issued', 'success', client_id, user_id, $${params.ip}, $${params.endpoint} FROM issued`;
}

/** The endpoint and the caller's address as issuedWithEvent's parameters, stored as the audit log stores values. */
export function callerValues(caller: Caller): [string, string | null] {
  return [storableText(caller.endpoint), storableText(caller.ip) ?? null];
}

/** Longest value kept per field: a request cannot grow the log by sending long values. */
const MAX_FIELD = 2000;

/** A value as the audit log stores it: control characters replaced, bounded in length. */
export function storableText<T extends string | undefined>(value: T): T {
  return (typeof value === "string" ? value.replace(/[\x00-\x1f\x7f]/g, "\uFFFD").slice(0, MAX_FIELD) : value) as T;
}

/**
 * An entry as it is stored: whatever a request sent, it cannot break the insert (PostgreSQL refuses
 * NUL in text) or the log's readers (control characters), and it is bounded in length.
 */
function storable(entry: AuditEntry): AuditEntry {
  return {
    action: storableText(entry.action),
    outcome: storableText(entry.outcome),
    actor: storableText(entry.actor),
    clientId: storableText(entry.clientId),
    accountId: storableText(entry.accountId),
    ip: storableText(entry.ip),
    detail: storableText(entry.detail),
  };
}
