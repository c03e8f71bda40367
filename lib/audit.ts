import { log } from "./log";
import { auditEventsDropped } from "./metrics";
import type { Clock } from "./clock";
import type { Store } from "./store";
import { storableText } from "./store/audit";
import type { AuditEntry, AuditEventInput } from "./store/contract";

export type { AuditEntry, Caller } from "./store/contract";

/** Events kept waiting for the database at most (about 0.5 KB each): over a minute of refusals at 300/s. */
const CAPACITY = 20_000;
/** Events per statement. */
const BATCH = 1_000;
/** The longest wait between two attempts while the database cannot take the events. */
const MAX_RETRY_MS = 5_000;
/** How long closing keeps trying: enough to ride out a fast restart of PostgreSQL (about a second). */
const CLOSE_PATIENCE_MS = 5_000;

/**
 * The audit log. Token issuances are written with the token (issuedWithEvent) and admin changes
 * with the change (lib/admin/operations/); the other protocol events (refusals, token failures,
 * logins) are queued here and written in batches every `flushMs`, so a request does not pay for
 * its own insert. A batch the database cannot take (unreachable, restarting, overloaded) stays
 * queued, in order, and is tried again, waiting longer after each failure, until it is written; an
 * event the database refuses for what it holds is dropped alone. At most `capacity` events wait:
 * beyond, new ones are dropped. Every drop is counted (keyfob_audit_events_dropped_total) and logged.
 */
export class AuditLog {
  private queue: AuditEventInput[] = [];
  private timer?: NodeJS.Timeout;
  /** The one writer, while it runs: batches land in order, and a flush waits for it. */
  private writing?: Promise<void>;
  /** Consecutive attempts that found the database unable to take the queue. */
  private failures = 0;
  /** Events dropped because the queue was full, since that was last logged. */
  private overflowed = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly flushMs = 250,
    private readonly capacity = CAPACITY,
  ) {}

  /** Queues a protocol event. */
  record(entry: AuditEntry): void {
    if (this.queue.length >= this.capacity) {
      if (this.overflowed++ === 0)
        log.error("audit queue full: dropping new events until the database takes the queued ones", { capacity: this.capacity });
      auditEventsDropped.inc({ reason: "overflow" });
      return;
    }
    this.queue.push({ ...storable(entry), at: this.clock.now() });
    this.schedule(this.flushMs);
  }

  /** Writes an event now (admin refusals, sign-outs): the caller learns if it could not be. */
  async write(entry: AuditEntry): Promise<void> {
    await this.store.audit.insertBatch([{ ...storable(entry), at: this.clock.now() }]);
  }

  /** Writes an event in `tx` (an admin change's transaction): it commits with the change, or neither does. */
  async writeWithin(tx: Store, entry: AuditEntry): Promise<void> {
    await tx.audit.insert({ ...storable(entry), at: this.clock.now() });
  }

  /**
   * Writes what is queued and waits for it; what the database cannot take now stays queued for the
   * next attempt (on a timer). Called on a timer, and by tests to see the events.
   */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing ??= this.drain().finally(() => {
      this.writing = undefined;
    });
    await this.writing;
  }

  /** Before the process exits: flushes, trying again for a few seconds while the database cannot take the events. */
  async close(patienceMs = CLOSE_PATIENCE_MS): Promise<void> {
    const until = Date.now() + patienceMs;
    await this.flush();
    while (this.queue.length > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(this.flushMs, until - Date.now())));
      await this.flush();
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length > 0) {
      log.error("audit events lost at exit: the database could not take them", { count: this.queue.length });
      auditEventsDropped.inc({ reason: "shutdown" }, this.queue.length);
      this.queue = [];
    }
  }

  private schedule(ms: number) {
    this.timer ??= setTimeout(() => void this.flush(), ms);
    this.timer.unref?.();
  }

  /** Writes the queue from its head until it is empty, or until the database cannot take it now. */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, BATCH);
      try {
        await this.store.audit.insertBatch(batch);
        this.queue.splice(0, batch.length);
      } catch (error) {
        if (!refusedForContent(error)) return this.retryLater(error);
        // An event the database refuses (a value too long for an index) must not take the others with it: one by one, in order.
        for (const event of batch) {
          try {
            await this.store.audit.insertBatch([event]);
          } catch (failure) {
            if (!refusedForContent(failure)) return this.retryLater(failure);
            log.error("audit event refused by the database", { action: event.action, error: String(failure).slice(0, 200) });
            auditEventsDropped.inc({ reason: "refused" });
          }
          this.queue.shift();
        }
      }
      if (this.failures > 0 || this.overflowed > 0) {
        log.info("audit events written again", { attempts: this.failures + 1, dropped: this.overflowed });
        this.failures = 0;
        this.overflowed = 0;
      }
    }
  }

  private retryLater(error: unknown) {
    if (this.failures++ === 0)
      log.warn("audit events could not be written; retrying", { queued: this.queue.length, error: String(error).slice(0, 200) });
    clearTimeout(this.timer);
    this.timer = undefined;
    this.schedule(Math.min(this.flushMs * 2 ** this.failures, MAX_RETRY_MS));
  }
}

/**
 * Whether PostgreSQL refused an insert for the values it holds (data exceptions, constraint
 * violations, program limits such as an index row too large): writing it again would fail again.
 * Anything else (no connection, a restart, a timeout) passes, and is retried.
 */
function refusedForContent(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && /^(22|23|54)/.test(code);
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
