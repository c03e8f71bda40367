import { log } from "../log";
import type { ChangeFeed, Store } from "../store";
import type { TokenClientRow } from "../store/contract";

/** The NOTIFY channel of client changes (payload: the client's id). */
export const CLIENT_CHANNEL = "keyfob_clients";
/** An entry is read again after this long anyway (a notification lost without the connection dropping). */
const TTL_MS = 60_000;
/** Unknown ids are cached too (a burst of requests naming one is one query); the cache is emptied past this size. */
const MAX_ENTRIES = 10_000;

type Entry = { client: TokenClientRow | undefined; loadedAt: number };

/**
 * What the token endpoints need of a client (TokenClientRow), kept in memory so that a request does not
 * pay a query for it. Client cache: see docs/decisions/2026-11-23-client-cache.md
 *
 * It stays exact across instances: every change to clients, redirect_uris and allowed_origins,
 * whoever makes it (dashboard, CLI, management API, plain SQL), fires a trigger that NOTIFYs
 * CLIENT_CHANNEL with the client's id (installed by a migration), and every
 * instance drops that entry when it hears it. Entries are kept only while the instance's listening
 * connection is up: when it is down, or was down since an entry was read, every lookup queries.
 * A change landing between a request's lookup and its write is caught by the write itself: the
 * statements that issue tokens check the client's `enabled` and secret in the database
 * (lib/store), so disabling a client or rotating its secret is effective on the next request.
 */
export class ClientCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<TokenClientRow | undefined>>();
  /** Bumped by every change heard: a load that started before one is not kept. */
  private generation = 0;
  /** Whether notifications are heard now, so that what is cached is current. */
  private trusted = false;
  private unsubscribe?: () => void;

  constructor(
    private readonly store: Store,
    /** The instance's listening connection; without one nothing is cached. */
    private readonly notifications?: ChangeFeed,
    private readonly ttlMs = TTL_MS,
  ) {}

  /** The client with this (normalised) id, or undefined when there is none. */
  async get(id: string): Promise<TokenClientRow | undefined> {
    this.subscribe();
    const entry = this.trusted ? this.entries.get(id) : undefined;
    if (entry && Date.now() - entry.loadedAt < this.ttlMs) return entry.client;
    let loading = this.loading.get(id);
    if (!loading) {
      const generation = this.generation;
      loading = this.store.clients.findForTokens(id).finally(() => this.loading.delete(id));
      this.loading.set(id, loading);
      loading.then(
        (client) => {
          if (!this.trusted || generation !== this.generation) return;
          if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
          this.entries.set(id, { client, loadedAt: Date.now() });
        },
        () => undefined,
      );
    }
    return loading;
  }

  /** Stops listening; lookups query from now on. */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.forget(false);
  }

  private subscribe() {
    if (this.unsubscribe || !this.notifications) return;
    this.unsubscribe = this.notifications.subscribe(CLIENT_CHANNEL, {
      notified: (id) => {
        this.generation++;
        this.entries.delete(id);
      },
      // Whatever was read before may have changed unheard: start afresh either way.
      listening: () => this.forget(true),
      lost: () => {
        log.warn("client cache off until database notifications are back");
        this.forget(false);
      },
    });
  }

  private forget(trusted: boolean) {
    this.generation++;
    this.entries.clear();
    this.trusted = trusted;
  }
}
