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

/** Longest value kept per field: a request cannot grow the log by sending long values. */
const MAX_FIELD = 2000;

/**
 * An entry as it is stored: whatever a request sent, it cannot break the insert (PostgreSQL refuses
 * NUL in text) or the log's readers (control characters), and it is bounded in length.
 */
function storable(entry: AuditEntry): AuditEntry {
  const clean = (value: string | undefined) => (typeof value === "string" ? value.replace(/[\x00-\x1f\x7f]/g, "\uFFFD").slice(0, MAX_FIELD) : value);
  return {
    action: clean(entry.action)!,
    outcome: clean(entry.outcome)!,
    actor: clean(entry.actor),
    clientId: clean(entry.clientId),
    accountId: clean(entry.accountId),
    ip: clean(entry.ip),
    detail: clean(entry.detail),
  };
}
