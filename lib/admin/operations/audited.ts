import type { AuditEntry } from "../../audit";
import * as registry from "../../clients/registry";
import type { Keyfob } from "../../keyfob";
import { InsufficientScope, type Admin } from "../access";

/**
 * How an admin change runs: in one transaction with its audit record, refused or failed changes
 * audited apart with the reason.
 */

type Target = Pick<AuditEntry, "clientId" | "accountId" | "detail">;

/** A change's audit detail: what it was about, then what changed. */
const joined = (...parts: (string | undefined)[]) => parts.filter(Boolean).join("; ") || undefined;

/** Why a change failed, for the audit log: a refusal's field and message; for anything else its kind only. */
export function failureReason(error: unknown): string {
  if (error instanceof registry.RegistryError) return `${error.field}: ${error.message}`;
  if (error instanceof InsufficientScope) return error.message;
  if (error instanceof Error)
    return `${error.name}${(error as { code?: unknown }).code ? ` ${String((error as { code?: unknown }).code)}` : ""}`;
  return typeof error;
}

/** What the admin operations use of the Keyfob: the store and the audit log, the configuration and the clock. */
export type AuditedStore = Pick<Keyfob, "config" | "clock" | "store" | "audit">;

/**
 * What a change runs with: everything that writes works on the transaction (its store, and an audit
 * log whose records commit with the change or not at all), beside the configuration and the clock.
 * Nothing else of the Keyfob, whose key store, client cache and buffered audit log work on the pool.
 */
type AdminTransaction = Pick<Keyfob, "config" | "clock" | "store"> & { audit: { write(entry: AuditEntry): Promise<void> } };

/**
 * Runs a change and audits it, in one transaction: `run` gets the transaction (AdminTransaction),
 * and the audit record commits with what it changed, or neither does (the record was written after
 * the change, so a failure between them left a change without its record). `describe` turns the
 * result into the detail's "what changed" part. A change
 * that fails is rolled back and audited apart: a refusal (RegistryError) as `rejected`, anything
 * else as `error`, each with the reason after the target's detail.
 */
export async function change<T>(
  k: AuditedStore,
  admin: Admin,
  action: string,
  target: Target,
  run: (tx: AdminTransaction) => Promise<T>,
  describe?: (result: T) => string | undefined,
): Promise<T> {
  const entry = { actor: admin.label, action, clientId: target.clientId, accountId: target.accountId };
  try {
    return await k.store.transaction(async (store) => {
      const tx: AdminTransaction = { config: k.config, clock: k.clock, store, audit: { write: (e) => k.audit.writeWithin(store, e) } };
      const result = await run(tx);
      await tx.audit.write({ ...entry, outcome: "success", detail: joined(target.detail, describe?.(result)) });
      return result;
    });
  } catch (error) {
    await failed(k, entry, target.detail, error);
    throw error;
  }
}

/** Audits a change that failed (and changed nothing): `rejected` for a refusal, else `error`, with the reason. */
export function failed(
  k: Pick<Keyfob, "audit">,
  entry: Omit<AuditEntry, "outcome" | "detail">,
  detail: string | undefined,
  error: unknown,
) {
  const outcome = error instanceof registry.RegistryError ? "rejected" : error instanceof InsufficientScope ? "forbidden" : "error";
  return k.audit.write({ ...entry, outcome, detail: joined(detail, failureReason(error)) });
}

/** `field: before -> after` for each field that differs (JSON values), or "no change". */
export function differences(before: Record<string, unknown>, after: Record<string, unknown>): string {
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const changed = fields.filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
  return (
    changed.map((field) => `${field}: ${JSON.stringify(before[field] ?? null)} -> ${JSON.stringify(after[field] ?? null)}`).join("; ") ||
    "no change"
  );
}

/** A change whose audit detail is the difference of `read()` before and after it (null: absent), read in its transaction. */
export async function changeObserved<T>(
  k: AuditedStore,
  admin: Admin,
  action: string,
  target: Target,
  read: (tx: AdminTransaction) => Promise<Record<string, unknown> | null>,
  run: (tx: AdminTransaction) => Promise<T>,
): Promise<T> {
  let observed = "";
  const observe = async (tx: AdminTransaction) => {
    const before = await read(tx);
    const result = await run(tx);
    const after = await read(tx);
    observed =
      before === null
        ? `created: ${JSON.stringify(after)}`
        : after === null
          ? `deleted: ${JSON.stringify(before)}`
          : differences(before, after);
    return result;
  };
  return change(k, admin, action, target, observe, () => observed);
}

// Clients, redirect URIs, signers, secrets.
