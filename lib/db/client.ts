import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { log } from "../log";
import { PrismaClient } from "./generated/client";

export type Database = PrismaClient;
export { Prisma } from "./generated/client";

/** Prisma for the domain, and the node-postgres pool under it for the few hot-path statements. */
export type Storage = { db: Database; pool: pg.Pool };

/**
 * The pool and Prisma on it. `preparedStatements`: the hot-path statements run as named prepared
 * statements (parsed and planned once per connection); off, they run unnamed, as a transaction
 * pooler needs (PgBouncer hands each transaction any server connection: a statement prepared on one
 * is unknown, or already exists, on the next).
 */
export function createStorage(url: string, poolSize = 10, preparedStatements = true): Storage {
  // A database that does not answer fails requests within seconds (503) instead of holding them.
  const options = { connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000 };
  const pool = preparedStatements ? new pg.Pool(options) : new UnpreparedPool(options);
  // An idle connection dropped by the server (restart, failover) must not crash the process.
  pool.on("error", (error) => log.warn("database connection lost", { error: (error as { code?: string }).code ?? error.name }));
  return { db: new PrismaClient({ adapter: new PrismaPg(pool) }), pool };
}

/**
 * For the hot-path statements in plain SQL on the pool (lib/db/flow-a.ts, lib/tokens/record.ts):
 * Prisma keeps timestamps as UTC in `timestamp(3)` columns, so they are read as UTC whatever the
 * process's time zone, and written as UTC (`timestamp without time zone` keeps the digits and drops the zone).
 */
export const utcTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 1114 ? (value: string) => new Date(`${value.replace(" ", "T")}Z`) : (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
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

export function createDatabase(url: string, poolSize = 10): Database {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: poolSize }) });
}
