import type { Database, Prisma } from "./client";

/**
 * An interactive transaction as a Database, for domain code written against one (the registry,
 * blocking, account deletion): a `$transaction(work)` of theirs runs `work` in `tx` instead of
 * opening a transaction of its own, so their steps become part of the enclosing one (an admin
 * change with its audit record: lib/admin/operations.ts). Only the callback form is offered; the
 * array form is not used on these paths.
 */
export function enclosedIn(tx: Prisma.TransactionClient): Database {
  const join = <T>(work: (tx: Prisma.TransactionClient) => Promise<T>) => work(tx);
  return new Proxy(tx, {
    get(target, property) {
      if (property === "$transaction") return join;
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as unknown as Database;
}
