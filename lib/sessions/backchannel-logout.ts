import type { AuditLog } from "../audit";
import type { Clock } from "../clock";
import { type Network, postForm, type Resolver, UnreachableHost } from "../http/outbound";
import { log } from "../log";
import { backchannelLogouts } from "../metrics";
import type { Store } from "../store";
import type { LogoutRow } from "../store/contract";
import type { TokenSigner } from "../tokens/issue";
import { signLogoutToken } from "../tokens/logout-token";
import { sessionSid } from "./login-session";

/** How often each instance looks for due logout tokens. */
export const POLL_MS = 1_000;
/** How long a client's back-channel logout URI has to answer. */
export const REQUEST_TIMEOUT_MS = 5_000;
/** How long a claim holds: past the request's timeout, so only a dead instance's claim lapses. */
export const LEASE_MS = 15_000;
/** Rows one pass claims. */
const BATCH = 20;

/**
 * When a failed attempt is tried again, in seconds (BACKCHANNEL_LOGOUT_RETRY_*): after `firstDelay`,
 * doubled after each further failure up to `maxDelay`, until `giveUpAfter` after the session ended.
 */
export type RetrySchedule = { firstDelay: number; maxDelay: number; giveUpAfter: number };

/** What delivery needs of Keyfob: `allowedNetworks` (BACKCHANNEL_LOGOUT_ALLOWED_NETWORKS) besides public ones; `resolve` only in tests. */
export type DeliveryDeps = {
  store: Store;
  clock: Clock;
  keys: TokenSigner;
  audit: AuditLog;
  issuerUrl: string;
  retry: RetrySchedule;
  allowedNetworks: readonly Network[];
  resolve?: Resolver;
};

/**
 * One attempt's outcome: delivered, worth another try later, or refused for good (an answer other
 * than 2xx, 5xx, 408 or 429, or a host on a network Keyfob may not reach).
 */
type Outcome = { kind: "sent" } | { kind: "retry" | "refused"; error: string };

/**
 * OpenID Connect Back-Channel Logout 1.0, the sending side. Ending a login session queues a row
 * per client that got tokens in it (lib/store/logouts.ts, in the session's transaction); every
 * instance runs one of these, which claims due rows (SKIP LOCKED, with a lease that a killed
 * instance's claim outlives by at most LEASE_MS), signs a logout token at send time and POSTs it.
 * A failed attempt is tried again on the retry schedule (by default after 2 s, 4 s, 8 s…, at most 10
 * minutes apart, until a day after the logout); then, or when the client refuses it, it is given up
 * and recorded in the audit log. A URI whose host is not on a network Keyfob may reach
 * (lib/http/outbound.ts) is given up at once, with a reason that names no address or port.
 */
export class LogoutDelivery {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly abort = new AbortController();

  constructor(private readonly deps: DeliveryDeps) {}

  /** Delivers on a timer for as long as the process runs. */
  start(): void {
    this.timer ??= setInterval(() => void this.deliverDue(), POLL_MS);
    this.timer.unref();
  }

  /** One pass (unless one is under way): claims due rows and delivers them, until none are due. */
  deliverDue(now = () => this.deps.clock.now()): Promise<void> {
    this.running ??= this.drain(now)
      .catch((error) => log.error("back-channel logout delivery failed", { error: String(error) }))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** Stops: in-flight requests are aborted (their rows are tried again, here or by another instance). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.abort.abort();
    await this.running;
  }

  private async drain(now: () => Date): Promise<void> {
    while (!this.abort.signal.aborted) {
      const start = now();
      const rows = await this.deps.store.logouts.claim(start, new Date(start.getTime() + LEASE_MS), BATCH);
      if (rows.length === 0) return;
      await Promise.all(rows.map((row) => this.deliver(row, now)));
    }
  }

  private async deliver(row: LogoutRow, now: () => Date): Promise<void> {
    const { store, audit, retry } = this.deps;
    const outcome = row.uri ? await this.send(row, row.uri) : { kind: "refused" as const, error: "no back-channel logout URI any more" };
    const at = now();
    const entry = { action: "logout.backchannel", clientId: row.clientId, accountId: row.accountId };
    if (outcome.kind === "sent") {
      await store.logouts.remove(row.id);
      backchannelLogouts.inc({ outcome: "sent" });
      audit.record({ ...entry, outcome: "success", detail: `attempt ${row.attempts}` });
      return;
    }
    const nextAttemptAt = new Date(at.getTime() + Math.min(retry.firstDelay * 2 ** (row.attempts - 1), retry.maxDelay) * 1000);
    if (outcome.kind === "retry" && nextAttemptAt.getTime() - row.createdAt.getTime() <= retry.giveUpAfter * 1000) {
      await store.logouts.retryAt(row.id, nextAttemptAt, outcome.error);
      backchannelLogouts.inc({ outcome: "retried" });
      return;
    }
    await store.logouts.remove(row.id);
    backchannelLogouts.inc({ outcome: "failed" });
    audit.record({ ...entry, outcome: "delivery_failed", detail: `given up after ${row.attempts} attempts: ${outcome.error}` });
    log.warn("back-channel logout given up", { client_id: row.clientId, attempts: row.attempts, error: outcome.error });
  }

  /** Signs the token now and POSTs it (never logged); the answer decides whether to try again. */
  private async send(row: LogoutRow, uri: string): Promise<Outcome> {
    const { keys, issuerUrl, allowedNetworks, resolve, clock } = this.deps;
    const token = await signLogoutToken(
      keys,
      issuerUrl,
      {
        clientId: row.clientId,
        subject: { userId: row.accountId, connector: row.connector },
        sid: sessionSid(row.sessionId),
        signingAlg: row.signingAlg,
      },
      clock.now(),
    );
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    let status: number;
    try {
      status = await postForm(uri, new URLSearchParams({ logout_token: token }), {
        allowed: allowedNetworks,
        signal: AbortSignal.any([this.abort.signal, timeout]),
        resolve,
      });
    } catch (error) {
      if (error instanceof UnreachableHost) return { kind: "refused", error: error.message };
      // A lookup's or connection's error has a code (ENOTFOUND, ECONNREFUSED); an abort a name.
      const { name, code } = error as Error & { code?: unknown };
      return { kind: "retry", error: timeout.aborted ? "no answer in time" : `unreachable (${typeof code === "string" ? code : name})` };
    }
    if (status >= 200 && status < 300) return { kind: "sent" };
    const transient = status >= 500 || status === 408 || status === 429;
    return { kind: transient ? "retry" : "refused", error: `HTTP ${status}` };
  }
}
