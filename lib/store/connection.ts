import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { log } from "../log";
import { Prisma, PrismaClient } from "../db/generated/client";

/** Prisma, on the pool below it (or, in a transaction, that transaction). */
export type Database = PrismaClient;

/** What the store's statements run on: Prisma for the domain, and the pool under it for the few in plain SQL. */
export type Connection = { db: Database; pool: pg.Pool };

/** How long a statement waits for a connection: a database that does not answer fails requests within seconds (503) instead of holding them. */
export const CONNECTION_WAIT_MS = 5_000;

/** How a store connects: pool size, prepared statements, and the longest a statement may run (ms; none when undefined). */
export type ConnectionOptions = { poolSize?: number; preparedStatements?: boolean; statementTimeoutMs?: number };

/**
 * The pool and Prisma on it. `preparedStatements`: the hot-path statements run as named prepared
 * statements (parsed and planned once per connection); off, they run unnamed, as a transaction
 * pooler needs (PgBouncer hands each transaction any server connection: a statement prepared on one
 * is unknown, or already exists, on the next). `statementTimeoutMs` is PostgreSQL's
 * statement_timeout, set when each connection starts (a pooler refuses that parameter).
 */
export function createConnection(
  url: string,
  { poolSize = 10, preparedStatements = true, statementTimeoutMs }: ConnectionOptions = {},
): Connection {
  const options = {
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: CONNECTION_WAIT_MS,
    ...(statementTimeoutMs !== undefined && { statement_timeout: statementTimeoutMs }),
  };
  const pool = preparedStatements ? new pg.Pool(options) : new UnpreparedPool(options);
  // An idle connection dropped by the server (restart, failover) must not crash the process.
  pool.on("error", (error) => log.warn("database connection lost", { error: (error as { code?: string }).code ?? error.name }));
  pool.on("connect", dropWhenReadOnly);
  return { db: new PrismaClient({ adapter: new PrismaPg(pool) }), pool };
}

/** PostgreSQL's read_only_sql_transaction: a write on a standby, or on a node whose promotion has not ended. */
const READ_ONLY = "25006";

/**
 * A connection that found its server read-only (a standby HAProxy still routes to, a node
 * mid-promotion in a failover) leaves the pool when it is released, so the next statement connects
 * anew and reaches the primary. node-postgres's pool drops a connection whose query failed only
 * for pool.query; a transaction's connection (Prisma's adapter) is released without the error.
 */
function dropWhenReadOnly(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((...args: unknown[]) => {
    const result = query(...args);
    if (result instanceof Promise)
      result.catch((error: { code?: unknown }) => {
        if (error?.code !== READ_ONLY) return;
        // Only this checkout's release: the pool assigns a new one each time it hands the client out.
        const release = client.release;
        client.release = (err?: Error | boolean) => release(err || (error as Error));
      });
    return result;
  }) as typeof client.query;
}

/**
 * For the hot-path statements in plain SQL on the pool: Prisma keeps timestamps as UTC in
 * `timestamp(3)` columns, so they are read as UTC whatever the process's time zone, and written as
 * UTC (`timestamp without time zone` keeps the digits and drops the zone).
 */
export const utcTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 1114
      ? (value: string) => new Date(`${value.replace(" ", "T")}Z`)
      : (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};
export const utc = (date: Date) => date.toISOString();

/** A pool whose queries are never named prepared statements, whatever their caller asks. */
class UnpreparedPool extends pg.Pool {
  override query(...args: unknown[]): never {
    const [config, ...rest] = args;
    const unnamed = config && typeof config === "object" && "name" in config ? { ...config, name: undefined } : config;
    return (super.query as (...a: unknown[]) => never)(unnamed, ...rest);
  }
}

/**
 * An interactive transaction as a Database, for statements written against one (a client's
 * settings, blocking, account deletion): a `$transaction(work)` of theirs runs `work` in `tx`
 * instead of opening a transaction of its own, so their steps become part of the enclosing one (an
 * admin change with its audit record). Only the callback form is offered; the array form is not
 * used on these paths.
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

/** A row that would repeat a unique key (an id taken, the same identity twice at once). */
export class Duplicate extends Error {
  override name = "Duplicate";
}

/** `work`, with a unique-key violation thrown as Duplicate. */
export async function refusingDuplicates<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") throw new Duplicate(error.message);
    throw error;
  }
}
