import pg from "pg";
import { log } from "../log";

/** Reconnection delays of the listening connection: doubling from the first, up to the last. */
const RETRY_MS = [1_000, 30_000] as const;

export type Subscriber = {
  /** A NOTIFY on the channel, with its payload. */
  notified(payload: string): void;
  /**
   * The channel is being listened to: from now on no notification is missed until `lost`. `first`
   * is false after a reconnection, when notifications may have been missed meanwhile, so whatever
   * they keep current must be reloaded.
   */
  listening?(first: boolean): void;
  /** The connection was lost: until `listening` is called again, notifications may be missed. */
  lost?(): void;
};

type Channel = { subscribers: Set<Subscriber>; active: boolean };

/**
 * PostgreSQL notifications for one instance: ONE connection of its own that LISTENs to every
 * channel a part of Keyfob subscribes to (signing keys, clients), reconnecting with backoff. It
 * connects on the first subscription (a CLI that never needs it never opens it) and does not keep
 * the process alive (CLI, tests): the server has its own handles.
 */
export class Notifications {
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
      this.channels.set(channel, (entry = { subscribers: new Set(), active: false }));
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
    log.warn("database notifications interrupted; reconnecting", { error: error === undefined ? "connection ended" : String(error), retryMs: delay });
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connect();
    }, delay);
    this.retry.unref();
  }
}

/** Lets the process exit with the LISTEN connection open (its socket is node-postgres's `connection.stream`). */
function unrefConnection(client: pg.Client) {
  (client as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
}
