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

  constructor(
    private readonly db: Database,
    private readonly flushMs = 250,
  ) {}

  /** Queues a protocol event. */
  record(entry: AuditEntry): void {
    this.buffer.push({ ...entry, at: new Date() });
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    this.timer.unref?.();
  }

  /** Writes an event now (admin changes). */
  async write(entry: AuditEntry): Promise<void> {
    await this.db.auditEvent.create({ data: entry });
  }

  /** Writes what is queued; called on a timer and before the process exits. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length === 0) return;
    try {
      await this.db.auditEvent.createMany({ data: batch });
    } catch (error) {
      log.error("audit events could not be written", { count: batch.length, error: String(error) });
    }
  }
}
