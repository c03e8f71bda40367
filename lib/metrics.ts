import path from "node:path";
import client, { type Counter, type Gauge, type Histogram } from "prom-client";
import packageJson from "../package.json" with { type: "json" };
import { recordedCommit } from "./build-info";
import type { KeyStore } from "./keys/keystore";
import { projectRoot } from "./project-root";
import type { Store } from "./store";

/**
 * Keyfob's Prometheus metrics (prom-client's default registry). Next.js may load this module more
 * than once (one copy per route bundle, and the launcher's own), so every metric is registered once
 * and found again by name; prom-client itself is loaded outside the bundles (next.config.mjs).
 */
const { register } = client;

function counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
  return (register.getSingleMetric(name) as Counter<L>) ?? new client.Counter({ name, help, labelNames });
}

function histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> {
  return (register.getSingleMetric(name) as Histogram<L>) ?? new client.Histogram({ name, help, labelNames, buckets });
}

function gauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  collect: (this: Gauge<L>) => Promise<void> | void,
): Gauge<L> {
  return (register.getSingleMetric(name) as Gauge<L>) ?? new client.Gauge({ name, help, labelNames, collect });
}

export const requests = counter(
  "keyfob_requests_total",
  "Requests to each endpoint, by endpoint and outcome (success, or the OAuth error code of a refusal).",
  ["endpoint", "outcome"],
);

export const requestDuration = histogram(
  "keyfob_request_duration_seconds",
  "Time to answer an endpoint.",
  ["endpoint"],
  [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
);

export const statementBatchSize = histogram(
  "keyfob_statement_batch_size",
  "Requests served by one execution of a batched statement (group commit, lib/store/batch.ts), by statement.",
  ["statement"],
  [1, 2, 4, 8, 16, 32, 64],
);

export const tokensIssued = counter(
  "keyfob_tokens_issued_total",
  "Token responses issued, by flow (wallet_signature, code_exchange, refresh_token, client_credentials, device_code, token_exchange: vehicle tokens) and connector.",
  ["flow", "connector"],
);

export const auditEventsDropped = counter(
  "keyfob_audit_events_dropped_total",
  "Audit events lost, by reason: overflow (the queue waiting for the database was full), refused (the database refused the event's values), shutdown (still unwritten at exit).",
  ["reason"],
);

export const signatureChecks = counter(
  "keyfob_signature_checks_total",
  "Signature checks, by how the signature was accepted or tried (wallet, signer, erc1271, erc6492) and result (valid, invalid, unavailable).",
  ["kind", "result"],
);

export const chainRpcFailures = counter(
  "keyfob_chain_rpc_failures_total",
  "Chain RPC calls that failed without an answer from the contract (network, timeout, HTTP or JSON-RPC errors).",
  [],
);

export const rateLimited = counter("keyfob_rate_limited_total", "Requests refused by a rate limit or a cap, by endpoint and limit.", [
  "endpoint",
  "limit",
]);

export const backchannelLogouts = counter(
  "keyfob_backchannel_logouts_total",
  "Back-channel logout attempts, by outcome: sent, retried (failed, to be tried again), failed (given up).",
  ["outcome"],
);

/**
 * What a scrape reads of the runtime's Keyfob (lib/runtime.ts), if one was built in this process.
 * Typed by what it reads, not as Keyfob: lib/keyfob.ts imports what records these metrics.
 */
type Scraped = { store: Pick<Store, "poolStats" | "logouts">; keys: Pick<KeyStore, "schedule">; vehicleKeys: Pick<KeyStore, "schedule"> };
const current = () => (globalThis as { keyfob?: Scraped }).keyfob;

gauge(
  "keyfob_db_pool_connections",
  "Database connections of this instance's pool, by state (total, idle, waiting requests).",
  ["state"],
  function () {
    const pool = current()?.store.poolStats();
    if (!pool) return;
    this.set({ state: "total" }, pool.total);
    this.set({ state: "idle" }, pool.idle);
    this.set({ state: "waiting" }, pool.waiting);
  },
);

gauge(
  "keyfob_signing_key_age_seconds",
  "Age of each published signing key (access and vehicle token sets) since it started (or will start) signing, by status.",
  ["kid", "status"],
  async function () {
    const keyfob = current();
    if (!keyfob) return;
    this.reset();
    const now = Date.now();
    for (const key of [...(await keyfob.keys.schedule()), ...(await keyfob.vehicleKeys.schedule())])
      this.set({ kid: key.kid, status: key.status }, Math.round((now - key.activatesAt.getTime()) / 1000));
  },
);

gauge(
  "keyfob_backchannel_logouts_pending",
  "Logout tokens queued for back-channel delivery (all instances), not yet delivered nor given up.",
  [],
  async function () {
    const store = current()?.store;
    if (store) this.set(await store.logouts.pending());
  },
);

let commit: Promise<string> | undefined;

gauge(
  "keyfob_build_info",
  "Always 1: the running release's version, source commit and Node.js version, as labels.",
  ["version", "commit", "node"],
  async function () {
    // The build this process serves (server/build.ts sets KEYFOB_DIST_DIR), read once.
    commit ??= recordedCommit(path.resolve(projectRoot(import.meta.dirname), process.env.KEYFOB_DIST_DIR || ".next"));
    this.set({ version: packageJson.version, commit: await commit, node: process.version }, 1);
  },
);

if (!register.getSingleMetric("process_cpu_seconds_total")) client.collectDefaultMetrics();

export const metricsContentType = register.contentType;

/** The metrics in Prometheus's text format. */
export function renderMetrics(): Promise<string> {
  return register.metrics();
}
