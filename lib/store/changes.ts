import pg from "pg";
import { log } from "../log";
import type { ChangeFeed, Subscriber } from "./contract";

/** Reconnection delays of the listening connection: doubling from the first, up to the last. */
const RETRY_MS = [1_000, 30_000] as const;

type Channel = { subscribers: Set<Subscriber>; active: boolean };

/**
 * PostgreSQL notifications for one instance: ONE connection of its own that LISTENs to every
 * channel a part of Keyfob subscribes to (signing keys, clients), reconnecting with backoff. It
 * connects on the first subscription (a CLI that never needs it never opens it) and does not keep
 * the process alive (CLI, tests): the server has its own handles.
 */
export class Notifications implements ChangeFeed {
  private readonly channels = new Map<string, Channel>();
  private client?: pg.Client;
  private state: "idle" | "connecting" | "connected" = "idle";
  private failures = 0;
  private retry?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly config: pg.ClientConfig) {}

  /** Calls `subscriber` for every NOTIFY on `channel` (a plain identifier) until the returned function is called. */
  subscribe(channel: string, subscriber: Subscriber): () => void {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    let entry = this.channels.get(channel);
    if (!entry) {
      entry = { subscribers: new Set(), active: false };
      this.channels.set(channel, entry);
      if (this.state === "connected") this.listen(this.client!, channel, true);
    }
    entry.subscribers.add(subscriber);
    if (entry.active) subscriber.listening?.(true);
    this.connect();
    return () => entry.subscribers.delete(subscriber);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.state = "idle";
    await client?.end().catch(() => undefined);
  }

  private connect() {
    if (this.closed || this.state !== "idle") return;
    this.state = "connecting";
    const client = new pg.Client(this.config);
    this.client = client;
    client.on("error", (error) => this.lose(client, error));
    client.on("end", () => this.lose(client));
    client.on("notification", (message) => {
      for (const subscriber of this.channels.get(message.channel)?.subscribers ?? []) subscriber.notified(message.payload ?? "");
    });
    const reconnected = this.failures > 0;
    client
      .connect()
      .then(() => {
        if (this.client !== client) return;
        unrefConnection(client);
        this.state = "connected";
        this.failures = 0;
        for (const channel of this.channels.keys()) this.listen(client, channel, !reconnected);
      })
      .catch((error) => this.lose(client, error));
  }

  private listen(client: pg.Client, channel: string, first: boolean) {
    client.query(`LISTEN ${channel}`).then(
      () => {
        const entry = this.channels.get(channel);
        if (this.client !== client || !entry) return;
        entry.active = true;
        for (const subscriber of entry.subscribers) subscriber.listening?.(first);
      },
      (error) => this.lose(client, error),
    );
  }

  private lose(client: pg.Client, error?: unknown) {
    if (this.client !== client) return;
    this.client = undefined;
    this.state = "idle";
    client.end().catch(() => undefined);
    for (const entry of this.channels.values()) {
      entry.active = false;
      for (const subscriber of entry.subscribers) subscriber.lost?.();
    }
    if (this.closed) return;
    const delay = Math.min(RETRY_MS[0] * 2 ** this.failures++, RETRY_MS[1]);
    log.warn("database notifications interrupted; reconnecting", {
      error: error === undefined ? "connection ended" : String(error),
      retryMs: delay,
    });
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connect();
    }, delay);
    this.retry.unref();
  }
}

/** How often PolledChanges asks: a change reaches every instance within about this long. */
export const POLL_MS = 2_000;

/**
 * The feed of an instance that cannot LISTEN: behind a transaction pooler (PgBouncer hands each
 * transaction any server connection, so a LISTEN does not stay) with no direct connection. Every
 * POLL_MS it reads the versions keyfob_changed() counts beside each NOTIFY (a migration), on the
 * pool; a channel whose version moved tells its subscribers that they may have missed changes
 * (`listening(false)`: reload), since a version carries no payload. A failed poll is `lost`.
 */
export class PolledChanges implements ChangeFeed {
  private readonly channels = new Map<string, { subscribers: Set<Subscriber>; version?: string }>();
  private timer?: NodeJS.Timeout;
  private healthy = false;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly intervalMs = POLL_MS,
  ) {}

  subscribe(channel: string, subscriber: Subscriber): () => void {
    let entry = this.channels.get(channel);
    if (!entry) {
      entry = { subscribers: new Set() };
      this.channels.set(channel, entry);
    }
    entry.subscribers.add(subscriber);
    if (this.healthy && entry.version !== undefined) subscriber.listening?.(true);
    if (!this.timer && !this.closed) this.schedule(0);
    return () => entry.subscribers.delete(subscriber);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(delay: number) {
    this.timer = setTimeout(() => void this.poll().finally(() => !this.closed && this.schedule(this.intervalMs)), delay);
    this.timer.unref();
  }

  private async poll() {
    let versions: Map<string, string>;
    try {
      const { rows } = await this.pool.query<{ channel: string; version: string }>("SELECT channel, version::text FROM keyfob_changes");
      versions = new Map(rows.map((row) => [row.channel, row.version]));
    } catch (error) {
      if (this.healthy) log.warn("polling for changes failed; caches are off until it works again", { error: String(error) });
      this.healthy = false;
      for (const entry of this.channels.values()) for (const subscriber of entry.subscribers) subscriber.lost?.();
      return;
    }
    const recovered = !this.healthy;
    this.healthy = true;
    for (const [channel, entry] of this.channels) {
      const version = versions.get(channel) ?? "0";
      const first = entry.version === undefined;
      if (first || recovered || version !== entry.version) for (const subscriber of entry.subscribers) subscriber.listening?.(first);
      entry.version = version;
    }
  }
}

/** Lets the process exit with the LISTEN connection open (its socket is node-postgres's `connection.stream`). */
function unrefConnection(client: pg.Client) {
  (client as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
}
