import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { log } from "../log";
import { PrismaClient } from "./generated/client";

export type Database = PrismaClient;
export { Prisma } from "./generated/client";

/** Prisma for the domain, and the node-postgres pool under it for the few hot-path statements. */
export type Storage = { db: Database; pool: pg.Pool };

export function createStorage(url: string, poolSize = 10): Storage {
  // A database that does not answer fails requests within seconds (503) instead of holding them.
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000 });
  // An idle connection dropped by the server (restart, failover) must not crash the process.
  pool.on("error", (error) => log.warn("database connection lost", { error: (error as { code?: string }).code ?? error.name }));
  return { db: new PrismaClient({ adapter: new PrismaPg(pool) }), pool };
}

export function createDatabase(url: string, poolSize = 10): Database {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: poolSize }) });
}
