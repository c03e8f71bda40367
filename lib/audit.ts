import type { Database } from "./db/client";
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
  private buffer: (AuditEntry & { at: Date })[] = [];
  private timer?: NodeJS.Timeout;
  /** Batches being written: a flush waits for them too, so nothing queued before it is still unwritten after. */
  private readonly writing = new Set<Promise<void>>();

  constructor(
    private readonly db: Database,
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
    await this.db.auditEvent.create({ data: storable(entry) });
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

  private async writeBatch(batch: (AuditEntry & { at: Date })[]): Promise<void> {
    try {
      await this.db.auditEvent.createMany({ data: batch });
    } catch {
      // One bad row must not take the others with it: write them one by one.
      const results = await Promise.allSettled(batch.map((event) => this.db.auditEvent.create({ data: event })));
      const failed = results.filter((r) => r.status === "rejected");
      if (failed.length > 0) log.error("audit events could not be written", { count: failed.length, of: batch.length, error: String(failed[0].reason).slice(0, 200) });
    }
  }
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
